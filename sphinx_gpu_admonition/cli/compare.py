"""``compare``: two builds (A, the baseline; B, the new one) per notebook and cell,
largest change first, judged after the machine factor; text, GitHub Markdown or JSON."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from ..model.analysis import BuildAnalysis, analyse
from ..model.formatting import one_line
from ..model.record import StatusReport
from ..render import summary
from ..render.markdown import both_machines, render_compare_markdown
from ..render.summary import CompareOptions, shown_path, summary_sentence
from .machines import machines_text
from .output import (
    EXIT_FAILED,
    EXIT_OK,
    Cell,
    Style,
    colour_enabled,
    emit,
    emit_json,
    fmt_change,
    fmt_ratio,
    fmt_seconds,
    github_enabled,
    judging_of,
    read_report,
    shorten,
    text_table,
    thresholds_from,
    write_github,
)

__all__ = ["CompareOptions", "cmd_compare", "compare_options", "render_compare_markdown",
           "render_compare_text", "summarise_compare", "summary_sentence"]


def compare_options(args: argparse.Namespace) -> CompareOptions:
    """The command's options (the paths as the output shows them: :func:`shown_path`)."""
    return CompareOptions(shown_path(args.baseline), shown_path(args.new), args.label_a,
                          args.label_b, args.fail_above, args.slow_cell_min_seconds, args.top)


def compared(a: StatusReport, b: StatusReport, options: CompareOptions,
             args: argparse.Namespace | None = None) -> tuple[BuildAnalysis, dict[str, Any]]:
    """B analysed once against A, with the thresholds B's build judged it with (the
    command's options override them; ``--fail-above`` is the regression ratio when
    given), and what ``compare`` shows of that analysis."""
    thresholds = thresholds_from(judging_of(b).thresholds, args,
                                 slow_cell_min_seconds=options.min_seconds,
                                 regression_ratio=options.fail_above)
    options = dataclasses.replace(options, min_seconds=thresholds.slow_cell_min_seconds)
    analysis = analyse(b, thresholds, baseline=a)
    return analysis, summary.summarise_compare(a, b, analysis, options)


def summarise_compare(a: StatusReport, b: StatusReport,
                      options: CompareOptions) -> dict[str, Any]:
    """What ``compare`` shows, as plain data (the ``--json`` output)."""
    return compared(a, b, options)[1]


def _ratio_cell(row: dict[str, Any], style: Style) -> Cell:
    ratio = row["ratio"]
    if row["regression"]:
        return (fmt_ratio(ratio), ("red", "bold"))
    if ratio is None:
        return "-"
    return (fmt_ratio(ratio), ("yellow",) if ratio >= 1.05 else ("green",) if ratio <= 0.95
            else ())


def render_compare_text(data: dict[str, Any], style: Style) -> list[str]:
    a, b = data["baseline"], data["new"]
    lines = [style("Compare", "bold"),
             f"  A (baseline): {one_line(a['source'])}  [{one_line(a['label'])}, "
             f"{a['notebooks']} notebooks, {fmt_seconds(a['seconds'])}]",
             f"  B (new):      {one_line(b['source'])}  [{one_line(b['label'])}, "
             f"{b['notebooks']} notebooks, {fmt_seconds(b['seconds'])}]",
             "", "  " + style(one_line(data["summary"]["text"]), "bold"),
             "  " + one_line(data["machine"]["text"])]
    lines += ["", style("Notebooks (largest change first)", "bold")]
    rows = [[row["docname"], fmt_seconds(row["a_seconds"]), fmt_seconds(row["b_seconds"]),
             _ratio_cell(row, style), fmt_change(row["a_seconds"], row["b_seconds"]),
             row["a_device"] or "-", row["b_device"] or "-",
             row["state"] if row["state"] != "compared" else ""]
            for row in data["notebooks"]]
    lines += text_table(["notebook", "A", "B", "B/A", "change", "A device", "B device", ""],
                        rows, style, right=(1, 2, 3, 4))
    lines += ["", style(summary.cells_heading(data), "bold")]
    unchanged = summary.unchanged_line(data)
    if unchanged:  # not a table of "+0.00 ms"
        lines.append(f"  {unchanged}")
    else:
        rows = [[row["docname"], row["cell"],
                 shorten(row["first_line"], 40), fmt_seconds(row["a_seconds"]),
                 fmt_seconds(row["b_seconds"]), _ratio_cell(row, style),
                 fmt_change(row["a_seconds"], row["b_seconds"]),
                 row["state"] if row["state"] != "compared" else ""] for row in data["cells"]]
        lines += text_table(["notebook", "cell", "first line", "A", "B", "B/A", "change", ""],
                            rows, style, right=(3, 4, 5, 6))
    if data["new_notebooks"] or data["gone_notebooks"]:
        lines.append("")
        if data["new_notebooks"]:
            lines.append(f"  New in B: {one_line(', '.join(data['new_notebooks']))}")
        if data["gone_notebooks"]:
            lines.append(f"  Gone from B: {one_line(', '.join(data['gone_notebooks']))}")
    if data.get("claims"):  # the claims whose verdict differs: is it so on the CPU?
        lines += ["", style(f"Timing claims that differ ({len(data['claims'])})", "bold")]
        for row in data["claims"]:
            lines.append(f"  {one_line(row['where'])}: `{one_line(row['expression'])}`")
            lines.append(f"      A: {one_line(row['a'] or 'not in A')}")
            lines.append(f"      B: {one_line(row['b'] or 'not in B')}")
    lines += ["", style("Machines", "bold")]
    lines += machines_text(both_machines(data), style)
    lines += _regression_lines(data, style)
    return lines


def _regression_lines(data: dict[str, Any], style: Style) -> list[str]:
    if data["fail_above"] is None:
        return []
    floor = (f"B/A above {fmt_ratio(data['fail_above'])}, at least "
             f"{fmt_seconds(data['min_seconds'])} in B")
    if not data["regressions"]:
        return ["", style(f"No regression ({floor})", "green")]
    lines = ["", style(f"Regressions: {len(data['regressions'])} ({floor})", "red", "bold")]
    lines += [f"  {one_line(line)}" for line in data["regressions"]]
    return lines


def cmd_compare(args: argparse.Namespace) -> int:
    a = read_report(args.baseline)
    b = read_report(args.new)
    # one analysis, every output
    analysis, data = compared(a, b, compare_options(args), args)
    if github_enabled(args):
        write_github(b, analysis, render_compare_markdown(data), status_json=args.new)
    if args.json:
        emit_json(data)
    elif args.markdown:
        emit(render_compare_markdown(data))
    else:
        emit(render_compare_text(data, Style(colour_enabled(args.no_color, sys.stdout))))
    return EXIT_FAILED if data["regressions"] else EXIT_OK
