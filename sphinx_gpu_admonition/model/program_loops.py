"""The loops of the programs a cell runs, known from where they were compiled.

The probe reads the loops of the programs JAX compiles during a cell
(``CellRecord.compiled_loops``: trip counts, platform).  A warm call compiles
nothing, so its cell has none, although it runs the same program as the first call:
:func:`program_loops` takes them from the cell that compiled the function (the cell
itself, else the earlier cells that did, when they agree), so that the lecture's
timed warm call keeps its loop's size and time per step.  A program with several
loops (a 1,000,000-step ``fori_loop`` and ``jax.random``'s 5-step loop) is described
by the loop that dominates (:func:`dominant_loop`: the most steps) or by each loop,
most steps first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from .compilations import compiled_function
from .record import CellRecord, CompiledLoop, NotebookRecord


class ProgramLoops(NamedTuple):
    """The loops of one compiled function's program, as a cell runs it."""

    #: the compiled function as JAX names it (``jit(qm_jax)``)
    function: str
    #: its loops, most steps first (those without a known count last)
    loops: tuple[CompiledLoop, ...]
    #: the position of the cell that compiled it: the cell itself (its first call, or a
    #: compilation again) or an earlier one (a warm call)
    compiled_in: int | None
    #: True when ``compiled_in`` is an earlier cell (the facts carried over)
    carried: bool

    @property
    def dominant(self) -> CompiledLoop | None:
        """The loop with the most steps (None: no loop with a known count)."""
        return dominant_loop(self.loops)

    @property
    def steps(self) -> int | None:
        dominant = self.dominant
        return dominant.steps if dominant is not None else None


def dominant_loop(loops: Iterable[CompiledLoop]) -> CompiledLoop | None:
    """The loop with the most steps among ``loops`` (the first of equals); None when
    none has a known count."""
    counted = [loop for loop in loops if loop.steps]
    return max(counted, key=lambda loop: loop.steps or 0) if counted else None


def by_steps(loops: Iterable[CompiledLoop]) -> tuple[CompiledLoop, ...]:
    """``loops``, most steps first, those without a count last (otherwise in order)."""
    return tuple(sorted(loops, key=lambda loop: -(loop.steps or -1)))


def time_per_step(run_seconds: float | None, steps: int | None) -> float | None:
    """The run time of a cell spread over its loop's steps (None: either unknown)."""
    if not run_seconds or not steps:
        return None
    return run_seconds / steps


def run_functions(cell: CellRecord) -> list[str]:
    """The Python names of the user functions ``cell`` runs, as the parse found them
    (its loops' functions, its jitted calls), for matching compiled programs
    (``jit(sample)`` for ``mylib.sample``)."""
    names: list[str] = []
    for name in [*(name for run in cell.runs for name in (run.function, run.loop_function)),
                 *(call.function for call in cell.jit_calls)]:
        if name:
            short = name.rpartition(".")[2]
            if short not in names:
                names.append(short)
    return names


def program_loops(cell: CellRecord, notebook: NotebookRecord,
                  functions: Sequence[str] | None = None) -> list[ProgramLoops]:
    """The loops of the programs ``cell`` runs: those compiled in it, and for the
    functions it runs without compiling them (``functions``, by default
    :func:`run_functions`) those of the earlier cells that compiled them, when every
    such cell's program has the same loops' counts (a function compiled for two step
    counts leaves a warm call's unknown).  In the order found: the cell's own first."""
    result: dict[str, ProgramLoops] = {}
    for loop in cell.compiled_loops:
        entry = result.get(loop.function)
        loops = (*entry.loops, loop) if entry else (loop,)
        result[loop.function] = ProgramLoops(loop.function, by_steps(loops), cell.position,
                                             False)
    wanted = run_functions(cell) if functions is None else list(functions)
    earlier = _earlier_programs(cell, notebook)
    for name in wanted:
        if any(compiled_function(function) == name for function in result):
            continue
        if any(compiled_function(function) == name for function in cell.compilations):
            continue  # compiled here without a loop: its program has none
        candidates = earlier.get(name, [])
        counts = {tuple(loop.steps for loop in loops) for _, _, loops in candidates}
        if len(counts) != 1:
            continue
        function, index, loops = candidates[0]
        result[function] = ProgramLoops(function, loops, index, True)
    return list(result.values())


def _earlier_programs(cell: CellRecord, notebook: NotebookRecord,
                      ) -> dict[str, list[tuple[str, int | None, tuple[CompiledLoop, ...]]]]:
    """Python name -> (compiled name, cell position, loops most steps first) of every
    program compiled before ``cell`` (a compilation without loops: none)."""
    found: dict[str, list[tuple[str, int | None, tuple[CompiledLoop, ...]]]] = {}
    for other in notebook.cells:
        if other is cell:
            break
        programs: dict[str, list[CompiledLoop]] = {}
        for loop in other.compiled_loops:
            programs.setdefault(loop.function, []).append(loop)
        for function in other.compilations:
            if function not in programs:
                programs[function] = []
        for function, loops in programs.items():
            found.setdefault(compiled_function(function), []).append(
                (function, other.position, by_steps(loops)))
    return found


def carried_steps(function: str, cell: CellRecord, notebook: NotebookRecord) -> int | None:
    """The dominant loop's step count of the program of ``function`` (a Python name,
    ``mylib.sample`` or ``sample``) that ``cell`` runs, compiled in it or before it."""
    short = function.rpartition(".")[2]
    for program in program_loops(cell, notebook, [short]):
        if compiled_function(program.function) == short:
            return program.steps
    return None
