"""What ``report`` and ``compare`` show, as plain data (their ``--json`` output), made
from a build's one :class:`~..model.analysis.BuildAnalysis`: the command line renders
it as text, :mod:`.markdown` as GitHub Markdown (the job summary a build writes too).

The flagged cells are :func:`..model.findings.findings` (the status page's and the
console's list, in their order), the failing cell is
:meth:`..model.record.NotebookRecord.error_cell`, and nothing here analyses again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..model.analysis import (
    BuildAnalysis,
    Flag,
    NotebookAnalysis,
    Thresholds,
    cell_key,
    first_call,
    run_time,
)
from ..model.build_warnings import build_warnings
from ..model.device import build_label
from ..model.findings import (
    BuildTotals,
    Finding,
    budget_findings,
    findings,
    flagged_and_notes,
    headline,
)
from ..model.formatting import format_gpu_memory, format_ratio, format_seconds, plural
from ..model.machine import MAX_NAMED, MachineFactor, is_slower
from ..model.record import (
    BUILD_FAILED,
    CellRecord,
    Environment,
    NotebookRecord,
    StatusReport,
    sorted_slowest_first,
)
from .claims_view import claim_differences, claim_entries, statement_entries
from .finding_text import ENGLISH as WORDS

__all__ = ["plural", "summarise_report", "summarise_compare", "CompareOptions", "shown_path"]


def shown_path(given: str, cwd: str | None = None) -> str:
    """A path from the command line as ``report`` and ``compare`` show it (the header,
    ``--json``'s ``source``): relative to the current folder when inside it, else just
    its name, never the machine's absolute path (the output is pasted into CI logs,
    job summaries and pull-request comments)."""
    here = Path(cwd or os.getcwd()).resolve()
    path = Path(given)
    absolute = Path(os.path.abspath(here / path))
    # the folder's links resolved as the current folder's are; the name kept as given
    absolute = absolute.parent.resolve() / absolute.name if absolute.name else absolute
    if absolute.is_relative_to(here):
        return absolute.relative_to(here).as_posix() or "."
    return absolute.name or given


# -- machines -------------------------------------------------------------------------
def machine_summary(env: Environment, docnames: Sequence[str] = ()) -> dict[str, Any]:
    """One machine as the records describe it: the fields shown in tables."""
    jax = env.jax
    gpus = ", ".join(g.name + (f" ({format_gpu_memory(g.memory_mb)})" if g.memory_mb else "")
                     for g in env.gpus)
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


def machine_value(machine: dict[str, Any], key: str) -> str:
    value = machine.get(key)
    return "-" if value in (None, "") else str(value)


def report_machines(report: StatusReport) -> list[dict[str, Any]]:
    return [machine_summary(env, docnames) for env, docnames in report.machines().values()]


# -- report ---------------------------------------------------------------------------
def summarise_report(report: StatusReport, analysis: BuildAnalysis, thresholds: Thresholds,
                     source: str, top: int) -> dict[str, Any]:
    """What ``report`` shows: ``report``'s own analysis, or the build's at
    ``build-finished`` (with its baseline, so regression cells are listed)."""
    executed = [nb for nb in report.notebooks if nb.executed]
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
    def finding_entry(finding: Finding) -> dict[str, Any]:
        assert finding.cell is not None
        return cell_entry(finding.notebook, finding.cell) | {
            "reasons": [WORDS.reason(f) for f in finding.flags if not f.is_hint],
            "hints": [WORDS.text(f) for f in finding.flags if f.is_hint],
            #: the causes the hints name, without their actions (``action`` is the one)
            "causes": [WORDS.reason(f) for f in finding.flags if f.is_hint],
            "rules": finding.rules,
            "action": WORDS.finding_action(finding),
            #: the console's and the page's name: ``intro cell 3 (lectures/intro.md:42)``
            "name": finding.name.full,
            #: ``lectures/intro.md:42`` (a text notebook), else the source file, if known
            "location": finding.name.location or finding.notebook.source,
            #: the line that runs the slow function (else the first line), and the
            #: cell's JAX compilation against the rest of its time
            "code": finding.code,
            "run_seconds": finding.run_seconds,
            "first_call": finding.first_call,
            "timing": WORDS.timing(finding),
        }

    flagged, notes = flagged_and_notes(findings(analysis))
    # the notebooks over their time budget, furthest over first (the status page's list
    # and the build's gpu_admonition.budget warnings)
    over_budget = [{
        "docname": row.notebook.docname, "title": row.notebook.title,
        "location": row.notebook.source, "seconds": row.seconds,
        "budget_seconds": row.budget_seconds,
        "reason": WORDS.budget(row.seconds, row.budget_seconds),
    } for row in budget_findings(analysis)]
    against = headline(analysis)  # the status page's sentence, with a baseline
    return {
        "source": source,
        "build": report.build,
        "build_line": build_line(report.build),
        #: with a baseline: the status page's headline, the notebooks slower than the
        #: baseline (``regressed``, every view's) and the device change, if any
        "baseline": None if against is None else {
            "headline": WORDS.headline(against),
            "regressed": [result.notebook.docname for result in analysis.regressed],
            "device_change": against.device_change() if against.device_changed else None,
        },
        "thresholds": thresholds._asdict(),
        "totals": totals,
        "slowest_notebooks": slowest,
        "slowest_cells": [cell_entry(nb, cell) for nb, cell in cells[:top]],
        "flagged_cells": [finding_entry(finding) for finding in flagged],
        #: cells shown, never counted or warned as flagged: slow on purpose (``slow-ok``),
        #: only imports
        "notes": [finding_entry(finding) for finding in notes],
        "over_budget": over_budget,
        #: findings about the whole build (a CI build compiling without a cache)
        "build_findings": [flag_data(flag) | {"action": WORDS.rule_action(flag)}
                           for flag in analysis.build_flags],
        "failures": [_failure(nb) for nb in report.notebooks if nb.failed],
        #: notebooks that ran but could not be measured (their kernel's probe failed,
        #: or their cells could not be matched with what it ran)
        "capture_failures": [{"docname": nb.docname, "source": nb.source,
                              "message": nb.capture_message or ""}
                             for nb in report.notebooks if nb.executed
                             and nb.capture == "failed"],
        "machines": report_machines(report),
        #: what the build warned about (build.warnings), each with its warning's name
        #: and whether it repeats a finding listed above (a slow cell, a regression, a
        #: budget: the text and Markdown leave those out)
        "warnings": [item.to_dict() | {"name": item.name, "where": item.where,
                                       "repeats_finding": item.repeats_finding}
                     for item in build_warnings(report)],
        #: the text's timing claims as the build checked them, failing first, each with
        #: its verdict per build (:mod:`.claims_view`), and the review list
        "claims": claim_entries(analysis.claims),
        "timing_statements": statement_entries(analysis.timing_statements),
    }


def flag_data(flag: Flag) -> dict[str, Any]:
    """A flag in the JSON: its rule and its reason in English."""
    return {"rule": flag.rule, "reason": WORDS.reason(flag)}


def notebook_analysis_data(result: NotebookAnalysis) -> dict[str, Any]:
    """One notebook's part of the status file's ``analysis``: its flagged cells, its
    time budget and its baseline comparison."""
    notebook = result.notebook
    data: dict[str, Any] = {
        "flagged_cells": [
            {"cell": notebook.cell_name(c).label, "index": c.index,
             "execution_count": c.execution_count, "seconds": c.seconds,
             "compile_seconds": c.compile_seconds, "run_seconds": run_time(c),
             "first_call": first_call(c, notebook),
             "flags": [flag_data(f) for f in flags]}
            for c, flags in result.flagged_cells
        ],
    }
    excess = result.over_budget
    if excess is not None:
        data["budget"] = {"seconds": excess.seconds, "budget_seconds": excess.budget_seconds,
                          "reason": WORDS.budget(excess.seconds, excess.budget_seconds)}
    if result.comparison is not None:
        comp = result.comparison
        data["baseline"] = {
            "state": comp.state, "seconds": comp.baseline_seconds, "ratio": comp.ratio,
            "backend": comp.baseline_backend, "regression": comp.regression,
        }
    return data


def analysis_data(analysis: BuildAnalysis) -> dict[str, Any]:
    """The status file's ``analysis``, keyed by docname: derived data for consumers
    that do not share this model (every reason in English)."""
    data = {a.notebook.docname: notebook_analysis_data(a) for a in analysis.notebooks}
    for nb in analysis.gone:
        data[nb.docname] = {"flagged_cells": [], "baseline": {
            "state": "gone", "seconds": nb.seconds, "ratio": None,
            "backend": nb.environment.backend, "regression": False}}
    return data


def _failure(nb: NotebookRecord) -> dict[str, Any]:
    error = nb.error
    failing = nb.error_cell()  # the one rule every view uses
    return {
        "docname": nb.docname, "status": nb.status,
        "error_type": error.type if error else None,
        "message": (error.message.strip().splitlines() or [""])[-1] if error else "",
        "cell_index": error.cell_index if error else None,
        "execution_count": (error.execution_count if error else None),
        "cell": nb.cell_name(failing).label if failing else None,
    }


def cell_entry(nb: NotebookRecord, cell: CellRecord) -> dict[str, Any]:
    return {"docname": nb.docname, "cell": nb.cell_name(cell).label, "line": cell.line,
            "index": cell.index, "execution_count": cell.execution_count,
            "seconds": cell.seconds, "compile_seconds": cell.compile_seconds,
            "first_line": cell.first_line, "error": cell.error}


def build_line(build: dict[str, Any]) -> str:
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


def totals_line(totals: dict[str, Any]) -> str:
    earlier = (f", {totals['from_earlier_build']} unchanged since an earlier build"
               if totals["from_earlier_build"] else "")
    return (f"{plural(totals['notebooks'], 'notebook')}: {totals['ok']} ok, "
            f"{totals['failed']} failed, {totals['not_executed']} not executed; "
            f"{totals['executed_now']} executed by this build, {totals['from_cache']} reused "
            f"from the cache{earlier}")


def stopped_line(totals: dict[str, Any]) -> str | None:
    if totals["build_failure"] is None:
        return None
    return (f"The build stopped before it finished ({totals['build_failure']}); this "
            "report lists what it read.")


def _seconds(seconds: float | None) -> str:
    return format_seconds(seconds, missing="-")


def time_line(totals: dict[str, Any]) -> str:
    text = f"{_seconds(totals['seconds'])} in {plural(totals['cells'], 'cell')}"
    if totals["compile_seconds"]:
        text += f" (JAX compilation {_seconds(totals['compile_seconds'])})"
    if totals["from_cache"]:
        text += (f"; {_seconds(totals['seconds_from_cache'])} of it measured when the "
                 "cached outputs were made")
    return text


# -- compare --------------------------------------------------------------------------
_DEFAULTS = Thresholds()


@dataclasses.dataclass(frozen=True)
class CompareOptions:
    """How to compare: the command's options, or a build's own."""

    #: how A and B are named in the output (their paths on the command line)
    source_a: str
    source_b: str
    #: names in the summary sentence; None: the caller's automatic ones, else
    #: "the baseline" and "the new build"
    label_a: str | None = None
    label_b: str | None = None
    #: ``--fail-above``: a regression fails the command
    fail_above: float | None = None
    #: notebooks and cells faster than this in B are never regressions (None: B's own
    #: ``slow_cell_min_seconds``, as its status file stores it)
    min_seconds: float | None = None
    #: rows of the cell table (0: all)
    top: int = 15
    #: the ratio beyond the machine factor the analysis judged notebooks slower by when
    #: there is no ``--fail-above`` (the command's default, or the build's
    #: ``gpu_regression_ratio``)
    regression_ratio: float = _DEFAULTS.regression_ratio
    #: a build's own comparison with its ``gpu_status_baseline`` (the job summary): its
    #: slower notebooks are the build's regressions, as on the status page; ``compare``
    #: judges regressions only with ``--fail-above``
    build_baseline: bool = False


#: a cell whose time changed by less than this (1 ms: far above the probe's clock
#: resolution, below what a reader can act on) or by less than :data:`NO_CHANGE_SHARE`
#: of its time in A did not change: two runs of the same code differ by that much
NO_CHANGE_SECONDS = 0.001
NO_CHANGE_SHARE = 0.01


def changed(before: float | None, after: float | None) -> bool:
    """Whether a cell's time changed (at least 1 ms and 1 %); a new or gone cell did."""
    if before is None or after is None:
        return True
    change = abs(after - before)
    return change >= NO_CHANGE_SECONDS and change >= NO_CHANGE_SHARE * before


def _side(report: StatusReport, source: str, label: str) -> dict[str, Any]:
    executed = [nb for nb in report.notebooks if nb.executed]
    backends = sorted({nb.environment.backend for nb in report.notebooks
                       if nb.measured and nb.environment.backend})
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
    return (f"{verdict[0].upper()}{verdict[1:]} ({_seconds(b_seconds)} vs "
            f"{_seconds(a_seconds)}, {count} notebook{'s' if count != 1 else ''} in both)")


def _build_label(report: StatusReport) -> str | None:
    """``"CPU build"``: the backends of a report's captured notebooks (None: none)."""
    return build_label({nb.environment.backend for nb in report.notebooks
                        if nb.measured and nb.environment.backend})


def summarise_compare(a: StatusReport, b: StatusReport, analysis: BuildAnalysis,
                      options: CompareOptions) -> dict[str, Any]:
    """What ``compare`` shows: ``analysis`` is B's, against A as its baseline.

    ``--fail-above`` regressions and the notebooks slower than ``a`` are judged after
    dividing by the machine factor (:class:`..model.machine.MachineFactor`);
    the builds are named by the options, else by their backends ("CPU build")."""
    machine = analysis.machine
    assert machine is not None
    auto_a, auto_b = _build_label(a), _build_label(b)
    if auto_a is None or auto_b is None or auto_a == auto_b:
        auto_a, auto_b = "the baseline", "the new build"
    label_a = options.label_a or auto_a
    label_b = options.label_b or auto_b
    notebooks, cells, (common, common_a, common_b) = _compare_rows(a, analysis, options)

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
    # beyond the machine factor, and on another kind of device (no factor: hardware)
    slower = [item.notebook.docname for item in analysis.regressed
              if item.comparison is not None and item.comparison.same_device_kind]
    other_device = [item for item in analysis.notebooks if item.comparison is not None
                    and item.comparison.state == "compared"
                    and not item.comparison.same_device_kind]
    judged_by = (options.fail_above if options.fail_above is not None
                 else options.regression_ratio)
    # a cell table of cells that changed (and new or gone ones): not "+0.00 ms" rows
    shown_cells = [row for row in cells if row["changed"] or row["regression"]]
    regressions = [
        f"{row['docname']}" + (f" {row['cell']}" if "index" in row else "")
        + f": {_seconds(row['a_seconds'])} → {_seconds(row['b_seconds'])} "
          f"({format_ratio(row['ratio'], missing='-')})"
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
            #: how sure: the notebooks it is the median of, their lowest and highest
            #: ratio, and what the calibration said (the check)
            "notebooks": machine.count, "spread": machine.spread,
            "calibration": machine.calibration,
            "text": _machine_text(machine, slower, other_device, f"the machine of {label_b}",
                                  judged_by, options),
        },
        #: notebooks slower than A beyond the machine factor (by --fail-above, else the
        #: default regression ratio) and at least --min-seconds, on the same kind of device
        "slower_notebooks": slower,
        #: notebooks that ran on another kind of device than in A (CPU to GPU): no machine
        #: factor; those of them slower than A by the same ratio
        "other_device_notebooks": [item.notebook.docname for item in other_device],
        "slower_on_other_device": [item.notebook.docname for item in other_device
                                   if item.comparison is not None
                                   and item.comparison.regression],
        "notebooks": notebooks,
        #: the cells that changed (:func:`changed`), new and gone ones, largest change
        #: first: ``top`` of ``cells_total``; ``cells_unchanged`` did not change
        "cells": shown_cells[:options.top] if options.top else shown_cells,
        "cells_total": len(shown_cells),
        "cells_unchanged": len(cells) - len(shown_cells),
        "new_notebooks": [r["docname"] for r in notebooks if r["state"] == "new"],
        "gone_notebooks": [r["docname"] for r in notebooks if r["state"] == "gone"],
        "machines": {"a": report_machines(a), "b": report_machines(b)},
        "fail_above": options.fail_above,
        "min_seconds": options.min_seconds,
        "regressions": regressions,
        #: the timing claims whose verdict on A's machine differs from B's on B's
        "claims": claim_differences(a.claims, b.claims),
    }


def _compare_rows(a: StatusReport, analysis: BuildAnalysis, options: CompareOptions
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                             tuple[int, float, float]]:
    """The notebook rows, the cell rows and the notebooks executed in both builds
    (count, time in A, time in B)."""
    fail_above = options.fail_above
    min_seconds = (options.min_seconds if options.min_seconds is not None
                   else _DEFAULTS.slow_cell_min_seconds)
    a_by_name = a.by_docname()

    def regressed(seconds: float | None, ratio: float | None, factor: float) -> bool:
        return (fail_above is not None and seconds is not None and seconds >= min_seconds
                and is_slower(ratio, factor, fail_above))

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
            "same_device_kind": comp.same_device_kind,
            "regression": regressed(b_seconds, ratio, comp.machine_factor),
        })
        for position, cell in enumerate(nb.cells):
            cell_comp = comp.cells.get(position)
            before = cell_comp.baseline_seconds if cell_comp else None
            cells.append({
                "docname": nb.docname, "cell": nb.cell_name(cell).label, "index": cell.index,
                "execution_count": cell.execution_count, "first_line": cell.first_line,
                "state": cell_comp.state if cell_comp else "new",
                "a_seconds": before, "b_seconds": cell.seconds,
                "ratio": cell_comp.ratio if cell_comp else None,
                "change_seconds": cell.seconds - before if before is not None else None,
                "changed": changed(before, cell.seconds),
                "regression": regressed(cell.seconds, cell_comp.ratio if cell_comp else None,
                                        cell_comp.machine_factor if cell_comp else 1.0),
            })
        for key, seconds, first_line in comp.gone_cells:
            gone = next((c for place, c in enumerate(old.cells) if cell_key(c, place) == key),
                        None) if old else None
            cells.append({"docname": nb.docname, "index": gone.index if gone else None,
                          "execution_count": None,
                          "cell": old.cell_name(gone).label if old and gone else "cell ?",
                          "first_line": first_line, "state": "gone", "a_seconds": seconds,
                          "b_seconds": None, "ratio": None, "change_seconds": None,
                          "changed": True, "regression": False})
    for nb in analysis.gone:
        notebooks.append({
            "docname": nb.docname, "state": "gone",
            "a_seconds": nb.seconds if nb.executed else None, "b_seconds": None,
            "ratio": None, "change_seconds": None, "a_backend": nb.environment.backend,
            "b_backend": None,
            "a_device": nb.device_label,
            "b_device": None, "a_status": nb.status, "b_status": None, "regression": False,
        })
    return notebooks, cells, (common, common_a, common_b)


def _machine_text(machine: MachineFactor, slower: list[str],
                  other_device: list[NotebookAnalysis], name: str, ratio: float,
                  options: CompareOptions) -> str:
    """The machine factor's sentence, then the notebooks that ran on another kind of
    device (no factor applies: the device change is the news), and what the slower ones
    are: regressions of a build, judged by ``--fail-above`` below, or neither
    (``compare`` without it)."""
    slower_elsewhere = [item.notebook.docname for item in other_device
                        if item.comparison is not None and item.comparison.regression]
    parts = []
    if machine.source != "device":
        text = _capitalised(machine.sentence(slower, name, ratio))
        if slower and options.build_baseline:
            text += ": regressions of this build (gpu_regression_ratio)"
        parts.append(text)
    if other_device:
        changes = sorted({f"{item.comparison.baseline_device or '?'} → "
                          f"{item.notebook.device_label or '?'}"
                          for item in other_device if item.comparison is not None})
        count = len(other_device)
        text = (f"The device changed for {plural(count, 'notebook')} ({'; '.join(changes)}): "
                f"no machine factor applies to {'it' if count == 1 else 'them'}; "
                f"{len(slower_elsewhere) or 'none'} slower than the baseline")
        if slower_elsewhere:
            text += f" ({ratio:g}x or more): " + ", ".join(slower_elsewhere[:MAX_NAMED])
            if len(slower_elsewhere) > MAX_NAMED:
                text += f" and {len(slower_elsewhere) - MAX_NAMED} more"
        if slower_elsewhere and options.build_baseline:
            text += ": regressions of this build (gpu_regression_ratio)"
        parts.append(text)
    if (slower or slower_elsewhere) and options.fail_above is None \
            and not options.build_baseline:
        # tiny notebooks are often "slower beyond" a machine factor (across a device
        # change none applies, and the device is the reason)
        why = (" (a notebook whose time is mostly imports or start-up does not scale with "
               "the machine's speed)" if slower else "")
        parts.append(f"Not regressions: compare judges regressions only with --fail-above{why}")
    # one sentence alone, with nothing slower, ends without a full stop (as it always did)
    ends = "." if slower or slower_elsewhere or len(parts) > 1 else ""
    return ". ".join(parts) + ends


def unchanged_line(data: dict[str, Any]) -> str | None:
    """``No cell changed ...`` when the cell table would be empty, else None."""
    if data["cells_total"]:
        return None
    if not data["cells_unchanged"]:
        return "No cell was executed in both builds."
    return (f"No cell changed (each of {plural(data['cells_unchanged'], 'cell')} within "
            f"{NO_CHANGE_SECONDS * 1000:g} ms or {NO_CHANGE_SHARE:.0%} of its time in A).")


def cells_heading(data: dict[str, Any]) -> str:
    """``Cells (largest change first, 15 of 20; 4 unchanged not shown)``, or ``Cells``
    above :func:`unchanged_line`."""
    if not data["cells_total"]:
        return "Cells"
    unchanged = (f"; {data['cells_unchanged']} unchanged not shown"
                 if data["cells_unchanged"] else "")
    return (f"Cells (largest change first, {len(data['cells'])} of {data['cells_total']}"
            f"{unchanged})")


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
