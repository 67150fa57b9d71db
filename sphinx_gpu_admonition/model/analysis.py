"""Slow-cell flags, hints and baseline comparison, computed from records.

Pure functions of :mod:`.record` objects and a few thresholds, shared by the
status page, the build summary and the command line so that all of them flag
the same cells for the same reasons.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

from .compilations import (
    EXPLAIN_ADVICE,
    RECOMPILATION_RULES,
    compiled_function,
    is_user_compilation,
    jax_says,
    user_compilations,
)
from .device import is_gpu
from .formatting import format_seconds
from .machine import (
    UNKNOWN_MACHINE,
    MachineFactor,
    is_slower,
    machine_factor,
    notebook_machine_factor,
    same_device_kind,
)
from .record import (
    EXECUTED,
    SLOW_OK_TAG,
    CellRecord,
    CompiledLoop,
    LoopCall,
    NotebookRecord,
    StatusReport,
)


class Thresholds(NamedTuple):
    """The flagging rules' limits (``gpu_slow_cell_*`` and the others; the CLI's too)."""

    slow_cell_seconds: float = 10.0
    slow_cell_share: float = 0.5
    slow_cell_min_seconds: float = 1.0
    compile_share: float = 0.5
    recompile_threshold: int = 3
    regression_ratio: float = 1.5
    #: ``compilation_cache``: a CI build's JAX compilation without a persistent cache,
    #: flagged from this share of the executed cells' time and this many seconds
    cache_compile_share: float = 0.2
    cache_compile_seconds: float = 30.0

    @classmethod
    def from_config(cls, config: Any) -> Thresholds:
        """From a :class:`~.config.GpuConfig` (or anything with these attributes; the
        ones it lacks, such as the cache rule's, keep their defaults)."""
        return cls(**{name: getattr(config, name) for name in cls._fields
                      if hasattr(config, name)})


class Flag(NamedTuple):
    """Why a cell is flagged: one rule and its reason."""

    #: slow, share, regression (why the cell is slow) or compile, recompile,
    #: compiled_again, sequential_loop, float64 (hints at the cause)
    rule: str
    #: why, in plain words
    reason: str

    @property
    def is_hint(self) -> bool:
        return self.rule in HINT_RULES

    @property
    def is_note(self) -> bool:
        """Shown with the cell, never warned about (:data:`NOTE_RULES`)."""
        return self.rule in NOTE_RULES

    @property
    def action(self) -> str:
        """What to do about it."""
        return ACTIONS.get(self.rule, "")

    @property
    def text(self) -> str:
        """The reason, and for a hint what to do: how one-line views show a flag."""
        return f"{self.reason}; {self.action}" if self.is_hint or (
            self.is_note and self.action) else self.reason


SLOW_RULES = ("slow", "share", "regression")
HINT_RULES = ("compile", "recompile", "compiled_again", "sequential_loop", "float64",
              "compilation_cache")
#: the rules a lecture lives with (:func:`lecture_cell_rules`): a slow cell tagged
#: ``slow-ok`` (slow on purpose) and an import cell past the slow limit are shown,
#: but never warned about, so they never fail a ``-W`` build
NOTE_RULES = ("slow_ok", "imports")

#: what to do about a flagged cell, by rule; the findings show the action of the most
#: specific rule a cell has (:data:`ACTION_ORDER`): a hint names a cause
ACTIONS = {
    "sequential_loop": "run the loop on the CPU device "
                       "(with jax.default_device(jax.devices('cpu')[0])) or restructure it "
                       "(vectorise it, lax.associative_scan)",
    "float64": "compute in float32 on the GPU (leave jax_enable_x64 off, or cast the "
               "arrays that do not need double precision): most GPUs run float64 far "
               "slower than float32 (a Tesla T4 at 1/32 of its float32 speed)",
    "recompile": "pad the inputs to a fixed shape or mark the changing argument static "
                 "(static_argnums), so that the function compiles once",
    "compile": "compile once and reuse: hoist the jit out of loops and functions and call "
               "it with the same shapes; on CI, keep compilations between builds with JAX's "
               "persistent compilation cache (jax_compilation_cache_dir)",
    "compilation_cache": "set JAX_COMPILATION_CACHE_DIR (or jax.config.update("
                         "\"jax_compilation_cache_dir\", ...)) to a folder in the workspace "
                         "and keep that folder between CI runs (actions/cache): later builds "
                         "then load compiled programs instead of compiling them again",
    "compiled_again": "jit the function once at the top level (not inside another function "
                      "around a new lambda) and reuse it: a second call with the same shapes "
                      "then skips compilation",
    "regression": "compare the cell with the baseline's: what changed in the code, its "
                  "data or the device",
    "slow": "profile the cell (%prun, jax.profiler) or make its example smaller",
    "share": "profile the cell (%prun, jax.profiler) or make its example smaller",
    "imports": "imports are paid once per kernel; move heavy imports out of the timed "
               "path or accept it",
    "slow_ok": "",
}
ACTION_ORDER = ("sequential_loop", "recompile", "compiled_again", "compile", "float64",
                "compilation_cache", "regression", "slow", "share", "imports")


def action_for(flags: Sequence[Flag], notebook: NotebookRecord | None = None) -> str:
    """The action of the most specific rule among ``flags`` ("" without flags); for a
    recompilation in a ``notebook`` whose kernel did not record JAX's explanations,
    how to have them recorded."""
    rules = {flag.rule for flag in flags}
    rule = next((rule for rule in ACTION_ORDER if rule in rules), None)
    if rule is None:
        return ""
    if (rule in RECOMPILATION_RULES and notebook is not None
            and not notebook.environment.jax.recompilations_explained):
        return ACTIONS[rule] + EXPLAIN_ADVICE
    return ACTIONS[rule]


# -- rules a lecture can live with: import cells, slow-on-purpose cells, budgets -------
#: cell magics whose body is still the cell's Python code
_PYTHON_CELL_MAGICS = ("%%capture", "%%time", "%%timeit")


def is_imports_only(source: str) -> bool:
    """A cell whose code is only ``import`` / ``from ... import`` statements (with
    comments, ``%matplotlib inline``-style line magics and ``!`` lines): the time of
    importing libraries, paid once per kernel, not the lecture's computation."""
    if "import" not in source:
        return False  # most cells: no parse (every build asks for every cell)
    lines = source.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%") and first.split()[0] not in _PYTHON_CELL_MAGICS:
        return False  # %%bash, %%writefile ...: not Python
    # a magic or shell line becomes an empty one, so that line numbers stay
    python = "\n".join("" if line.strip().startswith(("%", "!")) else line for line in lines)
    try:
        statements = ast.parse(python).body
    except (SyntaxError, ValueError):
        return False
    return bool(statements) and all(isinstance(statement, (ast.Import, ast.ImportFrom))
                                    for statement in statements)


def lecture_cell_rules(cell: CellRecord, flags: Sequence[Flag]) -> tuple[Flag, ...]:
    """``flags`` (:func:`flag_cell`'s) with the rules a lecture lives with applied:

    - a cell tagged ``slow-ok`` is slow on purpose: its ``slow`` / ``share`` flags (and
      the hints they brought) become one ``slow_ok`` note;
    - a cell of only imports is never flagged for its share of the notebook (in a
      short notebook the imports are most of its time); past the absolute slow limit
      it gets an ``imports`` note with its own action instead of "profile the cell".

    A regression against the baseline stays flagged: it is a change, not a choice.
    """
    slow = [flag for flag in flags if flag.rule in ("slow", "share")]
    if not slow or not (cell.slow_ok or cell.imports_only):
        return tuple(flags)
    regression = any(flag.rule == "regression" for flag in flags)
    kept = [flag for flag in flags if flag.rule not in ("slow", "share")
            and (regression or not flag.is_hint)]
    over_limit = next((flag for flag in slow if flag.rule == "slow"), None)
    if cell.slow_ok:
        note = Flag("slow_ok", f"slow on purpose (tagged {SLOW_OK_TAG}), "
                               f"took {format_seconds(cell.seconds)}")
    elif over_limit is not None:
        note = Flag("imports", f"only imports: {over_limit.reason}")
    else:
        return tuple(kept)  # an import cell's share alone: nothing to do
    return (note, *kept)


class BudgetExcess(NamedTuple):
    """A notebook that took longer than its time budget."""

    seconds: float
    budget_seconds: float

    @property
    def reason(self) -> str:
        """``took 80.0 s, budget 60.0 s``"""
        return (f"took {format_seconds(self.seconds)}, "
                f"budget {format_seconds(self.budget_seconds)}")


def over_budget(notebook: NotebookRecord) -> BudgetExcess | None:
    """The notebook's excess over its budget (None: no budget, within it, not run)."""
    budget = notebook.budget_seconds
    if budget is None or not notebook.executed or notebook.seconds <= budget:
        return None
    return BudgetExcess(notebook.seconds, budget)


@dataclasses.dataclass
class CellComparison:
    """A cell against the baseline's cell of the same position (:func:`cell_key`)."""

    baseline_seconds: float | None
    ratio: float | None
    #: "compared", "new" (not in the baseline)
    state: str
    #: how much slower the machine was (see :class:`MachineFactor`); ratios are
    #: judged after dividing by it
    machine_factor: float = 1.0

    @property
    def relative_ratio(self) -> float | None:
        """The ratio beyond the machine's own slowdown."""
        return None if self.ratio is None else self.ratio / self.machine_factor


@dataclasses.dataclass
class NotebookComparison:
    """A notebook against the baseline's: its times, ratio and cells."""

    baseline_seconds: float | None
    ratio: float | None
    baseline_backend: str | None
    baseline_device: str | None
    #: "compared", "new" (not in the baseline), "gone" (only in the baseline)
    state: str
    regression: bool = False
    cells: dict[int, CellComparison] = dataclasses.field(default_factory=dict)
    #: baseline cells with no counterpart in this build: (position, seconds, first line)
    gone_cells: list[tuple[int, float, str]] = dataclasses.field(default_factory=list)
    machine_factor: float = 1.0
    #: False: the baseline ran on another kind of device (CPU, GPU): no machine factor
    same_device_kind: bool = True

    @property
    def relative_ratio(self) -> float | None:
        """The ratio beyond the machine's own slowdown."""
        return None if self.ratio is None else self.ratio / self.machine_factor


def _ratio(now: float, before: float | None) -> float | None:
    if before is None or before <= 0:
        return None
    return now / before


def cell_key(cell: CellRecord, place: int) -> int:
    """What pairs a cell with another build's: its position among the code cells that
    ran (the same on every engine: Markdown cells never shift it), else ``place``, its
    place in the record."""
    return cell.position if cell.position is not None else place


def compare_notebooks(current: NotebookRecord, baseline: NotebookRecord | None,
                      thresholds: Thresholds, overall: MachineFactor = UNKNOWN_MACHINE,
                      ) -> NotebookComparison:
    """``current`` against ``baseline``; a regression is slower beyond the machine factor
    (``overall``, or the two notebooks' own calibrations) and past the minimum time."""
    if baseline is None:
        return NotebookComparison(None, None, None, None, "new")
    factor = notebook_machine_factor(current, baseline, overall)
    before_cells = {cell_key(c, place): c for place, c in enumerate(baseline.cells)}
    cells: dict[int, CellComparison] = {}
    for position, cell in enumerate(current.cells):
        old = before_cells.pop(cell_key(cell, position), None)
        if old is None:
            cells[position] = CellComparison(None, None, "new")
        else:
            cells[position] = CellComparison(old.seconds, _ratio(cell.seconds, old.seconds),
                                             "compared", factor)
    ratio = _ratio(current.seconds, baseline.seconds) if baseline.executed else None
    regression = (current.seconds >= thresholds.slow_cell_min_seconds
                  and is_slower(ratio, factor, thresholds.regression_ratio))
    return NotebookComparison(
        baseline_seconds=baseline.seconds if baseline.executed else None,
        ratio=ratio,
        baseline_backend=baseline.environment.backend,
        baseline_device=baseline.device_label,
        state="compared",
        regression=regression,
        cells=cells,
        gone_cells=[(key, c.seconds, c.first_line) for key, c in before_cells.items()],
        machine_factor=factor,
        same_device_kind=same_device_kind(current, baseline),
    )


def recompile_hint(cell: CellRecord, notebook: NotebookRecord, threshold: int) -> Flag | None:
    """The user's functions compiled ``threshold`` times or more in this cell (a loop
    calling them with new shapes), those of JAX itself only counted."""
    recompiled = [(name, count) for name, count in cell.compilations.items()
                  if count >= threshold]
    users = sorted(((n, c) for n, c in recompiled if is_user_compilation(n, notebook)),
                   key=lambda item: (-item[1], item[0]))
    if not users:
        return None  # JAX's own operations alone: nothing in the user's code to change
    listed = ", ".join(f"{name} ({count}x)" for name, count in users)
    internal = len(recompiled) - len(users)
    if internal:
        listed += f", +{internal} JAX-internal"
    why = jax_says(cell, [name for name, _ in users]) or (
        "new shapes, dtypes or static arguments trigger a new compilation each time")
    return Flag("recompile", f"recompiled in this cell: {listed} — {why}")


def flag_cell(cell: CellRecord, notebook: NotebookRecord, thresholds: Thresholds,
              comparison: CellComparison | None = None) -> list[Flag]:
    """Why ``cell`` is slow, with hints at the cause where the data supports them."""
    flags: list[Flag] = []
    seconds = cell.seconds
    if seconds >= thresholds.slow_cell_seconds:
        flags.append(Flag("slow", f"took {format_seconds(seconds)} "
                                  f"(limit {format_seconds(thresholds.slow_cell_seconds)})"))
    if seconds < thresholds.slow_cell_min_seconds:
        return flags
    total = notebook.cells_seconds
    if total > 0 and len(notebook.cells) > 1 and seconds / total >= thresholds.slow_cell_share:
        flags.append(Flag("share", f"{seconds / total:.0%} of the notebook's cell time"))
    relative = comparison.relative_ratio if comparison is not None else None
    if comparison is not None and relative is not None and is_slower(
            comparison.ratio, comparison.machine_factor, thresholds.regression_ratio):
        beyond = (f"; {relative:.1f}x beyond the machine's {comparison.machine_factor:.1f}x"
                  if abs(comparison.machine_factor - 1) >= 0.05 else "")
        flags.append(Flag("regression", f"{comparison.ratio:.1f}x slower than the baseline "
                                        f"({format_seconds(comparison.baseline_seconds or 0)})"
                                        f"{beyond}"))
    again = compiled_again_hint(cell, notebook, thresholds)
    if again is not None:
        flags.append(again)  # a finding of its own, slow or not
    if not flags or flags == [again]:
        return flags
    if (cell.compile_seconds and seconds > 0  # a 0 s cell: --min-seconds 0
            and cell.compile_seconds / seconds >= thresholds.compile_share):
        flags.append(Flag("compile", f"JAX compilation took {format_seconds(cell.compile_seconds)}"
                                     f" ({cell.compile_seconds / seconds:.0%} of the cell), "
                                     f"running {format_seconds(run_time(cell))}"))
    recompile = recompile_hint(cell, notebook, thresholds.recompile_threshold)
    if recompile is not None:
        flags.append(recompile)
    if is_gpu(notebook.environment.backend):
        loop = loop_hint(cell, notebook)
        if loop is not None:
            flags.append(loop)
        # only where the cell ran JAX code (compiled in it, or a loop it runs)
        if notebook.environment.jax.x64 and (cell.compilations or cell.runs or cell.loops):
            flags.append(Flag("float64", "float64 is enabled (jax_enable_x64) on the GPU"))
    return flags


def _defined_where(run: LoopCall, notebook: NotebookRecord) -> str:
    if run.module is not None:
        return f"defined in {run.module}.py"
    if run.defined_cell is None:
        return ""
    defining = next((c for place, c in enumerate(notebook.cells)
                     if cell_key(c, place) == run.defined_cell), None)
    if defining is None:
        return "defined in an earlier cell"
    return f"defined in {notebook.cell_name(defining).label}"


def describe_run(run: LoopCall, notebook: NotebookRecord, run_seconds: float | None) -> str:
    """``runs `qm_jax` (defined in cell 2), a `lax.scan` of 10,000,000 steps: about
    8.2 µs per step on the GPU``; ``run_seconds`` (the cell's time less compilation)
    gives the time per step where the steps are known."""
    steps = f" of {run.steps:,} steps" if run.steps else ""
    loop = f"a `{run.primitive}`{steps}"
    if run.function is None:
        text = f"runs {loop}"
    else:
        where = _defined_where(run, notebook)
        through = f", through `{run.loop_function}`" if run.loop_function else ""
        text = (f"runs `{run.function}`" + (f" ({where})" if where else "")
                + f"{through}, {loop}")
    if run.steps and run_seconds:
        text += f": about {_per_step(run_seconds / run.steps)} per step on the GPU"
    return text


def _per_step(seconds: float) -> str:
    if seconds < 1e-6:  # a CPU's loop (a few ns a step): not "0.0 µs"
        return f"{seconds * 1e9:.1f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs" if seconds < 1e-5 else f"{seconds * 1e6:.0f} µs"
    return format_seconds(seconds)


def library_loops(cell: CellRecord, notebook: NotebookRecord) -> list[CompiledLoop]:
    """The loops of programs compiled in ``cell`` for a GPU that the parse of the
    notebook's code did not find (``runs``): loops in library code (numpyro's NUTS,
    BFGS).  A user function the parse followed is left to it (it knows which calls
    run on the CPU), as is a program compiled for the CPU."""
    if not cell.compiled_loops:
        return []
    parsed = {name.rpartition(".")[2] for other in notebook.cells for run in other.runs
              for name in (run.function, run.loop_function) if name}
    backend = notebook.environment.backend
    return [loop for loop in cell.compiled_loops if is_gpu(loop.platform or backend)
            and compiled_function(loop.function) not in parsed]


def describe_compiled(loops: Sequence[CompiledLoop], run_seconds: float | None) -> str:
    """``runs a while loop of 1,000 steps compiled in `jit(sample)` (library code)``."""
    by_function: dict[str, list[CompiledLoop]] = {}
    for loop in loops:
        by_function.setdefault(loop.function, []).append(loop)
    parts = []
    for function, found in by_function.items():
        steps = found[0].steps if len(found) == 1 else None
        what = "a while loop" if len(found) == 1 else f"{len(found)} while loops"
        what += f" of {steps:,} steps" if steps else ""
        per_step = (f": about {_per_step(run_seconds / steps)} per step on the GPU"
                    if steps and run_seconds and len(loops) == 1 else "")
        parts.append(f"{what} compiled in `{function}` (library code){per_step}")
    return "runs " + "; ".join(parts)


def _steps_from_program(run: LoopCall, cell: CellRecord) -> LoopCall:
    """``run`` with the trip count of the program compiled for its function in the
    cell, where the code did not give it (``while_loop(lambda s: s[1] < 200, ...)``)
    and the program has one count."""
    if run.steps is not None or not cell.compiled_loops:
        return run
    names = {name.rpartition(".")[2] for name in (run.function, run.loop_function) if name}
    counts = {loop.steps for loop in cell.compiled_loops
              if loop.steps and compiled_function(loop.function) in names}
    return dataclasses.replace(run, steps=counts.pop()) if len(counts) == 1 else run


def loop_hint(cell: CellRecord, notebook: NotebookRecord) -> Flag | None:
    """The sequential loops the cell runs on the GPU: through the functions it calls
    (``runs``, the builder's parse), in the programs it compiled (library code), or,
    for records without either, its own text."""
    library = library_loops(cell, notebook)
    runs = [_steps_from_program(run, cell) for run in cell.runs]
    if runs or library:
        with_steps = [run for run in runs if run.steps]
        # the cell's time is spread over its loops: a time per step only for one loop
        one = len(with_steps) == 1 and len(runs) == 1 and not library
        run_seconds = run_time(cell) if one or (library and not runs) else None
        described = "; ".join(
            [describe_run(run, notebook, run_seconds) for run in runs]
            + ([describe_compiled(library, run_seconds)] if library else []))
        return Flag("sequential_loop", f"{described} — on the GPU every iteration launches "
                    "device kernels, so long sequential loops can be far slower than on the CPU")
    if cell.loops:
        return Flag("sequential_loop", f"runs {', '.join(cell.loops)} on the GPU: every "
                    "iteration launches device kernels, so long sequential loops can be far "
                    "slower than on the CPU")
    return None


def run_time(cell: CellRecord) -> float:
    """The cell's time less its JAX compilation: what running the code took."""
    return max(cell.seconds - cell.compile_seconds, 0.0)


def first_call(cell: CellRecord, notebook: NotebookRecord) -> bool | None:
    """True: the cell compiled a function of the user's (its first call, or a call
    with new shapes); False: it ran JAX code compiled before (a warm call); None: no
    JAX compilation known for it (no JAX, or not captured)."""
    if user_compilations(cell, notebook):
        return True
    if cell.runs:
        return False
    return None


def compiled_again_hint(cell: CellRecord, notebook: NotebookRecord,
                        thresholds: Thresholds) -> Flag | None:
    """A user function compiled in ``cell`` that an earlier cell compiled already,
    taking ``slow_cell_min_seconds`` or more: the second call was meant to be warm."""
    if cell.compile_seconds < thresholds.slow_cell_min_seconds:
        return None
    names = user_compilations(cell, notebook)
    if not names:
        return None
    earlier: dict[str, CellRecord] = {}
    for other in notebook.cells:
        if other is cell:
            break
        for name in other.compilations:
            earlier.setdefault(name, other)
    # every lambda is "<lambda>": two of them are not one function compiled twice; a
    # twin pinned to another device (jax.jit(f, device=cpu)) compiles f for that device
    again = [name for name in names if name in earlier and "<lambda>" not in name
             and compiled_function(name) not in cell.device_twins]
    if not again:
        return None
    listed = ", ".join(f"{name} (first in {notebook.cell_name(earlier[name]).label})"
                       for name in again)
    said = jax_says(cell, again)
    return Flag("compiled_again", f"compiled again: {listed}, "
                                  f"{format_seconds(cell.compile_seconds)} of compilation"
                                  + (f" — {said}" if said else ""))


@dataclasses.dataclass
class NotebookAnalysis:
    """One notebook's record, its cells' flags and its comparison."""

    notebook: NotebookRecord
    #: each cell's flags, in the record's order: a tuple, so that the unflagged
    #: cells (nearly all) share the empty one instead of each holding a list of its
    #: own for as long as the build's analysis lives
    cell_flags: list[tuple[Flag, ...]]
    comparison: NotebookComparison | None

    @property
    def flagged_cells(self) -> list[tuple[CellRecord, tuple[Flag, ...]]]:
        return [(c, f) for c, f in zip(self.notebook.cells, self.cell_flags, strict=False) if f]

    @property
    def warned_cells(self) -> list[tuple[CellRecord, tuple[Flag, ...]]]:
        """The flagged cells a ``-W`` build fails on: not those with notes only (a
        ``slow-ok`` cell, an import cell)."""
        return [(c, f) for c, f in self.flagged_cells if not all(x.is_note for x in f)]

    @property
    def over_budget(self) -> BudgetExcess | None:
        return over_budget(self.notebook)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "flagged_cells": [
                {"cell": self.notebook.cell_name(c).label, "index": c.index,
                 "execution_count": c.execution_count, "seconds": c.seconds,
                 "compile_seconds": c.compile_seconds, "run_seconds": run_time(c),
                 "first_call": first_call(c, self.notebook),
                 "flags": [f._asdict() for f in flags]}
                for c, flags in self.flagged_cells
            ],
        }
        excess = self.over_budget
        if excess is not None:
            data["budget"] = {"seconds": excess.seconds, "budget_seconds": excess.budget_seconds,
                              "reason": excess.reason}
        if self.comparison is not None:
            comp = self.comparison
            data["baseline"] = {
                "state": comp.state, "seconds": comp.baseline_seconds, "ratio": comp.ratio,
                "backend": comp.baseline_backend, "regression": comp.regression,
            }
        return data


#: Cell magics whose body is shell script, not Python.
SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script", "%%system")


def is_shell_or_magic(source: str) -> bool:
    """A cell of only ``!pip install ...`` / ``%magic`` lines (and comments), a
    ``%%bash`` cell, or ``%%capture`` around such lines: its time is the machine's
    (downloads, installs), not the lecture's, so no view flags it."""
    lines = [line.strip() for line in source.splitlines()]
    code = [line for line in lines if line and not line.startswith("#")]
    if not code:
        return False
    if code[0].split()[0] in SHELL_CELL_MAGICS:
        return True
    if code[0].split()[0] == "%%capture":
        code = code[1:]
    return all(line.startswith(("!", "%")) for line in code)


def analyse_notebook(notebook: NotebookRecord, thresholds: Thresholds,
                     baseline: dict[str, NotebookRecord] | None = None,
                     machine: MachineFactor = UNKNOWN_MACHINE) -> NotebookAnalysis:
    """Flags of one notebook; ``baseline`` maps docnames to the baseline's records;
    the cells that only run shell commands or magics (``CellRecord.shell``) get none."""
    comparison = None
    if baseline is not None:
        comparison = compare_notebooks(notebook, baseline.get(notebook.docname), thresholds,
                                       machine)
    flags = [
        () if cell.shell else
        lecture_cell_rules(cell, flag_cell(cell, notebook, thresholds,
                                           comparison.cells.get(position) if comparison
                                           else None))
        for position, cell in enumerate(notebook.cells)
    ]
    return NotebookAnalysis(notebook, flags, comparison)


@dataclasses.dataclass
class BuildAnalysis:
    """Every notebook of a build analysed, and what the baseline had."""

    notebooks: list[NotebookAnalysis]
    #: notebooks only in the baseline
    gone: list[NotebookRecord]
    baseline: StatusReport | None
    #: the new machine's speed relative to the baseline's (None without a baseline)
    machine: MachineFactor | None = None
    #: findings about the whole build, not a cell (:func:`compilation_cache_hint`)
    build_flags: list[Flag] = dataclasses.field(default_factory=list)

    @property
    def regressed(self) -> list[NotebookAnalysis]:
        """Notebooks slower than the baseline beyond the machine factor."""
        return [a for a in self.notebooks if a.comparison is not None and a.comparison.regression]

    def to_dict(self) -> dict[str, Any]:
        data = {a.notebook.docname: a.to_dict() for a in self.notebooks}
        for nb in self.gone:
            data[nb.docname] = {"flagged_cells": [], "baseline": {
                "state": "gone", "seconds": nb.seconds, "ratio": None,
                "backend": nb.environment.backend, "regression": False}}
        return data


def analyse(report: StatusReport, thresholds: Thresholds,
            baseline: StatusReport | None = None) -> BuildAnalysis:
    """The build's one analysis: every view of a build, and ``report`` on its status
    file, flag the cells it flags."""
    by_docname = baseline.by_docname() if baseline is not None else None
    machine = machine_factor(report, baseline) if baseline is not None else None
    analyses = [analyse_notebook(nb, thresholds, by_docname, machine or UNKNOWN_MACHINE)
                for nb in report.notebooks]
    gone: list[NotebookRecord] = []
    if baseline is not None:
        present = {nb.docname for nb in report.notebooks}
        gone = [nb for nb in baseline.notebooks if nb.docname not in present]
    cache = compilation_cache_hint(report, thresholds)
    return BuildAnalysis(analyses, gone, baseline, machine, [cache] if cache else [])


def is_ci(environ: dict[str, str] | Any) -> bool:
    """A CI build: ``CI`` (set by GitHub Actions, GitLab, CircleCI ...) or
    ``GITHUB_ACTIONS`` is true (``build.ci`` of the status file)."""
    return (environ.get("CI", "").lower() in ("true", "1")
            or environ.get("GITHUB_ACTIONS") == "true")


def compilation_cache_hint(report: StatusReport, thresholds: Thresholds) -> Flag | None:
    """A CI build (``build.ci``) whose notebooks executed now without a persistent
    compilation cache compiled for ``cache_compile_seconds`` or more and for
    ``cache_compile_share`` or more of the executed cells' time: every CI run pays
    the compilations again.  Not known whether a cache was set (older records): no
    flag."""
    if not report.build.get("ci"):
        return None
    executed = [nb for nb in report.notebooks if nb.executed and nb.provenance == EXECUTED]
    uncached = [nb for nb in executed if nb.environment.jax.compilation_cache is False]
    compile_seconds = sum(nb.compile_seconds for nb in uncached)
    total = sum(nb.cells_seconds for nb in executed)
    if (not uncached or total <= 0 or compile_seconds < thresholds.cache_compile_seconds
            or compile_seconds / total < thresholds.cache_compile_share):
        return None
    count = len(uncached)
    return Flag("compilation_cache", f"JAX compilation took {format_seconds(compile_seconds)}"
                f" ({compile_seconds / total:.0%} of the executed cells' time) in {count} "
                f"notebook{'s' if count != 1 else ''} run on CI without a persistent "
                "compilation cache")
