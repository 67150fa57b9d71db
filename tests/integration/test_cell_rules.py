"""Cell rules a lecture lives with, in real builds (tests/roots/cellrules): an import
cell, cells tagged ``slow-ok`` (MyST ``:tags:`` and an ``.ipynb``'s cell metadata) and
time budgets (front matter, notebook metadata), with ``gpu_warn_slow_cells`` on."""

from __future__ import annotations

import json

import pytest
from bs4 import BeautifulSoup
from conftest import sphinx_build

SLOW_OK_ONLY = """\
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
gpu_budget_seconds: none
---
# Slow on purpose

```{code-cell} ipython3
import slow_import
```

```{code-cell} ipython3
:tags: [slow-ok]

import time
time.sleep(0.5)
```
"""


@pytest.fixture(scope="module")
def book(build_root_module):
    # the warnings name their type on Sphinx 7.4 too
    return build_root_module("cellrules", confoverrides={"show_warning_types": True})


def _status(book) -> dict:
    return json.loads(book.read("execution-status.json"))


def test_only_the_untagged_slow_cell_warns(book):
    slow = [line for line in book.warning_lines if "gpu_admonition.slow_cell" in line]
    assert len(slow) == 1 and "lecture.md:30: WARNING: slow cell 3" in slow[0]


def test_budgets_warn_at_the_file_and_line(book):
    budget = [line for line in book.warning_lines if "gpu_admonition.budget" in line]
    assert len(budget) == 2
    assert any("budgeted.md:8: WARNING: notebook over its time budget: took " in line
               and ", budget 0.20 s" in line for line in budget)
    assert any("notebook.ipynb: WARNING: notebook over its time budget" in line
               and ", budget 0.10 s" in line for line in budget)


def test_the_marks_reach_the_records(book):
    notebooks = {nb["docname"]: nb for nb in _status(book)["notebooks"]}
    lecture = notebooks["lecture"]["cells"]
    assert [(c["slow_ok"], c["imports_only"]) for c in lecture] == [
        (False, True), (True, False), (False, False), (False, False)]
    assert [c["slow_ok"] for c in notebooks["notebook"]["cells"]] == [True, False]
    assert notebooks["budgeted"]["budget_seconds"] == 0.2
    assert notebooks["notebook"]["budget_seconds"] == 0.1
    assert notebooks["lecture"]["budget_seconds"] is None
    analysis = _status(book)["analysis"]
    assert [[flag["rule"] for flag in f["flags"]]
            for f in analysis["lecture"]["flagged_cells"]] == [["imports"], ["slow_ok"],
                                                               ["slow"]]
    assert analysis["budgeted"]["budget"]["reason"].endswith("budget 0.20 s")


def test_the_status_page_shows_them(book):
    soup = BeautifulSoup(book.read("status.html"), "lxml")
    assert soup.select_one(".gpu-status-slowest").get_text().startswith("Slowest: ")
    budgets = [li.get_text() for li in soup.select(".gpu-status-over-budget")]
    assert len(budgets) == 2 and all(", budget 0." in text for text in budgets)
    findings = soup.select(".gpu-status-finding")
    names = [f.select_one(".gpu-status-flag-names").get_text() for f in findings]
    assert sorted(names) == ["imports", "slow", "slow on purpose", "slow on purpose",
                             "slow on purpose"]
    on_purpose = next(f for f in findings if "slow on purpose" in f.get_text())
    assert on_purpose.select_one(".gpu-status-finding-action") is None


def test_a_book_of_import_and_slow_ok_cells_passes_minus_w(tmp_path):
    """need_for_speed's case: -W with gpu_warn_slow_cells no longer fails; the page's
    ``none`` switches the book's budget off; a cache hit keeps the marks."""
    import shutil

    from conftest import ROOTS

    src = tmp_path / "src"
    shutil.copytree(ROOTS / "cellrules", src)
    (src / "notebook.ipynb").unlink()
    (src / "budgeted.md").unlink()
    (src / "lecture.md").write_text(SLOW_OK_ONLY, encoding="utf-8")
    (src / "index.md").write_text("# Book\n\n```{toctree}\nstatus\nlecture\n```\n",
                                  encoding="utf-8")
    overrides = {"gpu_notebook_budget_seconds": 0.1, "nb_execution_mode": "cache",
                 "nb_execution_cache_path": str(tmp_path / "cache")}
    for _ in range(2):  # executed, then from the cache
        build = sphinx_build(src, tmp_path / "_build", "html", overrides, freshenv=True,
                             warningiserror=True)
        assert "WARNING" not in build.warnings, build.warnings
        (lecture,) = json.loads(build.read("execution-status.json"))["notebooks"]
        assert [c["slow_ok"] for c in lecture["cells"]] == [False, True]
        assert lecture["cells"][0]["imports_only"] and lecture["budget_seconds"] is None
    assert lecture["provenance"] == "cache"


def test_other_builders_name_the_slowest_and_the_budgets(tmp_path):
    """The text builder's status page: the same slowest line and budget list."""
    from conftest import build_project

    build = build_project("cellrules", tmp_path, "text")
    text = build.read("status.txt")
    assert "Slowest: " in text and "% of the build)." in text
    assert "2 notebooks over their time budget" in text
    assert "A notebook with a budget: took " in text and ", budget 0.20 s" in text
    assert "slow on purpose" in text
