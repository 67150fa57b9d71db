"""``render/status_html.py``: the status page's HTML escapes everything, shows a finding's code
and its compile against run time, an empty book, a GPU incident against a CPU build."""

from __future__ import annotations

import json
import re

from bs4 import BeautifulSoup
from conftest import TESTS
from status_tables import cell, docname_of, rows

from sphinx_gpu_admonition.model.analysis import HINT_RULES, Thresholds, analyse
from sphinx_gpu_admonition.model.findings import findings
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS
from sphinx_gpu_admonition.render.status_html import cells_data, render_html
from sphinx_gpu_admonition.render.status_rows import (
    StatusOptions,
)


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


def test_empty_book():
    markup = render_html(analyse(StatusReport([]), Thresholds()), StatusOptions(),
                         lambda d: None)
    assert "No notebooks have been executed yet." in markup


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
