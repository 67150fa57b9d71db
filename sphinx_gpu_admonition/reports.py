"""Build outputs for CI: ``execution-status.json``, JUnit XML and a console summary.

All three are written once, in the main process, at ``build-finished``, from the
same :class:`~.record.StatusReport` the status page renders.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import sphinx
from sphinx.application import Sphinx
from sphinx.util import logging

from . import __version__, _mystnb
from .analysis import BuildAnalysis, analyse
from .baseline import get_baseline, thresholds
from .capture import all_records, atomic_write, crash_record
from .config import get_config
from .record import CACHE, EXECUTED, NotebookRecord, StatusReport, sorted_slowest_first
from .status_page import build_analysis
from .warnings import warn

logger = logging.getLogger(__name__)

SUMMARY_ROWS = 5


def _build_time() -> str:
    """Now, or ``SOURCE_DATE_EPOCH`` for reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (datetime.fromtimestamp(int(epoch), timezone.utc) if epoch and epoch.isdigit()
              else datetime.now(timezone.utc))
    return moment.isoformat(timespec="seconds")


def build_report(app: Sphinx, extra: list[NotebookRecord] | None = None,
                 ) -> tuple[StatusReport, BuildAnalysis]:
    """The status of this build with its analysis (flags, baseline comparison)."""
    records = {nb.docname: nb for nb in all_records(app.env) + (extra or [])}
    report = StatusReport(
        notebooks=[records[name] for name in sorted(records)],
        build={
            "created": _build_time(),
            "project": app.config.project,
            "builder": app.builder.name,
            "execution_mode": _mystnb.execution_mode(app.env),
            "sphinx": sphinx.__display_version__,
            "generator": f"sphinx-gpu-admonition {__version__}",
        },
    )
    # the build's own analysis unless a crashed notebook joins the records
    analysis = (analyse(report, thresholds(app), get_baseline(app)) if extra
                else build_analysis(app))
    report.analysis = analysis.to_dict()
    return report, analysis


def junit_xml(report: StatusReport) -> str:
    """One test case per notebook; errors, timeouts and dead kernels are failures."""
    suite = ElementTree.Element("testsuite", name="notebooks")
    failures = skipped = 0
    total = 0.0
    for nb in report.notebooks:
        seconds = nb.seconds if nb.executed else 0.0
        total += seconds
        case = ElementTree.SubElement(suite, "testcase", classname="notebooks",
                                      name=nb.docname, time=f"{seconds:.3f}")
        if nb.failed:
            failures += 1
            error = nb.error
            message = f"{nb.status}: {error.type}" if error else nb.status
            failure = ElementTree.SubElement(case, "failure", message=message,
                                             type=error.type if error else nb.status)
            failure.text = error.message if error else ""  # cleaned by capture
        elif not nb.executed:
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=nb.status.replace("_", " "))
        if nb.provenance == CACHE:
            ElementTree.SubElement(case, "system-out").text = (
                f"outputs reused from the jupyter-cache (executed {nb.executed_at})")
    suite.set("tests", str(len(report.notebooks)))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", "0")
    suite.set("time", f"{total:.3f}")
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def summary_lines(report: StatusReport, analysis: BuildAnalysis) -> list[str]:
    notebooks = report.notebooks
    executed = sum(nb.provenance == EXECUTED for nb in notebooks)
    cached = sum(nb.provenance == CACHE for nb in notebooks)
    failed = [nb for nb in notebooks if nb.failed]
    total = sum(nb.seconds for nb in notebooks if nb.executed)
    lines = [f"execution: {len(notebooks)} notebooks, {executed} executed, {cached} from the "
             f"cache, {len(failed)} failed; {total:.1f} s in all"]
    for nb in sorted_slowest_first(n for n in notebooks if n.executed)[:SUMMARY_ROWS]:
        lines.append(f"  {nb.seconds:8.2f} s  {nb.docname}  [{nb.environment.device_label}]")
    flagged = [(a.notebook, cell, flags) for a in analysis.notebooks
               for cell, flags in a.flagged_cells]
    flagged.sort(key=lambda item: -item[1].seconds)
    if flagged:
        lines.append(f"flagged cells ({len(flagged)}):")
        for nb, cell, flags in flagged[:SUMMARY_ROWS]:
            where = f"cell {cell.index}" if cell.index is not None else \
                f"execution {cell.execution_count}"
            reasons = "; ".join(f.reason for f in flags if not f.is_hint)
            lines.append(f"  {cell.seconds:8.2f} s  {nb.docname} {where}: {reasons}")
    for nb in failed:
        error = f"{nb.error.type}" if nb.error else ""
        lines.append(f"  FAILED {nb.docname}: {nb.status} {error}".rstrip())
    return lines


def _write(path: Path, text: str) -> None:
    try:
        atomic_write(path, text)
    except OSError as error:
        warn(logger, f"could not write {path}: {error}", "output")


def write_reports(app: Sphinx, exception: Exception | None) -> None:
    try:
        _write_reports(app, exception)
    except Exception as error:  # a report must never turn a good build into a failed one
        warn(logger, f"could not write the execution reports: {type(error).__name__}: {error}",
             "output")


def _write_reports(app: Sphinx, exception: Exception | None) -> None:
    extra = []
    if exception is not None:
        # Only a dead kernel is worth a report from a failed build: CI then sees
        # which notebook and cell took the build down.
        docname = app.env.temp_data.get("docname")
        crashed = crash_record(app, docname, exception) if docname else None
        if crashed is None:
            return
        extra.append(crashed)
    if not all_records(app.env) and not extra:
        return
    config = get_config(app.config)
    report, analysis = build_report(app, extra)
    outdir = Path(app.outdir)
    if config.status_json:
        _write(outdir / config.status_json,
               json.dumps(report.to_dict(), indent=1, sort_keys=True, ensure_ascii=False))
    if config.status_junit:
        _write(outdir / config.status_junit, junit_xml(report))
    if config.status_console:
        for line in summary_lines(report, analysis):
            logger.info(line)


def setup_reports(app: Sphinx) -> Any:
    app.connect("build-finished", write_reports)
