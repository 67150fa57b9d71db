"""GitHub Actions output: annotations at the source, a job summary and step outputs.

Three channels of the runner, all written from one :class:`~.record.StatusReport`
and its :class:`~.analysis.BuildAnalysis`:

* workflow commands (``::error file=lectures/a.md,line=12,title=...::message``) for
  failed notebooks, flagged cells and notebooks slower than the baseline beyond the
  machine factor, at the notebook's source file and, for text notebooks, the cell's
  line.  They go to standard error, so that a report on standard output (a
  pull-request comment) stays clean; the runner reads commands on both streams.
* a Markdown job summary appended to ``$GITHUB_STEP_SUMMARY``;
* step outputs with stable names (:data:`OUTPUT_NAMES`) appended to ``$GITHUB_OUTPUT``.

The Sphinx build writes them at ``build-finished`` (``gpu_github_annotations``);
``report`` and ``compare`` write them with ``--github`` or when ``GITHUB_ACTIONS``
is ``true``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

from ..model.analysis import BuildAnalysis
from ..model.formatting import format_seconds
from ..model.record import StatusReport

#: GitHub shows at most 50 annotations of a job; more would be dropped silently
MAX_ANNOTATIONS = 50
#: the step outputs, always all written (0 or "" when there is nothing)
OUTPUT_NAMES = ("status-json", "junit", "failed", "flagged", "regressed", "machine-factor")


def enabled(setting: object = "auto", environ: Mapping[str, str] | None = None) -> bool:
    """``True`` / ``False``, or ``"auto"``: on when running in GitHub Actions."""
    if setting == "auto":
        return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true"
    return bool(setting)


# -- workflow commands -----------------------------------------------------------------
def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF encoded as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


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
    """Workflow commands: failures (``error``), then regressions and flagged cells
    (``warning``), at most :data:`MAX_ANNOTATIONS` (a notice says how many more)."""
    errors: list[str] = []
    for nb in report.notebooks:
        if not nb.failed:
            continue
        error = nb.error
        failing = nb.error_cell()
        where = f" in {nb.cell_name(failing).label}" if failing is not None else ""
        text = nb.status if error is None else error.message or error.type
        if error is not None and not text.startswith(error.type):
            text = f"{error.type}: {text}"
        errors.append(command(
            "error", f"{nb.status}{where}: {text}",
            file=annotation_file(nb.source, workspace),
            line=failing.line if failing is not None else None,
            title=f"Notebook failed: {nb.docname}"))
    warnings: list[str] = []
    for result in analysis.regressed:
        nb, comparison = result.notebook, result.comparison
        assert comparison is not None and comparison.ratio is not None
        factor = comparison.machine_factor
        warnings.append(command(
            "warning",
            f"{format_seconds(nb.seconds)} against {format_seconds(comparison.baseline_seconds)}"
            f" in the baseline ({comparison.ratio:.1f}x; {comparison.relative_ratio:.1f}x "
            f"beyond the machine factor {factor:.2f}x)",
            file=annotation_file(nb.source, workspace),
            title=f"Slower than the baseline: {nb.docname}"))
    flagged = [(a.notebook, cell, flags) for a in analysis.notebooks
               for cell, flags in a.flagged_cells]
    flagged.sort(key=lambda item: (-item[1].seconds, item[0].docname))
    for nb, cell, flags in flagged:
        reasons = [f.reason for f in flags if not f.is_hint]
        hints = [f"hint: {f.text}" for f in flags if f.is_hint]
        label = nb.cell_name(cell).label
        warnings.append(command(
            "warning", "; ".join(reasons + hints) + (f"\n{cell.first_line}"
                                                     if cell.first_line else ""),
            file=annotation_file(nb.source, workspace), line=cell.line,
            title=f"Slow {label} of {nb.docname} ({format_seconds(cell.seconds)})"))
    commands = errors + warnings
    if len(commands) > MAX_ANNOTATIONS:
        left = len(commands) - (MAX_ANNOTATIONS - 1)
        commands = commands[:MAX_ANNOTATIONS - 1] + [command(
            "notice", f"{left} more notebooks or cells to look at: see the job summary",
            title="More execution annotations")]
    return commands


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
        stream.write("\n".join(markdown).rstrip("\n") + "\n\n")
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
        "flagged": sum(len(a.flagged_cells) for a in analysis.notebooks),
        "regressed": len(analysis.regressed),
        "machine-factor": (f"{machine.factor:.3f}"
                           if machine is not None and machine.factor is not None else ""),
    }
