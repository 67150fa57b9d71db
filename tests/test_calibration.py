"""The calibration sampler: samples while a page is read for long, none for a quick one."""

from __future__ import annotations

import contextlib
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from sphinx_gpu_admonition.ext import calibration
from sphinx_gpu_admonition.ext.state import build_state


@contextlib.contextmanager
def running_sampler(monkeypatch: pytest.MonkeyPatch) -> Iterator[calibration._Sampler]:
    """A sampler thread with a 50 ms interval and one run a sample, closed after."""
    monkeypatch.setattr(calibration, "SAMPLE_INTERVAL", 0.05)
    monkeypatch.setattr(calibration, "SAMPLE_RUNS", 1)
    monkeypatch.setattr(calibration, "MAX_CPU_SHARE", 1.0)
    sampler = calibration._Sampler()
    sampler.start()
    try:
        yield sampler
    finally:
        sampler.close()
        sampler.join(timeout=5)


def wait_for_samples(sampler: calibration._Sampler, docname: str, count: int,
                     longest: float = 10.0) -> None:
    """Until ``docname`` has ``count`` samples (at most ``longest`` seconds): a loaded
    machine (the two test environments run at once) takes longer for each sample, and
    a test that slept a fixed time then saw one sample instead of two."""
    deadline = time.monotonic() + longest
    while time.monotonic() < deadline:
        with sampler.condition:
            reading = sampler.reading.get(docname)
            if reading is None or len(reading.times) >= count:
                return
        time.sleep(0.02)


def test_the_sampler_samples_a_long_page_and_not_a_quick_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with running_sampler(monkeypatch) as sampler:
        time.sleep(0.12)  # idle first: a page that starts then is not woken up for
        sampler.begin("quick")  # a cache hit: read at once
        quick = sampler.stop("quick")
        sampler.begin("long")  # a notebook executing for eight intervals, or more
        time.sleep(0.4)
        wait_for_samples(sampler, "long", 2)
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
        wait_for_samples(sampler, "executed", 2)
        hit = sampler.stop("hit")
        executed = sampler.stop("executed")
    assert hit is not None and hit.times == []
    assert executed is not None and len(executed.times) >= 2


def test_samples_are_spaced_to_take_their_share_of_a_core(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A sample of 20 ms at a 10 % share is followed by 180 ms without one: a page
    read for 0.5 s gets three samples at most, not one every 50 ms interval."""
    with running_sampler(monkeypatch) as sampler:
        monkeypatch.setattr(calibration, "MAX_CPU_SHARE", 0.1)
        monkeypatch.setattr(calibration, "workload", lambda: time.sleep(0.02))
        sampler.begin("long")
        time.sleep(0.5)
        long = sampler.stop("long")
    assert long is not None and 1 <= len(long.times) <= 3


def test_a_short_notebook_takes_the_recent_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook over before its first sample costs no sample of its own while the
    process has a recent one; without one, it is sampled once, for the next too."""
    with running_sampler(monkeypatch) as sampler:
        monkeypatch.setattr(calibration, "SAMPLE_INTERVAL", 60.0)  # no sample while read
        app = types.SimpleNamespace()
        build_state(app).sampler = sampler
        sampler.remember(0.123)
        sampler.begin("short")
        assert calibration.around_notebook(app, "short") == 0.123
        monkeypatch.setattr(calibration, "RECENT_SECONDS", 0.0)
        time.sleep(0.01)
        sampler.begin("later")
        measured = calibration.around_notebook(app, "later")
        assert measured != 0.123 and sampler.latest is not None
        assert sampler.latest[1] == measured


def test_the_build_calibration_is_its_notebooks_median() -> None:
    """A build that executed notebooks times nothing more: its calibration is the
    median of theirs (measured once, only when none has one)."""
    sampled = types.SimpleNamespace()
    build = calibration.of_build(sampled, [0.02, None, 0.04, 0.03])
    assert build == {"seconds": 0.03, "workload": calibration.WORKLOAD_VERSION}
    assert calibration.of_build(sampled, [0.5]) is build  # once per build
    unsampled = calibration.of_build(types.SimpleNamespace(), [None])
    assert unsampled["seconds"] > 0 and unsampled["workload"] == calibration.WORKLOAD_VERSION
