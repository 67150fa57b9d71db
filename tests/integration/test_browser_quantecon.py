"""The browser tests and axe-core again, with the status book in quantecon-book-theme.

QuantEcon's lectures use quantecon-book-theme, whose current releases need Python
3.12 or newer; scripts/test runs this module in ``.venv-test-qe`` (Python 3.13,
the theme's release pinned in scripts/_venv.sh) when that Python is on the
machine.  Elsewhere the theme is not importable and the module is skipped.

The tests are those of tests/integration/test_browser.py, collected here a second time: this
module's ``status_book`` (the same ``status`` root and configuration as
conftest's, ``html_theme = "quantecon_book_theme"``, html only) takes the place
of conftest's for them.  The synthetic 1,000-notebook page has no theme and is
not repeated.  Two are this theme's own versions: the badge's link (the theme
scrolls smoothly and has a fixed toolbar) and axe-core, run in the theme's light
and dark modes switched as its contrast button does (``body.dark-theme`` and
``data-theme``).
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from conftest import ROOTS, STATUS_BOOK_CONFIG, StatusBook, gpu_baseline, sphinx_build

pytest.importorskip("quantecon_book_theme")
pytest.importorskip("playwright.sync_api")

# the same tests, fixtures and helpers, collected again in this module with its
# status_book (pytest resolves a fixture from the module of the test that asks)
from integration.test_browser import (  # noqa: E402, F401
    OURS,
    Page,
    _axe_violations,
    server,
    status_page,
    test_click_sorts_and_updates_aria_sort,
    test_details_render_the_cells_on_demand,
    test_filter_hides_rows,
    test_first_screen_answers_at_1280,
    test_hostile_names_are_text,
    test_keyboard_sorts,
    test_phone_shows_every_notebooks_time_and_flags,
)

pytestmark = [
    pytest.mark.browser,
    # quantecon-book-theme 0.22 still takes str() of Sphinx's script entries; not ours
    pytest.mark.filterwarnings(
        "ignore:The str interface for _JavaScript objects is deprecated"),
]

THEME = "quantecon_book_theme"

#: the theme loads feather-icons, tippy.js and popper from CDNs, which the test
#: machine cannot reach; without feather its own script stops at its first line
#: (no toolbar, no table wrappers, no contrast switch).  Stand-ins, defined before
#: any of the page's scripts runs, let it run as it does online, icons aside; every
#: remote request fails at once, as offline (the CDN files would not pass their
#: integrity check if served from here).
CDN_STANDINS = """
window.feather = {replace() {},
                  icons: new Proxy({}, {get: () => ({toSvg: () => '<svg></svg>'})})};
window.tippy = () => [];
"""


class _BrowserWithCdnStandins:
    """The Playwright browser, whose new pages get the CDN stand-ins."""

    def __init__(self, browser):
        self._browser = browser

    def new_page(self, **options):
        page = self._browser.new_page(**options)
        page.add_init_script(CDN_STANDINS)
        page.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
        return page


@pytest.fixture(scope="module")
def browser(browser):
    """conftest's Chromium, with the theme's CDN scripts stood in for."""
    return _BrowserWithCdnStandins(browser)


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
    # the status book's own warnings (slow cells, regressions, bad options, the
    # failing notebooks) are those of any theme
    theirs = [line for line in status_book.html.warnings.splitlines()
              if line.strip() and not re.search(r"\[(gpu_admonition\.\w+|mystnb\.exec)\]", line)]
    assert theirs == []



@pytest.mark.parametrize("name", ["status.html", "slow.html", "notice.html"])
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_axe_finds_nothing_in_our_markup(browser, server, mode, name):  # noqa: F811
    page = Page(browser, f"{server}/{name}")
    try:
        # quantecon-book-theme's contrast button: a class on the body and data-theme
        page.page.evaluate("dark => { document.body.classList.toggle('dark-theme', dark);"
                           " document.documentElement.dataset.theme ="
                           " dark ? 'dark' : 'light'; }", mode == "dark")
        page.page.evaluate("() => document.querySelectorAll('.gpu-status details')"
                           ".forEach(d => { d.open = true; })")
        if name == "status.html":  # the cell tables of the opened details
            page.page.locator("table.gpu-status-cell-table").first.wait_for()
        else:
            assert page.page.locator(", ".join(OURS)).count()
        assert _axe_violations(page) == []
    finally:
        page.close()


def test_the_theme_script_runs(browser, server):  # noqa: F811
    """The theme's own script ran (it wraps the content's tables in a container of
    its own, our status table among them), so that the tests above see the page a
    reader sees."""
    page = Page(browser, f"{server}/status.html")
    try:
        page.page.locator("#gpu-status-1 .table-container > table").first.wait_for()
        assert not [e for e in page.errors if "feather is not defined" in e]
    finally:
        page.close()


#: resolves once the page has not scrolled for two frames (the theme's smooth scroll)
SCROLL_SETTLED = """() => new Promise(resolve => {
    let last = -1, still = 0;
    const frame = () => {
        still = scrollY === last ? still + 1 : 0;
        last = scrollY;
        if (still >= 2) resolve(true); else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
})"""


def test_badge_link_opens_the_row(browser, server):  # noqa: F811
    """test_browser's test in this theme: its smooth scroll is waited for, and the
    line must end clear of its fixed toolbar."""
    page = Page(browser, f"{server}/slow.html")
    try:
        badge = page.page.locator("#cell-3 .gpu-cell-badge a")
        assert badge.is_visible()
        badge.click()
        page.page.wait_for_url("**/status.html#gpu-status-slow-cell-2")
        row = page.page.locator("#gpu-status-slow")
        assert "gpu-status-target" in row.get_attribute("class")
        row.locator("table.gpu-status-cell-table tr.gpu-status-flagged").wait_for()
        assert row.locator("details").get_attribute("open") is not None
        cell = page.page.locator("#gpu-status-slow-cell-2")
        assert "gpu-status-target" in cell.get_attribute("class")
        page.page.evaluate(SCROLL_SETTLED)
        toolbar = page.page.evaluate(
            "() => { const t = document.querySelector('.qe-toolbar');"
            " return t && ['fixed', 'sticky'].includes(getComputedStyle(t).position)"
            " ? t.getBoundingClientRect().bottom : 0; }")
        box = cell.bounding_box()
        assert toolbar > 0
        assert toolbar <= box["y"] and box["y"] + box["height"] <= 800, (toolbar, box)
    finally:
        page.close()
