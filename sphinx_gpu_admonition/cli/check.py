"""``check``: this machine's Python, JAX, backends, devices and NVIDIA driver, a
test computation on every device and an optional benchmark (:mod:`..bench`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..model.formatting import format_bytes, format_gpu_memory
from .output import (
    EXIT_FAILED,
    EXIT_OK,
    Style,
    colour_enabled,
    emit,
    emit_json,
    fmt_seconds,
    shorten,
    text_table,
)


def run_check(require: str | None, bench_size: str | None) -> dict[str, Any]:
    from . import bench

    machine = bench.inspect_machine()
    tests = bench.device_tests() if machine["jax"]["installed"] else []
    result: dict[str, Any] = dict(machine, device_tests=tests, requirement=None, bench=None)
    if require:
        result["requirement"] = bench.requirement(require, machine, tests)
    if bench_size:
        result["bench"] = bench.run_bench(bench_size)
    failed_tests = [t for t in tests if not t["ok"]]
    result["problems"] = jax_problems(machine["jax"])
    result["ok"] = not failed_tests and not result["problems"] and (
        result["requirement"] is None or result["requirement"]["ok"])
    return result


def jax_problems(jax: dict[str, Any]) -> list[str]:
    """Why JAX, although installed, cannot run anything here (empty when it can)."""
    if not jax["installed"]:
        if "jax" in (jax.get("distributions") or {}):
            return [f"JAX is installed but cannot be imported ({jax['import_error']})"]
        return []
    if not any(state["usable"] for state in jax["backends"].values()):
        reason = jax.get("init_error") or "no backend has a device"
        platforms = jax.get("jax_platforms")
        setting = f" with JAX_PLATFORMS={platforms!r}" if platforms else ""
        return [f"JAX has no usable backend{setting}: {reason}"]
    return []


def render_check_text(data: dict[str, Any], style: Style) -> list[str]:
    py, host, nvidia, jax = data["python"], data["host"], data["nvidia"], data["jax"]
    good, bad, dim = (lambda t: style(t, "green")), (lambda t: style(t, "red")), \
        (lambda t: style(t, "dim"))
    host_text = ", ".join(str(p) for p in (
        host.get("cpu"), f"{host['cores']} cores" if host.get("cores") else None,
        f"{host['memory_gb']} GB" if host.get("memory_gb") else None, host.get("os"),
        host.get("machine")) if p)
    lines = [style("sphinx-gpu-admonition check", "bold"),
             f"  Python         {py['version']} ({py['implementation']}) {py['executable']}",
             f"  Host           {host_text or '-'}"]
    if nvidia["gpus"]:
        for gpu in nvidia["gpus"]:
            memory = f", {format_gpu_memory(gpu.get('memory_mb'))}" if gpu.get("memory_mb") else ""
            lines.append(f"  NVIDIA GPU     {gpu['name']}{memory} (driver "
                         f"{gpu.get('driver') or '?'}, via {gpu.get('source')})")
    elif nvidia["driver_file"]:
        lines.append(f"  NVIDIA driver  {nvidia['driver'] or 'loaded'}; no GPU listed by NVML "
                     f"or nvidia-smi")
    else:
        missing = "nvidia-smi not on PATH" if not nvidia["nvidia_smi"] else \
            f"nvidia-smi at {nvidia['nvidia_smi']}"
        lines.append(f"  NVIDIA driver  {dim('not found')} (no /proc/driver/nvidia/version; "
                     f"{missing})")
    if not jax["installed"] and data["problems"]:
        lines.append(f"  JAX            {bad('cannot be imported')} ({jax['import_error']})")
    elif not jax["installed"]:
        lines.append(f"  JAX            {bad('not installed')} ({jax['import_error']})")
        lines.append("                 the device test is skipped; install JAX to check "
                     "devices (pip install jax, or 'jax[cuda12]' for NVIDIA GPUs)")
    else:
        plugins = ", ".join(f"{k} {v}" for k, v in jax["distributions"].items()
                            if k not in ("jax", "jaxlib")) or "none"
        lines.append(f"  JAX            {jax['version']} (jaxlib {jax['jaxlib_version']}); "
                     f"plugins: {plugins}")
        lines.append(f"  JAX_PLATFORMS  {jax['jax_platforms'] or dim('(not set)')}")
        backend = jax["default_backend"]
        lines.append(f"  Default        {style(backend, 'bold') if backend else bad('none')}"
                     + (f"  ({jax['init_error']})" if jax["init_error"] else ""))
        for name, state in jax["backends"].items():
            if state["usable"]:
                text = good(f"usable, {state['devices']} device"
                            f"{'s' if state['devices'] != 1 else ''}")
            else:
                text = dim(f"not available: {shorten(state['error'] or '', 80)}")
            lines.append(f"  Backend {name:<6} {text}")
        if jax["devices"]:
            lines += ["", style("Devices", "bold")]
            rows = [[d["name"], d["platform"], d["kind"],
                     format_bytes((d["memory"] or {}).get("bytes_limit"), missing="-")]
                    for d in jax["devices"]]
            lines += text_table(["device", "platform", "kind", "memory"], rows, style)
    if data["device_tests"]:
        from .bench import DEVICE_TEST_SIZE as size

        lines += ["", style("Device test", "bold") + dim(
            f"  (jit of sum(tanh(x @ x.T)), {size}x{size} float32; block_until_ready; "
            "run = median of 5)")]
        rows = [[t["device"], fmt_seconds(t["compile_seconds"]),
                 fmt_seconds(t["first_run_seconds"]), fmt_seconds(t["run_seconds"]),
                 ("ok", ("green",)) if t["ok"] else (f"FAILED: {t['error']}", ("red",))]
                for t in data["device_tests"]]
        lines += text_table(["device", "compile", "first run", "run", "result"], rows, style,
                            right=(1, 2, 3))
    if data["bench"]:
        lines += [""] + _bench_text(data["bench"], style)
    requirement = data["requirement"]
    lines.append("")
    if requirement is not None:
        if requirement["ok"]:
            lines.append(good(f"Backend {requirement['backend']} is usable."))
        else:
            lines.append(bad(f"Backend {requirement['backend']} is required but not usable:"))
            lines += [f"  - {reason}" for reason in requirement["reasons"]]
    failed = [t for t in data["device_tests"] if not t["ok"]]
    if failed:
        lines.append(bad(f"The test computation failed on {len(failed)} device(s)."))
    lines += [bad(problem) for problem in data["problems"]]
    if data["ok"] and requirement is None:
        lines.append(good("OK") if jax["installed"] else
                     "OK (JAX is not installed, so no device was tested)")
    return lines


def _bench_text(bench_data: dict[str, Any], style: Style) -> list[str]:
    lines = [style("Benchmark", "bold") + style(
        f"  (size {bench_data['size']}; time = median, rate from the best run; "
        f"took {fmt_seconds(bench_data['seconds'])})", "dim")]
    rows = [[r["name"], r["device"], r["work"], fmt_seconds(r.get("first_call_seconds")),
             fmt_seconds(r["seconds"]), f"{r['rate']:.1f} {r['unit']}"]
            for r in bench_data["results"]]
    lines += text_table(["benchmark", "device", "work", "first call", "time", "rate"], rows,
                        style, right=(3, 4, 5))
    if bench_data.get("note"):
        lines.append(f"  {bench_data['note']}")
    return lines


def cmd_check(args: argparse.Namespace) -> int:
    require = "gpu" if args.require_gpu else args.require_backend
    data = run_check(require, args.bench_size if args.bench else None)
    if args.json:
        emit_json(data)
    else:
        emit(render_check_text(data, Style(colour_enabled(args.no_color, sys.stdout))))
    return EXIT_OK if data["ok"] else EXIT_FAILED
