"""The calibration sampler: samples while a page is read for long, none for a quick one;
and the machine factor between two builds: from the notebooks themselves, the
calibration as its check, never across a change of device."""

from __future__ import annotations

import contextlib
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from sphinx_gpu_admonition.ext import calibration
from sphinx_gpu_admonition.ext.state import build_state
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.machine import WORKLOAD_VERSION, machine_factor
from sphinx_gpu_admonition.model.record import (
    Environment,
    GpuInfo,
    Host,
    JaxInfo,
    NotebookRecord,
    StatusReport,
)


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


# -- the machine factor between two builds (issue 33, item 8) ----------------------------
def _report(seconds: dict[str, float], calibration: float | None = None,
            backend: str | None = None, device: str = "AMD EPYC") -> StatusReport:
    """A build of notebooks that took ``seconds``, with a build calibration."""
    build = {} if calibration is None else {"calibration": {"seconds": calibration,
                                                            "workload": WORKLOAD_VERSION}}
    environment = Environment(jax=JaxInfo(backend=backend), host=Host(cpu=device, cores=2),
                              gpus=[GpuInfo(name=device)] if backend == "gpu" else [])
    return StatusReport([NotebookRecord(docname=name, status="ok", provenance="executed",
                                        runtime_seconds=time, capture="ok",
                                        environment=environment)
                         for name, time in seconds.items()], build)


def _compared(a: StatusReport, b: StatusReport, fail_above: float | None = None) -> dict:
    from sphinx_gpu_admonition.cli import CompareOptions, summarise_compare

    return summarise_compare(a, b, CompareOptions("a.json", "b.json", fail_above=fail_above,
                                                  min_seconds=1.0))


#: QuantEcon's two forced builds of four lectures on a shared runner: the builder's
#: pure-Python calibration moved 2.5x, the notebooks 1.35x to 2.7x, all faster
QUANTECON_BEFORE = {"ar1": 40.0, "kesten": 30.0, "markov": 20.0, "numba": 50.0}
QUANTECON_AFTER = {"ar1": 14.8, "kesten": 18.0, "markov": 14.8, "numba": 24.5}


def test_faster_notebooks_are_never_called_slower_whatever_the_calibration_says() -> None:
    before = _report(QUANTECON_BEFORE, calibration=0.05)
    after = _report(QUANTECON_AFTER, calibration=0.02)  # 2.5x faster
    factor = machine_factor(after, before)
    assert factor.source == "notebooks" and factor.count == 4
    assert factor.factor == pytest.approx(0.49)  # the lower middle of 0.37 0.49 0.6 0.74
    assert factor.spread == pytest.approx((0.37, 0.74))
    assert factor.calibration == pytest.approx(0.4)
    for fail_above in (None, 1.5, 1.01):
        data = _compared(before, after, fail_above)
        assert data["slower_notebooks"] == [] and data["regressions"] == []
        assert not any(row["regression"] for row in data["notebooks"] + data["cells"])
    text = _compared(before, after)["machine"]["text"]
    assert text == ("The machine of the new build was 2.0x faster overall (the median of 4 "
                    "notebooks' ratios, 0.37x to 0.74x; the calibration said 2.5x faster); 0 "
                    "notebooks slower beyond that")
    # the analysis (the status page, the job summary) agrees: no regression
    analysis = analyse(after, Thresholds(), before)
    assert analysis.regressed == []


def test_a_calibration_that_moved_does_not_hide_a_real_regression() -> None:
    """The other way round: a calibration 2x slower, notebooks as fast as before but one
    1.6x slower: that one is a regression."""
    before = _report({"a": 10.0, "b": 10.0, "c": 10.0, "d": 10.0}, calibration=0.02)
    after = _report({"a": 10.2, "b": 9.9, "c": 10.0, "d": 16.0}, calibration=0.04)
    data = _compared(before, after, fail_above=1.5)
    assert data["slower_notebooks"] == ["d"]
    assert [line.split(":")[0] for line in data["regressions"]] == ["d"]
    assert "the calibration said 2.0x slower" in data["machine"]["text"]


def test_half_the_notebooks_slower_do_not_excuse_each_other() -> None:
    """An even count takes the lower middle ratio: two notebooks 3x slower out of four
    do not make the machine 2x slower."""
    before = _report({"w": 10.0, "x": 10.0, "y": 10.0, "z": 10.0})
    after = _report({"w": 10.0, "x": 10.0, "y": 30.0, "z": 30.0})
    data = _compared(before, after, fail_above=1.5)
    assert data["machine"]["factor"] == 1.0
    assert data["slower_notebooks"] == ["y", "z"]


def test_across_a_change_of_device_no_machine_factor_applies() -> None:
    """GPU to CPU: the device change is the news, never "does not scale with the
    machine's speed" nor "beyond the machine factor 1.00x"."""
    from sphinx_gpu_admonition.render import github

    before = _report({"jax_intro": 4.5, "ar1": 2.0}, calibration=0.02, backend="gpu",
                     device="Tesla T4")
    after = _report({"jax_intro": 176.0, "ar1": 2.1}, calibration=0.04, backend="cpu")
    data = _compared(before, after)
    machine = data["machine"]
    assert machine["source"] == "device" and machine["factor"] is None
    assert data["other_device_notebooks"] == ["jax_intro", "ar1"]
    assert data["slower_on_other_device"] == ["jax_intro"] and data["slower_notebooks"] == []
    assert machine["text"].startswith("The device changed for 2 notebooks (GPU: Tesla T4 → "
                                      "CPU: AMD EPYC, 2 cores): no machine factor applies to "
                                      "them; 1 slower than the baseline (1.5x or more): "
                                      "jax_intro.")
    assert "does not scale" not in machine["text"] and "overall" not in machine["text"]
    analysis = analyse(after, Thresholds(), before)
    (warning,) = [line for line in github.annotations(after, analysis)
                  if "Slower than the baseline" in line]
    assert "beyond the machine factor" not in warning
    assert "another kind of device" in warning and "GPU: Tesla T4" in warning


def test_notebooks_on_another_device_are_left_out_of_the_factor() -> None:
    """A mixed build: the factor comes from the notebooks on the same kind of device;
    the one that moved from the GPU to the CPU is judged without it."""
    before = _report({"a": 10.0, "b": 10.0, "c": 10.0}, backend="cpu")
    before.notebooks.append(_report({"g": 1.0}, backend="gpu", device="Tesla T4").notebooks[0])
    after = _report({"a": 20.0, "b": 20.0, "c": 20.0, "g": 1.8}, backend="cpu")
    factor = machine_factor(after, before)
    assert (factor.factor, factor.count, factor.device_changes) == (2.0, 3, 1)
    data = _compared(before, after, fail_above=1.5)
    assert data["slower_notebooks"] == [] and data["slower_on_other_device"] == ["g"]
    assert "The device changed for 1 notebook" in data["machine"]["text"]


def test_a_cache_hit_does_not_make_the_machine_factor() -> None:
    """A notebook reused from the cache keeps the time of the build that executed it: it
    says nothing about this machine, and is compared as it is."""
    before = _report({"a": 10.0, "b": 10.0, "c": 10.0, "d": 10.0})
    after = _report({"a": 20.0, "b": 20.0, "c": 20.0, "d": 10.0})
    after.notebooks[3].provenance = "cache"
    factor = machine_factor(after, before)
    assert (factor.factor, factor.count) == (2.0, 3)
    analysis = analyse(after, Thresholds(), before)
    assert analysis.notebooks[3].comparison.machine_factor == 1.0


def test_notebooks_of_start_up_and_sleeps_make_no_factor() -> None:
    """A notebook whose cells took under a second is mostly kernel start-up, imports or
    sleeps, which do not scale with the machine: on a loaded runner the one CPU-bound
    notebook is judged by the calibration, not by two notebooks that did not slow down."""
    from sphinx_gpu_admonition.model.record import CellRecord

    def build(loops: float, calibration: float) -> StatusReport:
        report = _report({"broken": 1.5, "sleeps": 1.8, "loops": loops + 1.0},
                         calibration=calibration)
        for nb, cell_seconds in zip(report.notebooks, (0.01, 0.3, loops), strict=True):
            nb.cells = [CellRecord(index=1, execution_count=1, seconds=cell_seconds,
                                   first_line="x")]
        return report

    before, after = build(2.0, 0.02), build(5.0, 0.05)  # the runner 2.5x slower
    factor = machine_factor(after, before)
    assert (factor.source, factor.factor) == ("calibration", pytest.approx(2.5))
    assert _compared(before, after, fail_above=1.5)["slower_notebooks"] == []
