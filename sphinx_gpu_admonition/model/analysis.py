"""Slow-cell flags, hints and baseline comparison, computed from records.

Pure functions of :mod:`.record` objects and a few thresholds, shared by the
status page, the build summary and the command line so that all of them flag
the same cells for the same reasons.  A rule returns a :class:`~.rules.Flag`: its
name and the facts it found (numbers, names), never a sentence; the views write the
words (:mod:`..render.finding_text`).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

from .compilations import (
    compiled_function,
    compiled_inputs,
    is_user_compilation,
    jax_reasons,
    user_compilations,
)
from .compiled_again import compiled_again_flag
from .device import is_gpu
from .loop_rules import loop_flags
from .machine import (
    UNKNOWN_MACHINE,
    MachineFactor,
    is_slower,
    machine_factor,
    notebook_machine_factor,
    same_device_kind,
)
from .program_loops import carried_steps, dominant_loop
from .record import (
    EXECUTED,
    SLOW_OK_TAG,
    CellRecord,
    CompiledLoop,
    LoopCall,
    NotebookRecord,
    StatusReport,
)

# the rules' vocabulary, where the analysis's users have always found it
from .rules import HINT_RULES as HINT_RULES
from .rules import NOTE_RULES as NOTE_RULES
from .rules import Flag as Flag
from .rules import Rule as Rule
from .schema import ModelObject, model_class
from .timing_record import Claim, TimingStatement


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


def explained(notebook: NotebookRecord) -> bool:
    """Whether the notebook's kernel recorded JAX's explanations of recompilations
    (``gpu_explain_recompilations``): a recompilation's action says how to have them
    recorded otherwise."""
    return bool(notebook.environment.jax.recompilations_explained)


# -- rules a lecture can live with: import cells, slow-on-purpose cells, budgets -------
#: cell magics whose body is still the cell's Python code
_PYTHON_CELL_MAGICS = ("%%capture", "%%time", "%%timeit")


def _is_set_up(statement: ast.stmt) -> bool:
    """An import cell's set-up, paid with its imports at the kernel's start: JAX's
    options (``jax.config.update("jax_enable_x64", True)``), a device looked up
    (``cpu = jax.devices("cpu")[0]``: the backend starts there), a constant, or a
    definition (a ``def`` or ``class`` runs nothing until it is called; a decorator
    called with arguments may compile at once, as numba's ``@vectorize([...])`` does,
    so only ``partial(...)`` is called there)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return all(not isinstance(decorator, ast.Call)
                   or getattr(decorator.func, "id", getattr(decorator.func, "attr", ""))
                   == "partial" for decorator in statement.decorator_list)
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        function = statement.value.func
        return (isinstance(function, ast.Attribute) and function.attr == "update"
                and isinstance(function.value, ast.Attribute)
                and function.value.attr == "config")
    if isinstance(statement, ast.Assign) and all(isinstance(target, ast.Name)
                                                 for target in statement.targets):
        value = statement.value
        if isinstance(value, ast.Subscript):
            value = value.value
        if isinstance(value, ast.Constant):
            return True
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in ("devices", "local_devices"))
    return False


def is_imports_only(source: str) -> bool:
    """A cell whose code is only ``import`` / ``from ... import`` statements (with
    comments, ``%matplotlib inline``-style line magics and ``!`` lines, and set-up:
    JAX's options, a device looked up, constants, definitions): the time of importing
    libraries and starting JAX, paid once per kernel, not the lecture's computation."""
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
    imports = [statement for statement in statements
               if isinstance(statement, (ast.Import, ast.ImportFrom))]
    return bool(imports) and all(isinstance(statement, (ast.Import, ast.ImportFrom))
                                 or _is_set_up(statement) for statement in statements)


def lecture_cell_rules(cell: CellRecord, flags: Sequence[Flag]) -> tuple[Flag, ...]:
    """``flags`` (:func:`flag_cell`'s) with the rules a lecture lives with applied:

    - a cell tagged ``slow-ok`` is slow on purpose: its ``slow`` / ``share`` flags (and
      the hints they brought) become one ``slow_ok`` note;
    - a cell of only imports is never flagged for its share of the notebook (in a
      short notebook the imports are most of its time); past the absolute slow limit
      it gets an ``imports`` note with its own action instead of "profile the cell".

    A regression against the baseline stays flagged: it is a change, not a choice.
    """
    slow = [flag for flag in flags if flag.rule in (Rule.SLOW, Rule.SHARE)]
    if not slow or not (cell.slow_ok or cell.imports_only):
        return tuple(flags)
    regression = any(flag.rule == Rule.REGRESSION for flag in flags)
    kept = [flag for flag in flags if flag.rule not in (Rule.SLOW, Rule.SHARE)
            and (regression or not flag.is_hint)]
    over_limit = next((flag for flag in slow if flag.rule == Rule.SLOW), None)
    if cell.slow_ok:
        note = Flag(Rule.SLOW_OK, {"seconds": cell.seconds, "tag": SLOW_OK_TAG})
    elif over_limit is not None:
        note = Flag(Rule.IMPORTS, dict(over_limit.facts))  # the slow limit's numbers
    else:
        return tuple(kept)  # an import cell's share alone: nothing to do
    return (note, *kept)


class BudgetExcess(NamedTuple):
    """A notebook that took longer than its time budget."""

    seconds: float
    budget_seconds: float


def over_budget(notebook: NotebookRecord) -> BudgetExcess | None:
    """The notebook's excess over its budget (None: no budget, within it, not run)."""
    budget = notebook.budget_seconds
    if budget is None or not notebook.executed or notebook.seconds <= budget:
        return None
    return BudgetExcess(notebook.seconds, budget)


@model_class
class CellComparison(ModelObject):
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


@model_class
class NotebookComparison(ModelObject):
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
    return Flag(Rule.RECOMPILE, {
        # the input types of its programs, where the probe read them (each distinct once)
        "functions": [{"name": name, "count": count,
                       "inputs": list(dict.fromkeys(", ".join(inputs) for inputs
                                                    in compiled_inputs(cell, name)))}
                      for name, count in users],
        "internal": len(recompiled) - len(users),
        "jax_says": jax_reasons(cell, [name for name, _ in users]),
        "explained": explained(notebook)})


def flag_cell(cell: CellRecord, notebook: NotebookRecord, thresholds: Thresholds,
              comparison: CellComparison | None = None, total: float | None = None
              ) -> list[Flag]:
    """Why ``cell`` is slow, with hints at the cause where the data supports them;
    ``total``: the notebook's cell time, where the caller summed it once."""
    flags: list[Flag] = []
    seconds = cell.seconds
    if seconds >= thresholds.slow_cell_seconds:
        flags.append(Flag(Rule.SLOW, {"seconds": seconds,
                                      "limit": thresholds.slow_cell_seconds}))
    if seconds < thresholds.slow_cell_min_seconds:
        return flags
    total = notebook.cells_seconds if total is None else total
    if total > 0 and len(notebook.cells) > 1 and seconds / total >= thresholds.slow_cell_share:
        flags.append(Flag(Rule.SHARE, {"share": seconds / total}))
    relative = comparison.relative_ratio if comparison is not None else None
    if comparison is not None and relative is not None and is_slower(
            comparison.ratio, comparison.machine_factor, thresholds.regression_ratio):
        flags.append(Flag(Rule.REGRESSION, {
            "ratio": comparison.ratio, "baseline_seconds": comparison.baseline_seconds or 0.0,
            "relative": relative, "machine_factor": comparison.machine_factor}))
    again = compiled_again_hint(cell, notebook, thresholds)
    if again is not None:
        flags.append(again)  # a finding of its own, slow or not
    if not flags or flags == [again]:
        return flags
    if (cell.compile_seconds and seconds > 0  # a 0 s cell: --min-seconds 0
            and cell.compile_seconds / seconds >= thresholds.compile_share):
        flags.append(Flag(Rule.COMPILE, {"compile_seconds": cell.compile_seconds,
                                         "share": cell.compile_seconds / seconds,
                                         "run_seconds": run_time(cell)}))
    recompile = recompile_hint(cell, notebook, thresholds.recompile_threshold)
    if recompile is not None:
        flags.append(recompile)
    flags.extend(loop_flags(cell, notebook, run_time(cell)))  # a note on a CPU build
    if is_gpu(notebook.environment.backend):
        loop = loop_hint(cell, notebook)
        if loop is not None:
            flags.append(loop)
        # only where the cell ran JAX code (compiled in it, or a loop it runs)
        if notebook.environment.jax.x64 and (cell.compilations or cell.runs or cell.loops):
            flags.append(Flag(Rule.FLOAT64, {}))
    return flags


def run_facts(run: LoopCall, notebook: NotebookRecord, run_seconds: float | None
              ) -> dict[str, Any]:
    """A loop the cell runs through a function (``runs `qm_jax` (defined in cell 2), a
    `lax.scan` of 10,000,000 steps``) as facts; ``run_seconds`` (the cell's time less
    compilation) gives the time per step where the steps are known."""
    defining = (None if run.defined_cell is None or run.module is not None else
                next((c for place, c in enumerate(notebook.cells)
                      if cell_key(c, place) == run.defined_cell), None))
    return {
        "primitive": run.primitive, "steps": run.steps, "function": run.function,
        "loop_function": run.loop_function,
        #: where the function is defined: a module of the book's (``module.py``), a cell
        #: of the notebook (its number), or an earlier cell no longer in the record
        "module": run.module,
        "defined_cell": notebook.cell_name(defining).number if defining is not None else None,
        "defined_earlier": (run.module is None and run.defined_cell is not None
                            and defining is None),
        "step_seconds": run_seconds / run.steps if run.steps and run_seconds else None,
    }


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


def compiled_facts(loops: Sequence[CompiledLoop], run_seconds: float | None
                   ) -> list[dict[str, Any]]:
    """The loops of library code by the compiled function they are in (``a while loop
    of 1,000 steps compiled in `jit(sample)```), as facts: how many, the steps of the
    loop that dominates (the most steps: a 1,000,000-step ``fori_loop`` beside
    ``jax.random``'s 5-step loop) and the time per step (for one loop of the cell: a
    count read from a program can be a bound, as BFGS's maximum of iterations, so the
    time of several loops is not one loop's)."""
    by_function: dict[str, list[CompiledLoop]] = {}
    for loop in loops:
        by_function.setdefault(loop.function, []).append(loop)
    parts = []
    for function, found in by_function.items():
        dominant = dominant_loop(found)
        steps = dominant.steps if dominant is not None else None
        parts.append({"function": function, "loops": len(found), "steps": steps,
                      "step_seconds": (run_seconds / steps if steps and run_seconds
                                       and len(loops) == 1 else None)})
    return parts


def _steps_from_program(run: LoopCall, cell: CellRecord, notebook: NotebookRecord
                        ) -> LoopCall:
    """``run`` with the trip count of its function's program where the code did not
    give it (``while_loop(lambda s: s[1] < 200, ...)``, a count from an input's
    shape): its dominant loop's, compiled in the cell or, for a warm call, in the
    earlier cell that compiled it (:func:`.program_loops.carried_steps`)."""
    if run.steps is not None:
        return run
    for name in (run.loop_function, run.function):
        steps = carried_steps(name, cell, notebook) if name else None
        if steps:
            return dataclasses.replace(run, steps=steps)
    return run


def loop_hint(cell: CellRecord, notebook: NotebookRecord) -> Flag | None:
    """The sequential loops the cell runs on the GPU: through the functions it calls
    (``runs``, the builder's parse), in the programs it compiled (library code), or,
    for records without either, its own text."""
    library = library_loops(cell, notebook)
    runs = [_steps_from_program(run, cell, notebook) for run in cell.runs]
    if runs or library:
        with_steps = [run for run in runs if run.steps]
        # the cell's time is spread over its loops: a time per step only for one loop
        one = len(with_steps) == 1 and len(runs) == 1 and not library
        run_seconds = run_time(cell) if one or (library and not runs) else None
        return Flag(Rule.SEQUENTIAL_LOOP, {
            "runs": [run_facts(run, notebook, run_seconds) for run in runs],
            "library": compiled_facts(library, run_seconds) if library else []})
    if cell.loops:  # a record of an earlier version: the loops its text names
        return Flag(Rule.SEQUENTIAL_LOOP, {"loops": list(cell.loops)})
    return None


def run_time(cell: CellRecord) -> float:
    """The cell's time less its JAX compilation: what running the code took."""
    return max(cell.seconds - cell.compile_seconds, 0.0)


def first_call(cell: CellRecord, notebook: NotebookRecord) -> bool | None:
    """True: the cell compiled a function of the user's (its first call, or a call
    with new shapes); False: it ran the user's JAX code (a loop, a jitted function the
    parse found) without compiling it (a warm call); None: no JAX compilation known for
    it (no JAX, or not captured)."""
    if user_compilations(cell, notebook):
        return True
    jitted = {jit.function for jit in cell.jit_calls}
    if any(compiled_function(name) in jitted for name in cell.compilations):
        return True  # a library function the cell jits (jax.jit(minimize)(...)) compiled
    if cell.runs or cell.jit_calls or cell.dispatch_loops:
        return False  # it runs the user's JAX code, compiled in an earlier cell
    return None


def compiled_again_hint(cell: CellRecord, notebook: NotebookRecord,
                        thresholds: Thresholds) -> Flag | None:
    """A user function compiled in ``cell`` that an earlier cell compiled already,
    taking ``slow_cell_min_seconds`` or more: the second call was meant to be warm
    (:func:`.compiled_again.compiled_again_flag`, with why)."""
    return compiled_again_flag(cell, notebook, thresholds.slow_cell_min_seconds)


@model_class
class NotebookAnalysis(ModelObject):
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
    total = notebook.cells_seconds  # once, not once for each cell it flags
    flags = [
        () if cell.shell else
        lecture_cell_rules(cell, flag_cell(cell, notebook, thresholds,
                                           comparison.cells.get(position) if comparison
                                           else None, total))
        for position, cell in enumerate(notebook.cells)
    ]
    return NotebookAnalysis(notebook, flags, comparison)


@model_class
class BuildAnalysis(ModelObject):
    """Every notebook of a build analysed, and what the baseline had."""

    notebooks: list[NotebookAnalysis]
    #: notebooks only in the baseline
    gone: list[NotebookRecord]
    baseline: StatusReport | None
    #: the new machine's speed relative to the baseline's (None without a baseline)
    machine: MachineFactor | None = None
    #: findings about the whole build, not a cell (:func:`compilation_cache_hint`)
    build_flags: list[Flag] = dataclasses.field(default_factory=list)
    #: the text's timing claims with their verdicts and the review list, as the build
    #: checked them (``StatusReport.claims``, ``.timing_statements``: :mod:`.page_claims`)
    claims: list[Claim] = dataclasses.field(default_factory=list)
    timing_statements: list[TimingStatement] = dataclasses.field(default_factory=list)

    @property
    def regressed(self) -> list[NotebookAnalysis]:
        """Notebooks slower than the baseline beyond the machine factor."""
        return [a for a in self.notebooks if a.comparison is not None and a.comparison.regression]


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
    return BuildAnalysis(analyses, gone, baseline, machine, [cache] if cache else [],
                         list(report.claims), list(report.timing_statements))


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
    return Flag(Rule.COMPILATION_CACHE, {"compile_seconds": compile_seconds,
                                         "share": compile_seconds / total,
                                         "notebooks": len(uncached)})
