"""model/compiled_again.py: why a user function was compiled again in a later cell (a
new input shape or dtype from the compiled programs' inputs, a function made anew, the
same inputs), and the action each cause gets; the cells of tests/roots/jax_loops/shapes.md
as their records hold them."""

from __future__ import annotations

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.compilations import changed_inputs
from sphinx_gpu_admonition.model.compiled_again import again_functions, compiled_before
from sphinx_gpu_admonition.model.findings import findings
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    CompiledInputs,
    Environment,
    JaxInfo,
    JitCall,
    NotebookRecord,
    StatusReport,
)
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS

EVERY_CELL = Thresholds(slow_cell_seconds=0.0, slow_cell_min_seconds=0.0)


def call(position: int, name: str = "jit(f)", inputs: tuple[str, ...] = ("f32[1000]",),
         jits: tuple[JitCall, ...] = ()) -> CellRecord:
    return CellRecord(index=position, execution_count=position + 1, seconds=0.5,
                      compile_seconds=0.4, position=position, compilations={name: 1},
                      compiled_inputs=[CompiledInputs(function=name, inputs=list(inputs),
                                                      arguments=len(inputs))] if inputs else [],
                      jit_calls=list(jits))


def notebook(*cells: CellRecord, explained: bool = False) -> NotebookRecord:
    return NotebookRecord(docname="shapes", status="ok", capture="ok", cells=list(cells),
                          user_functions=["f", "smooth"], environment=Environment(
                              jax=JaxInfo(backend="gpu", recompilations_explained=explained)))


def the_flag(record: NotebookRecord, number: int):
    rows = {row.name.number: row for row in findings(analyse(StatusReport([record]),
                                                             EVERY_CELL))}
    row = rows[number]
    return row, next(flag for flag in row.flags if flag.rule == "compiled_again")


def test_what_changed_in_the_inputs() -> None:
    assert changed_inputs(["f32[10000]"], ["f32[1000]"]) == ("shape", ["f32[10000]"],
                                                             ["f32[1000]"])
    assert changed_inputs(["f32[3]", "i32[]"], ["f32[3]", "f32[]"]) == ("dtype", ["i32[]"],
                                                                      ["f32[]"])
    assert changed_inputs(["f32[3]"], ["f32[3]", "f32[3]"])[0] == "inputs"
    assert changed_inputs(["f32[3]"], ["f32[3]"]) is None


def test_a_new_input_shape_is_said_with_the_sizes_and_its_own_action() -> None:
    record = notebook(call(2), call(3, inputs=("f32[10000]",)))
    row, flag = the_flag(record, 4)
    assert WORDS.reason(flag).startswith(
        "compiled again: jit(f) for a new input shape: f32[10000] (before f32[1000], in "
        "cell 3), 0.40 s of compilation")
    action = WORDS.finding_action(row)
    assert action.startswith("pad or bucket the sizes") and "static_argnums" in action
    # the cause is known: no advice to record JAX's reason, no "jit once at the top level"
    assert "gpu_explain_recompilations" not in action and "top level" not in action
    assert WORDS.timing(row) == "compile 0.40 s, run 0.10 s (compiled again)"


def test_a_new_dtype_gets_the_dtype_action() -> None:
    row, _ = the_flag(notebook(call(0, inputs=("f32[]",)), call(1, inputs=("i32[]",))), 2)
    assert WORDS.finding_action(row).startswith("pass its inputs with one dtype")


def test_a_function_made_anew_names_the_function_that_makes_it() -> None:
    lam = JitCall(function="<lambda>", called="smooth", defined_cell=5, line=2,
                  recreated=True, created_in="smooth")
    record = notebook(call(5, "jit(<lambda>)", jits=(lam,)),
                      call(6, "jit(<lambda>)", jits=(lam,)))
    row, flag = the_flag(record, 7)
    assert "jit(<lambda>) (first in cell 6), made anew by every call of `smooth`" \
        in WORDS.reason(flag)
    assert WORDS.finding_action(row).startswith(
        "jit the function once at the top level (not inside `smooth` around a new lambda)")
    # two lambdas of other jits are two functions, not one compiled twice
    other = JitCall(function="<lambda>", defined_cell=6, line=1, recreated=True)
    apart = notebook(call(5, "jit(<lambda>)", jits=(lam,)),
                     call(6, "jit(<lambda>)", jits=(other,)))
    assert again_functions(apart.cells[1], apart) == []


def test_the_same_inputs_or_no_inputs_known() -> None:
    row, flag = the_flag(notebook(call(0), call(1)), 2)
    assert "with the same input types" in WORDS.reason(flag)
    assert WORDS.finding_action(row).startswith("call it with the same static arguments")
    # a record without the programs' inputs (an earlier release's): the general action,
    # and how to learn JAX's reason
    row, flag = the_flag(notebook(call(0, inputs=()), call(1, inputs=())), 2)
    assert WORDS.reason(flag).startswith("compiled again: jit(f) (first in cell 1)")
    action = WORDS.finding_action(row)
    assert "jit it once" in action and "gpu_explain_recompilations" in action


def test_only_a_cell_whose_every_function_was_compiled_before_is_compiled_again() -> None:
    first, again = call(0), call(1, inputs=("f32[10]",))
    both = CellRecord(index=2, execution_count=3, seconds=1.0, position=2,
                      compilations={"jit(f)": 1, "jit(smooth)": 1})
    record = notebook(first, again, both)
    assert not compiled_before(first, record) and compiled_before(again, record)
    assert not compiled_before(both, record)  # smooth's first call
