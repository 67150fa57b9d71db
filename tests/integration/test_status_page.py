"""The ``{execution-status}`` directive on real builds (real kernels, real JAX on CPU).

The ``status`` root is executed once per session (``status_book`` in conftest):
fast, slow (a 0.5 s sleep, ``gpu_slow_cell_seconds = 0.3``), failing, JAX with
recompilations (``gpu_recompile_threshold = 2``), hostile names and content,
and a notebook deleted in the incremental test.  A hand-written baseline recorded
"on a Tesla T4" is compared with it.  Timing values are never asserted, only
structure and relations (the sleep cell is the slowest of its notebook).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pytest
from bs4 import BeautifulSoup
from conftest import ROOTS, STATUS_BOOK_CONFIG, TESTS, StatusBook, gpu_baseline, sphinx_build

from sphinx_gpu_admonition.ext.support import html_tree_may_hold
from sphinx_gpu_admonition.model.analysis import HINT_RULES, NOTE_RULES, Thresholds, analyse
from sphinx_gpu_admonition.model.findings import findings
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS
from sphinx_gpu_admonition.render.labels import Labels
from sphinx_gpu_admonition.render.status_html import cells_data, render_html
from sphinx_gpu_admonition.render.status_rows import (
    MANY_ROWS,
    StatusOptions,
    column_label,
    parse_options,
    row_id,
)

HOSTILE = 'hostile<b>&"x'
NOTEBOOKS = {"fast", "slow", "failing", "jaxnb", HOSTILE, "gone"}
EMOJI = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff]")


def soup_of(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "lxml")


def rows(table) -> list:
    return table.select("tbody.gpu-status-notebook")


def docname_of(row) -> str:
    return row.select_one(".gpu-status-docname").get_text()


def row_by_docname(table, docname: str):
    return next(r for r in rows(table) if docname_of(r) == docname)


def column(table, key: str) -> int:
    keys = [th["data-sort-key"] for th in table.select("thead th[data-sort-key]")]
    return keys.index(key)


def fact(row, key: str):
    """The value of column ``key`` in a notebook's details (a column not shown): the
    ``dd`` after the ``dt`` that names it."""
    label = column_label(key, Labels.load())
    term = next(dt for dt in row.select(".gpu-status-facts dt") if dt.get_text() == label)
    return term.find_next_sibling("dd")


def cell(row, key: str, table):
    """A notebook's value of column ``key``: its table cell, or where the table does
    not show that column, the value in the row's details."""
    if key not in [th["data-sort-key"] for th in table.select("thead th[data-sort-key]")]:
        return fact(row, key)
    return row.tr.find_all(["th", "td"], recursive=False)[column(table, key)]


@pytest.fixture(scope="module")
def status_html(status_book: StatusBook) -> BeautifulSoup:
    return soup_of(status_book.html.outdir / "status.html")


@pytest.fixture(scope="module")
def table(status_html: BeautifulSoup):
    return status_html.select_one("table.gpu-status-table")


def cells_file(outdir: Path, page: BeautifulSoup) -> Path:
    """The per-cell data file a status table loads (beside its page)."""
    src = page.select_one(".gpu-status[data-cells-src]")["data-cells-src"]
    name, _, version = src.partition("?v=")
    assert version
    return outdir / unquote(name)


@pytest.fixture(scope="module")
def cell_data(status_book: StatusBook, status_html: BeautifulSoup) -> dict:
    """docname -> the per-cell details the script renders when a row is opened."""
    data = json.loads(cells_file(status_book.html.outdir, status_html).read_text("utf-8"))
    assert data["v"] == 1
    return data["nb"]


# -- the table ---------------------------------------------------------------------
def test_one_row_per_notebook_and_gone_baseline_notebook(table):
    names = [docname_of(r) for r in rows(table)]
    assert set(names) == NOTEBOOKS | {"retired"}
    assert len(names) == len(set(names))
    retired = row_by_docname(table, "retired")
    assert "gpu-status-row-gone" in retired["class"]
    assert retired.find("a") is None  # no page to link to


def test_headers_are_sortable_buttons(table):
    headers = table.thead.find_all("th")
    assert all(th.get("scope") == "col" for th in headers)
    assert all(th.find("button", attrs={"type": "button"}) for th in headers)
    # the default columns fit a theme's content column; the rest is in each row's details
    assert [th["data-sort-key"] for th in headers] == ["name", "status", "time", "device",
                                                       "flags"]
    sorted_by = [th for th in headers if th.has_attr("aria-sort")]
    assert [(th["data-sort-key"], th["aria-sort"]) for th in sorted_by] == [
        ("time", "descending")]
    for row in rows(table):
        assert row.tr.th["scope"] == "row"
        assert len(row.tr.find_all(["th", "td"], recursive=False)) == len(headers)


def test_peak_memory_of_each_executed_notebook(table):
    for row in rows(table):
        memory = cell(row, "memory", table)
        if docname_of(row) == "retired":
            assert memory.get_text() == "–"
        elif "gpu-status-row-ok" in row["class"]:
            assert memory.get_text().endswith(" MiB")
            assert float(memory.get_text().split()[0]) > 0


def test_default_order_is_slowest_first(table):
    times = [cell(r, "time", table)["data-value"] for r in rows(table)
             if docname_of(r) != "retired"]
    numbers = [float(t) for t in times]
    assert numbers == sorted(numbers, reverse=True)
    # notebooks only in the baseline come last
    assert docname_of(rows(table)[-1]) == "retired"


def test_status_texts_without_emoji(table):
    def status(docname):
        return cell(row_by_docname(table, docname), "status", table).get_text(strip=True)

    assert status("failing") == "error: ValueError"
    assert status(HOSTILE) == "error: RuntimeError"
    for docname in ("fast", "slow", "jaxnb", "gone"):
        assert status(docname) == "ok"
    failing = cell(row_by_docname(table, "failing"), "status", table)
    assert failing.select_one(".gpu-status-mark.gpu-status-error")["title"].startswith(
        "ValueError")
    assert not EMOJI.search(table.get_text())


def test_provenance_backend_and_device(table):
    jax_row = row_by_docname(table, "jaxnb")
    assert cell(jax_row, "executed", table).get_text(" ", strip=True).startswith("this build")
    assert cell(jax_row, "executed", table).find("time")["datetime"]
    assert cell(jax_row, "device", table).get_text().startswith("JAX cpu — CPU")
    assert cell(row_by_docname(table, "fast"), "device", table).get_text().startswith(
        "no JAX — CPU")


def test_slowest_cell_links_to_the_cell_in_its_page(status_book: StatusBook, table):
    slow = row_by_docname(table, "slow")
    link = cell(slow, "slowest", table).find("a")
    # the sleep is the second code cell, and the fourth cell of the notebook
    assert link.get_text() == "cell 2"
    assert link["href"] == "slow.html#cell-3"
    page = soup_of(status_book.html.outdir / "slow.html")
    assert page.find(id="cell-3").select_one("pre").get_text().startswith("time.sleep")
    assert int(cell(slow, "cells", table).get_text()) == 3


def test_links_point_to_existing_pages(status_book: StatusBook, table):
    for row in rows(table):
        for link in row.select("a[href]"):
            page, _, anchor = link["href"].partition("#")
            from urllib.parse import unquote

            target = status_book.html.outdir / unquote(page)
            assert target.is_file(), link["href"]
            if anchor:
                assert soup_of(target).find(id=anchor) is not None, link["href"]


def test_per_cell_details_come_from_the_data_file(status_html, table, cell_data):
    raw = str(status_html.select_one(".gpu-status table"))
    # one row per notebook in the page, the cells only in the data file (a flagged
    # cell's code is in the findings above the table, not in it)
    assert "time.sleep(0.5)" not in raw and "gpu-status-cell-table" not in raw
    for row in rows(table):
        docname = docname_of(row)
        details = row.select_one("tr.gpu-status-details")
        # without the script the details hold the error and the columns not shown
        assert not details.has_attr("hidden")
        assert fact(row, "memory")
        if docname == "retired":
            assert details.select_one(".gpu-status-cells") is None
            continue
        # the script finds the notebook's cells by the row's docname
        assert details.select_one(".gpu-status-cells")
        assert len(cell_data[docname]["c"]) == int(cell(row, "cells", table).get_text())
    flagged = [c for c in cell_data["slow"]["c"] if "f" in c]
    assert len(flagged) == 1
    assert flagged[0]["l"] == "time.sleep(0.5)"
    assert [rule for rule, _ in flagged[0]["f"]][:2] == ["slow", "share"]
    assert any("limit 0.30 s" in reason for _, reason in flagged[0]["f"])
    assert flagged[0]["s"] == max(c["s"] for c in cell_data["slow"]["c"])
    assert int(cell(row_by_docname(table, "slow"), "flags", table)["data-value"]) == 1


def test_jax_recompilation_hint(table, cell_data):
    scale = next(c for c in cell_data["jaxnb"]["c"] if c["l"] == "@jax.jit")
    hints = [reason for rule, reason in scale["f"] if rule in HINT_RULES]
    # with the input types of its three programs (jnp.ones(n) for n in 1, 2, 3)
    assert any("recompiled" in h and "jit(scale) (3x: f32[1]; f32[2]; f32[3])" in h
               for h in hints), hints
    assert "jit(scale) 3×" in scale["n"]
    share_text = cell(row_by_docname(table, "jaxnb"), "compile", table).get_text()
    assert share_text.endswith(" s)") and "%" in share_text


def test_counts_agree(status_book: StatusBook, status_html, table):
    """The summary's counts add up to the table's rows (the filter counts rows); a note
    (an import cell) is listed among the findings but never counted as flagged."""
    summary = status_html.select_one(".gpu-status-summary").get_text()
    assert summary.startswith("6 notebooks: 2 error, 4 ok (6 this build, 0 from the cache)")
    # the sleep, jaxnb's first jitted cell and its import cell (a note), and on a busy
    # machine also the failing cells whose tracebacks took longer than the slow limit:
    # the build's own analysis says how many
    status = json.loads((status_book.html.outdir / "execution-status.json").read_text())
    entries = [c for nb in status["analysis"].values() for c in nb["flagged_cells"]]
    notes = sum(all(flag["rule"] in NOTE_RULES for flag in c["flags"]) for c in entries)
    expected = len(entries) - notes
    assert expected >= 2
    assert f"{expected} flagged cells" in summary and "1 notebook only in the baseline" in summary
    assert len(rows(table)) == 6 + 1
    flagged = sum(int(cell(r, "flags", table)["data-value"] or 0) for r in rows(table))
    findings = status_html.select("li.gpu-status-finding")
    assert flagged == expected and flagged + notes == len(findings)


def test_totals_row(table):
    totals = table.select_one("tfoot tr.gpu-status-totals")
    values = [c.get_text(" ", strip=True) for c in totals.find_all(["th", "td"])]
    assert values[0] == "All notebooks: 6"
    assert values[1] == "2 error, 4 ok"
    flags = sum(int(cell(r, "flags", table)["data-value"] or 0) for r in rows(table))
    assert int(values[column(table, "flags")]) == flags
    assert values[column(table, "device")] == "1 machine"


def test_hostile_content_is_escaped(status_book: StatusBook, status_html, table, cell_data):
    raw = (status_book.html.outdir / "status.html").read_text(encoding="utf-8")
    fragment = str(status_html.select_one(".gpu-status"))
    assert "<script>alert" not in raw.split('class="gpu-status"', 1)[1]
    assert "<b>bold" not in fragment
    row = row_by_docname(table, HOSTILE)
    assert "<script>alert(1)</script>" in row.tr.th.get_text()
    # the cells' first lines, "</script>" included, are data of the JSON file only
    first_lines = [c["l"] for c in cell_data[HOSTILE]["c"]]
    assert first_lines == ['s = "<script>alert(1)</script><b>bold</b>"',
                           'raise RuntimeError("<script>alert(1)</script><b>bold</b>")']
    assert "alert(1)</script><b>bold</b>\")" not in raw
    assert row.select_one(".gpu-status-error-message code").get_text().endswith(
        "<script>alert(1)</script><b>bold</b>")
    assert row.find("script") is None and row.find("b") is None
    assert row["id"] == row_id(HOSTILE) and re.fullmatch(r"[A-Za-z0-9_-]+", row["id"])


def test_baseline_columns(table):
    slow = row_by_docname(table, "slow")
    assert "gpu-status-regression" in slow["class"]
    # the time shows the baseline's inline, the regression and the device change
    time = cell(slow, "time", table).get_text(" ", strip=True)
    assert re.fullmatch(r"\S+ m?s → \S+ m?s, \S+× regression device changed", time), time
    assert float(cell(slow, "ratio", table).get_text().rstrip("×")) > 1.5
    assert cell(slow, "baseline_device", table).get_text() == "GPU: Tesla T4"
    fast = row_by_docname(table, "fast")
    assert float(cell(fast, "ratio", table).get_text().rstrip("×")) < 1
    assert "regression" not in cell(fast, "time", table).get_text()
    for docname in ("failing", "jaxnb", HOSTILE, "gone"):
        assert cell(row_by_docname(table, docname), "baseline", table).get_text() == "new"
    retired = row_by_docname(table, "retired")
    assert cell(retired, "status", table).get_text().startswith("gone")
    assert cell(retired, "baseline", table).get_text() == "3.00 s"


def test_baseline_per_cell(cell_data):
    slow = cell_data["slow"]
    assert slow["cmp"] == 1
    sleep = next(c for c in slow["c"] if "f" in c)
    assert "regression" in [rule for rule, _ in sleep["f"]]
    assert sleep["b"].endswith(" s") and sleep["r"].endswith("×")
    (gone,) = slow["g"]
    assert "removed_cell()" in gone["l"]
    # a notebook new since the baseline: no baseline time for its cells
    assert not any("b" in c for c in cell_data["jaxnb"]["c"])


# -- options -------------------------------------------------------------------------
def test_options_sort_min_seconds_and_cells(status_book: StatusBook):
    page = soup_of(status_book.html.outdir / "options.html")
    first, second = page.select("table.gpu-status-table")
    titles = [r.tr.th.find(string=True).casefold() for r in rows(first)
              if "gpu-status-row-gone" not in r["class"]]  # gone notebooks come last
    assert titles == sorted(titles)
    assert first.select_one('th[data-sort-key="name"]')["aria-sort"] == "ascending"
    # notebooks below 0.4 s would be hidden: every listed executed notebook is slower
    listed = [float(cell(r, "time", first)["data-value"]) for r in rows(first)
              if cell(r, "time", first)["data-value"]]
    assert all(t >= 0.4 for t in listed)
    assert first.select(".gpu-status-cells") == []
    assert first.select_one("tfoot th").get_text() == "All notebooks: 6"  # still counted
    # bad options: the defaults
    assert second.select_one('th[data-sort-key="time"]')["aria-sort"] == "descending"
    assert second.select("details")
    # row ids only once per page
    assert all(not r.has_attr("id") for r in rows(second))


def test_single_page_html_renders_the_tables_of_the_pages_below_the_root(
        status_book: StatusBook):
    """singlehtml assembles the book into the root's tree (the root itself has no
    table): every page's status and environment tables are in it, none left out by
    the skipping of HTML pages that hold no table."""
    single = sphinx_build(status_book.srcdir, status_book.builddir, "singlehtml",
                          STATUS_BOOK_CONFIG)
    page = soup_of(single.outdir / "index.html")
    assert len(page.select("table.gpu-status-table")) == 1  # status.md (options.rst: no toctree)
    assert page.select("table.gpu-environment-table")


def test_html_tree_may_hold_follows_the_toctrees_below_the_page():
    """Which HTML pages the placeholder post-transforms walk: the page noted by a
    directive, or one whose toctrees include it (singlehtml's root), never a sibling."""
    env = SimpleNamespace(toctree_includes={"index": ["a", "b"], "a": ["a1"],
                                            "a1": ["index"], "b": []})
    assert html_tree_may_hold(env, "a1", {"a1"})
    assert html_tree_may_hold(env, "index", {"a1"})  # two levels below
    assert not html_tree_may_hold(env, "b", {"a1"})
    assert not html_tree_may_hold(env, "index", set())
    assert not html_tree_may_hold(env, "index", {"orphan"})  # ends despite the cycle


def test_bad_options_warn_with_location(status_book: StatusBook):
    lines = [line for line in status_book.html.warning_lines
             if "gpu_admonition.directive" in line]
    assert len(lines) == 3
    assert all("options.rst:14" in line for line in lines)
    assert {re.search(r"invalid :(\S+):", line).group(1) for line in lines} == {
        "sort", "min-seconds", "cells"}


def test_parse_options():
    messages = []
    assert parse_options({}, messages.append) == StatusOptions()
    assert parse_options({"sort": "Name", "min-seconds": "2.5", "cells": "no"},
                         messages.append) == StatusOptions("name", 2.5, False)
    assert parse_options({"cells": None}, messages.append).cells is True  # bare flag
    assert not messages
    assert parse_options({"min-seconds": "-1"}, messages.append).min_seconds == 0
    assert parse_options({"min-seconds": "nan"}, messages.append).min_seconds == 0
    assert len(messages) == 2


# -- notebook pages: anchors and badges -------------------------------------------
def test_cell_anchors_and_badges(status_book: StatusBook):
    slow = soup_of(status_book.html.outdir / "slow.html")
    cells = slow.select("div.cell")
    assert [c.get("id") for c in cells] == ["cell-1", "cell-3", "cell-4"]
    badges = slow.select(".gpu-cell-badge")
    assert len(badges) == 1
    badge = badges[0]
    assert badge.find_parent("div", class_="cell")["id"] == "cell-3"
    link = badge.find("a")
    # to the cell's own line in its notebook's row, which exists on the status page
    assert link["href"] == "status.html#gpu-status-slow-cell-2"
    status = soup_of(status_book.html.outdir / "status.html")
    target = status.find(id="gpu-status-slow-cell-2")
    assert target.find_parent("tbody")["id"] == "gpu-status-slow"
    assert target.a.get_text() == "cell 2" and target.a["href"] == "slow.html#cell-3"
    # plain words, and where the link goes
    assert re.fullmatch(r"\S+ m?s, \d+% of this page's cell time — slow, large share, "
                        r"regression \(on the status page\)", link.get_text()), link.get_text()
    assert badge.find_parent("div", class_="cell").find("pre")  # the code keeps its place
    assert "limit 0.30 s" in link["title"]
    assert "limit 0.30 s" in badge.select_one(".gpu-visually-hidden").get_text()
    fast = soup_of(status_book.html.outdir / "fast.html")
    assert fast.select(".gpu-cell-badge") == []
    assert [c.get("id") for c in fast.select("div.cell")] == ["cell-1", "cell-2"]


def test_assets_only_where_needed(status_book: StatusBook):
    def assets(page):
        soup = soup_of(status_book.html.outdir / page)
        scripts = [s.get("src") or "" for s in soup.select("script")]
        styles = [s.get("href") or "" for s in soup.select("link[rel=stylesheet]")]
        return (any("gpu-status.js" in s for s in scripts),
                any("gpu-status.css" in s for s in styles))

    assert assets("status.html") == (True, True)
    assert assets("slow.html") == (False, True)  # a badge
    assert assets("fast.html") == (False, False)
    assert assets("index.html") == (False, False)
    assert (status_book.html.outdir / "_static" / "gpu-status.js").is_file()


# -- opt-in warnings -----------------------------------------------------------------
def test_flagged_cells_name_their_line_as_the_json_does(
        status_book: StatusBook, status_html):
    """One name for a cell everywhere: the page's list of flagged cells gives the
    file and line that execution-status.json gives (and the warnings, below)."""
    import json

    report = json.loads(status_book.html.read("execution-status.json"))
    slow = next(nb for nb in report["notebooks"] if nb["docname"] == "slow")
    assert slow["source"].endswith("slow.md")
    located = {f"{slow['source']}:{c['line']}" for c in slow["cells"] if c["line"]}
    shown = [span.get_text() for span in
             status_html.select("li.gpu-status-finding .gpu-status-docname")]
    on_page = [text for text in shown if "slow.md:" in text]
    assert on_page and set(on_page) <= located


def test_slow_cell_and_regression_warnings_once(status_book: StatusBook, table):
    warnings = status_book.html.warning_lines
    slow_cells = [line for line in warnings if "gpu_admonition.slow_cell" in line]
    flagged = sum(int(cell(r, "flags", table)["data-value"] or 0) for r in rows(table))
    # an import cell (jaxnb's cell 1) is shown with its note, never warned about, and
    # not counted in the flags column (issue 33: a note is no flagged cell)
    assert len(slow_cells) == flagged
    assert not any("jaxnb.md:13" in line for line in slow_cells)
    sleep = [line for line in slow_cells if "/slow.md:" in line]
    assert len(sleep) == 1
    # the line MyST-NB gives the cell (its closing fence in a MyST notebook)
    source = (status_book.srcdir / "slow.md").read_text().splitlines()
    line = int(re.search(r"/slow\.md:(\d+):", sleep[0]).group(1))
    sleep_line = next(n for n, text in enumerate(source, 1) if text.startswith("time.sleep"))
    assert sleep_line - 1 <= line <= sleep_line + 1
    regressions = [line for line in warnings if "gpu_admonition.regression" in line]
    assert any("notebook regressed" in r and "/slow.md" in r for r in regressions)
    assert any("cell 2 regressed" in r for r in regressions)
    baseline = [line for line in warnings if "gpu_admonition.baseline" in line]
    assert baseline == []


# -- other builders ------------------------------------------------------------------
def test_text_builder_plain_table(status_book: StatusBook):
    text = status_book.text.read("status.txt")
    assert "Execution status of the notebooks" in text
    # the HTML table's columns and values
    for header in ("Notebook", "Status", "Time", "Backend and device", "Flagged cells"):
        assert header in text
    table = text[text.index("Execution status of the notebooks"):]
    assert "regression" in table and "changed" in table  # the time column's marks
    assert "ValueError" in text and "RuntimeError" in text
    assert "All notebooks: 6" in text
    assert "Retired notebook" in text
    # the flagged cells first, as on the HTML page: why and what to do
    findings = text.index("flagged cells, slowest first")
    assert findings < text.index("Execution status of the notebooks")
    assert "Slow notebook, cell 2" in text[findings:] and "What to do:" in text[findings:]
    assert "the device changed: GPU: Tesla T4 →" in " ".join(text.split())


def test_latex_builder_plain_table(status_book: StatusBook):
    tex = next(status_book.latex.outdir.glob("*.tex")).read_text(encoding="utf-8")
    assert "Execution status of the notebooks" in tex
    assert r"\begin{tabulary}" in tex or r"\begin{longtable}" in tex
    assert "error: ValueError" in tex


# -- pure rendering ------------------------------------------------------------------
def test_render_html_escapes_everything():
    hostile = "<script>alert(1)</script>"
    record = NotebookRecord.from_dict({
        "docname": f"a/{hostile}", "status": "error", "title": f"<b>{hostile}</b>",
        "provenance": "executed", "executed_at": "2026-01-01T00:00:00+00:00",
        "runtime_seconds": 2.0, "capture": "ok",
        "error": {"type": "<i>Bad</i>", "message": hostile, "cell_index": 1},
        "environment": {"host": {"cpu": hostile}, "jax": {"backend": "<gpu>",
                        "devices": [{"platform": "gpu", "kind": hostile}]}},
        "cells": [{"index": 1, "execution_count": 1, "seconds": 1.5, "first_line": hostile,
                   "error": "<i>Bad</i>", "compilations": {hostile: 3},
                   "compile_seconds": 1.0}],
    })
    analysis = analyse(StatusReport([record]), Thresholds(slow_cell_seconds=1.0),
                       StatusReport([NotebookRecord.from_dict(
                           {"docname": hostile, "status": "ok", "title": hostile})]))
    markup = render_html(analysis, StatusOptions(), lambda d: f"{d}.html?x=1&y=2")
    assert "<script" not in markup and "<b>" not in markup and "<i>" not in markup
    assert "<gpu>" not in markup
    soup = BeautifulSoup(markup, "lxml")
    assert hostile in soup.get_text()
    assert soup.select_one("th a")["href"] == f"a/{hostile}.html?x=1&y=2"
    # the data file's URL and the script's texts are attributes, escaped
    src = f'{hostile}.json?"x'
    soup = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: None,
                                     cells_src=src), "lxml")
    root = soup.select_one(".gpu-status")
    assert root["data-cells-src"] == src and soup.find("script") is None
    assert json.loads(root["data-cell-labels"])["flag"]["slow"] == "slow"
    (cell_entry,) = cells_data(analysis)["nb"][f"a/{hostile}"]["c"]
    assert (cell_entry["l"], cell_entry["e"]) == (hostile, "<i>Bad</i>")
    # the script takes the cell's name and anchor from the data, as the page names them
    assert cell_entry["m"] == "cell 1"


def test_a_finding_shows_its_code_and_compile_against_run():
    """The findings box gives, for each cell, its code line (monospace, escaped, cut
    when long) and the compile/run split with first call or warm, as the console."""
    long_call = "x = run_everything(" + ", ".join(f"arg{i}" for i in range(60)) + ")"
    record = NotebookRecord.from_dict({
        "docname": "lecture", "status": "ok", "provenance": "executed",
        "executed_at": "2026-01-01T00:00:00+00:00", "runtime_seconds": 30.0,
        "capture": "ok",
        "cells": [
            {"index": 0, "execution_count": 1, "seconds": 12.0, "first_line": long_call,
             "compilations": {"jit(step)": 1}, "compile_seconds": 4.0},
            {"index": 1, "execution_count": 2, "seconds": 11.0, "first_line": "<b>y</b>"},
        ]})
    analysis = analyse(StatusReport([record]), Thresholds())
    soup = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: None), "lxml")
    first, second = soup.select("li.gpu-status-finding")
    code = first.select_one(".gpu-status-finding-code code").get_text()
    assert code.startswith("x = run_everything(arg0") and code.endswith("…")
    assert len(code) < len(long_call)
    timing = first.select_one(".gpu-status-finding-timing").get_text()
    assert re.fullmatch(r"compile \S+ s, run \S+ s \(first call\)", timing)
    assert timing == WORDS.timing(findings(analysis)[0])  # the console's words
    # in the order of the console: where, facts, code and timing (one line), why, what to do
    assert [p["class"][0] for p in first.find_all("p")] == [
        "gpu-status-finding-where", "gpu-status-finding-facts", "gpu-status-finding-run",
        "gpu-status-finding-reason", "gpu-status-finding-action"]
    run = first.select_one(".gpu-status-finding-run")
    assert [span["class"][0] for span in run.find_all("span", recursive=False)] == [
        "gpu-status-finding-code", "gpu-status-finding-timing"]
    # a cell that compiled nothing has no split; its code is text, not markup
    assert second.select_one(".gpu-status-finding-timing") is None
    assert second.select_one(".gpu-status-finding-code code").get_text() == "<b>y</b>"
    assert second.find("b") is None


@pytest.mark.parametrize("columns", [("name", "status", "time", "device", "flags"),
                                     ("name", "time", "memory")])
def test_a_long_table_gets_fixed_column_widths(columns):
    """Past MANY_ROWS notebooks the table has fixed column widths (so that the
    browser lays out only the rows on screen), one per shown column, adding up to
    the whole table; a shorter table keeps widths that follow its content."""
    def table(notebooks: int):
        records = [NotebookRecord.from_dict({"docname": f"nb{n}", "status": "ok",
                                             "runtime_seconds": n, "capture": "ok"})
                   for n in range(notebooks)]
        markup = render_html(analyse(StatusReport(records), Thresholds()),
                             StatusOptions(columns=columns), lambda d: f"{d}.html")
        return BeautifulSoup(markup, "lxml").select_one("table.gpu-status-table")

    short = table(MANY_ROWS)
    assert "gpu-status-many" not in short["class"] and short.find("colgroup") is None
    long = table(MANY_ROWS + 1)
    assert "gpu-status-many" in long["class"]
    widths = [float(re.fullmatch(r"width:([\d.]+)%", col["style"]).group(1))
              for col in long.select("colgroup > col")]
    assert len(widths) == len(columns) == len(long.select("thead th"))
    assert abs(sum(widths) - 100) < 0.5 and min(widths) > 5
    style = long["style"].split(";")
    assert re.fullmatch(r"--gpu-status-least-width:\d+em", style[-1])
    # the phone's layout names each value by its column, from the table's style: one
    # label per column (the nth cell of a row), not one per cell
    labels = [th.get_text() for th in long.select("thead th")][1:]
    assert style[:-1] == [f'--gpu-status-label-{position}:"{label}"'
                          for position, label in enumerate(labels, start=2)]
    assert short["style"] == ";".join(style[:-1])


def test_cells_data_file_beside_the_page(tmp_path, caplog):
    from types import SimpleNamespace

    from sphinx_gpu_admonition.ext.status_page import write_cells_data

    records = [NotebookRecord.from_dict({
        "docname": "a", "status": "ok", "capture": "ok", "runtime_seconds": 1.0,
        "cells": [{"index": 0, "execution_count": 1, "seconds": 0.5, "first_line": "</script>"}],
    })]
    analysis = analyse(StatusReport(records), Thresholds())
    builder = SimpleNamespace(get_outfilename=lambda docname: str(tmp_path / f"{docname}.html"))
    (src,) = write_cells_data(builder, "status", analysis)
    data_file = tmp_path / "status.gpu-cells.json"
    assert src.startswith("status.gpu-cells.json?v=")
    assert json.loads(data_file.read_text("utf-8")) == json.loads(json.dumps(cells_data(analysis)))
    written = data_file.stat().st_mtime_ns
    assert write_cells_data(builder, "status", analysis) == [src]  # same: not rewritten
    assert data_file.stat().st_mtime_ns == written
    # a builder without a file per page, EPUB, a file that cannot be written: no details
    assert write_cells_data(SimpleNamespace(), "status", analysis) is None
    epub = SimpleNamespace(embedded=True, get_outfilename=builder.get_outfilename)
    assert write_cells_data(epub, "other", analysis) is None
    assert not (tmp_path / "other.gpu-cells.json").exists()
    blocked = SimpleNamespace(get_outfilename=lambda d: str(tmp_path / "blocked" / "s.html"))
    (tmp_path / "blocked" / "s.gpu-cells.json").mkdir(parents=True)
    assert write_cells_data(blocked, "status", analysis) is None
    assert "could not write the per-cell data" in caplog.text


def test_cells_of_a_large_book_are_in_files_of_fifty_notebooks(tmp_path):
    """Opening a row reads the file that holds its notebook only; every row names
    that file, and a later build with fewer notebooks leaves no stale file."""
    from types import SimpleNamespace

    from sphinx_gpu_admonition.ext.status_page import write_cells_data
    from sphinx_gpu_admonition.render.status_html import NOTEBOOKS_PER_CELLS_FILE

    def analysis_of(notebooks: int):
        return analyse(StatusReport([NotebookRecord.from_dict({
            "docname": f"nb{n:03d}", "status": "ok", "capture": "ok", "runtime_seconds": 1.0,
            "cells": [{"index": 0, "execution_count": 1, "seconds": 0.5, "first_line": f"x{n}"}],
        }) for n in range(notebooks)]), Thresholds())

    builder = SimpleNamespace(get_outfilename=lambda docname: str(tmp_path / f"{docname}.html"))
    analysis = analysis_of(2 * NOTEBOOKS_PER_CELLS_FILE + 20)
    sources = write_cells_data(builder, "status", analysis)
    assert [src.split("?")[0] for src in sources] == [
        "status.gpu-cells.json", "status.gpu-cells-1.json", "status.gpu-cells-2.json"]
    files = [json.loads((tmp_path / src.split("?")[0]).read_text("utf-8")) for src in sources]
    assert [len(data["nb"]) for data in files] == [50, 50, 20]
    soup = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: f"{d}.html",
                                     cells_src=sources), "lxml")
    assert soup.select_one(".gpu-status")["data-cells-src"].split(" ") == sources
    places = soup.select(".gpu-status-cells")
    assert len(places) == 120
    for place in places:
        docname = place.find_parent("tbody").select_one(".gpu-status-docname").get_text()
        cells = files[int(place["data-cells-file"])]["nb"][docname]["c"]
        assert cells[0]["l"] == f"x{int(docname[2:])}"
    # fewer notebooks: one file, no file attribute, no stale files
    # (another page's file stays)
    (tmp_path / "statusx.gpu-cells-7.json").write_text("{}", encoding="utf-8")
    small = analysis_of(10)
    sources = write_cells_data(builder, "status", small)
    assert len(sources) == 1
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "status.gpu-cells.json", "statusx.gpu-cells-7.json"]
    soup = BeautifulSoup(render_html(small, StatusOptions(), lambda d: f"{d}.html",
                                     cells_src=sources), "lxml")
    assert not soup.select(".gpu-status-cells[data-cells-file]")


def test_empty_book():
    markup = render_html(analyse(StatusReport([]), Thresholds()), StatusOptions(),
                         lambda d: None)
    assert "No notebooks have been executed yet." in markup


# -- cache, deletion and a second machine ----------------------------------------
@pytest.fixture(scope="module")
def cache_book(tmp_path_factory):
    """Cache mode: execute, reuse from the cache (recorded "on a T4"), delete a notebook."""
    dest = tmp_path_factory.mktemp("status-cache")
    srcdir = dest / "src"
    srcdir.mkdir()
    for name in ("conf.py", "status.md", "fast.md", "gone.md"):
        shutil.copy(ROOTS / "status" / name, srcdir / name)
    (srcdir / "index.md").write_text("# Cached book\n\n```{toctree}\nstatus\nfast\ngone\n```\n",
                                     encoding="utf-8")
    builddir = dest / "_build"
    config = {"nb_execution_mode": "cache"}
    first = sphinx_build(srcdir, builddir, "html", config, freshenv=True)
    first_html = soup_of(first.outdir / "status.html")
    # the cached "fast" notebook was executed on a GPU runner
    from sphinx_gpu_admonition.model.files import SIDECAR_FOLDER

    sidecars = list(builddir.rglob(f"{SIDECAR_FOLDER}/*.json"))
    sidecars = [p for p in sidecars
                if json.loads(p.read_text()).get("record", {}).get("docname") == "fast"]
    assert len(sidecars) == 1, "no capture data saved beside the jupyter-cache"
    data = json.loads(sidecars[0].read_text())
    data["record"]["environment"] = gpu_baseline()["notebooks"][0]["environment"]
    sidecars[0].write_text(json.dumps(data))
    second = sphinx_build(srcdir, builddir, "html", config, freshenv=True)
    second_html = soup_of(second.outdir / "status.html")
    (srcdir / "gone.md").unlink()
    (srcdir / "index.md").write_text("# Cached book\n\n```{toctree}\nstatus\nfast\n```\n",
                                     encoding="utf-8")
    third = sphinx_build(srcdir, builddir, "html", config)
    third_html = soup_of(third.outdir / "status.html")
    return first_html, second_html, third_html, third


def test_cached_notebook_row(cache_book):
    first, second, _third, _ = cache_book
    before = cell(row_by_docname(first.select_one("table.gpu-status-table"), "fast"),
                  "executed", first.select_one("table.gpu-status-table"))
    table = second.select_one("table.gpu-status-table")
    after = cell(row_by_docname(table, "fast"), "executed", table)
    assert after.get_text(" ", strip=True).startswith("from the cache")
    assert before.get_text(" ", strip=True).startswith("this build")
    # the date is the one of the execution that produced the cached outputs
    assert after.find("time")["datetime"] == before.find("time")["datetime"]
    summary = second.select_one(".gpu-status-summary").get_text(" ")
    assert "2 notebooks: 2 ok (0 this build, 2 from the cache)" in summary
    # no baseline configured: no baseline columns
    assert table.select('th[data-sort-key="ratio"]') == []


def test_deleted_notebook_leaves_the_table(cache_book):
    _first, second, third, build = cache_book
    assert "gone" in [docname_of(r) for r in rows(second.select_one("table.gpu-status-table"))]
    table = third.select_one("table.gpu-status-table")
    assert [docname_of(r) for r in rows(table)] == ["fast"]
    assert table.select_one("tfoot th").get_text() == "All notebooks: 1"
    assert "1 removed" in build.status  # Sphinx's "updating environment" line


def test_two_machines_from_the_cache(cache_book):
    _first, second, third, _ = cache_book
    tables = second.select("table.gpu-environment-table")
    captions = [t.caption.get_text(" ", strip=True) for t in tables]
    assert len(tables) == 2
    assert any("Tesla T4" in c for c in captions)
    assert all(c.startswith("Machine ") for c in captions)
    gpu = next(t for t in tables if "Tesla T4" in t.caption.get_text())
    assert "Fast notebook" in gpu.get_text()
    # once "gone" (the only notebook executed here) is deleted, one machine is left
    assert len(third.select("table.gpu-environment-table")) == 1


# -- one analysis per build ---------------------------------------------------------
def test_the_records_are_analysed_once_per_build(tmp_path, monkeypatch):
    """Warnings, the three tables of two status pages, the badges and the reports
    share one analysis (no kernel: execution off)."""
    from sphinx_gpu_admonition.ext import build_analysis

    calls = []
    monkeypatch.setattr(build_analysis, "analyse",
                        lambda *args: calls.append(1) or analyse(*args))
    srcdir = tmp_path / "src"
    shutil.copytree(ROOTS / "status", srcdir)
    (srcdir / "baseline.json").write_text(json.dumps(gpu_baseline()), encoding="utf-8")
    build = sphinx_build(srcdir, tmp_path / "_build", "html",
                         {"nb_execution_mode": "off", "gpu_status_baseline": "baseline.json",
                          "gpu_warn_slow_cells": True, "gpu_warn_regressions": True},
                         freshenv=True)
    assert len(soup_of(build.outdir / "options.html").select("table.gpu-status-table")) == 2
    assert (build.outdir / "execution-status.json").is_file()
    assert len(calls) == 1


# -- a missing or corrupt baseline ---------------------------------------------------
@pytest.mark.parametrize("content", [None, "{not json", '{"schema": "other"}'])
def test_bad_baseline_warns_once_and_renders(tmp_path, content):
    srcdir = tmp_path / "src"
    shutil.copytree(ROOTS / "status", srcdir)
    if content is not None:
        (srcdir / "baseline.json").write_text(content, encoding="utf-8")
    build = sphinx_build(srcdir, tmp_path / "_build", "html",
                         {"nb_execution_mode": "off", "gpu_status_baseline": "baseline.json"},
                         freshenv=True)
    baseline = [line for line in build.warning_lines if "gpu_admonition.baseline" in line]
    assert len(baseline) == 1, build.warnings
    table = soup_of(build.outdir / "status.html").select_one("table.gpu-status-table")
    assert len(rows(table)) == len(NOTEBOOKS)
    assert table.select('th[data-sort-key="ratio"]') == []
    status = cell(row_by_docname(table, "fast"), "status", table).get_text()
    assert status == "not executed (execution off)"


# -- GPU rows: the incident's status files (tests/data, hand-made from its report) --
DATA = TESTS / "data"


def test_gpu_incident_against_the_cpu_build():
    from sphinx_gpu_admonition.model.files import read_status

    gpu = read_status(DATA / "incident-gpu-t4-status.json")
    cpu = read_status(DATA / "incident-cpu-status.json")
    analysis = analyse(gpu, Thresholds(), cpu)
    soup = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: f"{d}.html"), "lxml")
    table = soup.select_one("table.gpu-status-table")
    (row,) = rows(table)
    assert cell(row, "device", table).get_text() == "JAX gpu — GPU: Tesla T4"
    assert cell(row, "baseline_device", table).get_text().startswith("CPU")
    assert "regression" in cell(row, "time", table).get_text()
    assert "device changed" in cell(row, "time", table).get_text()
    flagged = [c for c in cells_data(analysis)["nb"][docname_of(row)]["c"] if "f" in c]
    scan = max(flagged, key=lambda c: c["s"])
    assert {"slow", "regression", "sequential_loop"} <= {rule for rule, _ in scan["f"]}
    assert any("lax.scan" in reason for rule, reason in scan["f"] if rule in HINT_RULES)


def test_status_file_renders_the_gpu_case(tmp_path):
    """``:status-file:`` / ``:baseline-file:``: the docs' GPU case page, from tests/data;
    a file that cannot be read is one warning at the directive."""
    srcdir = tmp_path / "src"
    shutil.copytree(ROOTS / "statusfile", srcdir)
    shutil.copytree(DATA, srcdir / "data")
    index = srcdir / "index.md"
    index.write_text(index.read_text("utf-8") + "\n```{execution-status}\n"
                     ":status-file: missing.json\n```\n", "utf-8")
    build = sphinx_build(srcdir, tmp_path / "_build", "html", freshenv=True)
    page = soup_of(build.outdir / "index.html")
    headline = page.select_one(".gpu-status-headline").get_text()
    assert "the device changed: CPU" in headline and "→ GPU: Tesla T4" in headline
    first = page.select_one("li.gpu-status-finding")
    assert "sequential loop" in first.select_one(".gpu-status-flag-names").get_text()
    assert "lax.scan" in first.select_one(".gpu-status-finding-reason").get_text()
    assert 'jax.devices("cpu")[0]' in first.select_one(".gpu-status-finding-action").get_text()
    assert first.select_one(".gpu-status-finding-where a") is None  # no such page here
    (table,) = page.select("table.gpu-status-table")
    assert "device changed" in cell(rows(table)[0], "time", table).get_text()
    (warning,) = [w for w in build.warning_lines if "gpu_admonition.directive" in w]
    assert "index.md:8" in warning and "missing.json" in warning


def bar_shares(bar) -> dict[str, float]:
    """A time bar's shares in percent, from its style (``--gpu-bar-width:34.9%;...``):
    ``width`` (of the slowest notebook's time), ``flagged`` and ``compile``."""
    declarations = dict(part.split(":") for part in bar["style"].split(";"))
    return {name: float(declarations[f"--gpu-bar-{name}"].rstrip("%"))
            for name in ("width", "flagged", "compile")}


def test_time_bars_against_the_slowest_notebook(table):
    """Each executed notebook's time as a bar; a text for screen readers; none in
    other builders (the plain table has no markup for it)."""
    bars = {docname_of(r): r.select_one(".gpu-bar") for r in rows(table)}
    assert bars["retired"] is None  # gone: nothing ran
    widths = {d: bar_shares(b)["width"] for d, b in bars.items() if b is not None}
    times = {docname_of(r): float(cell(r, "time", table)["data-value"]) for r in rows(table)
             if docname_of(r) in widths}
    assert widths[max(times, key=times.get)] == 100.0
    # longer time, longer bar (rounded widths may tie for close times)
    assert all(widths[a] <= widths[b] for a in widths for b in widths if times[a] < times[b])
    slow = bars["slow"]
    assert slow["role"] == "img" and "of the slowest notebook's time" in slow["aria-label"]
    assert bar_shares(slow)["flagged"] > 0
