"""The calibration sampler: samples while a page is read for long, none for a quick one."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sphinx_gpu_admonition import calibration


@contextlib.contextmanager
def running_sampler(monkeypatch: pytest.MonkeyPatch) -> Iterator[calibration._Sampler]:
    """A sampler thread with a 50 ms interval and one run a sample, closed after."""
    monkeypatch.setattr(calibration, "SAMPLE_INTERVAL", 0.05)
    monkeypatch.setattr(calibration, "SAMPLE_RUNS", 1)
    sampler = calibration._Sampler()
    sampler.start()
    try:
        yield sampler
    finally:
        sampler.close()
        sampler.join(timeout=5)


def test_the_sampler_samples_a_long_page_and_not_a_quick_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with running_sampler(monkeypatch) as sampler:
        time.sleep(0.12)  # idle first: a page that starts then is not woken up for
        sampler.begin("quick")  # a cache hit: read at once
        quick = sampler.stop("quick")
        sampler.begin("long")  # a notebook executing for eight intervals
        time.sleep(0.4)
        long = sampler.stop("long")
    assert quick is not None and quick.times == []
    assert long is not None and len(long.times) >= 2
    assert not sampler.is_alive()


def test_the_sampler_waits_for_the_kernel_of_the_page(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A page read for long without a kernel (a cache hit of a big notebook) is never
    sampled; an executing one is, from when its kernel creates the capture's file."""
    kernel_file = tmp_path / "page.jsonl"
    with running_sampler(monkeypatch) as sampler:
        sampler.begin("hit", str(tmp_path / "never.jsonl"))
        sampler.begin("executed", str(kernel_file))
        time.sleep(0.3)  # six intervals: the kernel starts late
        kernel_file.touch()
        time.sleep(0.3)
        hit = sampler.stop("hit")
        executed = sampler.stop("executed")
    assert hit is not None and hit.times == []
    assert executed is not None and len(executed.times) >= 2
