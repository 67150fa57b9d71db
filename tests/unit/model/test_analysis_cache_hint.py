"""The build-level ``compilation_cache`` finding (issue 22, item 4): a CI build whose
JAX compilation is a large share of its time, with no persistent compilation cache
configured in the kernels, is told to set one and keep it between runs.

The limits are :class:`~sphinx_gpu_admonition.model.analysis.Thresholds`'
(``cache_compile_seconds``, ``cache_compile_share``): inclusive, as every rule's.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse, is_ci
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    Environment,
    JaxInfo,
    NotebookRecord,
    StatusReport,
)
from sphinx_gpu_admonition.render import github
from sphinx_gpu_admonition.render.console import summary_lines
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS
from sphinx_gpu_admonition.render.markdown import render_report_markdown
from sphinx_gpu_admonition.render.status_html import render_html
from sphinx_gpu_admonition.render.status_rows import StatusOptions
from sphinx_gpu_admonition.render.summary import summarise_report

LIMITS = Thresholds()


def _report(compile_seconds: float, total: float = 100.0, ci: bool = True,
            cache: bool | None = False, provenance: str = "executed") -> StatusReport:
    # compilation spread over two cells and two notebooks: the build's sum counts
    notebooks = [
        NotebookRecord(
            docname=name, status="ok", provenance=provenance, capture="ok",
            environment=Environment(jax=JaxInfo(backend="gpu", compilation_cache=cache)),
            cells=[CellRecord(index=1, execution_count=1, seconds=total / 2,
                              first_line="x = f(1)", compile_seconds=compile_seconds / 2)])
        for name in ("a", "b")]
    return StatusReport(notebooks, {"ci": ci})


def _rules(report: StatusReport) -> list[str]:
    return [flag.rule for flag in analyse(report, LIMITS).build_flags]


def test_the_limits_are_inclusive_and_both_must_be_met() -> None:
    assert LIMITS.cache_compile_seconds == 30.0 and LIMITS.cache_compile_share == 0.2
    assert _rules(_report(30.0)) == ["compilation_cache"]  # 30 s, 30 %
    assert _rules(_report(29.0)) == []  # under 30 s
    assert _rules(_report(40.0, total=200.0)) == ["compilation_cache"]  # exactly 20 %
    assert _rules(_report(39.0, total=200.0)) == []  # 19.5 %: a small share


@pytest.mark.parametrize("report", [
    _report(60.0, ci=False),  # a local build: not every run compiles again
    _report(60.0, cache=True),  # a cache is configured
    _report(60.0, cache=None),  # not known (a record of an older probe)
    _report(60.0, provenance="cache"),  # nothing executed now: no compilation now
], ids=["not-ci", "cache-set", "unknown", "from-the-jupyter-cache"])
def test_no_finding_where_it_would_not_help(report: StatusReport) -> None:
    assert _rules(report) == []


def test_ci_is_what_the_runners_set() -> None:
    assert is_ci({"CI": "true"}) and is_ci({"CI": "1"}) and is_ci({"GITHUB_ACTIONS": "true"})
    assert not is_ci({}) and not is_ci({"CI": "false"})


def test_every_view_shows_it_with_its_action() -> None:
    report = _report(60.0)
    analysis = analyse(report, LIMITS)
    (flag,) = analysis.build_flags
    reason, action = WORDS.reason(flag), WORDS.rule_action(flag)
    assert "60.0 s" in reason and "60%" in reason and "2 notebooks" in reason
    assert "JAX_COMPILATION_CACHE_DIR" in action and "actions/cache" in action
    # the console
    lines = summary_lines(report, analysis)
    at = lines.index(f"build: {reason}")
    assert lines[at + 1].strip() == f"what to do: {action}"
    # report --json, and report --markdown (the GitHub job summary)
    summary = summarise_report(report, analysis, LIMITS, "x.json", 5)
    (entry,) = summary["build_findings"]
    assert entry == {"rule": "compilation_cache", "reason": reason, "action": action}
    (line,) = [line for line in render_report_markdown(summary, 5) if "This build:" in line]
    assert "JAX\\_COMPILATION\\_CACHE\\_DIR" in line and "actions/cache" in line
    # a GitHub annotation of its own (no file: the whole build)
    (annotation,) = [line for line in github.annotations(report, analysis)
                     if "Whole build" in line]
    assert annotation.startswith("::warning title=Whole build%3A compilation cache::JAX ")
    assert annotation.endswith(github.escape_data(f"\nwhat to do: {action}"))
    # the status page, above the flagged cells
    soup = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: None), "lxml")
    box = soup.select_one(".gpu-status-findings .gpu-status-build-finding")
    assert reason in box.select_one(".gpu-status-finding-reason").get_text()
    assert action in box.select_one(".gpu-status-finding-action").get_text()
