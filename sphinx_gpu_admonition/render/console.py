"""The build's console summary: totals, the slowest notebooks, the flagged cells
(the status page's list, in its order), the notebooks over their time budget and the
failures, a few lines in the log.

Every line starts with the extension's own text or indentation and goes through
:func:`..model.formatting.safe_line`: a notebook's name, an exception type or a device
name cannot become a workflow command of the CI runner reading the log.
"""

from __future__ import annotations

from ..model.analysis import BuildAnalysis
from ..model.findings import BuildTotals, budget_findings, findings, flagged_and_notes
from ..model.formatting import NO_DATA, format_seconds, one_line, safe_lines
from ..model.record import BUILD_FAILED, StatusReport, sorted_slowest_first
from .claims_view import claim_entries, claims_lines, review_pages
from .finding_text import ENGLISH as WORDS
from .labels import cache_miss_text

#: notebooks and flagged cells the summary lists
SUMMARY_ROWS = 5
_TIME_WIDTH = 9


def _time(seconds: float) -> str:
    return format_seconds(seconds).rjust(_TIME_WIDTH)


def summary_lines(report: StatusReport, analysis: BuildAnalysis) -> list[str]:
    notebooks = report.notebooks
    totals = BuildTotals.of(analysis)  # the status page's numbers
    reused = (f", {totals.from_earlier_build} unchanged since an earlier build"
              if totals.from_earlier_build else "")
    lines = [f"execution: {totals.notebooks} notebooks, {totals.executed_now} executed, "
             f"{totals.from_cache} from the cache{reused}, {totals.failed} failed; "
             f"{format_seconds(totals.seconds)} in all"]
    if report.build.get("outcome") == BUILD_FAILED:
        lines.insert(0, f"execution: the build stopped ({one_line(report.build.get('failure'))}"
                        "); this report lists what it read before it stopped")
    misses = [f"{one_line(nb.docname)} ({cache_miss_text(nb)})" for nb in notebooks
              if cache_miss_text(nb)]
    if misses:  # why the cache did not serve them (MyST-NB says only that it executed)
        lines.append(f"cache misses ({len(misses)}): " + "; ".join(misses[:SUMMARY_ROWS])
                     + ("; ..." if len(misses) > SUMMARY_ROWS else ""))
    for nb in sorted_slowest_first(n for n in notebooks if n.executed)[:SUMMARY_ROWS]:
        lines.append(f"  {_time(nb.seconds)}  {one_line(nb.docname)}  "
                     f"[{one_line(nb.device_label or NO_DATA)}]")
    # the status page's list, in the same order; the notes apart (never counted as flagged)
    flagged, notes = flagged_and_notes(findings(analysis))
    if flagged:
        shown = (f"{len(flagged)}" if len(flagged) <= SUMMARY_ROWS
                 else f"{len(flagged)}, the {SUMMARY_ROWS} slowest")
        lines.append(f"flagged cells ({shown}):")
        for finding in flagged[:SUMMARY_ROWS]:
            hints = [f for f in finding.flags if f.is_hint]
            # a cell flagged by a hint alone (compiled again) says it on its own line
            first = [f for f in finding.flags if not f.is_hint] or hints[:1]
            reasons = "; ".join(WORDS.reason(f) for f in first)
            lines.append(f"  {_time(finding.seconds)}  {one_line(finding.name.full)}: "
                         f"{one_line(reasons)}")
            indent = " " * (_TIME_WIDTH + 4)
            # why it is slow (the loop it runs, its compilation), as `report` says it
            for hint in (f for f in hints if f not in first):
                lines.append(f"{indent}hint: {one_line(WORDS.reason(hint))}")
            if finding.code:
                lines.append(f"{indent}code: {one_line(finding.code)}")
            timing = WORDS.timing(finding)
            if timing:
                lines.append(f"{indent}{timing}")
            said = WORDS.jax_says(finding.jax_reasons)
            if said:  # a recompilation's reason (gpu_explain_recompilations)
                lines.append(f"{indent}{one_line(said)}")
            action = WORDS.finding_action(finding)
            if action:  # a slow-ok cell has none
                lines.append(f"{indent}what to do: {action}")
    if notes:  # shown, never warned: slow on purpose (slow-ok), only imports
        lines.append(f"notes ({len(notes)}):")
        for finding in notes[:SUMMARY_ROWS]:
            lines.append(f"  {_time(finding.seconds)}  {one_line(finding.name.full)}: "
                         f"{one_line(WORDS.reasons(finding.flags))}")
            action = WORDS.finding_action(finding)
            if action:  # an import cell's (a slow-ok cell has none)
                lines.append(f"{' ' * (_TIME_WIDTH + 4)}what to do: {action}")
    over_budget = budget_findings(analysis)  # the budget warnings', furthest over first
    if over_budget:
        lines.append(f"over their time budget ({len(over_budget)}):")
        for row in over_budget[:SUMMARY_ROWS]:
            where = f" ({one_line(row.notebook.source)})" if row.notebook.source else ""
            lines.append(f"  {_time(row.seconds)}  {one_line(row.notebook.docname)}{where}: "
                         f"{WORDS.budget(row.seconds, row.budget_seconds)}")
    for flag in analysis.build_flags:  # the build's, not a cell's
        lines.append(f"build: {WORDS.reason(flag)}")
        lines.append(f"{' ' * (_TIME_WIDTH + 4)}what to do: {WORDS.rule_action(flag)}")
    # the text's timing claims: the count, those that do not hold, the review list's
    lines += claims_lines(claim_entries(analysis.claims), len(analysis.timing_statements),
                          review_pages(analysis.timing_statements))
    for nb in notebooks:
        if nb.failed:
            error = one_line(nb.error.type) if nb.error else ""
            lines.append(f"  FAILED {one_line(nb.docname)}: {nb.status} {error}".rstrip())
    return safe_lines(lines)
