"""``report``: one build's totals, slowest notebooks and cells, flagged cells with
their reasons, failures and machines, as text, GitHub Markdown or JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..model.analysis import analyse
from ..model.files import find_status_file
from ..model.formatting import one_line
from ..model.judging import Judging, find_baseline
from ..model.record import OK, StatusReport
from ..render.claims_view import claims_lines
from ..render.markdown import render_report_markdown
from ..render.summary import (
    shown_path,
    stopped_line,
    summarise_report,
    time_line,
    totals_line,
)
from .machines import machines_text
from .output import (
    EXIT_FAILED,
    EXIT_OK,
    PROG,
    Cell,
    Style,
    colour_enabled,
    emit,
    emit_json,
    fmt_seconds,
    github_enabled,
    judging_of,
    read_report,
    say,
    shorten,
    text_table,
    thresholds_from,
    write_github,
)

__all__ = ["cmd_report", "render_report_markdown", "render_report_text", "summarise_report"]


def render_report_text(summary: dict[str, Any], style: Style, top: int) -> list[str]:
    totals = summary["totals"]
    lines = [style("Build status", "bold") + f"  {one_line(summary['source'])}"]
    if summary["build"]:
        lines.append(f"  {one_line(summary['build_line'])}")
    failed = style(f"{totals['failed']} failed", "red" if totals["failed"] else "green")
    lines.append("  " + totals_line(totals).replace(f"{totals['failed']} failed", failed, 1))
    if summary["baseline"]:  # the status page's headline: regressions, a device change
        against = summary["baseline"]
        news = against["regressed"] or against["device_change"]
        lines.append("  " + style(one_line(against["headline"]), *(("yellow",) if news else ())))
    lines.append(f"  Total time: {time_line(totals)}")
    stopped = stopped_line(totals)
    if stopped:
        lines.append("  " + style(stopped, "red"))

    if summary["slowest_notebooks"]:
        lines += ["", style(f"Slowest notebooks (top {top})", "bold")]
        rows = [[fmt_seconds(nb["seconds"]), nb["docname"], _status_cell(nb["status"]),
                 nb["provenance"], str(nb["cells"]), fmt_seconds(nb["compile_seconds"] or None),
                 nb["device"] or "-"] for nb in summary["slowest_notebooks"]]
        lines += text_table(["time", "notebook", "status", "outputs", "cells", "compile",
                             "device"], rows, style, right=(0, 4, 5))
    if summary["slowest_cells"]:
        lines += ["", style(f"Slowest cells (top {top})", "bold")]
        rows = [[fmt_seconds(c["seconds"]), fmt_seconds(c["compile_seconds"] or None),
                 c["docname"], c["cell"],
                 shorten(c["first_line"])] for c in summary["slowest_cells"]]
        lines += text_table(["time", "compile", "notebook", "cell", "first line"], rows, style,
                            right=(0, 1))
    lines += ["", style(f"Flagged cells ({len(summary['flagged_cells'])})", "bold")]
    if not summary["flagged_cells"]:
        lines.append("  none")
    for c in summary["flagged_cells"]:  # as the console summary names and advises them
        lines.append(f"  {style(fmt_seconds(c['seconds']), 'yellow')}  {one_line(c['name'])}: "
                     f"{shorten(c['code'] or c['first_line'])}")
        if c["timing"]:
            lines.append(f"      {one_line(c['timing'])}")
        for reason in c["reasons"]:
            lines.append(f"      - {one_line(reason)}")
        for cause in c["causes"]:
            lines.append(f"      {style('hint:', 'cyan')} {one_line(cause)}")
        if c["action"]:
            lines.append(f"      {style('what to do:', 'bold')} {one_line(c['action'])}")
    if summary["notes"]:  # shown, never counted as flagged: slow on purpose, only imports
        lines += ["", style(f"Notes ({len(summary['notes'])})", "bold")]
        for c in summary["notes"]:
            lines.append(f"  {fmt_seconds(c['seconds'])}  {one_line(c['name'])}: "
                         f"{one_line('; '.join(c['reasons']))}")
            if c["action"]:  # an import cell's (a slow-ok cell has none)
                lines.append(f"      {style('what to do:', 'bold')} {one_line(c['action'])}")
    if summary["over_budget"]:  # budgets are the book's choice: no section without one
        lines += ["", style(f"Over their time budget ({len(summary['over_budget'])})", "bold")]
        for row in summary["over_budget"]:
            where = f" ({one_line(row['location'])})" if row["location"] else ""
            lines.append(f"  {style(fmt_seconds(row['seconds']), 'yellow')}  "
                         f"{one_line(row['docname'])}{where}: {one_line(row['reason'])}")
    for flag in summary["build_findings"]:  # the build's, not a cell's
        lines += ["", f"{style('Build:', 'bold')} {one_line(flag['reason'])}",
                  f"      {style('what to do:', 'bold')} {one_line(flag['action'])}"]
    lines += ["", style(f"Failures ({len(summary['failures'])})", "bold")]
    if summary["failures"]:
        rows = [[f["docname"], (f["status"], ("red",)), f["error_type"] or "-",
                 f["cell"] or "-",
                 shorten(f["message"], 80)] for f in summary["failures"]]
        lines += text_table(["notebook", "status", "error", "cell", "message"], rows, style)
    else:
        lines.append("  none")
    if summary["capture_failures"]:  # executed, but not measured: never left out silently
        lines += ["", style(f"Not measured ({len(summary['capture_failures'])})", "bold")]
        lines += [f"  {one_line(row['docname'])}: capture failed: {one_line(row['message'])}"
                  for row in summary["capture_failures"]]
    if summary["claims"] or summary["timing_statements"]:  # the text's words about speed
        lines += ["", style("Timing claims", "bold")]
        lines += claims_lines(summary["claims"], len(summary["timing_statements"]),
                              len({row["page"] for row in summary["timing_statements"]}),
                              shown=len(summary["claims"]))
    warnings = [item for item in summary["warnings"] if not item["repeats_finding"]]
    if warnings:  # what the build's log said, but for the findings listed above
        lines += ["", style(f"Build warnings ({len(warnings)})", "bold")]
        for item in warnings:
            where = f"{one_line(item['where'])}: " if item["where"] else ""
            lines.append(f"  {style('warning:', 'yellow')} {where}{one_line(item['message'])} "
                         f"[{item['name']}]")
    lines += ["", style(f"Machines ({len(summary['machines'])})", "bold")]
    lines += machines_text(summary["machines"], style)
    return lines


def _status_cell(status: str) -> Cell:
    if status == OK:
        return (status, ("green",))
    if status in ("error", "timeout", "kernel_died"):
        return (status, ("red",))
    return (status, ("dim",))



def build_baseline(judging: Judging, status_file: Path) -> StatusReport | None:
    """The baseline the build compared with, where that file still is, unchanged; else a
    note on standard error (its regressions are not checked again) and None."""
    used = judging.baseline
    if used is None:
        return None
    found = find_baseline(used, status_file)
    if found is None:
        say(f"{PROG}: note: the build compared with the baseline {used.path} "
            f"(created {used.created or 'at an unknown time'}), which is not there or has "
            "changed since: its regressions are not checked again (give --baseline)",
            sys.stderr)
        return None
    return read_report(str(found))


def cmd_report(args: argparse.Namespace) -> int:
    report = read_report(args.build)
    judging = judging_of(report)  # how the build judged it: its thresholds and baseline
    thresholds = thresholds_from(judging.thresholds, args)
    if args.baseline:
        baseline = read_report(args.baseline)
    elif args.no_baseline:
        baseline = None
    else:
        baseline = build_baseline(judging, find_status_file(args.build))
    analysis = analyse(report, thresholds, baseline)  # the one analysis every output shows
    summary = summarise_report(report, analysis, thresholds, shown_path(args.build), args.top)
    if github_enabled(args):
        write_github(report, analysis, render_report_markdown(summary, args.top),
                     status_json=args.build)
    if args.json:
        emit_json(summary)
    elif args.markdown:
        emit(render_report_markdown(summary, args.top))
    else:
        emit(render_report_text(summary, Style(colour_enabled(args.no_color, sys.stdout)),
                                 args.top))
    failed = summary["totals"]["failed"] or summary["totals"]["build_failure"]
    if failed and not args.exit_zero:
        return EXIT_FAILED
    return EXIT_OK
