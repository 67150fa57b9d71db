"""model/analysis.py: the sequential_loop hint from the loops of compiled programs
(``cells[].compiled_loops``, the probe's reading): library code's loops on a GPU are
named by their compiled function; a program compiled for the CPU, or a user function
the parse of the notebook already followed, is not reported again."""

from __future__ import annotations

from sphinx_gpu_admonition.model.analysis import loop_hint
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    CompiledLoop,
    Environment,
    JaxInfo,
    LoopCall,
    NotebookRecord,
)
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS


def notebook(*cells: CellRecord, backend: str = "gpu") -> NotebookRecord:
    return NotebookRecord(docname="nb", status="ok", cells=list(cells), capture="ok",
                          environment=Environment(jax=JaxInfo(backend=backend)))


def cell(index: int, *loops: CompiledLoop, runs: list[LoopCall] | None = None) -> CellRecord:
    return CellRecord(index=index, execution_count=index + 1, position=index, seconds=2.0,
                      compile_seconds=1.0, compilations={"jit(f)": 1},
                      compiled_loops=list(loops), runs=runs or [])


def test_a_library_loop_on_the_gpu_is_named_by_its_compiled_function() -> None:
    sampler = cell(0, CompiledLoop("jit(sample)", steps=1000, platform="cuda"))
    reason = loop_hint(sampler, notebook(sampler))
    reason = WORDS.reason(reason)
    assert reason.startswith("runs a while loop of 1,000 steps compiled in `jit(sample)` "
                             "(library code): about ")
    assert "per step on the GPU" in reason


def test_a_program_compiled_for_the_cpu_is_not_a_gpu_loop() -> None:
    pinned = cell(0, CompiledLoop("jit(sample)", platform="cpu"))
    assert loop_hint(pinned, notebook(pinned)) is None
    unknown = cell(0, CompiledLoop("jit(sample)"))  # no platform: the notebook's backend
    assert loop_hint(unknown, notebook(unknown)) is not None
    assert loop_hint(unknown, notebook(unknown, backend="cpu")) is None


def test_a_function_the_parse_followed_is_left_to_it() -> None:
    runs = [LoopCall(primitive="lax.scan", function="qm_jax", defined_cell=0)]
    calling = cell(1, CompiledLoop("jit(qm_jax)", steps=20, platform="cuda"), runs=runs)
    # a twin pinned to the CPU compiles it too; the parse knows it runs on the CPU
    twin = cell(2, CompiledLoop("jit(qm_jax)", steps=20, platform="cuda"))
    record = notebook(calling, twin)
    assert loop_hint(twin, record) is None
    reason = loop_hint(calling, record)
    reason = WORDS.reason(reason)
    # the compiled program gives the step count the code did not
    assert reason.startswith("runs `qm_jax` (defined in an earlier cell), a `lax.scan` of "
                             "20 steps")
    assert "library code" not in reason
