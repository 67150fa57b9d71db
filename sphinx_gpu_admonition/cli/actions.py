"""GitHub Actions output of ``report`` and ``compare`` (``--github``): annotations on
standard error, the job summary and the step outputs, written by :mod:`..github`."""

from __future__ import annotations

import argparse
import os
import sys

from ..model.analysis import BuildAnalysis
from ..model.record import StatusReport
from .output import UsageError


def github_enabled(args: argparse.Namespace) -> bool:
    from ..render import github

    return github.enabled(True if args.github else "auto") and not args.no_github


def write_github(report: StatusReport, analysis: BuildAnalysis, markdown: list[str],
                 status_json: str) -> None:
    """Annotations (standard error), the job summary and the step outputs."""
    from ..render import github

    workspace = os.environ.get("GITHUB_WORKSPACE")
    github.write_annotations(github.annotations(report, analysis, workspace), sys.stderr)
    try:
        github.append_summary(markdown)
        github.append_outputs(github.output_values(report, analysis, status_json, None))
    except OSError as error:
        raise UsageError(f"cannot write the GitHub Actions summary or outputs: "
                         f"{error.filename or ''} {error.strerror or error}") from error
