"""The rules about Python loops around JAX: many small dispatches, and a host sync on
every iteration (the parse's :class:`~.record.DispatchLoop` records, with the cell's
times and compilations).

A Python ``for`` loop calling a small jitted step 200,000 times spends its time
dispatching: on a GPU every call also launches device kernels (``dispatch_loop``).
A loop that reads a device value back each iteration (``error = float(...)``, a
``while error > tol`` on a device array) waits for the device and copies to the host
every time, so JAX's asynchronous dispatch never runs ahead (``host_sync``).  Both
are hints of a slow cell on a GPU; on a CPU build they are a note
(``python_loop``): what the loop will cost once the book moves to a GPU.

A loop is only a cause when it is hot: its iterations are known and many
(:data:`MIN_ITERATIONS` or more) and small (the cell's run time over them at most
:data:`SMALL_ITERATION_SECONDS`), or, for a ``while`` loop whose count no code
gives, the cell's time is its run time (not compilation) and the functions the loop
calls run no loop primitive of their own and compiled once.  A loop of two or three
iterations (``for β in (0.95, 0.98)``), a loop pinned to the CPU or one whose every
call is a ``jax.vmap`` (one batched program per call) is none.  A sync under an
``if`` in the loop (``if i % 10 == 0: print(error)``) is what the action asks for,
not a cause.
"""

from __future__ import annotations

from typing import Any

from .compilations import compiled_function
from .device import is_gpu
from .program_loops import program_loops
from .record import CellRecord, DispatchLoop, NotebookRecord
from .rules import Flag, Rule

#: the fewest iterations a loop of known count needs to be a cause
MIN_ITERATIONS = 100
#: the most a loop's iteration may take (the cell's run time over its iterations) to
#: be a small dispatch: beyond it the work of each call, not its dispatch, dominates
SMALL_ITERATION_SECONDS = 1e-3
#: the most loops, calls and syncs a flag lists
MAX_LISTED = 3


def loop_flags(cell: CellRecord, notebook: NotebookRecord, run_seconds: float
               ) -> list[Flag]:
    """The ``host_sync`` and ``dispatch_loop`` hints of ``cell`` on a GPU (a loop that
    syncs gets the first only: moving it into ``lax.while_loop`` answers both), or one
    ``python_loop`` note on a CPU build; ``run_seconds``: the cell's time less its
    compilation."""
    hot = [loop for loop in cell.dispatch_loops
           if not loop.pinned_to_cpu and not loop.batched and (loop.calls or loop.operations)
           and is_hot(loop, cell, notebook, run_seconds)]
    if not hot:
        return []
    # the cell's run time is one loop's only where it has one
    per_iteration = run_seconds if len(hot) == 1 else None
    syncing = [loop for loop in hot if any(not sync.guarded for sync in loop.syncs)]
    dispatching = [loop for loop in hot if loop not in syncing]
    sync_facts = [loop_facts(loop, notebook, per_iteration) for loop in syncing[:MAX_LISTED]]
    dispatch_facts = [loop_facts(loop, notebook, per_iteration)
                      for loop in dispatching[:MAX_LISTED]]
    if not is_gpu(notebook.environment.backend):
        return [Flag(Rule.PYTHON_LOOP, {"sync": sync_facts, "dispatch": dispatch_facts})]
    flags = []
    if sync_facts:
        flags.append(Flag(Rule.HOST_SYNC, {"loops": sync_facts}))
    if dispatch_facts:
        flags.append(Flag(Rule.DISPATCH_LOOP, {"loops": dispatch_facts}))
    return flags


def is_hot(loop: DispatchLoop, cell: CellRecord, notebook: NotebookRecord,
           run_seconds: float) -> bool:
    """Whether ``loop`` can be where the cell's time goes (the module's rule)."""
    if run_seconds <= 0:
        return False
    if loop.iterations is not None:
        return (loop.iterations >= MIN_ITERATIONS
                and run_seconds / loop.iterations <= SMALL_ITERATION_SECONDS)
    if loop.loop != "while":
        return False  # ``for x in xs`` of an unknown xs: three items or a million
    if run_seconds < cell.compile_seconds or cell.runs:
        return False  # compiling dominates, or the cell runs a JAX loop of its own
    called = [name.rpartition(".")[2] for name in loop.calls]
    if any(count > 1 for name, count in cell.compilations.items()
           if compiled_function(name) in called):
        return False  # compiled on every iteration: the recompile rules' cause
    return not any(program.loops for program in program_loops(cell, notebook, called))


def loop_facts(loop: DispatchLoop, notebook: NotebookRecord,
               run_seconds: float | None) -> dict[str, Any]:
    """A hot loop as plain data (the words: :mod:`..render.finding_text`):

    ``loop`` (``for`` / ``while``), ``code`` (its line's text), ``line`` (its line in
    the cell or module holding it), ``function`` (the user function the cell calls to
    run it; None: the cell's own loop), ``loop_function`` (the function holding it,
    when another), ``defined_cell`` (the number of the cell holding it), ``module``,
    ``calls`` and ``operations`` (what each iteration dispatches, at most
    :data:`MAX_LISTED`), ``iterations`` (None: unknown), ``iteration_seconds`` (the
    run time over the iterations, where both are known), ``syncs`` (the host syncs of
    every iteration: ``kind``, ``code``, ``line``) and ``guarded`` (how many more
    syncs run only under an ``if``)."""
    defining = (None if loop.defined_cell is None or loop.module is not None else
                next((notebook.cell_name(other).number for other in notebook.cells
                      if other.position == loop.defined_cell), None))
    return {
        "loop": loop.loop, "code": loop.code, "line": loop.line,
        "function": loop.function, "loop_function": loop.loop_function,
        "defined_cell": defining, "module": loop.module,
        "calls": loop.calls[:MAX_LISTED], "operations": loop.operations[:MAX_LISTED],
        "iterations": loop.iterations,
        "iteration_seconds": (run_seconds / loop.iterations
                              if run_seconds and loop.iterations else None),
        "syncs": [{"kind": sync.kind, "code": sync.code, "line": sync.line}
                  for sync in loop.syncs if not sync.guarded][:MAX_LISTED],
        "guarded": sum(sync.guarded for sync in loop.syncs),
    }
