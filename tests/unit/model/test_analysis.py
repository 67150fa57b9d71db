"""The flagging rules at their boundaries, in-process on hand-made records.

Every threshold is inclusive: a cell exactly at ``gpu_slow_cell_seconds``, exactly
at the share, exactly at the regression ratio (after the machine factor) is
flagged; a cell just below ``gpu_slow_cell_min_seconds`` gets no share or
regression flag however large its share.  Times are chosen to be exact in binary
floating point (0.5, 1.0, 2.0, 3.0 ...), so the boundaries are really met.
"""

from __future__ import annotations

import pytest

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    CompiledLoop,
    DispatchLoop,
    HostSync,
    NotebookRecord,
    StatusReport,
)
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS

DEFAULTS = Thresholds()


def notebook(*seconds: float, docname: str = "nb", **cell_fields) -> NotebookRecord:
    """An executed notebook whose cells took ``seconds`` (the first gets ``cell_fields``)."""
    cells = [CellRecord(index=i, execution_count=i, seconds=s, **(cell_fields if i == 1 else {}))
             for i, s in enumerate(seconds, 1)]
    return NotebookRecord(docname=docname, status="ok", provenance="executed", capture="ok",
                          cells=cells)


def rules(nb: NotebookRecord, thresholds: Thresholds = DEFAULTS,
          baseline: NotebookRecord | None = None) -> list[str]:
    """The rules that flag ``nb``'s first cell."""
    report = StatusReport([nb], {})
    base = StatusReport([baseline], {}) if baseline is not None else None
    (analysis,) = analyse(report, thresholds, base).notebooks
    return [flag.rule for flag in analysis.cell_flags[0]]


@pytest.mark.parametrize(("seconds", "flagged"), [
    (DEFAULTS.slow_cell_seconds, True),  # exactly at the limit
    (DEFAULTS.slow_cell_seconds - 0.001, False),
])
def test_slow_at_exactly_the_limit(seconds, flagged):
    # alone in its notebook: the share rule needs another cell
    assert ("slow" in rules(notebook(seconds))) is flagged


@pytest.mark.parametrize(("first", "other", "flagged"), [
    (2.0, 2.0, True),  # exactly half (the default share 0.5)
    (2.0, 2.0078125, False),  # just below half
])
def test_share_at_exactly_the_share(first, other, flagged):
    assert first / (first + other) <= DEFAULTS.slow_cell_share
    assert ("share" in rules(notebook(first, other))) is flagged


@pytest.mark.parametrize(("first", "flagged"), [
    (DEFAULTS.slow_cell_min_seconds, True),  # at the minimum: judged
    (DEFAULTS.slow_cell_min_seconds - 0.001, False),  # just below: never flagged
])
def test_min_seconds_bounds_the_share_rule(first, flagged):
    # 99.9 % of the notebook's time, but only a bit under a second
    assert ("share" in rules(notebook(first, 0.001))) is flagged


def test_min_seconds_bounds_the_regression_rule():
    before = notebook(0.25, 0.25)
    below = notebook(DEFAULTS.slow_cell_min_seconds - 0.001, 0.25)  # 4x slower, < 1 s
    assert rules(below, baseline=before) == []


@pytest.mark.parametrize(("now", "flagged"), [
    (3.0, True),  # 3.0 / 2.0 = 1.5: exactly the default regression ratio
    (2.998046875, False),  # just below
])
def test_cell_regression_at_exactly_the_ratio(now, flagged):
    before = notebook(2.0, 20.0)
    flags = rules(notebook(now, 20.0), baseline=before)
    assert ("regression" in flags) is flagged


@pytest.mark.parametrize(("now", "regression"), [(3.0, True), (2.998046875, False)])
def test_notebook_regression_at_exactly_the_ratio(now, regression):
    before = StatusReport([notebook(2.0)], {})
    (analysis,) = analyse(StatusReport([notebook(now)], {}), DEFAULTS, before).notebooks
    assert analysis.comparison is not None
    assert analysis.comparison.regression is regression


def test_the_regression_ratio_is_judged_after_the_machine_factor():
    """Twice as slow on a machine twice as slow (its calibration) is no regression;
    three times as slow is 1.5x beyond it, exactly the ratio."""
    def timed(seconds: float, calibration: float) -> NotebookRecord:
        nb = notebook(seconds, 20.0)
        nb.calibration_seconds = calibration
        return nb

    before = timed(2.0, 0.5)
    assert "regression" not in rules(timed(4.0, 1.0), baseline=before)
    assert "regression" in rules(timed(6.0, 1.0), baseline=before)


@pytest.mark.parametrize(("compile_seconds", "hinted"), [(5.0, True), (4.984375, False)])
def test_compile_hint_at_exactly_the_compile_share(compile_seconds, hinted):
    flags = rules(notebook(10.0, compile_seconds=compile_seconds))
    assert "slow" in flags
    assert ("compile" in flags) is hinted


@pytest.mark.parametrize(("count", "hinted"), [(DEFAULTS.recompile_threshold, True),
                                              (DEFAULTS.recompile_threshold - 1, False)])
def test_recompile_hint_at_exactly_the_threshold(count, hinted):
    flags = rules(notebook(10.0, compilations={"step": count}))
    assert ("recompile" in flags) is hinted


def test_hints_only_on_flagged_cells():
    """A fast cell that compiled a lot is no finding on its own."""
    assert rules(notebook(0.5, 20.0, compile_seconds=0.5, compilations={"f": 9})) == []


def test_recompilation_counted_per_cell_user_functions_first():
    """Compilations count in the cell where they happen; JAX's own operations are
    grouped and alone are no hint (nothing in the user's code to change there)."""
    internal = {"jit(iota)": 9, "jit(convert_element_type)": 5, "jit(_where)": 4}
    nb = notebook(10.0, compilations={"jit(step)": 3, "jit(f)": 4, **internal})
    (analysis,) = analyse(StatusReport([nb], {}), DEFAULTS).notebooks
    (hint,) = [f for f in analysis.cell_flags[0] if f.rule == "recompile"]
    assert WORDS.reason(hint).startswith("recompiled in this cell: jit(f) (4x), jit(step) (3x), "
                                  "+3 JAX-internal")
    assert "static_argnums" in WORDS.text(hint) and WORDS.text(hint).endswith("compiles once")
    assert "recompile" not in rules(notebook(10.0, compilations=internal))
    # once in each of three cells: no cell recompiled it
    spread = notebook(10.0, 1.0, 1.0)
    for cell in spread.cells:
        cell.compilations = {"jit(step)": 1}
    assert "recompile" not in rules(spread)


def test_unflagged_cells_share_one_empty_flags_value():
    """A book's analysis lives for the whole build: an unflagged cell (nearly every
    cell) holds no object of its own there."""
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse_notebook
    from sphinx_gpu_admonition.model.record import NotebookRecord

    record = NotebookRecord.from_dict({
        "docname": "quick", "status": "ok", "capture": "ok",
        "cells": [{"seconds": 0.01, "index": i, "execution_count": i} for i in range(5)]})
    result = analyse_notebook(record, Thresholds())
    assert result.cell_flags == [()] * 5 and result.flagged_cells == []
    assert len({id(flags) for flags in result.cell_flags}) == 1


# -- Python loops around JAX (model/loop_rules.py) -------------------------------------
def gpu(nb: NotebookRecord) -> NotebookRecord:
    nb.environment.jax.backend = "gpu"
    return nb


def loop(**fields) -> DispatchLoop:
    """The dispatch loop of tests/roots/jax_loops/dispatch.md, changed by ``fields``."""
    return DispatchLoop(**{"loop": "for", "code": "for _ in range(calls):", "line": 3,
                           "defined_cell": 0, "calls": ["step"], "iterations": 10_000,
                           **fields})


@pytest.mark.parametrize(("iterations", "hinted"), [
    (100, True),  # exactly MIN_ITERATIONS
    (99, False),
    (3, False),  # a lecture's `for β in (0.95, 0.98, 0.99)`
])
def test_a_dispatch_loop_needs_many_known_iterations(iterations, hinted):
    # 0.05 s over the iterations: at most 1 ms each down to 50 of them
    nb = gpu(notebook(2.0, 2.0, compile_seconds=1.95,
                      dispatch_loops=[loop(iterations=iterations)], position=0))
    assert ("dispatch_loop" in rules(nb)) is hinted


@pytest.mark.parametrize(("run", "hinted"), [
    (10.0, True),  # 10 s over 10,000 iterations: exactly 1 ms each
    (10.5, False),  # the work of each call, not its dispatch
])
def test_a_dispatch_loop_is_of_small_calls(run, hinted):
    nb = gpu(notebook(run, 1.0, dispatch_loops=[loop()], position=0))
    assert ("dispatch_loop" in rules(nb)) is hinted


def test_pinned_or_batched_loops_are_no_cause_and_a_cpu_build_gets_a_note():
    for fields in ({"pinned_to_cpu": True}, {"batched": True}):
        nb = gpu(notebook(2.0, 1.0, dispatch_loops=[loop(**fields)], position=0))
        assert rules(nb) == ["share"]
    nb = notebook(2.0, 1.0, dispatch_loops=[loop()], position=0)  # on a CPU
    (analysis,) = analyse(StatusReport([nb], {}), DEFAULTS).notebooks
    share, note = analysis.cell_flags[0]
    assert (share.rule, note.rule) == ("share", "python_loop")
    assert note.is_note and not note.is_hint
    assert WORDS.reason(note).startswith("a Python loop around JAX: its `for` loop (line 3)")
    assert WORDS.action(analysis.cell_flags[0]).startswith("before the book moves to a GPU")


def test_a_while_loop_is_a_cause_where_running_dominates_and_nothing_recompiles():
    sync = HostSync(kind="float", code="error = float(jnp.max(v))", line=6)
    vfi = loop(loop="while", code="while error > tol:", iterations=None, syncs=[sync])

    def hinted(compile_seconds: float, **fields) -> list[str]:
        nb = gpu(notebook(2.0, 1.0, compile_seconds=compile_seconds,
                          dispatch_loops=[vfi], position=0, **fields))
        return [rule for rule in rules(nb) if rule in ("host_sync", "dispatch_loop")]

    assert hinted(1.0) == ["host_sync"]  # running exactly half the cell
    assert hinted(1.0078125) == []  # compiling dominates
    assert hinted(0.0, compilations={"jit(step)": 2}) == []  # compiled every iteration
    # the function it calls runs a lax loop of its own: the sequential-loop rule's
    assert hinted(0.0, compiled_loops=[CompiledLoop(function="jit(step)", steps=50)]) == []
    # `for x in xs` of an unknown xs is no cause (three items or a million)
    nb = gpu(notebook(2.0, 1.0, dispatch_loops=[loop(iterations=None)], position=0))
    assert "dispatch_loop" not in rules(nb)


def test_a_sync_under_an_if_is_what_the_action_asks_for():
    guarded = HostSync(kind="print", code="print(error)", line=5, guarded=True)
    nb = gpu(notebook(2.0, 1.0, dispatch_loops=[loop(syncs=[guarded])], position=0))
    (analysis,) = analyse(StatusReport([nb], {}), DEFAULTS).notebooks
    (flag,) = [f for f in analysis.cell_flags[0] if f.rule in ("dispatch_loop", "host_sync")]
    assert flag.rule == "dispatch_loop" and flag.facts["loops"][0]["guarded"] == 1
    assert WORDS.reason(flag).startswith(
        "its `for` loop (line 3) calls `step` 10,000 times, about 200 µs per call")
    assert WORDS.action(analysis.cell_flags[0]).startswith(
        "move the loop into one compiled program (`lax.fori_loop`")


def test_a_library_program_with_two_loops_gives_the_longest_ones_steps():
    """A 1,000,000-step fori_loop beside jax.random's 5-step loop, in a library's
    program: the count of the loop that dominates; no time per step (a count read
    from a program can be a bound)."""
    loops = [CompiledLoop(function="jit(sample)", steps=5, platform="gpu"),
             CompiledLoop(function="jit(sample)", steps=1_000_000, platform="gpu")]
    nb = gpu(notebook(12.0, 1.0, compiled_loops=loops, compilations={"jit(sample)": 1}))
    (analysis,) = analyse(StatusReport([nb], {}), DEFAULTS).notebooks
    (hint,) = [f for f in analysis.cell_flags[0] if f.rule == "sequential_loop"]
    assert WORDS.reason(hint).startswith(
        "runs 2 while loops compiled in `jit(sample)` (library code), the longest of "
        "1,000,000 steps — on the GPU")


@pytest.mark.parametrize(("source", "shell_only"), [
    ("!pip install quantecon", True),
    ("# install\n!pip install -q jax\n%load_ext autoreload", True),
    ("%%capture\n!pip install quantecon", True),
    ("%%bash\npip install quantecon\nnvidia-smi", True),
    ("%%time\nx = sum(range(10**7))", False),  # the lecture's own work, timed
    ("import jax\n!nvidia-smi", False),
    ("", False),
])
def test_no_badge_on_cells_that_only_run_shell_commands_or_magics(source, shell_only) -> None:
    from sphinx_gpu_admonition.model.analysis import is_shell_or_magic

    assert is_shell_or_magic(source) is shell_only
