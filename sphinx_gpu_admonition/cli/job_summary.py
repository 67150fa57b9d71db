"""The GitHub Actions job summary a build writes: ``report --markdown``, and
``compare --markdown`` against the baseline when there is one."""

from __future__ import annotations

from ..model.analysis import BuildAnalysis, Thresholds
from ..model.record import StatusReport
from .compare import CompareOptions, render_compare_markdown, summarise_compare
from .report import render_report_markdown, summarise_report


def github_summary(report: StatusReport, analysis: BuildAnalysis,
                   baseline: StatusReport | None, source: str = "this build",
                   thresholds: Thresholds | None = None) -> list[str]:
    """The job summary of a build, flagged by ``thresholds`` (the build's ``gpu_*``
    options; the defaults when None)."""
    thresholds = thresholds or Thresholds()
    lines = render_report_markdown(summarise_report(report, source, thresholds, 5), 5)
    if baseline is not None and analysis.machine is not None:
        options = CompareOptions("the baseline", source,
                                 min_seconds=thresholds.slow_cell_min_seconds,
                                 regression_ratio=thresholds.regression_ratio)
        lines += ["", *render_compare_markdown(summarise_compare(baseline, report, options))]
    return lines
