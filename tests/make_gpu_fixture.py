"""Move a status file executed on the CPU to a GPU's device fields (Tesla T4).

Only the device fields change (each notebook's JAX backend and devices, the GPUs
seen, the platform its loops were compiled for; the host stays); the cell times,
compilations and code are the real CPU execution's.  A CPU reports no device memory,
so the GPU memory fields are synthetic (a fixed pattern, for the views to show).
The file says so: ``build.synthetic_device`` is true and ``build.note`` tells what
was changed.  Rerun it after executing the
``tests/roots/diagnosis`` notebooks again:

    python tests/make_gpu_fixture.py _build/execution-status.json tests/data/gpu.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

GPU_NAME = "Tesla T4"
GPU = {"name": GPU_NAME, "memory_mb": 15360, "driver": "550.54.15", "cuda": "12.4",
       "source": "nvml"}
NOTE = (f"synthetic device: executed on a CPU, then only the device fields were changed to "
        f"a {GPU_NAME} GPU by tests/make_gpu_fixture.py; the times are the CPU's, the GPU "
        f"memory figures are made up")
#: GPU memory in use after each cell (MiB), repeated: a made-up pattern, never measured
SYNTHETIC_MEMORY_MB = (310.5, 1210.0, 820.25)


def _synthetic_memory(notebook: dict[str, Any]) -> None:
    peak = 0.0
    for position, cell in enumerate(notebook.get("cells") or []):
        if cell.get("error") == "DeadKernelError":
            continue  # the cell a kernel died in wrote no line: nothing was measured
        in_use = SYNTHETIC_MEMORY_MB[position % len(SYNTHETIC_MEMORY_MB)]
        cell["device_memory_mb"] = in_use
        # the kernel's peak is reported since it started: a cell's own when it grew
        cell["device_peak_memory_mb"] = in_use if in_use > peak else None
        peak = max(peak, in_use)
    notebook["device_peak_memory_mb"] = peak or None
    if notebook.get("error") and notebook.get("status") == "kernel_died":
        notebook["error"]["device_memory_mb"] = next(
            (c["device_memory_mb"] for c in reversed(notebook.get("cells") or [])
             if c.get("device_memory_mb") is not None), None)


def to_gpu(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a status document) with every captured notebook on a Tesla T4."""
    moved = json.loads(json.dumps(data))
    for notebook in moved["notebooks"]:
        environment = notebook.get("environment") or {}
        jax = environment.get("jax") or {}
        if notebook.get("capture") != "ok" and not jax.get("backend"):
            continue
        jax.update(backend="gpu", devices=[{"platform": "gpu", "kind": GPU_NAME, "count": 1}])
        jax.setdefault("plugins", {})["jax-cuda12-plugin"] = jax.get("version") or "0"
        environment.update(jax=jax, gpus=[dict(GPU)])
        notebook["environment"] = environment
        for cell in notebook.get("cells") or []:
            for loop in cell.get("compiled_loops") or []:
                loop["platform"] = "gpu"  # a CPU-pinned twin is told apart by the parse
        _synthetic_memory(notebook)
    moved["build"] = {**moved.get("build", {}), "synthetic_device": True, "note": NOTE}
    return moved


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: make_gpu_fixture.py STATUS_JSON OUTPUT_JSON", file=sys.stderr)
        return 2
    source, target = (Path(arg) for arg in argv)
    data = json.loads(source.read_text(encoding="utf-8"))
    target.write_text(json.dumps(to_gpu(data), indent=1, sort_keys=True) + "\n",
                      encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
