"""Issue 22: the GPU incidents diagnosed where the time goes.

The notebooks of ``tests/roots/diagnosis`` reproduce the incidents' structure (a
``lax.scan`` defined in one cell and timed in the next two, a library module's
``while_loop``, a CPU-pinned twin, BFGS from ``jax.scipy.optimize`` (a ``while_loop``
inside an installed library), a loop over sizes that recompiles, a function
jitted inside another and so compiled again, a kernel killed by SIGSEGV).  They are
executed for real on the CPU once per module; ``tests/make_gpu_fixture.py`` then
changes only the device fields to a Tesla T4's, as the GPU views need.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import make_gpu_fixture
import pytest
from conftest import PROJECT, ROOTS, ProjectBuild, sphinx_build

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.findings import Finding, findings
from sphinx_gpu_admonition.model.record import StatusReport
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS

SCHEMA = json.loads(
    (PROJECT / "sphinx_gpu_admonition" / "schema"
     / "execution-status.schema.json").read_text(encoding="utf-8"))
#: every cell is "slow": the CPU times are small, the rules under test are the hints
EVERY_CELL = Thresholds(slow_cell_seconds=0.0, slow_cell_min_seconds=0.0)


# -- real executions, moved to a GPU ------------------------------------------------------
@pytest.fixture(scope="module")
def cpu_build(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    dest = tmp_path_factory.mktemp("diagnosis")
    shutil.copytree(ROOTS / "diagnosis", dest / "src")
    # the killed kernel stops the build (MyST-NB raises DeadKernelError), as on CI; its
    # page sorts last, so that the lecture was read before
    with pytest.MonkeyPatch.context() as patch:
        # the kernels inherit the build's environment: several notebooks sharing one GPU
        # (QuantEcon's runner) need preallocation off for the whole build
        patch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        build = sphinx_build(dest / "src", dest / "_build", "html", None, freshenv=True,
                             show_warning_types=False, raising=False)
    assert type(build.raised).__name__ == "DeadKernelError"
    return build


@pytest.fixture(scope="module")
def gpu_data(cpu_build: ProjectBuild) -> dict[str, Any]:
    return make_gpu_fixture.to_gpu(json.loads(cpu_build.read("execution-status.json")))


@pytest.fixture(scope="module")
def gpu_findings(gpu_data: dict[str, Any]) -> dict[str, Finding]:
    report = StatusReport.from_dict(gpu_data)
    return {f"{row.notebook.docname} {row.name.label}": row
            for row in findings(analyse(report, EVERY_CELL))}


def loop_reason(row: Finding) -> str | None:
    return next((WORDS.reason(flag) for flag in row.flags if flag.rule == "sequential_loop"), None)


def test_the_moved_file_is_valid_and_says_its_device_is_synthetic(
        gpu_data: dict[str, Any]) -> None:
    jsonschema.validate(gpu_data, SCHEMA)
    assert gpu_data["build"]["synthetic_device"] is True
    assert "tests/make_gpu_fixture.py" in gpu_data["build"]["note"]
    lecture = next(nb for nb in gpu_data["notebooks"] if nb["docname"] == "lecture")
    assert lecture["environment"]["jax"]["devices"][0]["kind"] == "Tesla T4"


def test_the_kernels_allocator_settings_are_recorded(cpu_build: ProjectBuild) -> None:
    data = json.loads(cpu_build.read("execution-status.json"))
    lecture = next(nb for nb in data["notebooks"] if nb["docname"] == "lecture")
    assert lecture["environment"]["allocator"] == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    # no persistent compilation cache in these kernels: said as a boolean, never a path
    assert lecture["environment"]["jax"]["compilation_cache"] is False


def test_on_the_cpu_no_cell_is_a_gpu_loop(cpu_build: ProjectBuild) -> None:
    report = StatusReport.from_dict(json.loads(cpu_build.read("execution-status.json")))
    assert not any(loop_reason(row) for row in findings(analyse(report, EVERY_CELL)))
    # nor is device memory read there (a CPU has no memory_stats worth a call per cell)
    assert all(cell.device_memory_mb is None for nb in report.notebooks for cell in nb.cells)


def test_the_two_timed_call_cells_name_the_function_and_its_defining_cell(
        gpu_findings: dict[str, Finding]) -> None:
    loops = {name: loop_reason(row) for name, row in gpu_findings.items() if loop_reason(row)}
    # not the CPU-pinned twin (cell 5), nor the loop-free matrix product (cell 6)
    assert set(loops) == {"lecture cell 3", "lecture cell 4", "lecture cell 7",
                          "lecture cell 11"}
    for name in ("lecture cell 3", "lecture cell 4"):
        assert "runs `qm_jax` (defined in cell 2), a `lax.scan` of 20,000 steps" in loops[name]
        assert "per step on the GPU" in loops[name]
        assert gpu_findings[name].code == "x = qm_jax(0.1, n).block_until_ready()"
        assert WORDS.finding_action(gpu_findings[name]).startswith(
            "run the loop on the CPU: jit its function for the CPU")
    # the while_loop's trip count is not in the code: the compiled program has it
    assert "`mylib.sample` (defined in mylib.py), a `lax.while_loop` of 200 steps" \
        in loops["lecture cell 7"]


def test_a_loop_inside_an_installed_library_is_found_from_what_was_compiled(
        cpu_build: ProjectBuild, gpu_findings: dict[str, Finding]) -> None:
    data = json.loads(cpu_build.read("execution-status.json"))
    lecture = next(nb for nb in data["notebooks"] if nb["docname"] == "lecture")
    cells = lecture["cells"]
    # what the probe read from the programs JAX compiled: the scan's 20,000 steps, the
    # library's while loop (no static trip count), no loop in the matrix product
    assert {"function": "jit(qm_jax)", "loop": "while", "steps": 20_000,
            "platform": "cpu"} in cells[2]["compiled_loops"]
    assert cells[5]["compiled_loops"] == []
    library = cells[10]["compiled_loops"]
    assert library and {loop["platform"] for loop in library} == {"cpu"}
    # its source has no loop: the parse finds none, the compiled program does
    assert cells[10]["runs"] == [] and cells[10]["loops"] == []
    reason = loop_reason(gpu_findings["lecture cell 11"])
    assert "while loop" in reason and "compiled in `jit(minimize)`" in reason
    assert "(library code)" in reason


def test_gpu_memory_is_shown_where_the_host_memory_is(gpu_data: dict[str, Any]) -> None:
    from sphinx_gpu_admonition.ext.page_info import environment_fields

    record = StatusReport.from_dict(gpu_data).by_docname()["lecture"]
    # synthetic figures (make_gpu_fixture): the CPU that ran it reports no device memory
    assert record.device_peak_memory_mb == max(make_gpu_fixture.SYNTHETIC_MEMORY_MB)
    assert ("Peak GPU memory", "1210 MiB") in environment_fields(record)
    killed = StatusReport.from_dict(gpu_data).by_docname()["zkilled"]
    assert killed.error is not None and killed.error.device_memory_mb is not None


def test_compile_and_run_time_apart_first_call_or_warm(
        gpu_findings: dict[str, Finding]) -> None:
    first, warm = gpu_findings["lecture cell 3"], gpu_findings["lecture cell 4"]
    assert (first.first_call, warm.first_call) == (True, False)
    assert first.compile_seconds > 0 and warm.compile_seconds == 0
    assert first.run_seconds == pytest.approx(first.seconds - first.compile_seconds)
    recompiled = gpu_findings["lecture cell 8"]
    assert {"recompile", "compile"} <= set(recompiled.rules)
    assert "persistent compilation cache" in next(
        WORDS.rule_action(f) for f in recompiled.flags if f.rule == "compile")


def test_a_function_compiled_again_in_a_later_cell_is_a_finding_of_its_own(
        gpu_data: dict[str, Any]) -> None:
    report = StatusReport.from_dict(gpu_data)
    # at the default limits nothing here is slow; compiling jit(q) again still is a
    # finding when it takes the minimum time (lowered here to what the CPU took)
    compile_of_cell_10 = report.by_docname()["lecture"].cells[9].compile_seconds
    limits = Thresholds(slow_cell_min_seconds=compile_of_cell_10)
    rows = {row.name.label: row for row in findings(analyse(report, limits))}
    assert rows["cell 10"].rules == ["compiled_again"]
    assert "jit(q) (first in cell 9)" in WORDS.finding_reason(rows["cell 10"])


def test_a_twin_pinned_to_the_cpu_is_not_compiled_again(gpu_data: dict[str, Any]) -> None:
    """``jax.jit(qm_jax, device=cpu)`` compiles ``jit(qm_jax)`` again, for the CPU:
    legitimately, so no ``compiled_again``, even at a limit its compilation reaches."""
    report = StatusReport.from_dict(gpu_data)
    twin = report.by_docname()["lecture"].cells[4]
    assert twin.device_twins == ["qm_jax"] and "jit(qm_jax)" in twin.compilations
    limits = Thresholds(slow_cell_min_seconds=min(twin.compile_seconds, 1.0))
    rows = {row.name.label: row for row in findings(analyse(report, limits))}
    assert "cell 5" not in rows or "compiled_again" not in rows["cell 5"].rules


def test_float64_on_a_gpu_is_flagged_where_jax_code_ran(
        gpu_findings: dict[str, Finding]) -> None:
    with_float64 = {name for name, row in gpu_findings.items() if "float64" in row.rules}
    assert with_float64 == {"float64 cell 2"}
    assert "float32" in next(WORDS.rule_action(f) for f in gpu_findings["float64 cell 2"].flags
                             if f.rule == "float64")


def test_the_killed_kernel_names_its_cell_the_signal_and_the_stack(
        gpu_data: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    killed = next(nb for nb in gpu_data["notebooks"] if nb["docname"] == "zkilled")
    assert killed["status"] == "kernel_died"
    assert killed["error"]["signal"] == "SIGSEGV"
    assert any("in crash" in frame for frame in killed["error"]["stack"])
    # the stack is public (status JSON, page): no frame shows the home or the checkout's folder
    for frame in killed["error"]["stack"]:
        assert str(Path.home()) + "/" not in frame and str(Path.cwd()) + "/" not in frame
    record = StatusReport.from_dict(gpu_data).by_docname()["zkilled"]
    dying = record.error_cell()
    assert dying is not None and record.cell_name(dying).label == "cell 2"
    assert dying.first_line == "def crash():"
    status = tmp_path / "gpu.json"
    status.write_text(json.dumps(gpu_data), encoding="utf-8")
    assert cli.main(["report", str(status), "--json", "--exit-zero"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (failure,) = summary["failures"]
    assert (failure["docname"], failure["cell"]) == ("zkilled", "cell 2")
    assert "SIGSEGV" in failure["message"]


def test_report_json_flags_the_call_cells_with_the_loop_rule(
        gpu_data: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = tmp_path / "gpu.json"
    status.write_text(json.dumps(gpu_data), encoding="utf-8")
    cli.main(["report", str(status), "--json", "--exit-zero", "--min-seconds", "0",
              "--slow-cell-seconds", "0"])
    summary = json.loads(capsys.readouterr().out)
    hinted = {c["cell"] for c in summary["flagged_cells"] if c["docname"] == "lecture"
              and any("`qm_jax` (defined in cell 2)" in hint for hint in c["hints"])}
    assert hinted == {"cell 3", "cell 4"}


def test_the_page_the_console_and_the_annotations_flag_the_same_loop_cells(
        gpu_data: dict[str, Any]) -> None:
    """The done-when of issue 22 in every view of one analysis: the two timed call cells
    and the library call with the loop rule, the loop-free matrix product (cell 6) and the
    CPU-pinned twin (cell 5) without it, the killed kernel with its cell and signal."""
    from bs4 import BeautifulSoup

    from sphinx_gpu_admonition.render import github
    from sphinx_gpu_admonition.render.console import summary_lines
    from sphinx_gpu_admonition.render.status_html import render_html
    from sphinx_gpu_admonition.render.status_rows import StatusOptions

    report = StatusReport.from_dict(gpu_data)
    analysis = analyse(report, EVERY_CELL)
    loop_cells = {"cell 3", "cell 4", "cell 7", "cell 11"}
    page = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: None), "lxml")
    on_page = {item.select_one(".gpu-status-finding-where").get_text(" ", strip=True)
               .split(", ")[-1].split()[0:2] and " ".join(
                   item.select_one(".gpu-status-finding-where").get_text(" ", strip=True)
                   .split(", ")[-1].split()[0:2])
               for item in page.select("li.gpu-status-finding")
               if "sequential loop" in item.select_one(".gpu-status-flag-names").get_text()
               and "lecture" in item.select_one(".gpu-status-finding-where").get_text()}
    assert on_page == loop_cells
    # the console lists the slowest flagged cells, each a block of lines: those of
    # lecture's cells that it lists say "runs" exactly for the loop cells
    blocks: dict[str, str] = {}
    name = None
    for line in summary_lines(report, analysis):
        match = re.match(r"^\s+\S+ (?:ms|s)\s+(\w+) (cell \d+)", line)
        if match:
            name = match.group(2) if match.group(1) == "lecture" else None
            blocks[name] = ""
        elif name is not None:
            blocks[name] += line + "\n"
    blocks.pop(None, None)
    assert blocks, "the console lists no cell of the lecture"
    assert {cell for cell, text in blocks.items() if "runs " in text} == \
        loop_cells & set(blocks)
    commands = github.annotations(report, analysis)
    looping = {match.group(1) for line in commands
               if "sequential loop" in line or "runs " in line
               for match in [re.search(r"lecture (cell \d+)", line)] if match}
    # at most 10 cell warnings a kind reach the runner: the loop cells are among the slowest
    assert looping <= loop_cells and "cell 6" not in looping and "cell 5" not in looping
    killed = next(line for line in commands if line.startswith("::error") and "zkilled" in line)
    assert "SIGSEGV" in killed and "cell 2" in killed


# -- why JAX compiled again (gpu_explain_recompilations), on and off ---------------------
#: what JAX 0.4.36+ says when a function jitted inside another is traced again
REDEFINED = "maybe the function is being re-defined repeatedly, preventing caching?"


@pytest.fixture(scope="module")
def recompile_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, ProjectBuild]:
    """The one-notebook root built with the option on and off; every cell is "slow", so
    that the hints show (the CPU's compile times are small)."""
    builds = {}
    for explain in (True, False):
        dest = tmp_path_factory.mktemp(f"recompile-{explain}")
        shutil.copytree(ROOTS / "recompile", dest / "src")
        builds[explain] = sphinx_build(
            dest / "src", dest / "_build", "html",
            {"gpu_explain_recompilations": explain, "gpu_slow_cell_seconds": 0,
             "gpu_slow_cell_min_seconds": 0}, freshenv=True)
    return builds


def cell_outputs(build: ProjectBuild) -> list[str]:
    from docutils import nodes

    doctree = build.app.env.get_doctree("index")
    return [node.astext() for node in doctree.findall(nodes.container)
            if "cell_output" in node["classes"]]


def test_with_the_option_the_reason_jax_gave_is_recorded_and_shown(
        recompile_builds: dict[bool, ProjectBuild], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    build = recompile_builds[True]
    data = json.loads(build.read("execution-status.json"))
    jsonschema.validate(data, SCHEMA)
    (notebook,) = data["notebooks"]
    assert notebook["environment"]["jax"]["recompilations_explained"] is True
    cells = notebook["cells"]
    assert "recompile_reasons" not in cells[1] or not any(  # the first call: nothing to say
        r["function"] == "q" for r in cells[1]["recompile_reasons"])
    (again,) = [r for r in cells[2]["recompile_reasons"] if r["function"] == "q"]
    assert again["reason"].endswith(REDEFINED)
    assert any(r["function"] == "<lambda>" and r["reason"].endswith(REDEFINED)
               for r in cells[3]["recompile_reasons"])
    # the build's console summary and the command line's JSON report say it
    assert f"JAX says for jit(q): seen another function defined on the same line; " \
           f"{REDEFINED}" in build.status
    status = tmp_path / "status.json"
    status.write_text(json.dumps(data), encoding="utf-8")
    cli.main(["report", str(status), "--json", "--exit-zero", "--min-seconds", "0",
              "--slow-cell-seconds", "0"])
    flagged = {c["cell"]: c for c in json.loads(capsys.readouterr().out)["flagged_cells"]}
    assert any("compiled again: jit(q)" in hint and "JAX says for jit(q)" in hint
               for hint in flagged["cell 3"]["hints"])
    assert "gpu_explain_recompilations" not in flagged["cell 3"]["action"]


def test_without_the_option_nothing_is_recorded_and_a_known_cause_needs_none(
        recompile_builds: dict[bool, ProjectBuild]) -> None:
    data = json.loads(recompile_builds[False].read("execution-status.json"))
    (notebook,) = data["notebooks"]
    assert notebook["environment"]["jax"]["recompilations_explained"] is False
    assert not any(cell.get("recompile_reasons") for cell in notebook["cells"])
    report = StatusReport.from_dict(data)
    rows = {row.name.label: row for row in findings(analyse(report, EVERY_CELL))}
    assert "compiled_again" in rows["cell 3"].rules
    assert "JAX says" not in WORDS.finding_reason(rows["cell 3"])
    # the parse saw the cause (a jit around a new lambda inside `newton`): the action is
    # its fix, and asks for JAX's reason only where the cause is unknown
    action = WORDS.finding_action(rows["cell 3"])
    assert "not inside `newton` around a new lambda" in action
    assert "gpu_explain_recompilations" not in action


def test_the_option_changes_no_output(recompile_builds: dict[bool, ProjectBuild]) -> None:
    on, off = (cell_outputs(recompile_builds[explain]) for explain in (True, False))
    assert on == off and len(on) == 3  # the two roots printed and the total
    assert not any("TRACING CACHE MISS" in text or "WARNING" in text for text in on)
    assert "TRACING CACHE MISS" not in recompile_builds[True].warnings
