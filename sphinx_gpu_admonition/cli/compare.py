"""``compare``: two builds (A, the baseline; B, the new one) per notebook and cell,
largest change first, judged after the machine factor; text, GitHub Markdown or JSON."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from ..model.analysis import Thresholds, analyse
from ..model.device import build_label
from ..model.record import StatusReport
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
    fmt_change,
    fmt_ratio,
    fmt_seconds,
    md_code,
    md_table,
    md_text,
    read_report,
    shorten,
    text_table,
)


@dataclasses.dataclass(frozen=True)
class CompareOptions:
    """How to compare: the command's options (:meth:`from_args`), or a build's own."""

    #: how A and B are named in the output (their paths on the command line)
    source_a: str
    source_b: str
    #: names in the summary sentence; None: from the builds' backends ("CPU build")
    label_a: str | None = None
    label_b: str | None = None
    #: ``--fail-above``: a regression fails the command (and replaces regression_ratio)
    fail_above: float | None = None
    #: notebooks and cells faster than this in B are never regressions
    min_seconds: float = DEFAULT_THRESHOLDS.slow_cell_min_seconds
    #: rows of the cell table (0: all)
    top: int = 15
    regression_ratio: float = DEFAULT_THRESHOLDS.regression_ratio

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CompareOptions:
        return cls(args.baseline, args.new, args.label_a, args.label_b, args.fail_above,
                   args.min_seconds, args.top)

    def thresholds(self) -> Thresholds:
        """The analysis' thresholds: ``--fail-above`` is the regression ratio when given."""
        return DEFAULT_THRESHOLDS._replace(
            slow_cell_min_seconds=self.min_seconds,
            regression_ratio=(self.fail_above if self.fail_above is not None
                              else self.regression_ratio))


def _build_label(report: StatusReport) -> str | None:
    return build_label({nb.environment.backend for nb in report.notebooks
                        if nb.capture == "ok" and nb.environment.backend})


def _side(report: StatusReport, source: str, label: str) -> dict[str, Any]:
    executed = [nb for nb in report.notebooks if nb.executed]
    backends = sorted({nb.environment.backend for nb in report.notebooks
                       if nb.capture == "ok" and nb.environment.backend})
    return {"source": source, "label": label, "notebooks": len(report.notebooks),
            "seconds": sum(nb.seconds for nb in executed), "backends": backends,
            "created": report.build.get("created")}


def summary_sentence(label_a: str, label_b: str, ratio: float | None, count: int,
                     a_seconds: float, b_seconds: float) -> str:
    if ratio is None:
        return f"No notebook was executed in both builds: {label_b} and {label_a} are not compared"
    if abs(ratio - 1) < 0.05:
        verdict = f"{label_b} takes about as long as {label_a} overall"
    elif ratio == 0:  # e.g. a kernel that died at once in B
        verdict = f"{label_b} took no measurable time, unlike {label_a}"
    elif ratio < 1:
        verdict = f"{label_b} is {1 / ratio:.1f}x faster than {label_a} overall"
    else:
        verdict = f"{label_b} is {ratio:.1f}x slower than {label_a} overall"
    return (f"{verdict[0].upper()}{verdict[1:]} ({fmt_seconds(b_seconds)} vs "
            f"{fmt_seconds(a_seconds)}, {count} notebook{'s' if count != 1 else ''} in both)")


def summarise_compare(a: StatusReport, b: StatusReport,
                      options: CompareOptions) -> dict[str, Any]:
    """What ``compare`` shows, as plain data (the ``--json`` output).

    ``--fail-above`` regressions and the notebooks slower than ``a`` are judged after
    dividing by the machine factor (:class:`.analysis.MachineFactor`)."""
    fail_above, min_seconds = options.fail_above, options.min_seconds
    thresholds = options.thresholds()
    analysis = analyse(b, thresholds, baseline=a)
    machine = analysis.machine
    assert machine is not None
    auto_a, auto_b = _build_label(a), _build_label(b)
    if auto_a is None or auto_b is None or auto_a == auto_b:
        auto_a, auto_b = "the baseline", "the new build"
    label_a = options.label_a or auto_a
    label_b = options.label_b or auto_b
    a_by_name = a.by_docname()

    def regressed(seconds: float | None, relative_ratio: float | None) -> bool:
        return (fail_above is not None and relative_ratio is not None and seconds is not None
                and seconds >= min_seconds and relative_ratio >= fail_above)

    notebooks: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    common_a = common_b = 0.0
    common = 0
    for item in analysis.notebooks:
        nb, comp = item.notebook, item.comparison
        assert comp is not None
        old = a_by_name.get(nb.docname)
        b_seconds = nb.seconds if nb.executed else None
        a_seconds = comp.baseline_seconds
        ratio = comp.ratio if b_seconds is not None else None
        relative = comp.relative_ratio if b_seconds is not None else None
        if comp.state == "compared" and a_seconds is not None and b_seconds is not None:
            common += 1
            common_a += a_seconds
            common_b += b_seconds
        notebooks.append({
            "docname": nb.docname, "state": comp.state, "a_seconds": a_seconds,
            "b_seconds": b_seconds, "ratio": ratio,
            "change_seconds": (b_seconds - a_seconds
                               if a_seconds is not None and b_seconds is not None else None),
            "a_backend": comp.baseline_backend, "b_backend": nb.environment.backend,
            "a_device": comp.baseline_device,
            "b_device": nb.device_label,
            "a_status": old.status if old else None, "b_status": nb.status,
            "machine_factor": comp.machine_factor, "relative_ratio": relative,
            "regression": regressed(b_seconds, relative),
        })
        for position, cell in enumerate(nb.cells):
            cell_comp = comp.cells.get(position)
            before = cell_comp.baseline_seconds if cell_comp else None
            cell_ratio = cell_comp.ratio if cell_comp else None
            cells.append({
                "docname": nb.docname, "cell": nb.cell_name(cell).label, "index": cell.index,
                "execution_count": cell.execution_count, "first_line": cell.first_line,
                "state": cell_comp.state if cell_comp else "new",
                "a_seconds": before, "b_seconds": cell.seconds, "ratio": cell_ratio,
                "change_seconds": cell.seconds - before if before is not None else None,
                "regression": regressed(cell.seconds,
                                        cell_comp.relative_ratio if cell_comp else None),
            })
        for index, seconds, first_line in comp.gone_cells:
            gone = next((c for c in old.cells if c.index == index), None) if old else None
            cells.append({"docname": nb.docname, "index": index, "execution_count": None,
                          "cell": old.cell_name(gone).label if old and gone else "cell ?",
                          "first_line": first_line, "state": "gone", "a_seconds": seconds,
                          "b_seconds": None, "ratio": None, "change_seconds": None,
                          "regression": False})
    for nb in analysis.gone:
        notebooks.append({
            "docname": nb.docname, "state": "gone",
            "a_seconds": nb.seconds if nb.executed else None, "b_seconds": None,
            "ratio": None, "change_seconds": None, "a_backend": nb.environment.backend,
            "b_backend": None,
            "a_device": nb.device_label,
            "b_device": None, "a_status": nb.status, "b_status": None, "regression": False,
        })

    def order(row: dict[str, Any]) -> tuple[int, float, str]:
        """Compared rows by the largest change in seconds, then new, then gone ones."""
        change = row["change_seconds"]
        if change is not None:
            return (0, -abs(change), row["docname"])
        rank = {"compared": 1, "new": 2, "gone": 3}[row["state"]]
        return (rank, -(row["b_seconds"] or row["a_seconds"] or 0.0), row["docname"])

    notebooks.sort(key=order)
    cells.sort(key=order)
    ratio = common_b / common_a if common and common_a > 0 else None
    slower = [item.notebook.docname for item in analysis.regressed]
    regressions = [
        f"{row['docname']}" + (f" {row['cell']}"
                               if "index" in row else "")
        + f": {fmt_seconds(row['a_seconds'])} → {fmt_seconds(row['b_seconds'])} "
          f"({fmt_ratio(row['ratio'])})"
        for row in notebooks + cells if row["regression"]
    ]
    return {
        "baseline": _side(a, options.source_a, label_a),
        "new": _side(b, options.source_b, label_b),
        "summary": {
            "ratio": ratio, "common_notebooks": common, "a_seconds": common_a,
            "b_seconds": common_b,
            "text": summary_sentence(label_a, label_b, ratio, common, common_a, common_b),
        },
        "machine": {
            "factor": machine.factor, "source": machine.source,
            "text": _capitalised(machine.sentence(len(slower), f"the machine of {label_b}")),
        },
        #: notebooks slower than A beyond the machine factor (by --fail-above, else the
        #: default regression ratio) and at least --min-seconds
        "slower_notebooks": slower,
        "notebooks": notebooks,
        "cells": cells[:options.top] if options.top else cells,
        "cells_total": len(cells),
        "new_notebooks": [r["docname"] for r in notebooks if r["state"] == "new"],
        "gone_notebooks": [r["docname"] for r in notebooks if r["state"] == "gone"],
        "machines": {"a": report_machines(a), "b": report_machines(b)},
        "fail_above": fail_above,
        "min_seconds": min_seconds,
        "regressions": regressions,
    }


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _ratio_cell(row: dict[str, Any], style: Style) -> Cell:
    ratio = row["ratio"]
    if row["regression"]:
        return (fmt_ratio(ratio), ("red", "bold"))
    if ratio is None:
        return "-"
    return (fmt_ratio(ratio), ("yellow",) if ratio >= 1.05 else ("green",) if ratio <= 0.95
            else ())


def _both_machines(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The machines of A, then of B, each named after its build."""
    return [dict(m, id=f"{side.upper()} {m['id']}") for side in ("a", "b")
            for m in data["machines"][side]]


def render_compare_text(data: dict[str, Any], style: Style) -> list[str]:
    a, b = data["baseline"], data["new"]
    lines = [style("Compare", "bold"),
             f"  A (baseline): {a['source']}  [{a['label']}, {a['notebooks']} notebooks, "
             f"{fmt_seconds(a['seconds'])}]",
             f"  B (new):      {b['source']}  [{b['label']}, {b['notebooks']} notebooks, "
             f"{fmt_seconds(b['seconds'])}]",
             "", "  " + style(data["summary"]["text"], "bold"),
             "  " + data["machine"]["text"]]
    lines += ["", style("Notebooks (largest change first)", "bold")]
    rows = [[row["docname"], fmt_seconds(row["a_seconds"]), fmt_seconds(row["b_seconds"]),
             _ratio_cell(row, style), fmt_change(row["a_seconds"], row["b_seconds"]),
             row["a_device"] or "-", row["b_device"] or "-",
             row["state"] if row["state"] != "compared" else ""]
            for row in data["notebooks"]]
    lines += text_table(["notebook", "A", "B", "B/A", "change", "A device", "B device", ""],
                        rows, style, right=(1, 2, 3, 4))
    shown = len(data["cells"])
    lines += ["", style(f"Cells (largest change first, {shown} of {data['cells_total']})",
                        "bold")]
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
            lines.append(f"  New in B: {', '.join(data['new_notebooks'])}")
        if data["gone_notebooks"]:
            lines.append(f"  Gone from B: {', '.join(data['gone_notebooks'])}")
    lines += ["", style("Machines", "bold")]
    machines = _both_machines(data)
    lines += machines_text(machines, style)
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
    lines += [f"  {line}" for line in data["regressions"]]
    return lines


def _state(row: dict[str, Any]) -> str:
    return "" if row["state"] == "compared" else row["state"]


def render_compare_markdown(data: dict[str, Any]) -> list[str]:
    a, b = data["baseline"], data["new"]
    summary = data["summary"]["text"]
    lines = [f"### {md_text(summary)}", "", f"**{md_text(data['machine']['text'])}**", ""]
    if data["fail_above"] is not None:
        count = len(data["regressions"])
        lines += [(f"❌ **{count} regression{'s' if count != 1 else ''}** " if count else
                   "✅ No regression ")
                  + md_text(f"(B/A above {fmt_ratio(data['fail_above'])} and at least "
                            f"{fmt_seconds(data['min_seconds'])} in B)"), ""]
        lines += [f"- {md_text(line)}" for line in data["regressions"]]
        if data["regressions"]:
            lines.append("")
    lines += [f"A (baseline): {md_text(a['label'])}, {a['notebooks']} notebooks, "
              f"{fmt_seconds(a['seconds'])}; B (new): {md_text(b['label'])}, "
              f"{b['notebooks']} notebooks, {fmt_seconds(b['seconds'])}.", "",
              "#### Notebooks", ""]
    lines += md_table(["Notebook", "A", "B", "B/A", "Change", "A device", "B device", "State"], [
        [md_text(row["docname"]), fmt_seconds(row["a_seconds"]), fmt_seconds(row["b_seconds"]),
         ("**" + fmt_ratio(row["ratio"]) + "**") if row["regression"] else fmt_ratio(row["ratio"]),
         fmt_change(row["a_seconds"], row["b_seconds"]), md_text(row["a_device"] or "-"),
         md_text(row["b_device"] or "-"), _state(row)]
        for row in data["notebooks"]], right=(1, 2, 3, 4))
    lines += ["", f"#### Cells ({len(data['cells'])} of {data['cells_total']}, largest change "
                  "first)", ""]
    lines += md_table(["Notebook", "Cell", "First line", "A", "B", "B/A", "Change", "State"], [
        [md_text(row["docname"]), md_text(row["cell"]),
         md_code(shorten(row["first_line"])), fmt_seconds(row["a_seconds"]),
         fmt_seconds(row["b_seconds"]),
         ("**" + fmt_ratio(row["ratio"]) + "**") if row["regression"] else fmt_ratio(row["ratio"]),
         fmt_change(row["a_seconds"], row["b_seconds"]), _state(row)]
        for row in data["cells"]], right=(3, 4, 5, 6))
    lines += ["", "<details><summary>Machines</summary>", ""]
    machines = _both_machines(data)
    lines += machines_markdown(machines)
    lines += ["", "</details>"]
    return lines


def cmd_compare(args: argparse.Namespace) -> int:
    a = read_report(args.baseline)
    b = read_report(args.new)
    options = CompareOptions.from_args(args)
    data = summarise_compare(a, b, options)
    if github_enabled(args):
        write_github(b, analyse(b, options.thresholds(), baseline=a),
                     render_compare_markdown(data), status_json=args.new)
    if args.json:
        emit_json(data)
    elif args.markdown:
        emit(render_compare_markdown(data))
    else:
        emit(render_compare_text(data, Style(colour_enabled(args.no_color, sys.stdout))))
    return EXIT_FAILED if data["regressions"] else EXIT_OK
