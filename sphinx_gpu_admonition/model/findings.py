"""The answer at one look: the flagged cells and the baseline headline, as plain data.

One row model for the status page's findings list, the console summary and the
command line (no Sphinx here): every view shows the same cells in the same order
(the flagged cells slowest first, then the notes slowest first; ties by docname),
named by :class:`~.record.CellName`, each with its flags; the views write the reason and
the action (:mod:`..render.finding_text`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple

from .analysis import BuildAnalysis, first_call, run_time
from .compilations import jax_reasons, user_compilations
from .compiled_again import compiled_again_cells
from .formatting import one_line
from .record import CACHE, EARLIER_BUILD, OK, CellName, CellRecord, NotebookRecord
from .rules import RECOMPILATION_RULES, Flag, Rule
from .schema import ModelObject, model_class


class Finding(NamedTuple):
    """One flagged cell: where, how long, on what, why and what to do."""

    notebook: NotebookRecord
    name: CellName
    seconds: float
    #: the cell's share of its notebook's cell time (kernel start-up not included)
    share: float | None
    device: str | None
    flags: Sequence[Flag]
    #: the cell's record (its line, first line, compile time)
    cell: CellRecord | None = None
    #: the code to show beside the cell's name: the statement doing the cell's work
    #: (:attr:`.record.CellRecord.work`: inside ``%%time`` or ``with qe.Timer():``, the
    #: call of the slow function or the loop), else the cell's first line
    code: str = ""
    #: the cell's JAX compilation time and the rest of its time (running), apart
    compile_seconds: float = 0.0
    run_seconds: float = 0.0
    #: True: the cell compiled a function of the user's (a first call); False: it ran
    #: code compiled before (warm); None: unknown (no JAX compilation data)
    first_call: bool | None = None
    #: every user function the cell compiled was compiled before, in an earlier cell
    #: (a new input shape, a function made anew): not a first call
    compiled_again: bool = False

    @property
    def source_line(self) -> int | None:
        """The line of :attr:`code` in the page's source file (a text notebook): the
        cell's first code line and the work's line in it, else the cell's fence line;
        None for an ``.ipynb`` source."""
        cell = self.cell
        if cell is None:
            return None
        if cell.work is not None and cell.code_line is not None:
            return cell.code_line + cell.work.line - 1
        return cell.line

    @property
    def is_regression(self) -> bool:
        """Flagged for being slower than the baseline's cell."""
        return any(flag.rule == Rule.REGRESSION for flag in self.flags)

    @property
    def jax_reasons(self) -> list[dict[str, str]]:
        """Why a recompilation hint's functions were compiled again, where the kernel
        recorded JAX's explanation (``gpu_explain_recompilations``): every user
        function of the cell JAX explained (:func:`.compilations.jax_reasons`); empty
        without such a hint."""
        if self.cell is None or not any(f.rule in RECOMPILATION_RULES for f in self.flags):
            return []
        return jax_reasons(self.cell, user_compilations(self.cell, self.notebook))

    def code_text(self, limit: int = 120) -> str:
        """:attr:`code` on one line, cut at ``limit`` characters: a finding shows where
        the cell is and what it calls, not the whole statement."""
        code = one_line(self.code).strip()
        return code if len(code) <= limit else code[:limit - 1].rstrip() + "…"

    @property
    def rules(self) -> list[str]:
        return [flag.rule for flag in self.flags]

    @property
    def is_note(self) -> bool:
        """Shown, never warned about: a ``slow-ok`` cell, an import cell
        (:data:`~.analysis.NOTE_RULES`)."""
        return bool(self.flags) and all(flag.is_note for flag in self.flags)


def flagged_and_notes(rows: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """``rows`` (:func:`findings`) as the flagged cells and the notes (a ``slow-ok``
    cell, an import cell: shown, never counted or warned as flagged), each in order."""
    return ([row for row in rows if not row.is_note], [row for row in rows if row.is_note])


def findings(analysis: BuildAnalysis) -> list[Finding]:
    """Every flagged cell of the build, slowest first, then every note (a ``slow-ok``
    cell, an import cell), slowest first; ties by docname.  The notes come last, so
    that a list headed "N flagged cells" opens with what it counts (an import cell's
    note is often the slowest row); :func:`flagged_and_notes` tells them apart."""
    rows = []
    for result in analysis.notebooks:
        record = result.notebook
        total = record.cells_seconds
        device = record.device_label
        flagged = result.flagged_cells
        again = compiled_again_cells(record, [cell for cell, _ in flagged]) if flagged else set()
        for cell, flags in flagged:
            rows.append(Finding(record, record.cell_name(cell), cell.seconds,
                                cell.seconds / total if total > 0 else None, device, flags,
                                cell, code=work_code(cell),
                                compile_seconds=cell.compile_seconds,
                                run_seconds=run_time(cell), first_call=first_call(cell, record),
                                compiled_again=id(cell) in again))
    rows.sort(key=lambda row: (row.is_note, -row.seconds, row.notebook.docname))
    return rows


def work_code(cell: CellRecord) -> str:
    """The statement doing the cell's work (the parse's), else the line that runs its
    loop's function (a record from before the parse had it), else its first line."""
    if cell.work is not None:
        return cell.work.code
    return next((run.call for run in cell.runs if run.call), cell.first_line)


class BudgetFinding(NamedTuple):
    """A notebook that took longer than its time budget (``gpu_budget_seconds``)."""

    notebook: NotebookRecord
    seconds: float
    budget_seconds: float


def budget_findings(analysis: BuildAnalysis) -> list[BudgetFinding]:
    """The notebooks over their budget, furthest over first (then by docname)."""
    rows = [BudgetFinding(result.notebook, excess.seconds, excess.budget_seconds)
            for result in analysis.notebooks
            if (excess := result.over_budget) is not None]
    rows.sort(key=lambda row: (-(row.seconds - row.budget_seconds), row.notebook.docname))
    return rows


class Headline(NamedTuple):
    """This build against the baseline, overall: what ``compare`` opens with."""

    #: the notebooks executed in both builds: their time now and in the baseline
    seconds: float
    baseline_seconds: float
    #: device labels in the baseline and now, when they differ (else empty)
    devices_before: list[str]
    devices_now: list[str]
    new: int
    gone: int
    #: notebooks slower beyond the machine factor (on the same kind of device)
    regressed: int

    @property
    def ratio(self) -> float | None:
        return self.seconds / self.baseline_seconds if self.baseline_seconds > 0 else None

    @property
    def device_changed(self) -> bool:
        return bool(self.devices_before or self.devices_now)

    def device_change(self) -> str:
        """``GPU: Tesla T4 → CPU: AMD EPYC 7763, 4 cores``"""
        return f"{', '.join(self.devices_before)} → {', '.join(self.devices_now)}"


def headline(analysis: BuildAnalysis) -> Headline | None:
    """None without a baseline."""
    if analysis.baseline is None:
        return None
    seconds = baseline_seconds = 0.0
    now: set[str] = set()
    before: set[str] = set()
    new = 0
    for result in analysis.notebooks:
        comparison = result.comparison
        if comparison is None or comparison.state == "new":
            new += 1
            continue
        record = result.notebook
        if comparison.ratio is not None and comparison.baseline_seconds is not None:
            seconds += record.seconds
            baseline_seconds += comparison.baseline_seconds
        if record.measured and comparison.baseline_device is not None:
            now.add(record.environment.device_label)
            before.add(comparison.baseline_device)
    changed = now != before
    # across a change of device kind no machine factor applies: those notebooks are the
    # device change's, which the headline names, not "beyond the machine's own speed"
    beyond = [result for result in analysis.regressed
              if result.comparison is not None and result.comparison.same_device_kind]
    return Headline(seconds, baseline_seconds, sorted(before) if changed else [],
                    sorted(now) if changed else [], new, len(analysis.gone), len(beyond))


def device_changed(analysis_comparison_device: str | None, record: NotebookRecord) -> bool:
    """Whether a notebook ran on another device than in the baseline."""
    return (analysis_comparison_device is not None and record.measured
            and record.environment.device_label != analysis_comparison_device)


@model_class
class BuildTotals(ModelObject):
    """The build's counts and sums, for the status page's summary and totals row, the
    console summary and ``report``: one definition, so that their numbers agree."""

    notebooks: int = 0
    #: notebooks with an execution (this build's, the cache's or an earlier build's)
    executed: int = 0
    from_cache: int = 0
    from_earlier_build: int = 0
    failed: int = 0
    #: the executed notebooks' time (MyST-NB's run time: kernel start-up included)
    seconds: float = 0.0
    seconds_from_cache: float = 0.0
    #: the executed notebooks' cell time (kernel start-up not included)
    cells_seconds: float = 0.0
    compile_seconds: float = 0.0
    cells: int = 0
    #: cells flagged (not those with notes only: a ``slow-ok`` cell, an import cell)
    flagged: int = 0
    notes: int = 0
    baseline_seconds: float = 0.0
    compared_now: float = 0.0
    compared_before: float = 0.0
    machines: int = 0
    by_status: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def executed_now(self) -> int:
        return self.executed - self.from_cache - self.from_earlier_build

    @property
    def not_executed(self) -> int:
        return self.notebooks - self.executed

    @property
    def ok(self) -> int:
        return self.by_status.get(OK, 0)

    @classmethod
    def of(cls, analysis: BuildAnalysis) -> BuildTotals:
        totals = cls()
        machines = set()
        for result in analysis.notebooks:
            record = result.notebook
            totals.notebooks += 1
            totals.by_status[record.status] = totals.by_status.get(record.status, 0) + 1
            totals.failed += record.failed
            warned = len(result.warned_cells)
            totals.flagged += warned
            totals.notes += len(result.flagged_cells) - warned
            if record.executed:
                totals.executed += 1
                totals.seconds += record.seconds
                totals.from_cache += record.provenance == CACHE
                totals.from_earlier_build += record.provenance == EARLIER_BUILD
                if record.provenance == CACHE:
                    totals.seconds_from_cache += record.seconds
                totals.cells_seconds += record.cells_seconds
                totals.compile_seconds += record.compile_seconds
                totals.cells += len(record.cells)
            if record.measured:
                machines.add(record.environment.machine_id)
            comparison = result.comparison
            if comparison is not None and comparison.baseline_seconds is not None:
                totals.baseline_seconds += comparison.baseline_seconds
                if comparison.ratio is not None:
                    totals.compared_now += record.seconds
                    totals.compared_before += comparison.baseline_seconds
        for record in analysis.gone:
            if record.executed:
                totals.baseline_seconds += record.seconds
        totals.machines = len(machines)
        return totals

