"""GPU-only paths, fed with the incident's GPU and CPU data (tests/data/README.md)."""

from __future__ import annotations

from conftest import TESTS

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS

DATA = TESTS / "data"


def test_gpu_environment_is_labelled_with_the_device() -> None:
    gpu = read_status(DATA / "incident-gpu-t4-status.json")
    (notebook,) = gpu.notebooks
    assert notebook.environment.backend == "gpu"
    assert notebook.environment.device_label == "GPU: Tesla T4"


def test_slow_scan_cell_on_gpu_gets_the_sequential_loop_hint() -> None:
    gpu = analyse(read_status(DATA / "incident-gpu-t4-status.json"), Thresholds())
    ((cell, flags),) = gpu.notebooks[0].flagged_cells
    assert cell.first_line.startswith("_, path = jax.lax.scan")
    rules = [flag.rule for flag in flags]
    assert "slow" in rules and "sequential_loop" in rules
    hint = next(flag for flag in flags if flag.rule == "sequential_loop")
    assert "lax.scan" in WORDS.reason(hint)
    # the pins a lecture can paste, and the cheap mitigation on the GPU
    action = WORDS.rule_action(hint)
    assert 'jax.jit(f, device=jax.devices("cpu")[0])' in action
    assert 'with jax.default_device(jax.devices("cpu")[0]):' in action and "unroll=k" in action


def test_the_same_cell_on_cpu_is_not_flagged() -> None:
    cpu = analyse(read_status(DATA / "incident-cpu-status.json"), Thresholds())
    assert cpu.notebooks[0].flagged_cells == []


def test_gpu_build_against_cpu_baseline_shows_the_regression() -> None:
    baseline = read_status(DATA / "incident-cpu-status.json")
    result = analyse(read_status(DATA / "incident-gpu-t4-status.json"), Thresholds(), baseline)
    comparison = result.notebooks[0].comparison
    assert comparison.regression
    assert comparison.baseline_backend == "cpu"
    scan = comparison.cells[1]
    assert scan.ratio > 1000  # the ~1,300x of the incident
    flags = result.notebooks[0].cell_flags[1]
    assert any(flag.rule == "regression" for flag in flags)
