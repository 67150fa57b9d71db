"""The runtime roles' text (``ext/runtime.py``): reader times, translated plurals, the device
phrase, which records are stated, staleness; their options."""

from __future__ import annotations

import copy

import pytest
from conftest import GPU_ENVIRONMENT, _baseline_notebook

from sphinx_gpu_admonition.ext.config import GpuConfig, validate
from sphinx_gpu_admonition.ext.runtime import (
    Measurement,
    device_phrase,
    is_stale,
    reader_time,
    run_phrase,
    usable,
)
from sphinx_gpu_admonition.model.record import (
    NotebookRecord,
)
from unit.model.test_device import record

LAPTOP = "Laptop <CPU> & co"


def gpu_runner() -> dict:
    """The GPU runner's record of the same version of ``sleepy`` (same code cells)."""
    return _baseline_notebook("sleepy", "A sleepy notebook", 130.0, [
        (1, 0.5, "import time"), (2, 120.0, "time.sleep(0.3)")])


def old_laptop() -> dict:
    """A laptop's record of an earlier version of ``sleepy`` (other code)."""
    environment = copy.deepcopy(GPU_ENVIRONMENT)
    environment.update(gpus=[], host={**environment["host"], "cpu": LAPTOP})
    environment["jax"].update(backend="cpu", devices=[{"platform": "cpu", "kind": "cpu"}])
    notebook = _baseline_notebook("sleepy", "A sleepy notebook", 1500.0, [
        (1, 0.5, "import time"), (2, 1490.0, "time.sleep(1500)")])
    return {**notebook, "environment": environment}


# -- wording, in-process ---------------------------------------------------------------
@pytest.mark.parametrize(("seconds", "text"), [
    (0.4, "a few seconds"), (9.9, "a few seconds"), (12, "about 10 seconds"),
    (17, "about 15 seconds"), (38, "about 40 seconds"), (50, "under a minute"),
    (65, "about 1 minute"), (90, "about 2 minutes"), (130, "about 2 minutes"),
    (150, "about 3 minutes"), (1490, "about 25 minutes"),
    (6000, "about 2 hours"), (3 * 3600 + 100, "about 3 hours"),
])
def test_reader_time_rounds_for_readers(language, seconds, text):
    assert reader_time(seconds) == text


def test_wording_is_translated_with_plural_forms(language):
    language("zh_CN")
    assert reader_time(65) == "约 1 分钟"
    assert reader_time(130) == "约 2 分钟"
    assert reader_time(38) == "约 40 秒"
    assert reader_time(3) == "几秒钟"
    gpu = NotebookRecord.from_dict(gpu_runner())
    assert run_phrase(Measurement(gpu)) == "在 GPU（Tesla T4）上约 2 分钟"


def test_device_phrase(language):
    assert device_phrase(NotebookRecord.from_dict(gpu_runner())) == "a GPU (Tesla T4)"
    laptop = NotebookRecord.from_dict(old_laptop())
    assert device_phrase(laptop) == f"a CPU ({LAPTOP})"
    laptop.environment.jax.backend = None  # JAX never initialised: still a CPU
    assert device_phrase(laptop) == f"a CPU ({LAPTOP})"
    stale = Measurement(laptop, "old.json", stale=True)
    assert run_phrase(stale) == (f"about 25 minutes on a CPU ({LAPTOP}), "
                                 "measured on an earlier version")


def test_only_trustworthy_records_are_stated():
    assert usable(NotebookRecord.from_dict(gpu_runner()))
    for change in ({"status": "error"}, {"status": "execution_off"},
                   {"runtime_seconds": "slow"}, {"runtime_seconds": float("nan")},
                   {"runtime_seconds": -1.0}):
        record = NotebookRecord.from_dict(gpu_runner())
        for name, value in change.items():  # past the reader's checks: a hand-made file
            setattr(record, name, value)
        assert not usable(record), change


def test_staleness_by_code_cells_then_by_source_time():
    current = NotebookRecord.from_dict(gpu_runner())
    same_code = NotebookRecord.from_dict(gpu_runner())
    other_code = NotebookRecord.from_dict(old_laptop())
    assert not is_stale(same_code, current, source_mtime=9e9)  # a fresh checkout's mtime
    assert is_stale(other_code, current, source_mtime=0)
    # without cells to compare: the execution must not be older than the source
    executed = 1767582000.0  # 2026-01-05T03:00:00+00:00, as in gpu_runner()
    assert not is_stale(same_code, None, source_mtime=executed - 60)
    assert is_stale(same_code, None, source_mtime=executed + 60)
    same_code.executed_at = None
    assert is_stale(same_code, None, source_mtime=executed - 60)


def test_runtime_options_validate():
    reports: list[str] = []
    assert validate({"runtime_sources": "gpu.json"}, reports.append).runtime_sources == (
        "gpu.json",)
    config = validate({"runtime_sources": ["a.json", 3], "admonition_runtime": "yes"},
                      reports.append)
    assert len(reports) == 2 and any("gpu_runtime_sources" in r for r in reports)
    assert config.runtime_sources == GpuConfig().runtime_sources == ()
    assert config.admonition_runtime is False


def test_a_metal_page_does_not_say_both_gpu_and_not_gpu():
    """The runtime roles, the page line and the notice agree: metal is a GPU."""
    from sphinx_gpu_admonition.ext.runtime import device_phrase
    from sphinx_gpu_admonition.render.notice_text import executed_on_sentence, ran_on_gpu

    metal = record("metal")
    assert device_phrase(metal) == "a GPU (Apple M2)"
    assert ran_on_gpu(metal)
    assert "not on a GPU" not in executed_on_sentence(metal)
    tpu = record("tpu")
    assert device_phrase(tpu) == "a TPU (Apple M2)"
    assert "not on a GPU" in executed_on_sentence(tpu)
