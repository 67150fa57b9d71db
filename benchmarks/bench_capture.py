"""Per-cell cost of the in-kernel capture, measured in a real IPython kernel.

Executes the same notebook with nbclient twice per round, with and without the
probe (PYTHONSTARTUP), and reports the difference per cell.  Three notebooks:
trivial cells, cells with 1,000 live JAX arrays (the end-of-cell device sync
walks them), and cells that compile.

    python benchmarks/bench_capture.py [--cells 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from sphinx_gpu_admonition.probe import ENV_OUTPUT, ENV_PROBE, KERNEL_PROBE_FILE, STARTUP_FILE


def notebook(setup: str, body: str, cells: int) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(setup)] + [
        nbformat.v4.new_code_cell(body) for _ in range(cells)]
    return nb


def cell_seconds(nb: nbformat.NotebookNode, probe: bool, output: Path) -> float:
    saved = dict(os.environ)
    try:
        if probe:
            os.environ.update({"PYTHONSTARTUP": str(STARTUP_FILE),
                               ENV_PROBE: str(KERNEL_PROBE_FILE), ENV_OUTPUT: str(output)})
        client = NotebookClient(nb, timeout=600, record_timing=True)
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    # nbclient's own timestamps: from the kernel starting the cell to its reply
    total = 0.0
    for cell in nb.cells[1:]:
        timing = cell.metadata["execution"]
        total += _parse(timing["shell.execute_reply"]) - _parse(timing["iopub.execute_input"])
    return total


def _parse(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cases = {
        "trivial cell (x = 1)": ("pass", "x = 1"),
        "1,000 live JAX arrays": (
            "import jax.numpy as jnp\narrays = [jnp.ones(3) + i for i in range(1000)]",
            "y = arrays[0] + 1"),
        "numpy cell": ("import numpy as np\na = np.ones((200, 200))", "b = a @ a"),
    }
    with tempfile.TemporaryDirectory() as folder:
        for name, (setup, body) in cases.items():
            deltas = []
            for round_ in range(args.rounds):
                output = Path(folder) / f"{round_}.jsonl"
                without = cell_seconds(notebook(setup, body, args.cells), False, output)
                with_probe = cell_seconds(notebook(setup, body, args.cells), True, output)
                deltas.append((with_probe - without) / args.cells)
                print(f"  {name}: round {round_}: {without / args.cells * 1e3:.3f} ms/cell "
                      f"without, {with_probe / args.cells * 1e3:.3f} ms/cell with the probe")
            print(f"{name}: probe overhead {statistics.median(deltas) * 1e6:.0f} us/cell "
                  f"(median of {args.rounds} rounds of {args.cells} cells)")


if __name__ == "__main__":
    main()
