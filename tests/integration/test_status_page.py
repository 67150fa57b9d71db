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
from urllib.parse import unquote

import pytest
from bs4 import BeautifulSoup
from conftest import ROOTS, STATUS_BOOK_CONFIG, TESTS, StatusBook, gpu_baseline, sphinx_build
from status_tables import cell, column, docname_of, fact, rows, soup_of

from sphinx_gpu_admonition.model.analysis import HINT_RULES, NOTE_RULES, analyse
from sphinx_gpu_admonition.render.status_rows import (
    row_id,
)


@pytest.fixture(scope="module")
def status_html(status_book: StatusBook) -> BeautifulSoup:
    return soup_of(status_book.html.outdir / "status.html")


@pytest.fixture(scope="module")
def table(status_html: BeautifulSoup):
    return status_html.select_one("table.gpu-status-table")


HOSTILE = 'hostile<b>&"x'
NOTEBOOKS = {"fast", "slow", "failing", "jaxnb", HOSTILE, "gone"}
EMOJI = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff]")


def row_by_docname(table, docname: str):
    return next(r for r in rows(table) if docname_of(r) == docname)


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


def test_bad_options_warn_with_location(status_book: StatusBook):
    lines = [line for line in status_book.html.warning_lines
             if "gpu_admonition.directive" in line]
    assert len(lines) == 3
    assert all("options.rst:14" in line for line in lines)
    assert {re.search(r"invalid :(\S+):", line).group(1) for line in lines} == {
        "sort", "min-seconds", "cells"}


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
