"""The ``execution-status`` page on mystmd and the build's ``execution-status.json``.

Findings first (the same rows as the Sphinx page, the console and ``report``: the
model's :func:`~..model.findings.findings`), then one table row per page, slowest
first, naming its slowest cell as ``report`` does (``jax_page cell 3``). Plain MyST
nodes (paragraphs, lists, a table): no JavaScript.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._version import __version__
from ..model.analysis import BuildAnalysis, Thresholds, analyse, is_ci
from ..model.files import atomic_write, build_time, status_json_text
from ..model.findings import findings
from ..model.formatting import format_seconds
from ..model.record import (
    BUILD_SUCCEEDED,
    CACHE,
    NotebookRecord,
    StatusReport,
    sorted_slowest_first,
)
from ..render.junit import NEVER_FAIL, FailOn, junit_xml
from . import mdast

STATUS_CLASS = "gpu-execution-status"
PLACEHOLDER_CLASS = "gpu-execution-status-placeholder"
STATUS_FILE = "execution-status.json"
#: the Sphinx build's default name (``gpu_status_junit``), beside the JSON
JUNIT_FILE = "execution-status.junit.xml"
ENGINE = "mystmd"


def placeholder() -> list[mdast.Node]:
    """What the directive leaves for the project-stage transform, which runs after
    every page was executed."""
    return [{"type": "div", "class": f"{STATUS_CLASS} {PLACEHOLDER_CLASS}", "children": []}]


def build_report(records: list[NotebookRecord], project: str | None = None,
                 execute_parallel: int = 1, thresholds: Thresholds | None = None
                 ) -> tuple[StatusReport, BuildAnalysis]:
    """The build's report; ``execute_parallel``: ``--execute-parallel N`` of the build
    (pages executed at once; recorded, as it explains a GPU's out-of-memory failure)."""
    report = StatusReport(notebooks=records, build={
        "created": build_time(),
        "project": project,
        "builder": "mystmd",
        "engine": ENGINE,
        "execution_mode": "cache",
        "generator": f"sphinx-gpu-admonition {__version__}",
        "outcome": BUILD_SUCCEEDED,
        "failure": None,
        "execute_parallel": execute_parallel,
        "ci": is_ci(os.environ),
    })
    analysis = analyse(report, thresholds or Thresholds())
    report.analysis = analysis.to_dict()
    return report, analysis


def write_status_file(report: StatusReport, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / STATUS_FILE
    atomic_write(path, status_json_text(report))
    return path


def write_junit_file(report: StatusReport, analysis: BuildAnalysis, folder: Path,
                     fail_on: FailOn = NEVER_FAIL) -> Path:
    """The Sphinx build's JUnit file (:func:`~..render.junit.junit_xml`), beside the
    JSON: a case per notebook (a failed one fails) and per flagged cell, failing only
    as ``fail_on`` says (the findings whose warnings fail the build)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / JUNIT_FILE
    atomic_write(path, junit_xml(report, analysis, fail_on))
    return path


def _page_name(record: NotebookRecord) -> str:
    # Plain text, not a link: project-stage transforms run after mystmd resolved the
    # links, and a page's URL (its slug) depends on mystmd's options
    return record.docname


def _slowest(record: NotebookRecord) -> str:
    cell = record.slowest_cell()
    if cell is None:
        return "–"
    name = record.cell_name(cell)
    return f"{name.label} ({format_seconds(cell.seconds)}): {cell.first_line}"


def _status(record: NotebookRecord) -> str:
    status = record.status.replace("_", " ")
    failing = record.error_cell()
    if record.error is not None and failing is not None:
        status += f": {record.cell_name(failing).label} raised {record.error.type}"
    return f"{status} (from cache)" if record.provenance == CACHE else status


def status_nodes(report: StatusReport, analysis: BuildAnalysis) -> list[mdast.Node]:
    rows = findings(analysis)
    nodes: list[mdast.Node] = [mdast.heading("Findings", 2)]
    if rows:
        nodes.append(mdast.list_node([[mdast.paragraph(
            mdast.strong(f"{row.name.full}"), f" {format_seconds(row.seconds)}"
            f"{' on ' + row.device if row.device else ''}: {row.reason}"
            + (f". {row.action}" if row.action else ""))] for row in rows]))
    else:
        nodes.append(mdast.paragraph("No flagged cells."))
    executed = [nb for nb in report.notebooks if nb.executed]
    cells = [(nb, cell) for nb in executed for cell in nb.cells]
    if cells:
        nb, cell = max(cells, key=lambda item: item[1].seconds)
        nodes.append(mdast.paragraph(
            "Slowest cell: ", mdast.strong(nb.cell_name(cell).full),
            f" ({format_seconds(cell.seconds)} on {nb.device_label or 'an unknown device'}): ",
            mdast.inline_code(cell.first_line or "")))
    nodes.append(mdast.heading("Notebooks", 2))
    table_rows: list[list[mdast.Node | str]] = [
        [_page_name(nb), format_seconds(nb.seconds), _status(nb), nb.device_label or "–",
         _slowest(nb)]
        for nb in sorted_slowest_first(report.notebooks)]
    if table_rows:
        nodes.append(mdast.table(["Notebook", "Time", "Status", "Device", "Slowest cell"],
                                 table_rows, css="gpu-status-table"))
    else:
        nodes.append(mdast.paragraph(
            "No executed notebooks with capture data: build with myst build --execute and "
            "the environment of python -m sphinx_gpu_admonition.mystmd env."))
    return nodes


def fill_placeholders(tree: mdast.Node, report: StatusReport,
                      analysis: BuildAnalysis) -> bool:
    """Replace every placeholder in ``tree``; False when there was none."""
    found = False
    for node in mdast.walk(tree):
        if node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS):
            node["class"] = STATUS_CLASS
            node["children"] = status_nodes(report, analysis)
            found = True
    return found
