"""GitHub Actions output: annotations at the source, a job summary and step outputs.

The one GitHub view of a build, for the Sphinx build (``gpu_github_annotations``, at
``build-finished``) and for ``report`` and ``compare`` (``--github``, or when
``GITHUB_ACTIONS`` is ``true``).  Three channels of the runner, all written from one
:class:`~..model.record.StatusReport` and its one
:class:`~..model.analysis.BuildAnalysis`:

* workflow commands (``::error file=lectures/a.md,line=12,title=...::message``) for
  failed notebooks, notebooks slower than the baseline beyond the machine factor and
  flagged cells (regressions first), at the notebook's source file and, for text
  notebooks, the cell's line.  GitHub shows 10 annotations of each kind per step: at
  most :data:`MAX_PER_KIND` of each are written, then one notice counts the rest and
  points at the job summary.  They go to standard error, so that a report on
  standard output (a pull-request comment) stays clean; the runner reads commands on
  both streams.
* a Markdown job summary appended to ``$GITHUB_STEP_SUMMARY`` (:func:`job_summary`,
  capped by :mod:`.markdown`);
* step outputs with stable names (:data:`OUTPUT_NAMES`) appended to ``$GITHUB_OUTPUT``,
  written first, so that a summary that cannot be written does not cost them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

from ..model.analysis import BuildAnalysis, NotebookAnalysis, Thresholds
from ..model.build_warnings import BuildWarning, build_warnings
from ..model.findings import BudgetFinding, Finding, budget_findings, findings, flagged_and_notes
from ..model.formatting import format_seconds, one_line, without_legacy_commands
from ..model.record import NotebookRecord, StatusReport
from ..model.timing_record import Claim
from .claims_text import claim_warning, problem_warning
from .finding_text import ENGLISH as WORDS
from .markdown import capped, render_compare_markdown, render_report_markdown
from .summary import CompareOptions, summarise_compare, summarise_report

#: GitHub shows at most 10 annotations of each kind (error, warning, notice) per step
#: (and 50 per job); more would be dropped silently
MAX_PER_KIND = 10
#: the build warnings annotated before the findings: the page did not run as expected
WARNINGS_FIRST = ("backend", "capture", "preallocation")
#: rows of the job summary's tables of slowest notebooks and cells
SUMMARY_TOP = 5
#: the step outputs, always all written (0 or "" when there is nothing)
OUTPUT_NAMES = ("status-json", "junit", "failed", "flagged", "regressed", "machine-factor")


def enabled(setting: object = "auto", environ: Mapping[str, str] | None = None) -> bool:
    """``True`` / ``False``, or ``"auto"``: on when running in GitHub Actions."""
    if setting == "auto":
        return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true"
    return bool(setting)


# -- workflow commands -----------------------------------------------------------------
def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF encoded as the runner expects
    (kept as line breaks of the annotation); other control characters and line
    separators as a space and invisible characters removed, so no reader of the log
    sees a second line, and no ``##[`` (the older command syntax, read anywhere)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return without_legacy_commands(one_line(text))


def escape_property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,``, which end it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties: object) -> str:
    """``::kind key=value,...::message``; properties that are None are left out."""
    props = ",".join(f"{key}={escape_property(str(value))}"
                     for key, value in properties.items() if value is not None)
    return f"::{kind}{' ' + props if props else ''}::{escape_data(message)}"


def annotation_file(source: str | None, workspace: str | None = None) -> str | None:
    """The path GitHub matches against the repository: relative to the workspace."""
    if not source:
        return None
    path = Path(source)
    if path.is_absolute() and workspace:
        try:
            return path.relative_to(Path(workspace)).as_posix()
        except ValueError:
            return path.as_posix()
    return path.as_posix()


def annotations(report: StatusReport, analysis: BuildAnalysis,
                workspace: str | None = None) -> list[str]:
    """Workflow commands, most important first: failures (``error``), then the build's
    warnings about how pages ran (:data:`WARNINGS_FIRST`), notebooks slower than the
    baseline, notebooks over their time budget, timing claims that fail or cannot be
    checked, the whole build's findings, regression cells, slow cells, then the
    build's other warnings (``warning``), at most
    :data:`MAX_PER_KIND` of each kind; one ``notice`` counts the rest."""
    errors = [_failure_annotation(nb, workspace) for nb in report.notebooks if nb.failed]
    # what the build warned about (a page that ran on the CPU where a GPU was expected,
    # a capture that failed, a bad option ...); slow cells, regressions and budgets are
    # annotated below from the findings they repeat
    kept = [item for item in build_warnings(report) if not item.repeats_finding]
    # a run that went wrong before the findings (its device, its capture), the rest of
    # the build's warnings (options, Colab links ...) after them
    first = [item for item in kept if item.subtype in WARNINGS_FIRST]
    warnings = [_warning_annotation(item, workspace) for item in first]
    warnings += [_regression_annotation(result, workspace) for result in analysis.regressed]
    # a budget is the book's own limit (its warning fails -W without an opt-in)
    warnings += [_budget_annotation(row, workspace) for row in budget_findings(analysis)]
    # slowest first, the order of every view; a slow-ok or import cell is no warning
    flagged = [finding for finding in findings(analysis) if not finding.is_note]
    ranked = [f for f in flagged if f.is_regression] + [f for f in flagged
                                                        if not f.is_regression]
    # the text's timing claims that fail, or that this build could not check because
    # of the text, at their lines (the build's claim warnings, from the claims)
    warnings += [_claim_annotation(claim, workspace) for claim in analysis.claims
                 if claim_warning(claim) or problem_warning(claim)]
    # the whole build's findings (no file): a warning each, before the cells', so
    # that the limit of ten never drops them
    warnings += [command("warning",
                         f"{WORDS.reason(flag)}\nwhat to do: {WORDS.rule_action(flag)}",
                         title=f"Whole build: {flag.rule.replace('_', ' ')}")
                 for flag in analysis.build_flags]
    warnings += [_cell_annotation(finding, workspace) for finding in ranked]
    warnings += [_warning_annotation(item, workspace) for item in kept if item not in first]
    left = max(0, len(errors) - MAX_PER_KIND) + max(0, len(warnings) - MAX_PER_KIND)
    commands = errors[:MAX_PER_KIND] + warnings[:MAX_PER_KIND]
    if left:
        commands.append(command(
            "notice", f"{left} more failed notebooks, build warnings, regressions, notebooks "
                      "over their budget, timing claims or slow cells are not "
                      "annotated (GitHub shows 10 of each kind per step): see the job "
                      "summary or execution-status.json",
            title="More execution annotations"))
    return commands


def _claim_annotation(claim: Claim, workspace: str | None) -> str:
    failing = claim_warning(claim)
    message = failing or problem_warning(claim) or ""
    if claim.sentence:
        message += f"\n{claim.sentence}"
    title = "Timing claim fails" if failing else "Timing claim not checked"
    return command("warning", message, file=annotation_file(claim.source, workspace),
                   line=claim.line if claim.source else None, title=f"{title}: {claim.page}")


def _warning_annotation(item: BuildWarning, workspace: str | None) -> str:
    return command("warning", item.message, file=annotation_file(item.file, workspace),
                   line=item.line if item.file else None, title=f"Build warning: {item.name}")


def _failure_annotation(nb: NotebookRecord, workspace: str | None) -> str:
    error = nb.error
    failing = nb.error_cell()
    where = f" in {nb.cell_name(failing).label}" if failing is not None else ""
    text = nb.status if error is None else error.message or error.type
    if error is not None and not text.startswith(error.type):
        text = f"{error.type}: {text}"
    return command("error", f"{nb.status}{where}: {text}",
                   file=annotation_file(nb.source, workspace),
                   line=failing.line if failing is not None else None,
                   title=f"Notebook failed: {nb.docname}")


def _regression_annotation(result: NotebookAnalysis, workspace: str | None) -> str:
    nb, comparison = result.notebook, result.comparison
    assert comparison is not None and comparison.ratio is not None
    factor = comparison.machine_factor
    if not comparison.same_device_kind:  # hardware, not noise: no factor to go beyond
        why = (f"on another kind of device: {comparison.baseline_device} in the baseline, "
               f"{nb.device_label} now")
    else:
        why = f"{comparison.relative_ratio:.1f}x beyond the machine factor {factor:.2f}x"
    return command(
        "warning",
        f"{format_seconds(nb.seconds)} against {format_seconds(comparison.baseline_seconds)}"
        f" in the baseline ({comparison.ratio:.1f}x; {why})",
        file=annotation_file(nb.source, workspace),
        title=f"Slower than the baseline: {nb.docname}")


def _budget_annotation(row: BudgetFinding, workspace: str | None) -> str:
    nb = row.notebook
    return command("warning", "notebook over its time budget: "
                   + WORDS.budget(row.seconds, row.budget_seconds),
                   file=annotation_file(nb.source, workspace),
                   title=f"Over its time budget: {nb.docname}")


def _cell_annotation(finding: Finding, workspace: str | None) -> str:
    nb, cell = finding.notebook, finding.cell
    assert cell is not None
    reasons = [WORDS.reason(f) for f in finding.flags if not f.is_hint]
    hints = [f"hint: {WORDS.text(f)}" for f in finding.flags if f.is_hint]
    # the console's lines under the reasons: the code, then compile against run
    details = [f"code: {finding.code}"] if finding.code else []
    timing = WORDS.timing(finding)
    if timing:
        details.append(timing)
    return command(
        "warning", "\n".join(["; ".join(reasons + hints), *details]),
        # at the statement doing the work (a text notebook), else at the cell's fence
        file=annotation_file(nb.source, workspace), line=finding.source_line,
        title=f"Slow {finding.name.label} of {nb.docname} ({format_seconds(cell.seconds)})")


def write_annotations(lines: Iterable[str], stream: TextIO | None = None) -> None:
    stream = stream or sys.stderr
    for line in lines:
        stream.write(line + "\n")
    stream.flush()


# -- job summary and step outputs ---------------------------------------------------------
def append_summary(markdown: list[str], environ: Mapping[str, str] | None = None) -> Path | None:
    """Append to ``$GITHUB_STEP_SUMMARY`` (None when it is not set); raises OSError."""
    target = (environ if environ is not None else os.environ).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as stream:
        stream.write("\n".join(capped(markdown)).rstrip("\n") + "\n\n")
    return Path(target)


def append_outputs(values: Mapping[str, object],
                   environ: Mapping[str, str] | None = None) -> Path | None:
    """Append ``name=value`` lines to ``$GITHUB_OUTPUT`` (a multi-line value as a
    delimited block); None when it is not set; raises OSError."""
    target = (environ if environ is not None else os.environ).get("GITHUB_OUTPUT")
    if not target:
        return None
    lines = []
    for name, value in values.items():
        text = "" if value is None else str(value)
        if "\n" in text or "\r" in text:
            # random, as GitHub's own toolkit makes it (``uuid`` would import
            # ``platform``: 2 ms of every build's start, for this rare case)
            delimiter = f"ghadelimiter_{os.urandom(16).hex()}"
            lines += [f"{name}<<{delimiter}", text, delimiter]
        else:
            lines.append(f"{name}={text}")
    with open(target, "a", encoding="utf-8") as stream:
        stream.write("\n".join(lines) + "\n")
    return Path(target)


def output_values(report: StatusReport, analysis: BuildAnalysis, status_json: str | None,
                  junit: str | None) -> dict[str, object]:
    """The step outputs of :data:`OUTPUT_NAMES`."""
    machine = analysis.machine
    return {
        "status-json": status_json or "",
        "junit": junit or "",
        "failed": sum(nb.failed for nb in report.notebooks),
        "flagged": len(flagged_and_notes(findings(analysis))[0]),
        "regressed": len(analysis.regressed),
        "machine-factor": (f"{machine.factor:.3f}"
                           if machine is not None and machine.factor is not None else ""),
    }


def job_summary(report: StatusReport, analysis: BuildAnalysis, thresholds: Thresholds,
                source: str = "this build") -> list[str]:
    """The job summary of a build: ``report --markdown`` of its analysis, and
    ``compare --markdown`` of the same analysis when it has a baseline."""
    summary = summarise_report(report, analysis, thresholds, source, SUMMARY_TOP)
    lines = render_report_markdown(summary, SUMMARY_TOP)
    if analysis.baseline is not None and analysis.machine is not None:
        options = CompareOptions("the baseline", source,
                                 min_seconds=thresholds.slow_cell_min_seconds,
                                 regression_ratio=thresholds.regression_ratio,
                                 build_baseline=True)
        compared = summarise_compare(analysis.baseline, report, analysis, options)
        lines += ["", *render_compare_markdown(compared)]
    return capped(lines)


def write_github(report: StatusReport, analysis: BuildAnalysis, markdown: list[str],
                 status_json: str | None, junit: str | None = None,
                 workspace: str | None = None, stream: TextIO | None = None) -> None:
    """Annotations (standard error), the step outputs, then the job summary; raises
    OSError when the outputs or the summary cannot be written (the outputs are
    written first, so a summary that fails does not cost them)."""
    write_annotations(annotations(report, analysis, workspace), stream)
    failure: OSError | None = None
    try:
        append_outputs(output_values(report, analysis, status_json, junit))
    except OSError as error:
        failure = error
    try:
        append_summary(markdown)
    except OSError as error:
        failure = failure or error
    if failure is not None:
        raise failure
