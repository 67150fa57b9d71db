"""The probe under a hostile notebook: nested runs, child kernels, patched
builtins and clocks, removed callbacks, JAX found before it is imported, and a
cell that returns before its device work is done (issues 10 and 11).

One build of two notebooks (real kernels, real JAX on the CPU) serves the
build tests; the rest runs the probe's pieces in this process.
"""

from __future__ import annotations

import json
import logging
import types
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from capture_builds import notebooks, only
from conftest import MYST_HEADER, ProjectBuild, build_project

from sphinx_gpu_admonition.ext import capture
from sphinx_gpu_admonition.model import probe_output
from sphinx_gpu_admonition.probe import (
    ENV_EXPLAIN_RECOMPILATIONS,
    ENV_OUTPUT,
    ENV_PROBE,
    ENV_USER_STARTUP,
    STARTUP_FILE,
    device_sync,
    kernel_probe,
    protocol,
)


def code_cells(*sources: str) -> str:
    return "".join(f"```{{code-cell}} ipython3\n{source}\n```\n\n" for source in sources)


HOSTILE = MYST_HEADER + "# Hostile\n\n" + code_cells(
    "import os, time",
    "%%capture\ntime.sleep(0.3)",
    "get_ipython().run_cell('time.sleep(0.2)')",
    # a kernel started from a cell (as papermill or nbconvert --execute would)
    "import nbclient, nbformat\n"
    "child = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('child = 1')])\n"
    "child.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3'}\n"
    "nbclient.NotebookClient(child, timeout=60).execute()\n"
    "inherited = sorted(name for name in os.environ if name.startswith('SPHINX_GPU'))\n"
    "print(inherited, os.environ.get('PYTHONSTARTUP'))",
    # freezegun-style clock, a patched json.dumps (the kernel's own messages still
    # work: they pass ``default``) and a patched builtin
    "import builtins, json\n_dumps = json.dumps\n"
    "json.dumps = lambda obj, **kw: _dumps(obj, **kw) if 'default' in kw else 'corrupt'\n"
    "builtins.round = lambda *args, **kwargs: 'x'\n"
    "time.perf_counter = lambda: 0.0",
    "after_the_patches = 1",
)

JAX = MYST_HEADER + "# JAX, then the callbacks removed\n\n" + code_cells(
    "import importlib.util\nimportlib.util.find_spec('jax') is not None",
    "import jax, jax.numpy as jnp\ndouble = jax.jit(lambda v: v * 2)\n"
    "double(jnp.ones(3)).block_until_ready()",
    "from jax import lax\n\n@jax.jit\ndef churn(x):\n"
    "    return lax.fori_loop(0, 300, lambda i, a: jnp.tanh(a @ a), x)\n\n"
    "start = jnp.ones((300, 300)) / 300\nchurn(start).block_until_ready()\n"
    "walks = []\n_live_arrays = jax.live_arrays\n"
    "jax.live_arrays = lambda *args: walks.append(1) or _live_arrays(*args)",
    "result = churn(start)  # dispatched, not waited for",
    "print(result.is_ready(), len(walks))",
    "for name in ('pre_run_cell', 'post_run_cell'):\n"
    "    get_ipython().events.callbacks[name].clear()",
    "unmeasured = 1",
)


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    files = {"index.md": "# H\n\n```{toctree}\nhostile\njax_unhooked\n```\n",
             "hostile.md": HOSTILE, "jax_unhooked.md": JAX}
    return build_project("capture", tmp_path_factory.mktemp("hostile"), files=files,
                         conf_append=only()["conf_append"],
                         confoverrides={"show_warning_types": True})  # Sphinx 7.4: off


def outputs(build: ProjectBuild, page: str) -> list[str]:
    html = BeautifulSoup(build.read(f"{page}.html"), "html.parser")
    return [div.get_text().strip() for div in html.select("div.cell_output")]


def test_nested_runs_are_one_cell_with_their_full_time(hostile_build: ProjectBuild) -> None:
    cells = notebooks(hostile_build)["hostile"]["cells"]
    assert [c["index"] for c in cells] == [1, 2, 3, 4, 5, 6]  # each cell once, none lost
    captured, run_inside, _child, _patched, after = (c["seconds"] for c in cells[1:])
    # 0.3 s and 0.2 s sleeps run by the nested runs, each timed in full in its cell (on a
    # busy machine a nested run's own overhead can exceed the 0.1 s between the sleeps)
    assert captured >= 0.3 and run_inside >= 0.2 and after < 0.2
    assert cells[1]["first_line"] == "%%capture"


def test_a_kernel_started_in_a_cell_does_not_inherit_the_capture(
        hostile_build: ProjectBuild) -> None:
    record = notebooks(hostile_build)["hostile"]
    assert outputs(hostile_build, "hostile")[-1] == "[] None"  # no variables, no startup file
    assert [c["execution_count"] for c in record["cells"]] == [1, 2, 3, 4, 5, 6]
    assert record["status"] == "ok" and record["capture"] == "ok"


def test_patched_clock_json_and_builtins_do_not_corrupt_the_record(
        hostile_build: ProjectBuild) -> None:
    record = notebooks(hostile_build)["hostile"]  # schema-valid (notebooks() checks)
    patched, after = record["cells"][-2:]
    assert after["first_line"] == "after_the_patches = 1"
    assert 0 < after["seconds"] < patched["seconds"] + 1  # not -1591 s, not "x"
    assert not [line for line in hostile_build.warning_lines if "hostile.md" in line]


def test_find_spec_before_import_keeps_the_compile_time(hostile_build: ProjectBuild) -> None:
    cells = notebooks(hostile_build)["jax_unhooked"]["cells"]
    imports = cells[1]
    assert imports["compilations"].get("jit(<lambda>)") == 1
    assert imports["compile_seconds"] > 0


def test_work_dispatched_by_a_cell_is_timed_in_that_cell_without_walking_arrays(
        hostile_build: ProjectBuild) -> None:
    cells = notebooks(hostile_build)["jax_unhooked"]["cells"]
    dispatching, reading = cells[3], cells[4]
    assert dispatching["first_line"].startswith("result = churn(start)")
    assert dispatching["seconds"] > reading["seconds"]
    # done when the next cell began; no end-of-cell sync listed the live arrays
    assert outputs(hostile_build, "jax_unhooked")[-1] == "True 0"
    assert "jit(<lambda>)" not in dispatching["compilations"]  # the probe's own sync


def test_removed_callbacks_mean_capture_failed_with_one_warning(
        hostile_build: ProjectBuild) -> None:
    record = notebooks(hostile_build)["jax_unhooked"]
    assert record["status"] == "ok"
    assert record["capture"] == "failed"
    assert "removed the probe's IPython callbacks" in record["capture_message"]
    warnings = [line for line in hostile_build.warning_lines if "jax_unhooked" in line]
    assert len(warnings) == 1 and "gpu_admonition.capture" in warnings[0]


# -- in this process -----------------------------------------------------------------
def test_startup_file_names_agree_with_the_package() -> None:
    """startup.py cannot import the package; its copies of the names must agree."""
    text = STARTUP_FILE.read_text(encoding="utf-8")
    for name in (ENV_OUTPUT, ENV_PROBE, ENV_USER_STARTUP, ENV_EXPLAIN_RECOMPILATIONS,
                 protocol.KIND_ERROR,
                 protocol.KIND_WARNING):
        assert f'"{name}"' in text


def read_lines(lines: list[dict[str, Any]]) -> capture.ProbeOutput:
    return probe_output.ProbeOutput(iter(lines))


START = {"kind": "start", "pid": 10, "probe_version": protocol.PROBE_VERSION,
         "time": 0.0, "python": "3.12.0", "host": {}, "gpus": []}


def cell(count: int, seconds: Any, pid: int = 10) -> dict[str, Any]:
    return {"kind": "cell", "pid": pid, "execution_count": count, "seconds": seconds,
            "first_line": f"cell {count}"}


def test_lines_of_another_process_are_ignored() -> None:
    child_start = {**START, "pid": 11}
    output = read_lines([START, cell(1, 0.5), child_start, cell(1, 9.0, pid=11), cell(2, 0.1)])
    assert [(c.execution_count, c.seconds) for c in output.cells] == [(1, 0.5), (2, 0.1)]
    assert not output.errors and not output.warnings


def test_negative_and_non_finite_times_are_dropped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "probe.jsonl"
    lines = [json.dumps(START), json.dumps(cell(1, -1591.06)), json.dumps(cell(2, 0.25)),
             '{"kind": "cell", "pid": 10, "execution_count": 3, "seconds": NaN}',
             json.dumps(cell(4, "1.5"))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = probe_output.ProbeOutput(probe_output.probe_lines(path))
    assert [c.execution_count for c in output.cells] == [2]
    assert len(output.warnings) == 2  # cells 1 and 4; the NaN line is not JSON at all
    assert "cell 1" in output.warnings[0] and "-1591.06" in output.warnings[0]
    assert not output.errors  # the capture still worked


def test_one_bad_value_loses_that_cell_never_the_notebook() -> None:
    from docutils import nodes

    from sphinx_gpu_admonition.model.record import NotebookRecord

    # a negative time, a library version that is no text
    bad_cell = cell(2, -0.2)
    output = read_lines([START, cell(1, 0.5), bad_cell, cell(3, 0.1),
                         {"kind": "libraries", "pid": 10, "libraries": {"numpy": 2}}])
    record = NotebookRecord(docname="hostile", status="error")
    capture.fill_from_probe(output, nodes.document("", None), record)
    assert [c.execution_count for c in record.cells] == [1, 3]
    assert record.capture == "partial"  # it says so: the record has 2 of the 3 cells
    assert "execution count 2" in record.capture_message
    assert len(output.warnings) == 3
    assert any("cell 2" in w and "below" in w for w in output.warnings)
    assert any("environment: libraries['numpy']" in w for w in output.warnings)


def test_an_exception_type_is_recorded_as_one_line_without_lone_surrogates() -> None:
    # an exception class named with a lone surrogate and line breaks keeps its cell
    named = {**cell(2, 0.2), "error": "Bad\ud800\r\n::error x\u2028y"}
    output = read_lines([START, cell(1, 0.5), named])
    assert [c.error for c in output.cells] == [None, "Bad\ufffd ::error x y"]
    assert not output.warnings


def test_another_probe_version_is_one_capture_error() -> None:
    output = read_lines([{**START, "probe_version": 1}, cell(1, 0.5)])
    assert len(output.errors) == 1
    assert "version 1" in output.errors[0]
    assert f"version {protocol.PROBE_VERSION}" in output.errors[0]


class FakeShell:
    """Just what the probe touches of an IPython shell: its event callbacks."""

    def __init__(self) -> None:
        self.events = types.SimpleNamespace(callbacks={"pre_run_cell": [],
                                                       "post_run_cell": []})
        self.events.register = lambda name, f: self.events.callbacks[name].append(f)


def run_cell(probe: kernel_probe.Probe, count: int, body=lambda: None) -> None:
    info = types.SimpleNamespace(store_history=True, raw_cell=f"cell {count}")
    result = types.SimpleNamespace(info=info, execution_count=count, error_in_exec=None,
                                   error_before_exec=None)
    probe.pre_run_cell(info)
    body()
    probe.post_run_cell(result)


def test_a_non_finite_compile_duration_is_dropped_with_one_warning(tmp_path: Path) -> None:
    output = tmp_path / "probe.jsonl"
    probe = kernel_probe.Probe(str(output), FakeShell())

    def compiles() -> None:
        probe._on_jax_duration(kernel_probe._BACKEND_COMPILE_EVENT, float("nan"), fun_name="f")
        probe._on_jax_duration(kernel_probe._BACKEND_COMPILE_EVENT, -3.0, fun_name="f")
        probe._on_jax_duration(kernel_probe._BACKEND_COMPILE_EVENT, 0.25, fun_name="g")

    run_cell(probe, 1, compiles)
    read = probe_output.ProbeOutput(probe_output.probe_lines(output))
    (measured,) = read.cells
    assert 0 < measured.compile_seconds <= measured.seconds  # 0.25 s, within the cell's
    assert measured.compilations == {"g": 1}
    assert len(read.warnings) == 1 and "compile duration" in read.warnings[0]


def test_compile_intervals_that_overlap_count_once_and_never_beyond_the_cell() -> None:
    covered = kernel_probe._covered
    assert covered([(0.0, 1.0), (0.5, 2.0), (3.0, 4.0)], 0.0, 10.0) == 3.0
    assert covered([(1.0, 2.0), (1.0, 2.0), (1.2, 1.5)], 0.0, 10.0) == 1.0  # threads at once
    assert covered([(-5.0, 1.0), (9.0, 20.0)], 0.0, 10.0) == 2.0  # clipped to the cell
    assert covered([], 0.0, 1.0) == 0.0


def test_the_end_line_tells_whether_the_callbacks_were_removed(tmp_path: Path) -> None:
    output = tmp_path / "probe.jsonl"
    shell = FakeShell()
    probe = kernel_probe.Probe(str(output), shell)
    shell.events.register("pre_run_cell", probe.pre_run_cell)
    shell.events.register("post_run_cell", probe.post_run_cell)
    run_cell(probe, 1)
    assert probe.callbacks_registered()
    shell.events.callbacks["post_run_cell"].clear()
    probe.at_exit()
    read = probe_output.ProbeOutput(probe_output.probe_lines(output))
    assert len(read.cells) == 1
    assert read.errors == ["the notebook removed the probe's IPython callbacks; "
                           "the cells after that were not measured"]


def test_preparing_the_device_sync_adds_nothing_to_the_cell_output(
        caplog: pytest.LogCaptureFixture) -> None:
    """With ``jax_log_compiles`` on, compiling the sync would log into the cell."""
    jax = pytest.importorskip("jax")
    with jax.log_compiles(True), caplog.at_level(logging.WARNING):
        device_sync.DeviceSync(jax)()
        assert jax.config.jax_log_compiles  # the notebook's setting is kept
    assert not [r for r in caplog.records if "_scalar_zero" in r.getMessage()]


@pytest.mark.parametrize("source", ["x = 1", "\n\n  %%capture\ntime.sleep(1)", "y" * 300,
                                    "a = 1\r\nb = 2", "é = 'ü'\n"])
def test_a_cache_hit_reads_first_lines_as_the_probe_records_them(source: str) -> None:
    """The sidecar check has its own copy of the probe's first-line rule (a cache hit
    does not import the probe): the two must agree."""
    expected = probe_output.recorded_text(protocol.first_line(source))
    assert capture._first_line(source) == expected
