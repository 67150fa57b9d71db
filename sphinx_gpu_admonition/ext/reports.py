"""Build outputs for CI: ``execution-status.json``, JUnit XML and a console summary.

All three are written once, in the main process, at ``build-finished``, from the
same :class:`~.record.StatusReport` the status page renders.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import sphinx
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from .._version import __version__
from ..model.analysis import BuildAnalysis, analyse
from ..model.files import atomic_write, build_time, repository_path, status_json_text
from ..model.findings import BuildTotals, findings
from ..model.record import (
    BUILD_FAILED,
    BUILD_SUCCEEDED,
    CACHE,
    EARLIER_BUILD,
    EXECUTED,
    NotebookRecord,
    StatusReport,
    sorted_slowest_first,
)
from ..render import github
from . import _mystnb, calibration
from .build_analysis import get_baseline, thresholds
from .capture import all_records
from .config import get_config
from .outcome import failure_text, records_of_stopped_build
from .status_page import build_analysis
from .warnings import warn

logger = logging.getLogger(__name__)

SUMMARY_ROWS = 5


#: Sphinx's ``project`` when a project sets none (Jupyter Book sets ``html_title``)
_UNSET_PROJECT = "Project name not set"


def project_title(config: Config) -> str | None:
    """The book's name: ``project``, else ``html_title`` (Jupyter Book's ``title``)."""
    for candidate in (config.project, config.html_title):
        if isinstance(candidate, str) and candidate.strip() and \
                _UNSET_PROJECT not in candidate:
            return candidate.strip()
    return None


def build_report(app: Sphinx, extra: list[NotebookRecord] | None = None,
                 failure: BaseException | None = None) -> tuple[StatusReport, BuildAnalysis]:
    """The status of this build with its analysis (flags, baseline comparison).

    ``extra`` replaces stored records of the same documents (a build that stopped);
    ``failure`` is the exception that stopped the build.
    """
    records = {nb.docname: nb for nb in all_records(app.env) + (extra or [])}
    report = StatusReport(
        notebooks=[records[name] for name in sorted(records)],
        build={
            "created": build_time(),
            "project": project_title(app.config),
            "builder": app.builder.name,
            "execution_mode": _mystnb.execution_mode(app.env),
            "sphinx": sphinx.__display_version__,
            "generator": f"sphinx-gpu-admonition {__version__}",
            "outcome": BUILD_FAILED if failure is not None else BUILD_SUCCEEDED,
            "failure": failure_text(failure) if failure is not None else None,
        },
    )
    # the machine's speed matters only for what this build executed (a cache hit
    # keeps the calibration of the build that executed it)
    executed = [nb.calibration_seconds for nb in report.notebooks
                if nb.provenance == EXECUTED]
    if executed:
        report.build["calibration"] = calibration.of_build(app, executed)
    # the build's own analysis unless a crashed notebook joins the records
    analysis = (analyse(report, thresholds(app), get_baseline(app)) if extra
                else build_analysis(app))
    report.analysis = analysis.to_dict()
    return report, analysis


@functools.cache
def _not_xml() -> re.Pattern[str]:
    """Characters XML 1.0 cannot hold, even escaped (control characters, lone
    surrogates); compiled when first needed (it takes 4 ms)."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_characters(text: str | None) -> str | None:
    """``text`` without characters that make an XML file invalid (ElementTree keeps them)."""
    if not text or text.isprintable():  # printable characters are all XML characters
        return text
    return _not_xml().sub("", text)


def junit_xml(report: StatusReport) -> str:
    """One test case per notebook; errors, timeouts and dead kernels are failures.

    A test case's time is what this build spent executing it: outputs reused from
    the jupyter-cache or from an earlier build cost nothing now (their original time
    is in the case's output).  A build that stopped adds an error case, so a CI gate
    reading this file fails with the build.
    """
    suite = ElementTree.Element("testsuite", name="notebooks")
    failures = skipped = errors = 0
    total = 0.0
    for nb in report.notebooks:
        seconds = nb.seconds if nb.executed and nb.provenance == EXECUTED else 0.0
        total += seconds
        case = ElementTree.SubElement(suite, "testcase", classname="notebooks",
                                      name=nb.docname, time=f"{seconds:.3f}")
        if nb.failed:
            failures += 1
            error = nb.error
            message = f"{nb.status}: {error.type}" if error else nb.status
            failing = nb.error_cell()
            if failing is not None:
                message += f" in {nb.cell_name(failing).label}"
            failure = ElementTree.SubElement(case, "failure", message=message,
                                             type=error.type if error else nb.status)
            failure.text = error.message if error else ""  # cleaned by capture
        elif not nb.executed:
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=nb.status.replace("_", " "))
        expected = [f"{nb.cell_name(c).label} raised {c.error} (expected)"
                    for c in nb.cells if c.error and c.error_expected]
        if expected:  # allowed to raise: not a failure, but said where it happened
            ElementTree.SubElement(case, "system-err").text = "; ".join(expected)
        if nb.provenance in (CACHE, EARLIER_BUILD):
            where = ("the jupyter-cache" if nb.provenance == CACHE
                     else "an earlier build (the page was not read again)")
            ElementTree.SubElement(case, "system-out").text = (
                f"outputs reused from {where}; executed {nb.executed_at} "
                f"in {nb.seconds:.3f} s")
    if report.build.get("outcome") == BUILD_FAILED:
        errors += 1
        case = ElementTree.SubElement(suite, "testcase", classname="build",
                                      name="sphinx-build", time="0.000")
        ElementTree.SubElement(case, "error", message="the build stopped before it finished",
                               type="BuildFailed").text = str(report.build.get("failure") or "")
    suite.set("tests", str(len(report.notebooks) + errors))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", str(errors))
    suite.set("time", f"{total:.3f}")
    for element in suite.iter():
        element.text = _xml_characters(element.text)
        for name, value in element.attrib.items():
            element.set(name, _xml_characters(value))
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def summary_lines(report: StatusReport, analysis: BuildAnalysis) -> list[str]:
    notebooks = report.notebooks
    totals = BuildTotals.of(analysis)  # the status page's numbers
    failed = [nb for nb in notebooks if nb.failed]
    reused = (f", {totals.from_earlier_build} unchanged since an earlier build"
              if totals.from_earlier_build else "")
    lines = [f"execution: {totals.notebooks} notebooks, {totals.executed_now} executed, "
             f"{totals.from_cache} from the cache{reused}, {totals.failed} failed; "
             f"{totals.seconds:.1f} s in all"]
    if report.build.get("outcome") == BUILD_FAILED:
        lines.insert(0, f"execution: the build stopped ({report.build.get('failure')}); "
                        "this report lists what it read before it stopped")
    for nb in sorted_slowest_first(n for n in notebooks if n.executed)[:SUMMARY_ROWS]:
        lines.append(f"  {nb.seconds:8.2f} s  {nb.docname}  [{nb.device_label or 'no capture'}]")
    flagged = findings(analysis)  # the status page's list, in the same order
    if flagged:
        shown = (f"{len(flagged)}" if len(flagged) <= SUMMARY_ROWS
                 else f"{len(flagged)}, the {SUMMARY_ROWS} slowest")
        lines.append(f"flagged cells ({shown}):")
        for finding in flagged[:SUMMARY_ROWS]:
            reasons = "; ".join(f.reason for f in finding.flags if not f.is_hint)
            lines.append(f"  {finding.seconds:8.2f} s  {finding.name.full}: {reasons}")
            lines.append(f"{'':14}what to do: {finding.action}")
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
    # A build that stopped still reports what it read, marked as failed: never
    # leave the previous build's (green) files looking current.
    extra = records_of_stopped_build(app, exception) if exception is not None else []
    if not all_records(app.env) and not extra:
        return
    config = get_config(app.config)
    report, analysis = build_report(app, extra, exception)
    outdir = Path(app.outdir)
    if config.status_json:
        _write(outdir / config.status_json, status_json_text(report))
    if config.status_junit:
        _write(outdir / config.status_junit, junit_xml(report))
    if config.status_console:
        for line in summary_lines(report, analysis):
            logger.info(line)
    if github.enabled(config.github_annotations):
        _write_github(app, report, analysis)


def _write_github(app: Sphinx, report: StatusReport, analysis: BuildAnalysis) -> None:
    """Annotations, job summary and step outputs for GitHub Actions."""
    from ..cli import github_summary  # the same Markdown as ``report --markdown``

    config = get_config(app.config)
    baseline = get_baseline(app)
    github.write_annotations(github.annotations(report, analysis), sys.stderr)
    outdir = Path(app.outdir)
    values = github.output_values(
        report, analysis,
        repository_path(outdir / config.status_json) if config.status_json else None,
        repository_path(outdir / config.status_junit) if config.status_junit else None)
    try:
        github.append_summary(github_summary(report, analysis, baseline,
                                             thresholds=thresholds(app)))
        github.append_outputs(values)
    except OSError as error:
        warn(logger, f"could not write the GitHub Actions job summary or outputs: {error}",
             "output")


def _remove_previous_reports(app: Sphinx) -> None:
    """A build that never reaches ``build-finished`` (interrupted, killed) must not
    leave the previous build's reports looking like its own."""
    config = get_config(app.config)
    for name in (config.status_json, config.status_junit):
        if name:
            try:
                (Path(app.outdir) / name).unlink(missing_ok=True)
            except OSError as error:
                warn(logger, f"could not remove the previous build's {name}: {error}",
                     "output")


def setup_reports(app: Sphinx) -> Any:
    calibration.setup_calibration(app)
    app.connect("builder-inited", _remove_previous_reports)
    app.connect("build-finished", write_reports)
