"""The probe's NVIDIA paths that a CPU machine can still run: nvidia-smi's CSV
output (in the documented ``--format=csv,noheader,nounits`` form) and its time limit."""

from __future__ import annotations

import json
import os
import stat
import time
import types
from pathlib import Path

import pytest

from sphinx_gpu_admonition.probe import device_sync, facts


def fake_nvidia_smi(folder: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> None:
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_nvidia_smi_rows_become_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_nvidia_smi(tmp_path, "printf 'Tesla T4, 15360, 535.104.05\\nNVIDIA H200, 143771, "
                              "570.86.15\\n'", monkeypatch)
    gpus = facts._nvidia_smi_gpus()
    assert gpus == [
        {"name": "Tesla T4", "memory_mb": 15360.0, "driver": "535.104.05",
         "source": "nvidia-smi"},
        {"name": "NVIDIA H200", "memory_mb": 143771.0, "driver": "570.86.15",
         "source": "nvidia-smi"},
    ]


def test_a_hanging_nvidia_smi_is_cut_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_nvidia_smi(tmp_path, "sleep 30", monkeypatch)
    started = time.monotonic()
    with pytest.raises(Exception, match="timed out"):
        facts._nvidia_smi_gpus(timeout=0.5)
    assert time.monotonic() - started < 10


def test_no_driver_means_no_query(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts.os.path, "exists", lambda path: False)
    monkeypatch.setattr(facts, "_nvml_gpus", lambda: pytest.fail("NVML queried"))
    assert facts.gpu_info() == []


def test_without_nvml_a_hanging_nvidia_smi_gives_no_gpus(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_nvidia_smi(tmp_path, "sleep 30", monkeypatch)
    monkeypatch.setattr(facts.os.path, "exists", lambda path: True)
    monkeypatch.setattr(facts, "NVIDIA_SMI_TIMEOUT", 0.5)

    def no_nvml() -> list[dict]:
        raise ImportError("No module named 'pynvml'")

    monkeypatch.setattr(facts, "_nvml_gpus", no_nvml)
    assert facts.gpu_info() == []  # swallowed: the notebook must never fail


def test_jax_plugins_are_read_from_dist_info_folders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "jax_cuda13_plugin-0.10.2.dist-info").mkdir()
    (tmp_path / "jax_cuda13_pjrt-0.10.2.dist-info").mkdir()
    (tmp_path / "numpy-2.4.6.dist-info").mkdir()
    monkeypatch.setattr(facts.sys, "path", [str(tmp_path), str(tmp_path / "missing")])
    assert facts.jax_plugins() == {"jax-cuda13-plugin": "0.10.2",
                                   "jax-cuda13-pjrt": "0.10.2"}


def test_jax_distributions_include_jax_and_jaxlib(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("jax-0.10.2", "jaxlib-0.10.2", "libtpu-0.0.30", "jaxtyping-0.3.0"):
        (tmp_path / f"{name}.dist-info").mkdir()
    monkeypatch.setattr(facts.sys, "path", [str(tmp_path)])
    assert facts.jax_distributions() == {"jax": "0.10.2", "jaxlib": "0.10.2",
                                         "libtpu": "0.0.30"}


def test_the_device_sync_waits_on_one_tiny_computation_per_gpu() -> None:
    """Two GPUs (mocked): one computation compiled per device ahead of time, then
    per cell each one run and waited for; the live arrays are never listed."""
    log: list[tuple[str, str]] = []

    class Result:
        def __init__(self, device: str) -> None:
            self.device = device

        def block_until_ready(self) -> Result:
            log.append(("wait", self.device))
            return self

    def jit(function, out_shardings):
        device = out_shardings.device

        def run() -> Result:
            log.append(("run", device))
            return Result(device)

        def lower():
            log.append(("compile", device))
            return types.SimpleNamespace(compile=lambda: run)

        return types.SimpleNamespace(lower=lower)

    fake_jax = types.SimpleNamespace(
        local_devices=lambda: ["gpu:0", "gpu:1"], jit=jit,
        sharding=types.SimpleNamespace(
            SingleDeviceSharding=lambda device: types.SimpleNamespace(device=device)),
        live_arrays=lambda: pytest.fail("the live arrays were listed"))
    sync = device_sync.DeviceSync(fake_jax)
    assert log == [("compile", "gpu:0"), ("compile", "gpu:1")]
    log.clear()
    sync()
    assert log == [("run", "gpu:0"), ("wait", "gpu:0"), ("run", "gpu:1"), ("wait", "gpu:1")]


def test_the_probe_says_whether_a_persistent_compilation_cache_is_set(tmp_path: Path) -> None:
    jax = pytest.importorskip("jax")
    from sphinx_gpu_admonition.probe import facts

    before = jax.config.jax_compilation_cache_dir
    assert facts.jax_info()["compilation_cache"] is bool(before)
    jax.config.update("jax_compilation_cache_dir", str(tmp_path / "jax-cache"))
    try:
        info = facts.jax_info()
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
    assert info["compilation_cache"] is True and str(tmp_path) not in json.dumps(info)
