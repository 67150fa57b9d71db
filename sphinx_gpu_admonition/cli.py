"""The ``sphinx-gpu-admonition`` command line: ``check``, ``report``, ``compare``, ``merge``.

Each subcommand builds one plain-data summary (what ``--json`` prints) and
renders it as aligned text (colour only on a terminal) or, where a pull-request
comment is the reader, as GitHub Markdown.  Build data is read through
:func:`.record.read_status` and judged by :func:`.analysis.analyse`, the same
code the status page and the build summary use; ``check`` measures the machine
with :mod:`.bench`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from . import __version__
from .analysis import BuildAnalysis, Thresholds, analyse
from .formatting import format_seconds
from .record import (
    BUILD_FAILED,
    CACHE,
    EARLIER_BUILD,
    EXECUTED,
    OK,
    CellRecord,
    Environment,
    NotebookRecord,
    SchemaError,
    StatusReport,
    read_status,
    sorted_slowest_first,
)

PROG = "sphinx-gpu-admonition"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

EXIT_CODES = f"""\
exit codes:
  {EXIT_OK}  ok
  {EXIT_FAILED}  check: JAX is installed but cannot run (import fails, no usable backend),
     a required backend is not usable, or the test computation failed;
     report: the build has failed notebooks (error, timeout, dead kernel) or
     stopped before it finished;
     compare: --fail-above is given and a notebook or cell regressed past it
     (beyond the machine factor)
  {EXIT_USAGE}  bad input or usage: missing file, not JSON, unsupported schema version,
     a field of the wrong type or out of range, build folder without
     execution-status.json, unknown option
  {EXIT_INTERNAL}  a bug in this program (one line on stderr; please report it)
"""

_DEFAULTS = Thresholds()
_FIRST_LINE_WIDTH = 60


class UsageError(Exception):
    """Bad input: printed as one ``sphinx-gpu-admonition: error: ...`` line, exit code 2."""


# -- output helpers ---------------------------------------------------------------------------
class Style:
    """ANSI styling, a no-op unless enabled."""

    _CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33",
              "cyan": "36"}

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        codes = ";".join(self._CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def colour_enabled(no_color: bool, stream: TextIO) -> bool:
    """Colour only on a terminal, never with ``--no-color`` or a non-empty ``NO_COLOR``."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


#: a table cell: text, or (text, style names)
Cell = Any


def _cell_text(cell: Cell) -> str:
    return cell[0] if isinstance(cell, tuple) else str(cell)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], style: Style,
               right: Sequence[int] = (), indent: str = "  ") -> list[str]:
    """Aligned columns; ``right`` lists the columns aligned right (numbers)."""
    widths = [len(h) for h in headers]
    for row in rows:
        for column, cell in enumerate(row):
            widths[column] = max(widths[column], len(_cell_text(cell)))

    def line(cells: Sequence[Cell], header: bool = False) -> str:
        parts = []
        for column, cell in enumerate(cells):
            text = _cell_text(cell)
            last = column == len(cells) - 1
            padded = text.rjust(widths[column]) if column in right else (
                text if last else text.ljust(widths[column]))
            styles = ("bold",) if header else (cell[1] if isinstance(cell, tuple) else ())
            parts.append(style(padded, *styles) if text else padded)
        return (indent + "  ".join(parts)).rstrip()

    return [line(headers, header=True)] + [line(row) for row in rows]


_MD_SPECIAL = set("\\`*_[]<>|#~")


def md_text(text: Any) -> str:
    """Text for a Markdown table cell: punctuation that means something escaped."""
    text = " ".join(str(text).split())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)


def md_code(text: str) -> str:
    """A code span for a table cell, safe with backticks and ``|`` in ``text``."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
             right: Sequence[int] = ()) -> list[str]:
    """A GitHub table; cells must already be escaped (:func:`md_text`, :func:`md_code`)."""
    rule = ["---:" if i in right else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def fmt_seconds(seconds: float | None) -> str:
    return format_seconds(seconds, missing="-")  # ASCII for terminals and Markdown


def fmt_ratio(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def fmt_change(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "-"
    delta = after - before
    return ("+" if delta >= 0 else "-") + fmt_seconds(abs(delta))


def shorten(text: str, width: int = _FIRST_LINE_WIDTH) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _emit(lines: Sequence[str], stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    stream.write("\n".join(lines).rstrip("\n") + "\n")


def json_safe(data: Any) -> Any:
    """``data`` with non-finite numbers as null: loaded data is finite, but a ratio of
    two valid times can still overflow (1e15 s / 5e-324 s)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: json_safe(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [json_safe(value) for value in data]
    return data


def _emit_json(data: Any) -> None:
    text = json.dumps(json_safe(data), indent=2, ensure_ascii=False, allow_nan=False,
                      default=str)
    sys.stdout.write(text + "\n")


def _read(path: str) -> StatusReport:
    try:
        return read_status(path)
    except SchemaError as error:
        raise UsageError(str(error)) from error
    except OSError as error:
        raise UsageError(f"{error.filename or path}: {error.strerror or error}") from error


# -- machines -----------------------------------------------------------------------------------
def machine_summary(env: Environment, docnames: Sequence[str] = ()) -> dict[str, Any]:
    """One machine as the records describe it: the fields shown in tables."""
    jax = env.jax
    gpus = ", ".join(
        g.name + (f" ({g.memory_mb / 1024:.0f} GiB)" if g.memory_mb else "") for g in env.gpus)
    driver = next((g.driver for g in env.gpus if g.driver), None)
    cuda = next((g.cuda for g in env.gpus if g.cuda), None)
    host = env.host
    return {
        "id": env.machine_id,
        "device": env.device_label,
        "backend": env.backend,
        "jax": jax.version,
        "jaxlib": jax.jaxlib_version,
        "plugins": ", ".join(f"{k} {v}" for k, v in sorted(jax.plugins.items())) or None,
        "gpus": gpus or None,
        "driver": driver + (f" (CUDA {cuda})" if cuda else "") if driver else None,
        "cpu": host.cpu,
        "cores": host.cores,
        "memory_gb": host.memory_gb,
        "os": host.os,
        "python": env.python,
        "notebooks": list(docnames),
    }


MACHINE_FIELDS = (
    ("device", "Device"), ("backend", "JAX backend"), ("jax", "JAX"), ("jaxlib", "jaxlib"),
    ("plugins", "JAX plugins"), ("gpus", "GPUs"), ("driver", "NVIDIA driver"), ("cpu", "CPU"),
    ("cores", "CPU cores"), ("memory_gb", "Memory (GB)"), ("os", "OS"), ("python", "Python"),
)


def _machine_value(machine: dict[str, Any], key: str) -> str:
    value = machine.get(key)
    return "-" if value in (None, "") else str(value)


def report_machines(report: StatusReport) -> list[dict[str, Any]]:
    return [machine_summary(env, docnames) for env, docnames in report.machines().values()]


# -- report ---------------------------------------------------------------------------------------
def summarise_report(report: StatusReport, source: str, thresholds: Thresholds,
                     top: int) -> dict[str, Any]:
    """What ``report`` shows, as plain data (the ``--json`` output)."""
    analysis = analyse(report, thresholds)
    notebooks = report.notebooks
    executed = [nb for nb in notebooks if nb.executed]
    from_cache = [nb for nb in executed if nb.provenance == CACHE]
    totals = {
        "notebooks": len(notebooks),
        "ok": sum(nb.status == OK for nb in notebooks),
        "failed": sum(nb.failed for nb in notebooks),
        "not_executed": sum(not nb.executed for nb in notebooks),
        "executed_now": sum(nb.provenance == EXECUTED for nb in notebooks),
        "from_cache": len(from_cache),
        "from_earlier_build": sum(nb.provenance == EARLIER_BUILD for nb in notebooks),
        #: the build stopped before it finished (build.outcome "failed"): its failure
        "build_failure": (str(report.build.get("failure") or "the build stopped")
                          if report.build.get("outcome") == BUILD_FAILED else None),
        "seconds": sum(nb.seconds for nb in executed),
        "seconds_from_cache": sum(nb.seconds for nb in from_cache),
        "compile_seconds": sum(nb.compile_seconds for nb in executed),
        "cells": sum(len(nb.cells) for nb in executed),
    }
    slowest = [{
        "docname": nb.docname, "title": nb.title, "status": nb.status,
        "provenance": nb.provenance, "seconds": nb.seconds, "cells": len(nb.cells),
        "compile_seconds": nb.compile_seconds,
        "device": nb.environment.device_label if nb.capture == "ok" else None,
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
            "hints": [f.reason for f in flags if f.is_hint],
            "rules": [f.rule for f in flags],
        } for nb, cell, flags in flagged
    ]
    failures = []
    for nb in notebooks:
        if not nb.failed:
            continue
        error = nb.error
        failed_cell = nb.error_cell() or next((c for c in nb.cells if c.error), None)
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
        "thresholds": dataclasses.asdict(thresholds),
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
    lines += _machines_text(summary["machines"], style)
    return lines


def _status_cell(status: str) -> Cell:
    if status == OK:
        return (status, ("green",))
    if status in ("error", "timeout", "kernel_died"):
        return (status, ("red",))
    return (status, ("dim",))


def _machines_text(machines: list[dict[str, Any]], style: Style) -> list[str]:
    if not machines:
        return ["  no machine data (no notebook was captured)"]
    headers = ["", *[f"{m['id']} ({plural(len(m['notebooks']), 'notebook')})" for m in machines]]
    rows = [[label, *[_machine_value(m, key) for m in machines]]
            for key, label in MACHINE_FIELDS]
    return text_table(headers, rows, style)


def _machines_markdown(machines: list[dict[str, Any]], prefix: str = "") -> list[str]:
    if not machines:
        return ["No machine data (no notebook was captured)."]
    headers = ["", *[md_text(f"{prefix}{m['id']} ({plural(len(m['notebooks']), 'notebook')})")
                     for m in machines]]
    rows = [[label, *[md_text(_machine_value(m, key)) for m in machines]]
            for key, label in MACHINE_FIELDS]
    return md_table(headers, rows)


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
    lines += _machines_markdown(summary["machines"])
    return lines


def cmd_report(args: argparse.Namespace) -> int:
    report = _read(args.build)
    thresholds = dataclasses.replace(_DEFAULTS, slow_cell_seconds=args.slow_cell_seconds,
                                     slow_cell_min_seconds=args.min_seconds)
    summary = summarise_report(report, args.build, thresholds, args.top)
    if _github(args):
        _write_github(report, analyse(report, thresholds),
                      render_report_markdown(summary, args.top), status_json=args.build)
    if args.json:
        _emit_json(summary)
    elif args.markdown:
        _emit(render_report_markdown(summary, args.top))
    else:
        _emit(render_report_text(summary, Style(colour_enabled(args.no_color, sys.stdout)),
                                 args.top))
    failed = summary["totals"]["failed"] or summary["totals"]["build_failure"]
    if failed and not args.exit_zero:
        return EXIT_FAILED
    return EXIT_OK


# -- compare --------------------------------------------------------------------------------------
def _build_label(report: StatusReport) -> str | None:
    backends = {nb.environment.backend for nb in report.notebooks
                if nb.capture == "ok" and nb.environment.backend}
    if len(backends) == 1:
        return f"{backends.pop().upper()} build"
    return "mixed-backend build" if backends else None


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


def summarise_compare(a: StatusReport, b: StatusReport, source_a: str, source_b: str,
                      label_a: str | None, label_b: str | None, fail_above: float | None,
                      min_seconds: float, top: int,
                      regression_ratio: float = _DEFAULTS.regression_ratio) -> dict[str, Any]:
    """``--fail-above`` regressions and the notebooks slower than ``a`` are judged after
    dividing by the machine factor (:class:`.analysis.MachineFactor`)."""
    thresholds = dataclasses.replace(
        _DEFAULTS, slow_cell_min_seconds=min_seconds,
        regression_ratio=fail_above if fail_above is not None else regression_ratio)
    analysis = analyse(b, thresholds, baseline=a)
    machine = analysis.machine
    assert machine is not None
    auto_a, auto_b = _build_label(a), _build_label(b)
    if auto_a is None or auto_b is None or auto_a == auto_b:
        auto_a, auto_b = "the baseline", "the new build"
    label_a = label_a or auto_a
    label_b = label_b or auto_b
    a_by_name = a.by_docname()

    def regressed(seconds: float | None, relative_ratio: float | None) -> bool:
        return (fail_above is not None and relative_ratio is not None and seconds is not None
                and seconds >= min_seconds and relative_ratio > fail_above)

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
            "b_device": nb.environment.device_label if nb.capture == "ok" else None,
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
            "a_device": nb.environment.device_label if nb.capture == "ok" else None,
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
        "baseline": _side(a, source_a, label_a),
        "new": _side(b, source_b, label_b),
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
        "cells": cells[:top] if top else cells,
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
    machines = [dict(m, id=f"A {m['id']}") for m in data["machines"]["a"]] + \
               [dict(m, id=f"B {m['id']}") for m in data["machines"]["b"]]
    lines += _machines_text(machines, style)
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
    machines = [dict(m, id=f"A {m['id']}") for m in data["machines"]["a"]] + \
               [dict(m, id=f"B {m['id']}") for m in data["machines"]["b"]]
    lines += _machines_markdown(machines)
    lines += ["", "</details>"]
    return lines


def cmd_compare(args: argparse.Namespace) -> int:
    a = _read(args.baseline)
    b = _read(args.new)
    data = summarise_compare(a, b, args.baseline, args.new, args.label_a, args.label_b,
                             args.fail_above, args.min_seconds, args.top)
    if _github(args):
        thresholds = dataclasses.replace(
            _DEFAULTS, slow_cell_min_seconds=args.min_seconds,
            regression_ratio=args.fail_above or _DEFAULTS.regression_ratio)
        _write_github(b, analyse(b, thresholds, baseline=a), render_compare_markdown(data),
                      status_json=args.new)
    if args.json:
        _emit_json(data)
    elif args.markdown:
        _emit(render_compare_markdown(data))
    else:
        _emit(render_compare_text(data, Style(colour_enabled(args.no_color, sys.stdout))))
    return EXIT_FAILED if data["regressions"] else EXIT_OK


# -- GitHub Actions ---------------------------------------------------------------------------
def _github(args: argparse.Namespace) -> bool:
    from . import github

    return github.enabled(True if args.github else "auto") and not args.no_github


def github_summary(report: StatusReport, analysis: BuildAnalysis,
                   baseline: StatusReport | None, source: str = "this build") -> list[str]:
    """The job summary of a build: the ``report --markdown`` page, and the comparison
    with the baseline when there is one."""
    thresholds = Thresholds()
    lines = render_report_markdown(summarise_report(report, source, thresholds, 5), 5)
    if baseline is not None and analysis.machine is not None:
        data = summarise_compare(baseline, report, "the baseline", source, None, None, None,
                                 thresholds.slow_cell_min_seconds, 15)
        lines += ["", *render_compare_markdown(data)]
    return lines


def _write_github(report: StatusReport, analysis: BuildAnalysis, markdown: list[str],
                  status_json: str) -> None:
    """Annotations (standard error), the job summary and the step outputs."""
    from . import github

    workspace = os.environ.get("GITHUB_WORKSPACE")
    github.write_annotations(github.annotations(report, analysis, workspace), sys.stderr)
    try:
        github.append_summary(markdown)
        github.append_outputs(github.output_values(report, analysis, status_json, None))
    except OSError as error:
        raise UsageError(f"cannot write the GitHub Actions summary or outputs: "
                         f"{error.filename or ''} {error.strerror or error}") from error


# -- merge ----------------------------------------------------------------------------------------
def cmd_merge(args: argparse.Namespace) -> int:
    from .merge import merge_reports, write_report

    inputs = [(path, _read(path)) for path in args.inputs]
    merged, conflicts = merge_reports(inputs)
    for conflict in conflicts:
        print(f"{PROG}: conflict: {_one_line(conflict.message())}", file=sys.stderr)
    try:
        write_report(Path(args.output), merged)
    except OSError as error:
        raise UsageError(f"{args.output}: {error.strerror or error}") from error
    sources = merged.build["merged_from"]
    print(f"{args.output}: {plural(len(merged.notebooks), 'notebook')} from "
          + ", ".join(f"{s['source']} ({len(s['notebooks'])})" for s in sources)
          + (f"; {plural(len(conflicts), 'conflict')}" if conflicts else ""))
    return EXIT_OK


def cmd_merge_cache(args: argparse.Namespace) -> int:
    from .merge import CacheError, merge_caches

    try:
        copied = merge_caches(Path(args.output), [Path(p) for p in args.inputs])
    except CacheError as error:
        raise UsageError(str(error)) from error
    print(f"{args.output}: {plural(len(copied), 'notebook')} copied from "
          f"{plural(len(args.inputs), 'cache')}")
    return EXIT_OK


# -- check ----------------------------------------------------------------------------------------
def run_check(require: str | None, bench_size: str | None) -> dict[str, Any]:
    from . import bench

    machine = bench.inspect_machine()
    tests = bench.device_tests() if machine["jax"]["installed"] else []
    result: dict[str, Any] = dict(machine, device_tests=tests, requirement=None, bench=None)
    if require:
        result["requirement"] = bench.requirement(require, machine, tests)
    if bench_size:
        result["bench"] = bench.run_bench(bench_size)
    failed_tests = [t for t in tests if not t["ok"]]
    result["problems"] = jax_problems(machine["jax"])
    result["ok"] = not failed_tests and not result["problems"] and (
        result["requirement"] is None or result["requirement"]["ok"])
    return result


def jax_problems(jax: dict[str, Any]) -> list[str]:
    """Why JAX, although installed, cannot run anything here (empty when it can)."""
    if not jax["installed"]:
        if "jax" in (jax.get("distributions") or {}):
            return [f"JAX is installed but cannot be imported ({jax['import_error']})"]
        return []
    if not any(state["usable"] for state in jax["backends"].values()):
        reason = jax.get("init_error") or "no backend has a device"
        platforms = jax.get("jax_platforms")
        setting = f" with JAX_PLATFORMS={platforms!r}" if platforms else ""
        return [f"JAX has no usable backend{setting}: {reason}"]
    return []


def _gib(value: float | None) -> str:
    return "-" if not value else f"{value / 2**30:.1f} GiB"


def render_check_text(data: dict[str, Any], style: Style) -> list[str]:
    py, host, nvidia, jax = data["python"], data["host"], data["nvidia"], data["jax"]
    good, bad, dim = (lambda t: style(t, "green")), (lambda t: style(t, "red")), \
        (lambda t: style(t, "dim"))
    host_text = ", ".join(str(p) for p in (
        host.get("cpu"), f"{host['cores']} cores" if host.get("cores") else None,
        f"{host['memory_gb']} GB" if host.get("memory_gb") else None, host.get("os"),
        host.get("machine")) if p)
    lines = [style("sphinx-gpu-admonition check", "bold"),
             f"  Python         {py['version']} ({py['implementation']}) {py['executable']}",
             f"  Host           {host_text or '-'}"]
    if nvidia["gpus"]:
        for gpu in nvidia["gpus"]:
            memory = f", {gpu['memory_mb'] / 1024:.0f} GiB" if gpu.get("memory_mb") else ""
            lines.append(f"  NVIDIA GPU     {gpu['name']}{memory} (driver "
                         f"{gpu.get('driver') or '?'}, via {gpu.get('source')})")
    elif nvidia["driver_file"]:
        lines.append(f"  NVIDIA driver  {nvidia['driver'] or 'loaded'}; no GPU listed by NVML "
                     f"or nvidia-smi")
    else:
        missing = "nvidia-smi not on PATH" if not nvidia["nvidia_smi"] else \
            f"nvidia-smi at {nvidia['nvidia_smi']}"
        lines.append(f"  NVIDIA driver  {dim('not found')} (no /proc/driver/nvidia/version; "
                     f"{missing})")
    if not jax["installed"] and data["problems"]:
        lines.append(f"  JAX            {bad('cannot be imported')} ({jax['import_error']})")
    elif not jax["installed"]:
        lines.append(f"  JAX            {bad('not installed')} ({jax['import_error']})")
        lines.append("                 the device test is skipped; install JAX to check "
                     "devices (pip install jax, or 'jax[cuda12]' for NVIDIA GPUs)")
    else:
        plugins = ", ".join(f"{k} {v}" for k, v in jax["distributions"].items()
                            if k not in ("jax", "jaxlib")) or "none"
        lines.append(f"  JAX            {jax['version']} (jaxlib {jax['jaxlib_version']}); "
                     f"plugins: {plugins}")
        lines.append(f"  JAX_PLATFORMS  {jax['jax_platforms'] or dim('(not set)')}")
        backend = jax["default_backend"]
        lines.append(f"  Default        {style(backend, 'bold') if backend else bad('none')}"
                     + (f"  ({jax['init_error']})" if jax["init_error"] else ""))
        for name, state in jax["backends"].items():
            if state["usable"]:
                text = good(f"usable, {state['devices']} device"
                            f"{'s' if state['devices'] != 1 else ''}")
            else:
                text = dim(f"not available: {shorten(state['error'] or '', 80)}")
            lines.append(f"  Backend {name:<6} {text}")
        if jax["devices"]:
            lines += ["", style("Devices", "bold")]
            rows = [[d["name"], d["platform"], d["kind"],
                     _gib((d["memory"] or {}).get("bytes_limit"))] for d in jax["devices"]]
            lines += text_table(["device", "platform", "kind", "memory"], rows, style)
    if data["device_tests"]:
        from .bench import DEVICE_TEST_SIZE as size

        lines += ["", style("Device test", "bold") + dim(
            f"  (jit of sum(tanh(x @ x.T)), {size}x{size} float32; block_until_ready; "
            "run = median of 5)")]
        rows = [[t["device"], fmt_seconds(t["compile_seconds"]),
                 fmt_seconds(t["first_run_seconds"]), fmt_seconds(t["run_seconds"]),
                 ("ok", ("green",)) if t["ok"] else (f"FAILED: {t['error']}", ("red",))]
                for t in data["device_tests"]]
        lines += text_table(["device", "compile", "first run", "run", "result"], rows, style,
                            right=(1, 2, 3))
    if data["bench"]:
        lines += [""] + _bench_text(data["bench"], style)
    requirement = data["requirement"]
    lines.append("")
    if requirement is not None:
        if requirement["ok"]:
            lines.append(good(f"Backend {requirement['backend']} is usable."))
        else:
            lines.append(bad(f"Backend {requirement['backend']} is required but not usable:"))
            lines += [f"  - {reason}" for reason in requirement["reasons"]]
    failed = [t for t in data["device_tests"] if not t["ok"]]
    if failed:
        lines.append(bad(f"The test computation failed on {len(failed)} device(s)."))
    lines += [bad(problem) for problem in data["problems"]]
    if data["ok"] and requirement is None:
        lines.append(good("OK") if jax["installed"] else
                     "OK (JAX is not installed, so no device was tested)")
    return lines


def _bench_text(bench_data: dict[str, Any], style: Style) -> list[str]:
    lines = [style("Benchmark", "bold") + style(
        f"  (size {bench_data['size']}; time = median, rate from the best run; "
        f"took {fmt_seconds(bench_data['seconds'])})", "dim")]
    rows = [[r["name"], r["device"], r["work"], fmt_seconds(r.get("first_call_seconds")),
             fmt_seconds(r["seconds"]), f"{r['rate']:.1f} {r['unit']}"]
            for r in bench_data["results"]]
    lines += text_table(["benchmark", "device", "work", "first call", "time", "rate"], rows,
                        style, right=(3, 4, 5))
    if bench_data.get("note"):
        lines.append(f"  {bench_data['note']}")
    return lines


def cmd_check(args: argparse.Namespace) -> int:
    require = "gpu" if args.require_gpu else args.require_backend
    data = run_check(require, args.bench_size if args.bench else None)
    if args.json:
        _emit_json(data)
    else:
        _emit(render_check_text(data, Style(colour_enabled(args.no_color, sys.stdout))))
    return EXIT_OK if data["ok"] else EXIT_FAILED


# -- argument parsing -----------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse, with ``sphinx-gpu-admonition: error:`` usage errors and exit code 2."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{PROG}: error: {message}\n")


def _number_at_least(cast: Callable[[str], Any], minimum: float) -> Callable[[str], Any]:
    """An argparse type: ``cast(text)``, refused below ``minimum``."""
    kind = "an integer" if cast is int else "a number"

    def parse(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not value >= minimum:
            raise argparse.ArgumentTypeError(f"must be {kind} >= {minimum:g}: {text!r}")
        return value

    return parse


_positive_int = _number_at_least(int, 1)
_non_negative_int = _number_at_least(int, 0)
_non_negative_float = _number_at_least(float, 0)


def _wrap(text: str) -> str:
    return textwrap.fill(" ".join(text.split()), width=79)


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog=PROG, formatter_class=formatter,
        description=_wrap(
            "Check a machine for JAX notebooks, and read the execution-status.json "
            "that sphinx-gpu-admonition writes into a build's output folder."),
        epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    common = _Parser(add_help=False)
    common.add_argument("--no-color", action="store_true",
                        help="no ANSI colour (colour is only used on a terminal, and never "
                             "when NO_COLOR is set)")

    check = commands.add_parser(
        "check", parents=[common], formatter_class=formatter, epilog=EXIT_CODES,
        help="report Python, JAX, backends and devices, and test-run a jitted computation",
        description=_wrap(
            "Report Python, JAX / jaxlib and plugin versions, the default backend and "
            "all devices, the NVIDIA driver and GPUs, then compile and run a small "
            "jitted computation on every device (compile and run time measured "
            "separately, with block_until_ready).  Works without JAX installed."))
    require = check.add_mutually_exclusive_group()
    require.add_argument("--require-backend", choices=("cpu", "gpu", "tpu"),
                         help="exit 1, with the reasons that can be detected, unless this "
                              "backend is usable")
    require.add_argument("--require-gpu", action="store_true",
                         help="same as --require-backend gpu")
    check.add_argument("--bench", action="store_true",
                       help="add a short benchmark comparable between runners: pure-Python "
                            "loop, NumPy and JAX matmul and element-wise work (JAX first "
                            "call and compiled call reported separately); ~10 s on a laptop")
    check.add_argument("--bench-size", choices=("small", "normal"), default="normal",
                       help="problem size of --bench (small: ~1 s, for tests; default "
                            "%(default)s)")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(run=cmd_check)

    report = commands.add_parser(
        "report", parents=[common], formatter_class=formatter, epilog=EXIT_CODES,
        help="summarise a build's execution status",
        description=_wrap(
            "Summarise one build: totals, slowest notebooks and cells, flagged cells "
            "with reasons, failures and the machines used.  Exits 1 when the build "
            "has failed notebooks (unless --exit-zero)."))
    report.add_argument("build", metavar="BUILD_DIR_OR_JSON",
                        help="execution-status.json, or a build output folder holding it")
    report.add_argument("--top", type=_positive_int, default=5, metavar="N",
                        help="rows of the slowest notebooks and cells (default %(default)s)")
    report.add_argument("--slow-cell-seconds", type=_non_negative_float, metavar="SECONDS",
                        default=_DEFAULTS.slow_cell_seconds,
                        help="flag cells at least this slow (default %(default)s)")
    report.add_argument("--min-seconds", type=_non_negative_float, metavar="SECONDS",
                        default=_DEFAULTS.slow_cell_min_seconds,
                        help="never flag cells faster than this (default %(default)s)")
    report.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when the build has failed notebooks")
    output = report.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--markdown", action="store_true",
                        help="print GitHub Markdown (for a pull-request comment or "
                             "$GITHUB_STEP_SUMMARY)")
    _add_github_options(report)
    report.set_defaults(run=cmd_report)

    compare = commands.add_parser(
        "compare", parents=[common], formatter_class=formatter, epilog=EXIT_CODES,
        help="compare two builds (A: baseline, B: new) per notebook and cell",
        description=_wrap(
            "Compare two builds per notebook and per cell (A time, B time, B/A, "
            "backend / device of each), largest change first; list new and gone "
            "notebooks; show both builds' machines side by side."))
    compare.add_argument("baseline", metavar="A",
                         help="the baseline: execution-status.json or a build folder")
    compare.add_argument("new", metavar="B",
                         help="the new build: execution-status.json or a build folder")
    compare.add_argument("--fail-above", type=_non_negative_float, metavar="RATIO",
                         help="exit 1 when a notebook or cell of B took more than RATIO times "
                              "its time in A (and at least --min-seconds)")
    compare.add_argument("--min-seconds", type=_non_negative_float, metavar="SECONDS",
                         default=_DEFAULTS.slow_cell_min_seconds,
                         help="ignore notebooks and cells faster than this in B for "
                              "--fail-above (default %(default)s)")
    compare.add_argument("--top", type=_non_negative_int, default=15, metavar="N",
                         help="rows of the cell table (0: all; default %(default)s)")
    compare.add_argument("--label-a", metavar="TEXT",
                         help="name of A in the summary (default: from its backend, e.g. "
                              "'CPU build')")
    compare.add_argument("--label-b", metavar="TEXT", help="name of B in the summary")
    output = compare.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--markdown", action="store_true",
                        help="print GitHub Markdown (for a pull-request comment)")
    _add_github_options(compare)
    compare.set_defaults(run=cmd_compare)

    merge = commands.add_parser(
        "merge", formatter_class=formatter, epilog=EXIT_CODES,
        help="combine the status files of several jobs (a sharded build) into one",
        description=_wrap(
            "Write one execution-status.json made of several: each notebook from the "
            "job that executed it (executed, then cache, then an earlier build, then not "
            "executed).  A notebook executed by two jobs is a conflict, reported on "
            "stderr: a failure wins, then the latest execution, then the earlier input.  "
            "The result fails when any input failed; each notebook keeps its machine."))
    merge.add_argument("output", metavar="OUT_JSON", help="the merged file to write")
    merge.add_argument("inputs", metavar="IN", nargs="+",
                       help="execution-status.json files or build folders holding one")
    merge.set_defaults(run=cmd_merge)

    merge_cache = commands.add_parser(
        "merge-cache", formatter_class=formatter, epilog=EXIT_CODES,
        help="copy the notebooks of several jupyter-caches into one",
        description=_wrap(
            "Copy every notebook of the IN jupyter-caches (with the capture data saved "
            "beside them) into the jupyter-cache OUT, created when missing, so that one "
            "build renders the notebooks all shards executed from the cache."))
    merge_cache.add_argument("output", metavar="OUT_CACHE", help="the jupyter-cache folder")
    merge_cache.add_argument("inputs", metavar="IN_CACHE", nargs="+",
                             help="jupyter-cache folders (nb_execution_cache_path)")
    merge_cache.set_defaults(run=cmd_merge_cache)

    migrate = commands.add_parser(
        "migrate", formatter_class=formatter, epilog=EXIT_CODES,
        help="rewrite a Jupyter Book's GPU notice includes and {nb-exec-table} for this "
             "extension",
        description=_wrap(
            "Rewrite {include} _admonition/gpu.md (MyST or rST) to a {gpu} directive and "
            "{nb-exec-table} to {execution-status} in BOOK's sources, and add "
            "sphinx_gpu_admonition to _config.yml's sphinx: extra_extensions.  Reports "
            "what changed per file; never touches files outside BOOK or in _build."))
    migrate.add_argument("book", metavar="BOOK", help="the book's folder (with _config.yml)")
    migrate.add_argument("--dry-run", action="store_true",
                         help="print unified diffs of the changes and change nothing")
    migrate.set_defaults(run=cmd_migrate)
    return parser


def cmd_migrate(args: argparse.Namespace) -> int:
    from .migrate import migrate, report_lines

    book = Path(args.book)
    if not book.is_dir():
        raise UsageError(f"{book}: not a folder")
    _emit(report_lines(migrate(book, dry_run=args.dry_run), book, args.dry_run))
    return EXIT_OK


def _add_github_options(command: argparse.ArgumentParser) -> None:
    group = command.add_mutually_exclusive_group()
    group.add_argument("--github", action="store_true",
                       help="GitHub Actions output: annotations on stderr, a job summary in "
                            "$GITHUB_STEP_SUMMARY, step outputs in $GITHUB_OUTPUT (default "
                            "when GITHUB_ACTIONS is 'true')")
    group.add_argument("--no-github", action="store_true",
                       help="no GitHub Actions output, even when GITHUB_ACTIONS is 'true'")


def _utf8_safe(stream: TextIO) -> None:
    """Never fail on a character the terminal's encoding lacks (``…``, ``—``)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors="backslashreplace")


def _one_line(error: BaseException) -> str:
    """The message on one line (a file name may hold a line break)."""
    return str(error).replace("\r", "\\r").replace("\n", "\\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _utf8_safe(sys.stdout)
    try:
        return args.run(args)
    except UsageError as error:
        sys.stdout.flush()
        print(f"{PROG}: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader (``| head``) went away: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: one line, and an exit code no build state uses
        sys.stdout.flush()
        print(f"{PROG}: internal error: {type(error).__name__}: {_one_line(error)} (please "
              "report this with the command line and input)", file=sys.stderr)
        return EXIT_INTERNAL


__all__ = ["main", "build_parser", "summarise_report", "summarise_compare", "run_check",
           "md_code", "md_text", "github_summary"]
