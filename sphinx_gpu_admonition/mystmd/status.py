"""The ``execution-status`` page on mystmd and the build's ``execution-status.json``.

Findings first (the same rows as the Sphinx page, the console and ``report``: the
model's :func:`~..model.findings.findings`), then one table row per page, slowest
first, naming its slowest cell as ``report`` does (``jax_page cell 3``). Plain MyST
nodes (paragraphs, lists, a table): no JavaScript. The texts are the Sphinx status
page's (:class:`~..render.labels.Labels`), in the book's language (``language`` in
``myst.yml``); the findings' reasons and actions are English, as on Sphinx.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._version import __version__
from ..model.analysis import BuildAnalysis, Thresholds, analyse, is_ci
from ..model.files import JUNIT_FILE, STATUS_FILE, build_time, status_json_text, write_or_warn
from ..model.findings import findings
from ..model.formatting import format_date, format_seconds
from ..model.judging import Rules, build_fields
from ..model.record import (
    BUILD_SUCCEEDED,
    CACHE,
    CellName,
    NotebookRecord,
    StatusReport,
    sorted_slowest_first,
)
from ..model.timing_record import Claim, TimingStatement
from ..render.finding_text import FindingText
from ..render.junit import NEVER_FAIL, FailOn, junit_xml
from ..render.labels import Labels
from ..render.summary import analysis_data
from . import mdast
from .claims import claims_nodes

STATUS_CLASS = "gpu-execution-status"
PLACEHOLDER_CLASS = "gpu-execution-status-placeholder"
ENGINE = "mystmd"


def placeholder() -> list[mdast.Node]:
    """What the directive leaves for the project-stage transform, which runs after
    every page was executed."""
    return [{"type": "div", "class": f"{STATUS_CLASS} {PLACEHOLDER_CLASS}", "children": []}]


def build_report(records: list[NotebookRecord], project: str | None = None,
                 execute_parallel: int = 1, thresholds: Thresholds | None = None,
                 rules: Rules | None = None, claims: list[Claim] | None = None,
                 statements: list[TimingStatement] | None = None
                 ) -> tuple[StatusReport, BuildAnalysis]:
    """The build's report; ``execute_parallel``: ``--execute-parallel N`` of the build
    (pages executed at once; recorded, as it explains a GPU's out-of-memory failure);
    ``thresholds`` and ``rules``: how it judged them, kept in the file; ``claims`` and
    ``statements``: the book's timing claims and review list (:mod:`.claims`)."""
    thresholds = thresholds or Thresholds()
    report = StatusReport(notebooks=records, claims=list(claims or []),
                          timing_statements=list(statements or []), build={
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
        **build_fields(thresholds, rules or Rules(), None),
    })
    analysis = analyse(report, thresholds)
    report.analysis = analysis_data(analysis)
    return report, analysis


def write_reports(report: StatusReport, analysis: BuildAnalysis, folder: Path,
                  fail_on: FailOn = NEVER_FAIL, interpreter_path: bool = True) -> list[str]:
    """The JSON and the JUnit file; a warning for each that cannot be written (a full
    disk, a file where a folder goes), as on Sphinx: the build goes on.
    ``interpreter_path``: ``publish_interpreter_path``."""
    texts = {STATUS_FILE: lambda: status_json_text(report, interpreter_path),
             JUNIT_FILE: lambda: junit_xml(report, analysis, fail_on)}
    problems = (write_or_warn(folder / name, text()) for name, text in texts.items())
    return [problem for problem in problems if problem]


def _page_name(record: NotebookRecord) -> str:
    # Plain text, not a link: project-stage transforms run after mystmd resolved the
    # links, and a page's URL (its slug) depends on mystmd's options
    return record.docname


def _cell(name: CellName, labels: Labels) -> str:
    """``jax_page cell 3 (jax_page.md:21)`` (:attr:`CellName.full`, translated)."""
    where = name.location
    return f"{name.docname} {labels.cell_label(name)}" + (f" ({where})" if where else "")


def _slowest(record: NotebookRecord, labels: Labels) -> str:
    cell = record.slowest_cell()
    if cell is None:
        return "–"
    name = labels.cell_label(record.cell_name(cell))
    return f"{name} ({format_seconds(cell.seconds)}): {cell.first_line}"


def _status(record: NotebookRecord, labels: Labels) -> str:
    status = labels.status_text.get(record.status, record.status.replace("_", " "))
    failing = record.error_cell()
    if record.error is not None and failing is not None:
        status = labels.translate("{status}: {cell} raised {error}").format(
            status=status, cell=labels.cell_label(record.cell_name(failing)),
            error=record.error.type)
    if record.provenance == CACHE:
        # when the cached outputs were made, as the Sphinx page's "Executed" column says
        when = format_date(record.executed_at) if record.executed_at else ""
        status += f" ({labels.cache}{', ' + when if when else ''})"
    return status


def _device(record: NotebookRecord, labels: Labels) -> str:
    if record.device_label:
        return record.device_label
    return labels.not_measured(record) if record.executed and record.capture != "missing" \
        else "–"


def status_nodes(report: StatusReport, analysis: BuildAnalysis,
                 labels: Labels | None = None) -> list[mdast.Node]:
    labels = labels or Labels.load()
    translate = labels.translate
    words = FindingText.of(labels)
    rows = findings(analysis)
    nodes: list[mdast.Node] = [mdast.heading(translate("Findings"), 2)]
    if rows:
        items = []
        for row in rows:
            seconds = format_seconds(row.seconds)
            where = (translate("{time} on {device}").format(time=seconds, device=row.device)
                     if row.device else seconds)
            action = words.finding_action(row)
            items.append([mdast.paragraph(
                mdast.strong(_cell(row.name, labels)), f" {where}: {words.finding_reason(row)}"
                + (f". {action}" if action else ""))])
        nodes.append(mdast.list_node(items))
    else:
        nodes.append(mdast.paragraph(labels.no_flagged))
    executed = [nb for nb in report.notebooks if nb.executed]
    cells = [(nb, cell) for nb in executed for cell in nb.cells]
    if cells:
        nb, cell = max(cells, key=lambda item: item[1].seconds)
        # Translators: the build's slowest cell, on the mystmd status page
        nodes.append(mdast.paragraph(*mdast.sentence(
            translate("Slowest cell: {cell} ({time} on {device}): {code}"),
            cell=mdast.strong(_cell(nb.cell_name(cell), labels)),
            time=format_seconds(cell.seconds),
            device=nb.device_label or translate("an unknown device"),
            code=mdast.inline_code(cell.first_line or ""))))
    # the timing claims right after the findings, as on the Sphinx page
    nodes += claims_nodes(analysis.claims, analysis.timing_statements, labels)
    nodes.append(mdast.heading(translate("Notebooks"), 2))
    table_rows: list[list[mdast.Node | str]] = [
        [_page_name(nb), format_seconds(nb.seconds), _status(nb, labels),
         _device(nb, labels), _slowest(nb, labels)]
        for nb in sorted_slowest_first(report.notebooks)]
    if table_rows:
        nodes.append(mdast.table(
            [labels.notebook, labels.time, labels.status, translate("Device"),
             labels.slowest], table_rows, css="gpu-status-table"))
    else:
        nodes.append(mdast.paragraph(translate(
            "No executed notebooks with capture data: build with myst build --execute and "
            "the environment of python -m sphinx_gpu_admonition.mystmd env.")))
    return nodes


def fill_placeholders(tree: mdast.Node, report: StatusReport,
                      analysis: BuildAnalysis, labels: Labels | None = None) -> bool:
    """Replace every placeholder in ``tree``; False when there was none."""
    found = False
    for node in mdast.walk(tree):
        if node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS):
            node["class"] = STATUS_CLASS
            node["children"] = status_nodes(report, analysis, labels)
            found = True
    return found
