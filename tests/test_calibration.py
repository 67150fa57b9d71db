"""The calibration sampler: samples while a page is read for long, none for a quick one."""

from __future__ import annotations

import time

import pytest

from sphinx_gpu_admonition import calibration


def test_the_sampler_samples_a_long_page_and_not_a_quick_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibration, "SAMPLE_INTERVAL", 0.05)
    monkeypatch.setattr(calibration, "SAMPLE_RUNS", 1)
    sampler = calibration._Sampler()
    sampler.start()
    try:
        time.sleep(0.12)  # idle first: a page that starts then is not woken up for
        sampler.begin("quick")  # a cache hit: read at once
        quick = sampler.stop("quick")
        sampler.begin("long")  # a notebook executing for eight intervals
        time.sleep(0.4)
        long = sampler.stop("long")
    finally:
        sampler.close()
        sampler.join(timeout=5)
    assert quick is not None and quick.times == []
    assert long is not None and len(long.times) >= 2
    assert not sampler.is_alive()


def test_the_sampler_waits_for_the_kernel_of_the_page(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A page read for long without a kernel (a cache hit of a big notebook) is never
    sampled; an executing one is, from when its kernel creates the capture's file."""
    monkeypatch.setattr(calibration, "SAMPLE_INTERVAL", 0.05)
    monkeypatch.setattr(calibration, "SAMPLE_RUNS", 1)
    kernel_file = tmp_path / "page.jsonl"
    sampler = calibration._Sampler()
    sampler.start()
    try:
        sampler.begin("hit", str(tmp_path / "never.jsonl"))
        sampler.begin("executed", str(kernel_file))
        time.sleep(0.3)  # six intervals: the kernel starts late
        kernel_file.touch()
        time.sleep(0.3)
        hit = sampler.stop("hit")
        executed = sampler.stop("executed")
    finally:
        sampler.close()
        sampler.join(timeout=5)
    assert hit is not None and hit.times == []
    assert executed is not None and len(executed.times) >= 2
