"""render/status_rows.py: one row model for the HTML table and every other builder's.

Rows built from the status files in tests/data (no kernel, no Sphinx build): the
HTML table and the plain docutils table show the same text for every value.
"""

from __future__ import annotations

import itertools
import re

import pytest
from bs4 import BeautifulSoup
from conftest import TESTS

from sphinx_gpu_admonition.model.analysis import (
    Thresholds,
    analyse,
    is_shell_or_magic,
)
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.model.findings import findings
from sphinx_gpu_admonition.model.record import CellRecord, NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.labels import Labels
from sphinx_gpu_admonition.render.status_html import cells_data, findings_html, render_html
from sphinx_gpu_admonition.render.status_rows import (
    COLUMNS,
    MANY_ROWS,
    Mark,
    StatusOptions,
    parse_options,
    plain_text,
    status_rows,
    value,
)

DATA = TESTS / "data"


STATUS_FILES = sorted(DATA.glob("*.json"))


ALL_COLUMNS = StatusOptions(columns=COLUMNS)


def analyses():
    """Each status file alone, and against each other one as its baseline."""
    reports = {path.stem: read_status(path) for path in STATUS_FILES}
    cases = {name: analyse(report, Thresholds()) for name, report in reports.items()}
    for (new, report), (old, baseline) in itertools.permutations(reports.items(), 2):
        cases[f"{new} vs {old}"] = analyse(report, Thresholds(), baseline)
    return cases


CASES = analyses()


def squash(text: str) -> str:
    return " ".join(text.split())


def test_the_data_files_are_there():
    assert len(STATUS_FILES) >= 2


@pytest.mark.parametrize("case", sorted(CASES))
def test_html_shows_the_rows_values(case):
    analysis = CASES[case]
    rows = status_rows(analysis, ALL_COLUMNS, Labels.load())
    soup = BeautifulSoup(render_html(analysis, ALL_COLUMNS, lambda docname: None), "lxml")
    bodies = soup.select("tbody.gpu-status-notebook")
    assert [body.th.find(string=True) for body in bodies] == [row["title"] for row in rows.rows]
    keys = [column.key for column in rows.columns]
    assert [th["data-sort-key"] for th in soup.select("thead th")] == keys
    for body, row in zip(bodies, rows.rows, strict=True):
        cells = body.tr.find_all("td")
        for key, cell in zip(keys[1:], cells, strict=True):
            assert squash(cell.get_text()) == squash(plain_text(row["values"][key])), key
            assert cell["data-value"] == str(row["values"][key]["sort"])
    totals = soup.select_one("tr.gpu-status-totals")
    assert [td.get_text() for td in totals.find_all("td")] == [
        str(rows.totals["texts"][key]) for key in keys[1:]]
    assert soup.select_one(".gpu-status-summary").get_text() == rows.summary


def test_marks_read_the_same_in_text_and_html():
    """A value's marks: before the text, after it, or in place of an empty text."""
    item = value(1, "slow, share", (Mark("2", before=True, separator=": "),))
    assert plain_text(item) == "2: slow, share"
    item = value(1, "3.0 s", (Mark("new"), Mark("regression")))
    assert plain_text(item) == "3.0 s new regression"
    assert plain_text(value("", "", (Mark("new", separator=""),))) == "new"
    assert plain_text(value(1, "1.0 s", (Mark("cell 2", separator=" · "),))) == "1.0 s · cell 2"


def test_cell_data_names_each_cell_and_its_anchor():
    """The script reads the name and the anchor; it derives neither."""
    analysis = CASES[sorted(CASES)[0]]
    for result in analysis.notebooks:
        record = result.notebook
        entries = cells_data(analysis)["nb"][record.docname]["c"]
        for cell, entry in zip(record.cells, entries, strict=True):
            name = record.cell_name(cell)
            assert entry["m"] == name.label
            assert entry.get("a") == name.anchor


def test_a_translated_table_names_cells_in_its_language():
    analysis = CASES[sorted(CASES)[0]]
    labels = Labels.load(lambda text: "单元格 {number}" if text == "cell {number}" else text)
    entries = [entry for notebook in cells_data(analysis, labels)["nb"].values()
               for entry in notebook["c"]]
    assert entries and all(entry["m"].startswith("单元格 ") for entry in entries)


def _notebook(*sources: str) -> NotebookRecord:
    """A notebook whose cells are marked as the capture marks them from the page."""
    cells = [CellRecord(index=i, execution_count=i + 1, seconds=60.0,
                        first_line=source.splitlines()[0], shell=is_shell_or_magic(source))
             for i, source in enumerate(sources)]
    return NotebookRecord(docname="nb", status="ok", provenance="executed", capture="ok",
                          cells=cells)


def test_shell_cells_are_flagged_by_no_view():
    """A `!pip install` cell is the machine's time: no flag, so no finding, badge,
    warning or annotation (they all read the analysis), also when ``report`` reads the
    build's status file back (the mark is in the record)."""
    record = _notebook("!pip install quantecon", "%matplotlib inline\nimport jax")
    analysis = analyse(StatusReport([record]), Thresholds())
    (result,) = analysis.notebooks
    assert result.cell_flags[0] == ()
    assert result.cell_flags[1]  # slow, and Python after its magic
    assert [finding.name.number for finding in findings(analysis)] == [2]
    read_back = StatusReport.from_dict(StatusReport([record]).to_dict())
    assert [finding.name.number
            for finding in findings(analyse(read_back, Thresholds()))] == [2]
    record.cells[0].shell = False
    assert [finding.name.number
            for finding in findings(analyse(StatusReport([record]), Thresholds()))] == [1, 2]


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

def test_notes_come_after_the_flagged_cells_they_are_not_counted_with():
    """An import cell (a note: paid once per kernel) slower than the lecture's slow
    cell is listed after it, so that "1 flagged cell, slowest first" opens with the
    flagged cell; the HTML title counts the flagged cell only."""
    record = _notebook("import jax\nimport numpy as np", "for i in range(10):\n    f(i)")
    record.cells[0].imports_only = True
    record.cells[0].seconds = 90.0
    record.cells[1].seconds = 30.0
    analysis = analyse(StatusReport([record]), Thresholds())
    rows = findings(analysis)
    assert [(row.name.number, row.is_note) for row in rows] == [(2, False), (1, True)]
    page = BeautifulSoup(findings_html(analysis, Labels.load(), lambda _docname: None),
                         "html.parser")
    title = page.select_one(".gpu-status-findings-title").get_text(" ", strip=True)
    assert title == "1 flagged cell, slowest first"
    listed = [item.select_one(".gpu-status-finding-where").get_text(" ", strip=True)
              for item in page.select(".gpu-status-finding")]
    assert listed[0].startswith("nb, cell 2") and listed[1].startswith("nb, cell 1")
