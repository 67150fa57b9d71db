"""Issue 32's shapes executed for real: the parse's facts land in the record.

``tests/roots/jax_loops`` holds held-out-style notebooks of a Python loop of small
jitted calls (and its CPU-pinned, batched and one-program variants), value function
iteration that reads the error back every iteration (in the cell, and in a function
called under a ``Timer``), one jitted function called with three array sizes in three
cells beside a function that jits a new lambda on every call, and a local module's
``fori_loop`` timed twice.  They are executed on the CPU once for the module; the
record (and the same moved to a GPU's device fields by ``tests/make_gpu_fixture.py``)
must hold each cell's loops, syncs, jitted functions and work line.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import jsonschema
import make_gpu_fixture
import pytest
from conftest import PROJECT, ROOTS, ProjectBuild, sphinx_build

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.findings import Finding, findings
from sphinx_gpu_admonition.model.program_loops import program_loops
from sphinx_gpu_admonition.model.record import CellRecord, NotebookRecord, StatusReport
from sphinx_gpu_admonition.model.rules import Flag
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS

SCHEMA = json.loads(
    (PROJECT / "sphinx_gpu_admonition" / "schema"
     / "execution-status.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    dest = tmp_path_factory.mktemp("jax-loops")
    shutil.copytree(ROOTS / "jax_loops", dest / "src")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        return sphinx_build(dest / "src", dest / "_build", "html", None, freshenv=True)


@pytest.fixture(scope="module")
def data(build: ProjectBuild) -> dict[str, Any]:
    return json.loads(build.read("execution-status.json"))


@pytest.fixture(scope="module")
def records(data: dict[str, Any]) -> dict[str, NotebookRecord]:
    return StatusReport.from_dict(data).by_docname()


def cells(records: dict[str, NotebookRecord], docname: str) -> list[CellRecord]:
    record = records[docname]
    assert record.status == "ok" and record.capture == "ok", record.error
    return record.cells


def test_every_notebook_ran_and_the_file_is_valid(build: ProjectBuild,
                                                 data: dict[str, Any]) -> None:
    jsonschema.validate(data, SCHEMA)
    assert {nb["docname"] for nb in data["notebooks"]} == {
        "dispatch", "shapes", "vfi", "warm"}
    assert "could not follow" not in build.warnings


def test_the_loop_of_small_jitted_calls_is_recorded_with_its_count_and_line(
        records: dict[str, NotebookRecord]) -> None:
    loop_cell, pinned, batched, program = cells(records, "dispatch")[2:6]
    (loop,) = loop_cell.dispatch_loops
    assert (loop.loop, loop.code, loop.line, loop.calls, loop.iterations) == (
        "for", "for _ in range(calls):", 3, ["step"], 2_000)
    # the block after the loop waits once: no sync in the loop
    assert not loop.pinned_to_cpu and not loop.batched and loop.syncs == []
    assert loop_cell.work is not None and loop_cell.work.code == "for _ in range(calls):"
    assert loop_cell.work.kind == "dispatch_loop"
    # what the probe saw: one compilation of the step, and no loop in its program
    assert loop_cell.compilations.get("jit(step)") == 1
    assert loop_cell.compiled_loops == [] and loop_cell.runs == []
    (jit,) = loop_cell.jit_calls
    assert (jit.function, jit.recreated, jit.defined_cell) == (
        "step", False, cells(records, "dispatch")[1].position)
    (cpu_loop,) = pinned.dispatch_loops
    assert cpu_loop.pinned_to_cpu and cpu_loop.calls == ["step_cpu"]
    assert cpu_loop.iterations == 2_000  # many: only being pinned keeps it from the rules
    (vmapped,) = batched.dispatch_loops
    assert vmapped.batched and vmapped.iterations == 3
    # the one-program version: a fori_loop the parse and the compiled program both see
    assert program.dispatch_loops == []
    (run,) = program.runs
    assert (run.primitive, run.function, run.steps) == ("lax.fori_loop", "simulate", 2_000)
    assert {(loop.function, loop.steps) for loop in program.compiled_loops} == {
        ("jit(simulate)", 2_000)}


def test_the_host_sync_of_every_iteration_is_named_with_its_line(
        records: dict[str, NotebookRecord]) -> None:
    vfi_cells = cells(records, "vfi")
    definition, timed, in_cell, again = vfi_cells[2], vfi_cells[3], vfi_cells[4], vfi_cells[5]
    (loop,) = in_cell.dispatch_loops
    assert (loop.loop, loop.line, loop.calls, loop.operations) == (
        "while", 4, ["T"], ["jnp.max", "jnp.abs"])
    assert [(s.kind, s.line, s.code) for s in loop.syncs] == [
        ("float", 6, "error = float(jnp.max(jnp.abs(v_new - v)))")]
    assert definition.dispatch_loops == []  # defining is not running
    for cell in (timed, again):
        (called,) = cell.dispatch_loops
        assert (called.function, called.defined_cell, called.line) == (
            "vfi", definition.position, 4)
        assert [(s.kind, s.code) for s in called.syncs] == [
            ("condition", "while error > tol and i < max_iter:")]
        assert cell.work is not None and (cell.work.code, cell.work.timed) == (
            "v_star = vfi(v_init)", True)
    assert timed.work.line == 4 and again.work.line == 2

def test_one_function_for_three_sizes_is_made_once_and_the_smoother_anew(
        records: dict[str, NotebookRecord]) -> None:
    shape_cells = cells(records, "shapes")
    definition = shape_cells[1]
    for cell, size in zip(shape_cells[2:5], ("1000", "10_000", "100_000"), strict=True):
        (jit,) = cell.jit_calls
        assert (jit.function, jit.recreated, jit.defined_cell) == ("f", False, definition.position)
        # JAX compiled it again for each new size (the probe's count, the real run's)
        assert cell.compilations.get("jit(f)") == 1
        assert cell.work is not None and cell.work.timed
        assert cell.work.code == f"f(jnp.ones({size})).block_until_ready()"
    for cell in shape_cells[5:7]:
        (jit,) = cell.jit_calls
        assert (jit.function, jit.recreated, jit.created_in) == ("<lambda>", True, "smooth")
        assert cell.compilations.get("jit(<lambda>)") == 1  # a new function each call


def test_a_warm_call_keeps_the_step_count_of_its_first_calls_program(
        records: dict[str, NotebookRecord]) -> None:
    record = records["warm"]
    first, warm = cells(records, "warm")[1:3]
    for cell in (first, warm):
        (run,) = cell.runs
        assert (run.primitive, run.function, run.module, run.steps) == (
            "lax.fori_loop", "orbits.orbit", "orbits", None)  # only the program knows
        assert cell.work is not None and cell.work.kind == "loop_call"
    assert [(loop.function, loop.steps) for loop in first.compiled_loops] == [
        ("jit(orbit)", 4_000)]
    assert warm.compiled_loops == [] and "jit(orbit)" not in warm.compilations
    (carried,) = program_loops(warm, record)
    assert (carried.function, carried.steps, carried.compiled_in, carried.carried) == (
        "jit(orbit)", 4_000, first.position, True)


def test_the_facts_survive_the_move_to_a_gpu(data: dict[str, Any]) -> None:
    moved = make_gpu_fixture.to_gpu(data)
    jsonschema.validate(moved, SCHEMA)
    report = StatusReport.from_dict(moved)
    before = StatusReport.from_dict(data).by_docname()
    for docname, record in report.by_docname().items():
        if record.capture != "ok":
            continue
        assert record.environment.jax.devices[0].kind == make_gpu_fixture.GPU_NAME
        for cell, original in zip(record.cells, before[docname].cells, strict=True):
            assert (cell.dispatch_loops, cell.jit_calls, cell.work) == (
                original.dispatch_loops, original.jit_calls, original.work)


# -- the findings, on the same execution moved to a GPU's device fields ---------------
#: every cell is "slow": the CPU's times are small, the rules under test are the hints
EVERY_CELL = Thresholds(slow_cell_seconds=0.0, slow_cell_min_seconds=0.0)
LOOP_RULES = ("dispatch_loop", "host_sync", "python_loop")


def findings_of(data: dict[str, Any]) -> dict[str, Finding]:
    report = StatusReport.from_dict(data)
    return {f"{row.notebook.docname} {row.name.label}": row
            for row in findings(analyse(report, EVERY_CELL))}


@pytest.fixture(scope="module")
def on_gpu(data: dict[str, Any]) -> dict[str, Finding]:
    return findings_of(make_gpu_fixture.to_gpu(data))


def hint(row: Finding, rule: str) -> Flag:
    return next(flag for flag in row.flags if flag.rule == rule)


def source_line(build: ProjectBuild, docname: str, number: int) -> str:
    return (build.srcdir / f"{docname}.md").read_text(encoding="utf-8").splitlines()[
        number - 1]


def test_the_loop_of_small_calls_gets_its_cause_function_line_and_action(
        on_gpu: dict[str, Finding], build: ProjectBuild) -> None:
    row = on_gpu["dispatch cell 3"]
    reason = WORDS.reason(hint(row, "dispatch_loop"))
    assert reason.startswith("its `for` loop (line 3) calls `step` 2,000 times, about ")
    assert "per call — every call is dispatched from Python" in reason
    assert WORDS.finding_action(row).startswith(
        "move the loop into one compiled program (`lax.fori_loop`, `lax.scan`, or `jax.vmap`")
    assert 'jax.jit(f, device=jax.devices("cpu")[0])' in WORDS.finding_action(row)
    # the code shown is the loop, and the annotations point at its line in the page
    assert row.code == "for _ in range(calls):"
    assert source_line(build, "dispatch", row.source_line) == row.code
    # pinned to the CPU, batched, or one program: no GPU loop of small calls
    for number in (4, 5, 6):
        assert not set(on_gpu[f"dispatch cell {number}"].rules) & set(LOOP_RULES), number


def test_the_host_sync_of_every_iteration_gets_its_line_sync_and_action(
        on_gpu: dict[str, Finding], build: ProjectBuild) -> None:
    in_cell, again = on_gpu["vfi cell 5"], on_gpu["vfi cell 6"]
    assert WORDS.reason(hint(in_cell, "host_sync")).startswith(
        "its `while` loop (line 4), which calls `T`, copies a device value to the host on "
        "every iteration: `error = float(jnp.max(jnp.abs(v_new - v)))` (line 6)")
    assert WORDS.reason(hint(again, "host_sync")).startswith(
        "the `while` loop of `vfi` (defined in cell 3, line 4), which calls `T`, copies a "
        "device value to the host on every iteration: "
        "`while error > tol and i < max_iter:` (line 4)")
    for row in (in_cell, again):
        assert WORDS.finding_action(row).startswith(
            "keep the values on the device: check convergence every k steps")
        assert "lax.while_loop" in WORDS.finding_action(row)
        assert "dispatch_loop" not in row.rules  # one loop, one cause
        assert WORDS.timing(row).endswith("(warm call)")
    # the timed statement, not `with Timer():`, in the page's line
    assert again.code == "v_star = vfi(v_init)"
    assert source_line(build, "vfi", again.source_line).strip() == again.code


def test_a_new_array_size_is_compiled_again_for_its_shape_and_gets_that_action(
        on_gpu: dict[str, Finding], build: ProjectBuild) -> None:
    for number, now, before in ((4, "f32[10000]", "f32[1000]"),
                                (5, "f32[100000]", "f32[10000]")):
        row = on_gpu[f"shapes cell {number}"]
        reason = WORDS.reason(hint(row, "compiled_again"))
        assert reason.startswith(f"compiled again: jit(f) for a new input shape: {now} "
                                 f"(before {before}, in cell {number - 1})")
        action = WORDS.finding_action(row)
        assert action.startswith("pad or bucket the sizes") and "top level" not in action
        assert WORDS.timing(row).endswith("(compiled again)")
        # after %%time: the call it times, at its line
        assert row.code.startswith("f(jnp.ones(") and row.code != "%%time"
        assert source_line(build, "shapes", row.source_line) == row.code
    # the smoother makes its lambda anew on every call: there "jit once" is right
    row = on_gpu["shapes cell 7"]
    assert "made anew by every call of `smooth`" in WORDS.reason(hint(row, "compiled_again"))
    assert WORDS.finding_action(row).startswith(
        "jit the function once at the top level (not inside `smooth`")


def test_a_local_modules_fori_loop_keeps_its_loop_finding_on_both_calls(
        on_gpu: dict[str, Finding]) -> None:
    first, warm = on_gpu["warm cell 2"], on_gpu["warm cell 3"]
    for row in (first, warm):
        reason = WORDS.reason(hint(row, "sequential_loop"))
        assert reason.startswith("runs `orbits.orbit` (defined in orbits.py), a "
                                 "`lax.fori_loop` of 4,000 steps: about ")
        assert "per step on the GPU" in reason
        assert row.code == "x = orbits.orbit(jnp.full(4, 0.1)).block_until_ready()"
    assert (WORDS.timing(first).endswith("(first call)"),
            WORDS.timing(warm).endswith("(warm call)")) == (True, True)


def test_on_the_cpu_the_loops_are_notes_not_gpu_hints(data: dict[str, Any]) -> None:
    rows = findings_of(data)
    assert not any({"dispatch_loop", "host_sync", "sequential_loop"} & set(row.rules)
                   for row in rows.values())
    assert "python_loop" in rows["dispatch cell 3"].rules
    assert "python_loop" in rows["vfi cell 5"].rules
    assert WORDS.reason(hint(rows["vfi cell 5"], "python_loop")).startswith(
        "a Python loop around JAX: its `while` loop (line 4)")
    # the import cells are notes of their own, never "profile the cell"
    for name in ("dispatch cell 1", "vfi cell 1"):
        assert rows[name].rules == ["imports"], name
