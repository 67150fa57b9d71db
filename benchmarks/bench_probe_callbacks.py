"""Cost of the probe's two IPython callbacks per cell, without kernel noise.

Calls ``pre_run_cell`` / ``post_run_cell`` of a real probe (writing to a real
file) N times: once before JAX is imported, once with JAX on the CPU and
1,000 live arrays, which the end-of-cell device synchronisation walks.

    python benchmarks/bench_probe_callbacks.py [--cells 5000] [--arrays 1000]
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
import types

from sphinx_gpu_admonition.probe import KERNEL_PROBE_FILE


def load_probe_module() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_probe", KERNEL_PROBE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_cell_seconds(probe, cells: int) -> float:
    info = types.SimpleNamespace(store_history=True, raw_cell="x = 1\ny = x + 2\n")
    result = types.SimpleNamespace(error_in_exec=None, error_before_exec=None,
                                   execution_count=1)
    started = time.perf_counter()
    for _ in range(cells):
        probe.pre_run_cell(info)
        probe.post_run_cell(result)
    return (time.perf_counter() - started) / cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=5000)
    parser.add_argument("--arrays", type=int, default=1000)
    args = parser.parse_args()
    module = load_probe_module()
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as output:
        probe = module.Probe(output.name)
        seconds = per_cell_seconds(probe, args.cells)
        print(f"without JAX:               {seconds * 1e6:7.1f} us/cell")
        import jax.numpy as jnp

        arrays = [jnp.ones(3) + i for i in range(args.arrays)]
        probe.listen_to_jax()
        print(f"JAX CPU, {len(arrays):5d} live arrays: "
              f"{per_cell_seconds(probe, args.cells) * 1e6:7.1f} us/cell")


if __name__ == "__main__":
    main()
