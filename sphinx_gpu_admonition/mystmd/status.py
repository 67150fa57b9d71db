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
from typing import Any

from .._version import __version__
from ..model.analysis import BuildAnalysis, Thresholds, analyse, is_ci
from ..model.files import JUNIT_FILE, STATUS_FILE, build_time, status_json_text, write_or_warn
from ..model.findings import findings
from ..model.formatting import format_seconds
from ..model.judging import LoadedBaseline, Rules, build_fields
from ..model.record import (
    BUILD_SUCCEEDED,
    CellName,
    NotebookRecord,
    StatusReport,
)
from ..model.timing_record import Claim, TimingStatement
from ..render.finding_text import FindingText, code_spans
from ..render.junit import NEVER_FAIL, FailOn, junit_xml
from ..render.labels import Labels
from ..render.status_rows import StatusOptions, parse_options
from ..render.summary import analysis_data
from . import mdast, status_table
from .claims import claims_nodes
from .page_links import PageLink
from .warnings import hold_nodes, warning

STATUS_CLASS = "gpu-execution-status"
PLACEHOLDER_CLASS = "gpu-execution-status-placeholder"
ENGINE = "mystmd"


#: the directive's options on mystmd: the Sphinx directive's, but the files'
OPTIONS = ("sort", "min-seconds", "cells", "columns")


def placeholder(data: dict[str, Any] | None = None) -> list[mdast.Node]:
    """What the directive leaves for the project-stage transform, which runs after
    every page was executed: its options (``:sort:``, ``:min-seconds:``, ``:cells:``,
    ``:columns:``, checked by the Sphinx directive's rule,
    :func:`..render.status_rows.parse_options`), a bad value's warning held for the
    page (:func:`.warnings.hold_nodes`)."""
    data = data or {}
    given = data.get("options") or {}
    # a flag without a value may come as true
    raw = {key: "" if value is True else str(value) for key, value in given.items()
           if key in OPTIONS}
    problems: list[str] = []
    options = parse_options(raw, problems.append)
    line = ((data.get("node") or {}).get("position") or {}).get("start", {}).get("line")
    held = [warning("directive", f"execution-status: {problem}", None, line)
            for problem in problems]
    return [{"type": "div", "class": f"{STATUS_CLASS} {PLACEHOLDER_CLASS}", "children": [],
             "data": {"options": options._asdict()}}, *hold_nodes(held, directive=True)]


def _options(node: mdast.Node) -> StatusOptions:
    """The options :func:`placeholder` left in its node (JSON: the columns a list)."""
    kept = dict((node.get("data") or {}).get("options") or {})
    if "columns" in kept:
        kept["columns"] = tuple(kept["columns"])
    try:
        return StatusOptions(**kept)
    except TypeError:  # not this release's node
        return StatusOptions()


def build_report(records: list[NotebookRecord], project: str | None = None,
                 execute_parallel: int = 1, thresholds: Thresholds | None = None,
                 rules: Rules | None = None, baseline: LoadedBaseline | None = None,
                 claims: list[Claim] | None = None,
                 statements: list[TimingStatement] | None = None
                 ) -> tuple[StatusReport, BuildAnalysis]:
    """The build's report; ``execute_parallel``: ``--execute-parallel N`` of the build
    (pages executed at once; recorded, as it explains a GPU's out-of-memory failure);
    ``thresholds``, ``rules`` and ``baseline`` (``status_baseline``): how it judged them,
    kept in the file; ``claims`` and ``statements``: the book's timing claims and review
    list (:mod:`.claims`)."""
    thresholds = thresholds or Thresholds()
    baseline = baseline or LoadedBaseline()
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
        **build_fields(thresholds, rules or Rules(), baseline.used),
    })
    analysis = analyse(report, thresholds, baseline.report)
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


def _cell(name: CellName, labels: Labels) -> str:
    """``jax_page cell 3 (jax_page.md:21)`` (:attr:`CellName.full`, translated)."""
    where = name.location
    return f"{name.docname} {labels.cell_label(name)}" + (f" ({where})" if where else "")


def _cell_node(name: CellName, labels: Labels, links: dict[str, PageLink]) -> mdast.Node:
    """The cell's name (:func:`_cell`), strong, linked to the cell on its page where
    mystmd linked the page."""
    link = links.get(name.docname)
    text = _cell(name, labels)
    node = mdast.strong(text)
    return {**link.node(text, name.anchor), "children": [node]} if link is not None else node


def status_nodes(report: StatusReport, analysis: BuildAnalysis,
                 labels: Labels | None = None,
                 links: dict[str, PageLink] | None = None,
                 options: StatusOptions | None = None) -> list[mdast.Node]:
    """The page: the summary line, the findings (the headline against the baseline,
    budgets, the whole build's, each flagged cell), the slowest cell, the table of
    notebooks and each notebook's details (:mod:`.status_table`, the Sphinx page's
    parts); ``links``: the notebooks' pages as mystmd linked them; ``options``: the
    directive's."""
    labels = labels or Labels.load()
    links = links or {}
    translate = labels.translate
    words = FindingText.of(labels)
    table = status_table.rows(analysis, labels, links, options)
    nodes: list[mdast.Node] = [*status_table.first_screen(table),
                               mdast.heading(translate("Findings"), 2),
                               *status_table.build_findings(analysis, labels, links)]
    rows = findings(analysis)
    if rows:
        items = []
        for row in rows:
            seconds = format_seconds(row.seconds)
            where = (translate("{time} on {device}").format(time=seconds, device=row.device)
                     if row.device else seconds)
            action = words.finding_action(row)
            sentence = f" {where}: {words.finding_reason(row)}" + (f". {action}" if action
                                                                    else "")
            # the statement doing the cell's work, then why and what to do (code as code)
            code = [" ", mdast.inline_code(row.code_text())] if row.code else []
            items.append([mdast.paragraph(
                _cell_node(row.name, labels, links), *code,
                *(mdast.inline_code(piece) if is_code else piece
                  for piece, is_code in code_spans(sentence)))])
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
            cell=_cell_node(nb.cell_name(cell), labels, links),
            time=format_seconds(cell.seconds),
            device=nb.device_label or translate("an unknown device"),
            code=mdast.inline_code(cell.first_line or ""))))
    # the timing claims right after the findings, as on the Sphinx page
    nodes += claims_nodes(analysis.claims, analysis.timing_statements, labels)
    nodes.append(mdast.heading(translate("Notebooks"), 2))
    if table.rows:
        nodes.append(status_table.table_node(table, links))
        nodes += status_table.details_nodes(table, analysis, labels, links)
    else:
        nodes.append(mdast.paragraph(translate(
            "No executed notebooks with capture data: build with myst build --execute and "
            "the environment of python -m sphinx_gpu_admonition.mystmd env.")))
    return nodes


def has_placeholder(tree: mdast.Node) -> bool:
    return any(node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS)
               for node in mdast.walk(tree))


def fill_placeholders(tree: mdast.Node, report: StatusReport,
                      analysis: BuildAnalysis, labels: Labels | None = None,
                      links: dict[str, PageLink] | None = None) -> bool:
    """Replace every placeholder in ``tree``; False when there was none."""
    found = False
    for node in mdast.walk(tree):
        if node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS):
            node["class"] = STATUS_CLASS
            node["children"] = status_nodes(report, analysis, labels, links, _options(node))
            found = True
    return found
