"""The browser tests and axe-core again, with the status book in quantecon-book-theme.

QuantEcon's lectures use quantecon-book-theme, whose current releases need Python
3.12 or newer; scripts/test runs this module in ``.venv-test-qe`` (Python 3.13,
the theme's release pinned in scripts/_venv.sh) when that Python is on the
machine.  Elsewhere the theme is not importable and the module is skipped.

The tests are those of tests/test_browser.py, collected here a second time: this
module's ``status_book`` (the same ``status`` root and configuration as
conftest's, ``html_theme = "quantecon_book_theme"``, html only) takes the place
of conftest's for them.  The synthetic 1,000-notebook page has no theme and is
not repeated.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOTS, STATUS_BOOK_CONFIG, StatusBook, gpu_baseline, sphinx_build

pytest.importorskip("quantecon_book_theme")
pytest.importorskip("playwright.sync_api")

# the same tests, fixtures and helpers, collected again in this module with its
# status_book (pytest resolves a fixture from the module of the test that asks)
from test_browser import (  # noqa: E402, F401
    our_errors,
    server,
    status_page,
    test_axe_finds_nothing_in_our_markup,
    test_badge_link_opens_the_row,
    test_click_sorts_and_updates_aria_sort,
    test_details_render_the_cells_on_demand,
    test_filter_hides_rows,
    test_first_screen_answers_at_1280,
    test_hostile_names_are_text,
    test_keyboard_sorts,
    test_phone_shows_every_notebooks_time_and_flags,
)

pytestmark = pytest.mark.browser

THEME = "quantecon_book_theme"


@pytest.fixture(scope="module")
def status_book(tmp_path_factory: pytest.TempPathFactory) -> StatusBook:
    """conftest's status book, html only, in quantecon-book-theme."""
    dest = tmp_path_factory.mktemp("status-book-quantecon")
    srcdir = dest / "src"
    shutil.copytree(ROOTS / "status", srcdir)
    (srcdir / "baseline.json").write_text(json.dumps(gpu_baseline()), encoding="utf-8")
    builddir = dest / "_build"
    html = sphinx_build(srcdir, builddir, "html", {**STATUS_BOOK_CONFIG, "html_theme": THEME},
                        freshenv=True)
    return StatusBook(srcdir, builddir, html, None, None)  # type: ignore[arg-type]


def test_the_pages_are_in_quantecon_book_theme(status_book: StatusBook):
    """The book really is in quantecon-book-theme (not a fallback to another theme),
    and the theme adds no warning of its own to the status book's."""
    assert status_book.html.raised is None
    page = (status_book.html.outdir / "status.html").read_text(encoding="utf-8")
    assert "quantecon-book-theme" in page or "quantecon_book_theme" in page
    theirs = [line for line in status_book.html.warnings.splitlines()
              if line.strip() and "gpu_admonition" not in line]
    assert theirs == []
