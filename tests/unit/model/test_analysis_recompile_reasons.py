"""Why JAX compiled a function again (``gpu_explain_recompilations``): the probe's reading
of JAX's explanations (probe/jax_inspect.py, on texts JAX 0.10.2 really logged in an
IPython shell) and the recompile / compiled_again findings that show them."""

from __future__ import annotations

from sphinx_gpu_admonition.model.analysis import (
    Thresholds,
    compiled_again_hint,
    recompile_hint,
)
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    Environment,
    JaxInfo,
    NotebookRecord,
    RecompileReason,
)
from sphinx_gpu_admonition.probe import jax_inspect
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS

REDEFINED = """\
TRACING CACHE MISS at <ipython-input-1-a7e8ff18d065>:7:13 (newton):
  never seen function:
    q id=139704827184448 defined at <ipython-input-1-a7e8ff18d065>:3
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?"""
FIRST_TRACE = """\
TRACING CACHE MISS at <ipython-input-1-a7e8ff18d065>:7:13 (newton):
  never seen function:
    q id=139704827184608 defined at <ipython-input-1-a7e8ff18d065>:3"""
NEW_SHAPE = """\
TRACING CACHE MISS at <ipython-input-4-ab9bde809161>:4:16 (<module>):
  for f defined at <ipython-input-4-ab9bde809161>:1
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[4] and before f32[3]"""
LAMBDA = """\
TRACING CACHE MISS at <ipython-input-3-5e79c6286ed5>:2:4 (<module>):
  never seen function:
    <lambda> id=139704827185088 defined at <ipython-input-3-5e79c6286ed5>:2
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?"""
SAME_LINE = ("seen another function defined on the same line; maybe the function is being "
             "re-defined repeatedly, preventing caching?")


def test_the_reason_is_the_line_of_jaxs_explanation_that_says_why() -> None:
    assert jax_inspect.recompile_reason(REDEFINED) == ("q", SAME_LINE)
    assert jax_inspect.recompile_reason(LAMBDA) == ("<lambda>", SAME_LINE)
    assert jax_inspect.recompile_reason(NEW_SHAPE) == (
        "f", "different input types: at x, now f32[4] and before f32[3]")


def test_a_first_trace_or_another_text_gives_no_reason() -> None:
    assert jax_inspect.recompile_reason(FIRST_TRACE) is None  # compiled once: no "why"
    assert jax_inspect.recompile_reason("PERSISTENT COMPILATION CACHE MISS for 'f'") is None
    assert jax_inspect.recompile_reason("") is None


def test_reasons_are_one_per_function_bounded_in_count_and_length() -> None:
    reasons: list[dict] = []
    for _ in range(3):
        jax_inspect.note_reason(reasons, REDEFINED)
    assert reasons == [{"function": "q", "reason": SAME_LINE}]
    long = NEW_SHAPE.replace("at x, now", "at " + "x" * 300 + ", now")
    for number in range(20):
        jax_inspect.note_reason(reasons, long.replace("for f ", f"for f{number} "))
    assert len(reasons) == jax_inspect.MAX_REASONS
    assert all(len(r["reason"]) <= jax_inspect.REASON_LENGTH for r in reasons)
    assert reasons[1]["reason"].endswith("…")


def notebook(*cells: CellRecord, explained: bool | None) -> NotebookRecord:
    return NotebookRecord(docname="nb", status="ok", cells=list(cells), capture="ok",
                          user_functions=["newton", "q"], environment=Environment(
                              jax=JaxInfo(backend="cpu", recompilations_explained=explained)))


def cell(index: int, compilations: dict[str, int], *reasons: RecompileReason) -> CellRecord:
    return CellRecord(index=index, execution_count=index + 1, seconds=2.0, compile_seconds=1.5,
                      compilations=compilations, recompile_reasons=list(reasons))


def test_a_function_compiled_again_says_what_jax_said() -> None:
    first = cell(0, {"jit(q)": 1})
    again = cell(1, {"jit(q)": 1}, RecompileReason("q", SAME_LINE))
    record = notebook(first, again, explained=True)
    flag = compiled_again_hint(again, record, Thresholds())
    assert flag is not None
    assert WORDS.reason(flag).endswith(f"of compilation — JAX says for jit(q): {SAME_LINE}")
    assert WORDS.action([flag]) == WORDS.rule_action(flag)  # asked already: no advice


def test_recompiled_in_a_loop_says_what_jax_said_instead_of_a_guess() -> None:
    loop = cell(0, {"jit(<lambda>)": 3}, RecompileReason("<lambda>", SAME_LINE))
    flag = recompile_hint(loop, notebook(loop, explained=True), 3)
    assert flag is not None
    assert WORDS.reason(flag) == f"recompiled in this cell: jit(<lambda>) (3x) — JAX says for " \
                          f"jit(<lambda>): {SAME_LINE}"


def test_without_the_option_the_action_says_how_to_learn_why() -> None:
    first, again = cell(0, {"jit(q)": 1}), cell(1, {"jit(q)": 1})
    for explained in (False, None):  # off, or a record from before the option
        record = notebook(first, again, explained=explained)
        flag = compiled_again_hint(again, record, Thresholds())
        assert flag is not None and "JAX says" not in WORDS.reason(flag)
        assert WORDS.action([flag]).endswith(WORDS.explain_advice())
        assert "gpu_explain_recompilations" in WORDS.explain_advice()
    loop = cell(0, {"jit(<lambda>)": 3})
    flag = recompile_hint(loop, notebook(loop, explained=False), 3)
    assert flag is not None and "new shapes, dtypes or static arguments" in WORDS.reason(flag)
    assert WORDS.action([flag]).endswith(WORDS.explain_advice())
