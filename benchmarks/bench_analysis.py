"""Time the build's one analysis of a large book whose cells carry the parse's facts.

    python benchmarks/bench_analysis.py [--notebooks 1000] [--cells 50] [--repeats 7]

The records of ``bench_status_page.synthetic_records`` (1,000 notebooks of 50 code
cells), with what the parse of real lectures puts in them: one cell in ten runs a
jitted function (``cells[].jit_calls``, its compilation's input types in
``compiled_inputs``, a new size in every fourth notebook's later cell), one in
twenty a Python loop around it (``dispatch_loops``: 200,000 calls, or a ``while``
loop syncing every iteration), one in twenty a ``lax`` loop (``runs``, the step count
in the program its first call compiled).  It prints the median time of
:func:`~sphinx_gpu_admonition.model.analysis.analyse` and of the findings every view
lists (:func:`~sphinx_gpu_admonition.model.findings.findings`) over ``--repeats``
runs and their spread; run it with two checkouts on ``PYTHONPATH`` in turn to compare
releases (docs/performance.md).  It reads only fields that the status file had
before the rules that use them, so an earlier release analyses the same records.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_status_page import synthetic_records  # noqa: E402

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse  # noqa: E402
from sphinx_gpu_admonition.model.findings import findings  # noqa: E402
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport  # noqa: E402


def with_facts(record: NotebookRecord, rng: random.Random, number: int) -> NotebookRecord:
    """``record`` with the parse's and the probe's facts in some of its cells."""
    data = record.to_dict()
    data["user_functions"] = ["step", "simulate", "vfi"]
    for position, cell in enumerate(data["cells"]):
        cell["position"] = position
        draw = rng.random()
        if draw < 0.1:
            size = 1000 * (10 if number % 4 == 0 and position > 25 else 1)
            cell["compilations"] = {"jit(step)": 1}
            cell["compile_seconds"] = min(cell["seconds"], 0.2)
            cell["compiled_inputs"] = [{"function": "jit(step)", "inputs": [f"f32[{size}]"],
                                        "arguments": 1, "platform": "gpu"}]
            cell["jit_calls"] = [{"function": "step", "called": "step", "defined_cell": 0,
                                  "line": 1, "code": "@jax.jit", "call": "step(x)"}]
        elif draw < 0.15:
            syncing = rng.random() < 0.5
            cell["dispatch_loops"] = [{
                "loop": "while" if syncing else "for", "line": 3,
                "code": "while error > tol:" if syncing else "for _ in range(200_000):",
                "defined_cell": position, "calls": ["step"], "operations": ["jnp.max"],
                "iterations": None if syncing else 200_000,
                "syncs": [{"kind": "float", "code": "error = float(jnp.max(d))", "line": 5}]
                if syncing else [], "call": ""}]
        elif draw < 0.2:
            cell["runs"] = [{"primitive": "lax.fori_loop", "function": "simulate",
                             "defined_cell": 0, "steps": None, "call": "simulate(x)"}]
            if position < 10:
                cell["compilations"] = {"jit(simulate)": 1}
                cell["compiled_loops"] = [{"function": "jit(simulate)", "steps": 4000,
                                           "platform": "gpu"},
                                          {"function": "jit(simulate)", "steps": 5,
                                           "platform": "gpu"}]
        if draw < 0.2:
            cell["work"] = {"code": "x = step(x)", "line": 2, "kind": "jitted_call"}
    return NotebookRecord.from_dict(data)


def records(notebooks: int, cells: int) -> list[NotebookRecord]:
    rng = random.Random(2)
    return [with_facts(record, rng, number)
            for number, record in enumerate(synthetic_records(notebooks, cells))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=1000)
    parser.add_argument("--cells", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    report = StatusReport(records(args.notebooks, args.cells))
    # every cell judged, as a book whose limits flag many cells: the rules' worst case
    limits: dict[str, Any] = {"slow_cell_seconds": 0.5, "slow_cell_min_seconds": 0.1}
    times: dict[str, list[float]] = {"analyse": [], "findings": []}
    for _ in range(args.repeats):
        start = time.perf_counter()
        analysis = analyse(report, Thresholds(**limits))
        analysed = time.perf_counter()
        rows = findings(analysis)  # every view's list (the page, console, JUnit ...)
        times["analyse"].append(analysed - start)
        times["findings"].append(time.perf_counter() - analysed)
    print(f"{args.notebooks} notebooks x {args.cells} cells, {len(rows)} flagged, "
          f"{args.repeats} runs: " + "; ".join(
              f"{name} median {statistics.median(values):.3f} s (min {min(values):.3f}, "
              f"max {max(values):.3f})" for name, values in times.items()))


if __name__ == "__main__":
    main()
