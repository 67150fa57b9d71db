"""model/program_loops.py: the loops of the programs a cell runs, from the cell that
compiled them, so that a warm call (nothing compiled) keeps the step count of its
first call's program; a program with several loops is described by the one with the
most steps (a 1,000,000-step ``fori_loop`` beside ``jax.random``'s 5-step loop)."""

from __future__ import annotations

import pytest

from sphinx_gpu_admonition.model.program_loops import (
    carried_steps,
    dominant_loop,
    program_loops,
    run_functions,
    time_per_step,
)
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    CompiledLoop,
    JitCall,
    LoopCall,
    NotebookRecord,
)

SCAN = LoopCall(primitive="lax.scan", function="qm_jax", defined_cell=1)
RANDOM = CompiledLoop("jit(simulate)", steps=5, platform="cuda")
MILLION = CompiledLoop("jit(simulate)", steps=1_000_000, platform="cuda")


def cell(index: int, *loops: CompiledLoop, runs: list[LoopCall] | None = None,
         compiled: dict[str, int] | None = None,
         jit_calls: list[JitCall] | None = None) -> CellRecord:
    return CellRecord(index=index, position=index, execution_count=index, seconds=2.0,
                      compilations=compiled if compiled is not None else
                      {loop.function: 1 for loop in loops},
                      compiled_loops=list(loops), runs=runs or [], jit_calls=jit_calls or [])


def notebook(*cells: CellRecord) -> NotebookRecord:
    return NotebookRecord(docname="nb", status="ok", cells=list(cells))


def test_a_warm_call_keeps_the_step_count_of_its_first_calls_program() -> None:
    """numpy_vs_numba_vs_jax: ``lax.scan(update, x0, jnp.arange(n))`` timed twice; the
    warm call compiles nothing, the first call's program has the 10,000,000 steps."""
    first = cell(3, CompiledLoop("jit(qm_jax)", steps=10_000_000, platform="cuda"),
                 runs=[SCAN])
    warm = cell(4, runs=[SCAN], compiled={})
    record = notebook(cell(1, compiled={}), first, warm)
    (own,) = program_loops(first, record)
    assert (own.function, own.steps, own.compiled_in, own.carried) == (
        "jit(qm_jax)", 10_000_000, 3, False)
    (carried,) = program_loops(warm, record)
    assert (carried.function, carried.steps, carried.compiled_in, carried.carried) == (
        "jit(qm_jax)", 10_000_000, 3, True)
    assert carried_steps("qm_jax", warm, record) == 10_000_000
    assert time_per_step(2.0, carried.steps) == pytest.approx(2e-7)


def test_a_local_modules_loop_is_matched_by_its_functions_name() -> None:
    sample = LoopCall(primitive="lax.while_loop", function="mylib.sample", module="mylib")
    first = cell(6, CompiledLoop("jit(sample)", steps=200, platform="cuda"), runs=[sample])
    again = cell(8, runs=[sample], compiled={})
    record = notebook(first, again)
    assert run_functions(again) == ["sample"]
    assert carried_steps("mylib.sample", again, record) == 200
    # jitted calls the parse found count too (a library program with no parse loop)
    library = cell(9, compiled={}, jit_calls=[JitCall(function="sample", called="s")])
    assert [p.steps for p in program_loops(library, notebook(first, library))] == [200]


def test_several_loops_in_one_program_give_the_dominant_one_and_each_most_first() -> None:
    simulated = cell(2, RANDOM, MILLION)
    (program,) = program_loops(simulated, notebook(simulated))
    assert program.dominant == MILLION and program.steps == 1_000_000
    assert [loop.steps for loop in program.loops] == [1_000_000, 5]
    assert dominant_loop([CompiledLoop("jit(f)"), RANDOM]) == RANDOM
    assert dominant_loop([CompiledLoop("jit(f)")]) is None
    assert dominant_loop([]) is None


def test_no_count_is_carried_where_the_earlier_programs_disagree_or_none_ran() -> None:
    """``qm_jax(0.1, n)`` with a static ``n``: compiled for 100 and for 1,000 steps; a
    later warm call reuses one of them, which one the record does not say."""
    runs = [SCAN]
    small = cell(1, CompiledLoop("jit(qm_jax)", steps=100), runs=runs)
    large = cell(2, CompiledLoop("jit(qm_jax)", steps=1_000), runs=runs)
    warm = cell(3, runs=runs, compiled={})
    assert program_loops(warm, notebook(small, large, warm)) == []
    assert carried_steps("qm_jax", warm, notebook(small, large, warm)) is None
    # compiled the same way twice: the counts agree, the first compilation is named
    same = cell(2, CompiledLoop("jit(qm_jax)", steps=100), runs=runs)
    (program,) = program_loops(warm, notebook(small, same, warm))
    assert (program.steps, program.compiled_in) == (100, 1)
    # nothing compiled before, or a later cell's compilation: nothing known
    assert program_loops(warm, notebook(warm, small)) == []
    # compiled in this cell without a loop: its program has none (no earlier one used)
    loopless = cell(4, runs=runs, compiled={"jit(qm_jax)": 1})
    assert program_loops(loopless, notebook(small, loopless)) == []
    assert time_per_step(None, 10) is None and time_per_step(1.0, None) is None
