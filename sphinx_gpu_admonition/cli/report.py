"""``report``: one build's totals, slowest notebooks and cells, flagged cells with
their reasons, failures and machines, as text, GitHub Markdown or JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..model.analysis import Thresholds, action_for, analyse
from ..model.findings import BuildTotals
from ..model.record import (
    BUILD_FAILED,
    OK,
    CellRecord,
    NotebookRecord,
    StatusReport,
    sorted_slowest_first,
)
from .actions import github_enabled, write_github
from .machines import machines_markdown, machines_text, report_machines
from .output import (
    DEFAULT_THRESHOLDS,
    EXIT_FAILED,
    EXIT_OK,
    Cell,
    Style,
    colour_enabled,
    emit,
    emit_json,
    fmt_seconds,
    md_code,
    md_table,
    md_text,
    plural,
    read_report,
    shorten,
    text_table,
)


def summarise_report(report: StatusReport, source: str, thresholds: Thresholds,
                     top: int) -> dict[str, Any]:
    """What ``report`` shows, as plain data (the ``--json`` output)."""
    analysis = analyse(report, thresholds)
    notebooks = report.notebooks
    executed = [nb for nb in notebooks if nb.executed]
    counted = BuildTotals.of(analysis)  # the status page's and the console's numbers
    totals = {
        "notebooks": counted.notebooks,
        "ok": counted.ok,
        "failed": counted.failed,
        "not_executed": counted.not_executed,
        "executed_now": counted.executed_now,
        "from_cache": counted.from_cache,
        "from_earlier_build": counted.from_earlier_build,
        #: the build stopped before it finished (build.outcome "failed"): its failure
        "build_failure": (str(report.build.get("failure") or "the build stopped")
                          if report.build.get("outcome") == BUILD_FAILED else None),
        "seconds": counted.seconds,
        "seconds_from_cache": counted.seconds_from_cache,
        "compile_seconds": counted.compile_seconds,
        "cells": counted.cells,
    }
    slowest = [{
        "docname": nb.docname, "title": nb.title, "status": nb.status,
        "provenance": nb.provenance, "seconds": nb.seconds, "cells": len(nb.cells),
        "compile_seconds": nb.compile_seconds,
        "device": nb.device_label,
        "backend": nb.environment.backend,
    } for nb in sorted_slowest_first(executed)[:top]]
    cells = [(nb, cell) for nb in executed for cell in nb.cells]
    cells.sort(key=lambda item: (-item[1].seconds, item[0].docname))
    slowest_cells = [_cell_entry(nb, cell) for nb, cell in cells[:top]]
    flagged = [(a.notebook, cell, flags) for a in analysis.notebooks
               for cell, flags in a.flagged_cells]
    flagged.sort(key=lambda item: (-item[1].seconds, item[0].docname))
    flagged_cells = [
        _cell_entry(nb, cell) | {
            "reasons": [f.reason for f in flags if not f.is_hint],
            "hints": [f.text for f in flags if f.is_hint],
            "rules": [f.rule for f in flags],
            "action": action_for(flags),
        } for nb, cell, flags in flagged
    ]
    failures = []
    for nb in notebooks:
        if not nb.failed:
            continue
        error = nb.error
        failed_cell = nb.error_cell() or next(
            (c for c in nb.cells if c.error and not c.error_expected), None)
        failures.append({
            "docname": nb.docname, "status": nb.status,
            "error_type": error.type if error else (failed_cell.error if failed_cell else None),
            "message": (error.message.strip().splitlines() or [""])[-1] if error else "",
            "cell_index": (error.cell_index if error and error.cell_index is not None
                           else failed_cell.index if failed_cell else None),
            "execution_count": (error.execution_count if error else
                                failed_cell.execution_count if failed_cell else None),
            "cell": nb.cell_name(failed_cell).label if failed_cell else None,
        })
    return {
        "source": source,
        "build": report.build,
        "thresholds": thresholds._asdict(),
        "totals": totals,
        "slowest_notebooks": slowest,
        "slowest_cells": slowest_cells,
        "flagged_cells": flagged_cells,
        "failures": failures,
        "machines": report_machines(report),
    }


def _cell_entry(nb: NotebookRecord, cell: CellRecord) -> dict[str, Any]:
    return {"docname": nb.docname, "cell": nb.cell_name(cell).label, "line": cell.line,
            "index": cell.index, "execution_count": cell.execution_count,
            "seconds": cell.seconds, "compile_seconds": cell.compile_seconds,
            "first_line": cell.first_line, "error": cell.error}


def _build_line(build: dict[str, Any]) -> str:
    parts = []
    if build.get("project"):
        parts.append(f"project {build['project']!r}")
    if build.get("builder"):
        parts.append(f"builder {build['builder']}")
    if build.get("execution_mode"):
        parts.append(f"execution mode {build['execution_mode']}")
    if build.get("sphinx"):
        parts.append(f"Sphinx {build['sphinx']}")
    if build.get("created"):
        parts.append(f"created {build['created']}")
    return ", ".join(parts)


def _totals_line(totals: dict[str, Any]) -> str:
    earlier = (f", {totals['from_earlier_build']} unchanged since an earlier build"
               if totals["from_earlier_build"] else "")
    return (f"{plural(totals['notebooks'], 'notebook')}: {totals['ok']} ok, "
            f"{totals['failed']} failed, {totals['not_executed']} not executed; "
            f"{totals['executed_now']} executed by this build, {totals['from_cache']} reused "
            f"from the cache{earlier}")


def _stopped_line(totals: dict[str, Any]) -> str | None:
    if totals["build_failure"] is None:
        return None
    return (f"The build stopped before it finished ({totals['build_failure']}); this "
            "report lists what it read.")


def _time_line(totals: dict[str, Any]) -> str:
    text = f"{fmt_seconds(totals['seconds'])} in {plural(totals['cells'], 'cell')}"
    if totals["compile_seconds"]:
        text += f" (JAX compilation {fmt_seconds(totals['compile_seconds'])})"
    if totals["from_cache"]:
        text += (f"; {fmt_seconds(totals['seconds_from_cache'])} of it measured when the "
                 "cached outputs were made")
    return text


def render_report_text(summary: dict[str, Any], style: Style, top: int) -> list[str]:
    totals = summary["totals"]
    lines = [style("Build status", "bold") + f"  {summary['source']}"]
    if summary["build"]:
        lines.append(f"  {_build_line(summary['build'])}")
    failed = style(f"{totals['failed']} failed", "red" if totals["failed"] else "green")
    lines.append("  " + _totals_line(totals).replace(f"{totals['failed']} failed", failed, 1))
    lines.append(f"  Total time: {_time_line(totals)}")
    stopped = _stopped_line(totals)
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
    for c in summary["flagged_cells"]:
        where = f"{c['docname']} {c['cell']}"
        lines.append(f"  {style(fmt_seconds(c['seconds']), 'yellow')}  {where}: "
                     f"{shorten(c['first_line'])}")
        for reason in c["reasons"]:
            lines.append(f"      - {reason}")
        for hint in c["hints"]:
            lines.append(f"      {style('hint:', 'cyan')} {hint}")
    lines += ["", style(f"Failures ({len(summary['failures'])})", "bold")]
    if summary["failures"]:
        rows = [[f["docname"], (f["status"], ("red",)), f["error_type"] or "-",
                 f["cell"] or "-",
                 shorten(f["message"], 80)] for f in summary["failures"]]
        lines += text_table(["notebook", "status", "error", "cell", "message"], rows, style)
    else:
        lines.append("  none")
    lines += ["", style(f"Machines ({len(summary['machines'])})", "bold")]
    lines += machines_text(summary["machines"], style)
    return lines


def _status_cell(status: str) -> Cell:
    if status == OK:
        return (status, ("green",))
    if status in ("error", "timeout", "kernel_died"):
        return (status, ("red",))
    return (status, ("dim",))



def render_report_markdown(summary: dict[str, Any], top: int) -> list[str]:
    totals = summary["totals"]
    mark = "❌" if totals["failed"] or totals["build_failure"] else "✅"
    lines = [f"### {mark} Notebook execution: {md_text(_totals_line(totals))}", "",
             f"Total time: {md_text(_time_line(totals))}."]
    stopped = _stopped_line(totals)
    if stopped:
        lines += ["", f"**{md_text(stopped)}**"]
    if summary["build"]:
        lines += ["", f"<sub>{md_text(_build_line(summary['build']))}</sub>"]
    if summary["failures"]:
        lines += ["", "#### Failures", ""]
        lines += md_table(["Notebook", "Status", "Error", "Cell", "Message"], [
            [md_text(f["docname"]), md_text(f["status"]), md_text(f["error_type"] or "-"),
             md_text(f["cell"] or "-"),
             md_code(shorten(f["message"], 100))] for f in summary["failures"]])
    if summary["slowest_notebooks"]:
        lines += ["", f"#### Slowest notebooks (top {top})", ""]
        lines += md_table(["Time", "Notebook", "Status", "Outputs", "Cells", "Device"], [
            [fmt_seconds(nb["seconds"]), md_text(nb["docname"]), md_text(nb["status"]),
             md_text(nb["provenance"]), str(nb["cells"]), md_text(nb["device"] or "-")]
            for nb in summary["slowest_notebooks"]], right=(0, 4))
    if summary["slowest_cells"]:
        lines += ["", f"#### Slowest cells (top {top})", ""]
        lines += md_table(["Time", "Compile", "Notebook", "Cell", "First line"], [
            [fmt_seconds(c["seconds"]), fmt_seconds(c["compile_seconds"] or None),
             md_text(c["docname"]), md_text(c["cell"]),
             md_code(shorten(c["first_line"]))] for c in summary["slowest_cells"]],
            right=(0, 1))
    if summary["flagged_cells"]:
        lines += ["", f"#### Flagged cells ({len(summary['flagged_cells'])})", ""]
        lines += md_table(["Time", "Notebook", "Cell", "First line", "Why"], [
            [fmt_seconds(c["seconds"]), md_text(c["docname"]),
             md_text(c["cell"]),
             md_code(shorten(c["first_line"])),
             md_text("; ".join(c["reasons"] + [f"hint: {h}" for h in c["hints"]]))]
            for c in summary["flagged_cells"]], right=(0,))
    lines += ["", "#### Machines", ""]
    lines += machines_markdown(summary["machines"])
    return lines


def cmd_report(args: argparse.Namespace) -> int:
    report = read_report(args.build)
    thresholds = DEFAULT_THRESHOLDS._replace(slow_cell_seconds=args.slow_cell_seconds,
                                             slow_cell_min_seconds=args.min_seconds)
    summary = summarise_report(report, args.build, thresholds, args.top)
    if github_enabled(args):
        write_github(report, analyse(report, thresholds),
                      render_report_markdown(summary, args.top), status_json=args.build)
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
