"""The machines a build ran on, as the tables of ``report`` and ``compare`` show them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model.formatting import format_gpu_memory
from ..model.record import Environment, StatusReport
from .output import Style, md_table, md_text, plural, text_table


def machine_summary(env: Environment, docnames: Sequence[str] = ()) -> dict[str, Any]:
    """One machine as the records describe it: the fields shown in tables."""
    jax = env.jax
    gpus = ", ".join(g.name + (f" ({format_gpu_memory(g.memory_mb)})" if g.memory_mb else "")
                     for g in env.gpus)
    driver = next((g.driver for g in env.gpus if g.driver), None)
    cuda = next((g.cuda for g in env.gpus if g.cuda), None)
    host = env.host
    return {
        "id": env.machine_id,
        "device": env.device_label,
        "backend": env.backend,
        "jax": jax.version,
        "jaxlib": jax.jaxlib_version,
        "plugins": ", ".join(f"{k} {v}" for k, v in sorted(jax.plugins.items())) or None,
        "gpus": gpus or None,
        "driver": driver + (f" (CUDA {cuda})" if cuda else "") if driver else None,
        "cpu": host.cpu,
        "cores": host.cores,
        "memory_gb": host.memory_gb,
        "os": host.os,
        "python": env.python,
        "notebooks": list(docnames),
    }


MACHINE_FIELDS = (
    ("device", "Device"), ("backend", "JAX backend"), ("jax", "JAX"), ("jaxlib", "jaxlib"),
    ("plugins", "JAX plugins"), ("gpus", "GPUs"), ("driver", "NVIDIA driver"), ("cpu", "CPU"),
    ("cores", "CPU cores"), ("memory_gb", "Memory (GB)"), ("os", "OS"), ("python", "Python"),
)


def machine_value(machine: dict[str, Any], key: str) -> str:
    value = machine.get(key)
    return "-" if value in (None, "") else str(value)


def report_machines(report: StatusReport) -> list[dict[str, Any]]:
    return [machine_summary(env, docnames) for env, docnames in report.machines().values()]


def machines_text(machines: list[dict[str, Any]], style: Style) -> list[str]:
    if not machines:
        return ["  no machine data (no notebook was captured)"]
    headers = ["", *[f"{m['id']} ({plural(len(m['notebooks']), 'notebook')})" for m in machines]]
    rows = [[label, *[machine_value(m, key) for m in machines]]
            for key, label in MACHINE_FIELDS]
    return text_table(headers, rows, style)


def machines_markdown(machines: list[dict[str, Any]], prefix: str = "") -> list[str]:
    if not machines:
        return ["No machine data (no notebook was captured)."]
    headers = ["", *[md_text(f"{prefix}{m['id']} ({plural(len(m['notebooks']), 'notebook')})")
                     for m in machines]]
    rows = [[label, *[md_text(machine_value(m, key)) for m in machines]]
            for key, label in MACHINE_FIELDS]
    return md_table(headers, rows)

