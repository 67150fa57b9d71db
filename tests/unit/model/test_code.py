"""model/code.py read_code: one parse of the notebook gives every cell's code facts,
and ``NotebookCode.fill`` puts them on the record (cells not matched to the page get
none); the loop facts that a warm call needs come from the code where it gives them
(a ``lax.scan`` over ``jnp.arange(n)``: ``n`` steps)."""

from __future__ import annotations

from sphinx_gpu_admonition.model.code import link_loops, read_code
from sphinx_gpu_admonition.model.record import CellRecord, NotebookRecord

CELLS = [
    (0, "import jax\nimport jax.numpy as jnp\nfrom jax import lax\nfrom functools import partial"),
    (1, "@partial(jax.jit, static_argnums=(1,))\ndef qm_jax(x0, n):\n"
        "    def update(x, t):\n        return x, x\n"
        "    _, x = lax.scan(update, x0, jnp.arange(n))\n    return x"),
    (2, "n = 10_000_000"),
    (3, "with qe.Timer(precision=8):\n    x_jax = qm_jax(0.1,\n"
        "                   n).block_until_ready()"),
    (5, "@jax.jit\ndef step(x):\n    return x + 1\n\nfor _ in range(10):\n    y = step(1.0)"),
]


def test_a_scan_over_an_arange_of_the_length_argument_has_its_steps() -> None:
    """numpy_vs_numba_vs_jax's ``qm_jax``: the steps are the ``n`` of the call."""
    (run,) = link_loops(CELLS)[3]
    assert (run.function, run.primitive, run.steps) == ("qm_jax", "lax.scan", 10_000_000)
    assert run.call == "x_jax = qm_jax(0.1, n).block_until_ready()"  # its lines joined
    code = read_code(CELLS).cells[3]
    assert code.work is not None and code.work.code == run.call
    assert code.jit_calls[0].function == "qm_jax"


def test_lambdas_bound_to_names_are_followed_to_their_loops() -> None:
    runs = link_loops([(0, "import jax"),
                       (1, "walk = lambda x, k: jax.lax.fori_loop(0, k, body, x)"),
                       (2, "walk(0.0, 500)")])
    (run,) = runs[2]
    assert (run.function, run.primitive, run.steps) == ("walk", "lax.fori_loop", 500)


def test_fill_puts_every_cells_facts_on_the_record() -> None:
    code = read_code(CELLS)
    cells = [CellRecord(index=index, position=index, execution_count=number, seconds=1.0)
             for number, (index, _) in enumerate(CELLS, 1)]
    stale = CellRecord(index=None, execution_count=9, seconds=1.0, device_twins=["old"])
    record = NotebookRecord(docname="nb", status="ok", cells=[*cells, stale])
    code.fill(record)
    by_index = {cell.index: cell for cell in record.cells}
    assert record.user_functions == ["qm_jax", "step", "update"]
    assert by_index[3].runs and by_index[3].work is not None and by_index[3].jit_calls
    (loop,) = by_index[5].dispatch_loops
    assert (loop.calls, loop.iterations, loop.line) == (["step"], 10, 5)
    assert by_index[5].work is not None and by_index[5].work.kind == "dispatch_loop"
    assert by_index[2].work is None and by_index[2].runs == []
    # the cell not on the page: nothing, not an earlier build's
    assert (stale.runs, stale.dispatch_loops, stale.jit_calls, stale.work,
            stale.device_twins) == ([], [], [], None, [])
    # the record with its facts is valid data and round-trips
    assert NotebookRecord.from_dict(record.to_dict()) == record


def test_code_too_deep_to_follow_leaves_its_cell_without_facts() -> None:
    deep = "for i in range(3):\n    y = step(" + " + ".join(["x"] * 20_000) + ")"
    code = read_code([*CELLS, (6, deep), (7, "n = " + "+".join(["1"] * 20_000)),
                      (8, "for _ in range(4):\n    step(1.0)")])
    assert 6 not in code.cells and 7 not in code.cells
    assert code.cells[8].dispatch_loops[0].calls == ["step"]  # the cells after still read
