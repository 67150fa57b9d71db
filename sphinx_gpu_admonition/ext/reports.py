"""Build outputs for CI at ``build-finished``: ``execution-status.json``, JUnit XML,
the console summary and the GitHub Actions annotations, job summary and step outputs.

Only the wiring lives here: each file is written once, in the main process, by its
renderer in :mod:`..render`, from the same :class:`~..model.record.StatusReport` the
status page renders and the build's one :class:`~..model.analysis.BuildAnalysis`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import sphinx
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from .._version import __version__
from ..model.analysis import BuildAnalysis, analyse, is_ci
from ..model.files import build_time, repository_path, status_json_text, write_or_warn
from ..model.gc_pauses import gc_paused
from ..model.record import BUILD_FAILED, BUILD_SUCCEEDED, EXECUTED, NotebookRecord, StatusReport
from ..render import github
from ..render.console import summary_lines
from ..render.junit import junit_xml
from ..render.summary import analysis_data
from . import _mystnb, calibration
from .build_analysis import (
    build_analysis,
    get_baseline,
    judging_fields,
    junit_fail_on,
    thresholds,
    warn_parallel_preallocation,
)
from .capture import all_records
from .config import get_config
from .outcome import failure_text, records_of_stopped_build
from .state import build_state
from .warnings import build_warnings, warn

logger = logging.getLogger(__name__)

__all__ = ["build_report", "project_title", "setup_reports", "write_reports"]


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
            "engine": "sphinx",
            "project": project_title(app.config),
            "builder": app.builder.name,
            "execution_mode": _mystnb.execution_mode(app.env),
            "sphinx": sphinx.__display_version__,
            "generator": f"sphinx-gpu-admonition {__version__}",
            "outcome": BUILD_FAILED if failure is not None else BUILD_SUCCEEDED,
            "failure": failure_text(failure) if failure is not None else None,
            "ci": is_ci(os.environ),
            **judging_fields(app),
            "warnings": [item.to_dict() for item in build_warnings(app)],
        },
    )
    # the machine's speed matters only for what this build executed (a cache hit
    # keeps the calibration of the build that executed it)
    executed = [nb.calibration_seconds for nb in report.notebooks
                if nb.provenance == EXECUTED]
    if executed:
        report.build["calibration"] = calibration.of_build(app, executed)
    # the claims as the build checked them (ext.claims, once: none before the records
    # were final), then the build's own analysis unless a crashed notebook joins them
    checked = build_state(app).claims
    if checked is not None:
        report.claims, report.timing_statements = checked.claims, checked.statements
    analysis = (analyse(report, thresholds(app), get_baseline(app)) if extra
                else build_analysis(app))
    report.analysis = analysis_data(analysis)
    return report, analysis


def _write(path: Path, text: str) -> None:
    problem = write_or_warn(path, text)
    if problem:
        warn(logger, problem, "output")


def write_reports(app: Sphinx, exception: Exception | None) -> None:
    try:
        with gc_paused():  # every record converted to its reports (model/gc_pauses.py)
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
    config = get_config(app)
    report, analysis = build_report(app, extra, exception)
    outdir = Path(app.outdir)
    if config.status_json:
        _write(outdir / config.status_json,
               status_json_text(report, config.publish_interpreter_path))
    if config.status_junit:
        _write(outdir / config.status_junit, junit_xml(report, analysis, junit_fail_on(app)))
    if config.status_console:
        for line in summary_lines(report, analysis):
            logger.info(line)
    if github.enabled(config.github_annotations):
        _write_github(app, report, analysis)


def _write_github(app: Sphinx, report: StatusReport, analysis: BuildAnalysis) -> None:
    """Annotations, step outputs and job summary for GitHub Actions, of the build's
    analysis (with its baseline: the summary lists the regression cells too)."""
    config = get_config(app)
    outdir = Path(app.outdir)
    markdown = github.job_summary(report, analysis, thresholds(app))
    try:
        github.write_github(
            report, analysis, markdown,
            repository_path(outdir / config.status_json) if config.status_json else None,
            repository_path(outdir / config.status_junit) if config.status_junit else None,
            workspace=os.environ.get("GITHUB_WORKSPACE"), stream=sys.stderr)
    except OSError as error:
        warn(logger, f"could not write the GitHub Actions job summary or outputs: {error}",
             "output")


def _remove_previous_reports(app: Sphinx) -> None:
    """A build that never reaches ``build-finished`` (interrupted, killed) must not
    leave the previous build's reports looking like its own."""
    config = get_config(app)
    for name in (config.status_json, config.status_junit):
        if name:
            try:
                (Path(app.outdir) / name).unlink(missing_ok=True)
            except OSError as error:
                warn(logger, f"could not remove the previous build's {name}: {error}",
                     "output")


def setup_reports(app: Sphinx) -> Any:
    app.connect("builder-inited", _remove_previous_reports)
    # before any notebook executes (they do while the pages are read)
    app.connect("builder-inited", warn_parallel_preallocation)
    app.connect("build-finished", write_reports)
