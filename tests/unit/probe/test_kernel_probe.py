"""``probe/kernel_probe.py``: compile durations (non-finite ones dropped, overlapping intervals
counted once) and the end line."""

from __future__ import annotations

import types
from pathlib import Path

from sphinx_gpu_admonition.model import probe_output
from sphinx_gpu_admonition.probe import (
    kernel_probe,
)


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
