"""Time the status page's HTML for a large book: 1,000 notebooks of ~50 code cells.

    python benchmarks/bench_status_page.py [--notebooks 1000] [--cells 50] [--baseline]
        [--write FOLDER]

Synthetic records (deterministic) go through the same analysis and rendering
as a build (:func:`~sphinx_gpu_admonition.model.analysis.analyse` and
:func:`~sphinx_gpu_admonition.render.status_html.render_html`); the script prints the
time of each step and the size of the HTML fragment and of the per-cell data
file.  ``--write`` saves a stand-alone page (with the extension's CSS and
JavaScript inlined) and its data file to a folder; serve it
(``python -m http.server -d FOLDER``) to try sorting, filtering and details in a
browser (browsers do not let a page opened from file:// read its data file).
``benchmarks/run.py`` measures the same page in Chromium.
"""

from __future__ import annotations

import argparse
import json
import random
import time
import types
from pathlib import Path

from sphinx_gpu_admonition.ext.admonition import CSS_FILE, STATIC_DIR
from sphinx_gpu_admonition.ext.status_page import write_cells_data
from sphinx_gpu_admonition.ext.support import CSS_FILE as STATUS_CSS_FILE
from sphinx_gpu_admonition.ext.support import JS_FILE
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.status_html import CELLS_DATA_SUFFIX, cells_data, render_html
from sphinx_gpu_admonition.render.status_rows import StatusOptions

PAGE = "status.html"
DATA = "status" + CELLS_DATA_SUFFIX

ENVIRONMENT = {
    "host": {"cpu": "AMD EPYC 7763", "cores": 16, "memory_gb": 128.0},
    "python": "3.12.3",
    "jax": {"backend": "gpu", "version": "0.4.35",
            "devices": [{"platform": "gpu", "kind": "NVIDIA H200"}]},
    "gpus": [{"name": "NVIDIA H200", "memory_mb": 143771.0, "driver": "570.86"}],
}


def synthetic_records(notebooks: int = 1000, cells: int = 50,
                      seed: int = 1) -> list[NotebookRecord]:
    rng = random.Random(seed)
    records = []
    for n in range(notebooks):
        cell_list = []
        for c in range(cells):
            seconds = rng.expovariate(5.0) * (30 if rng.random() < 0.02 else 1)
            compile_seconds = seconds * rng.random() * 0.8 if rng.random() < 0.3 else 0.0
            cell_list.append({
                "index": c * 2 + 1, "execution_count": c + 1, "seconds": seconds,
                "first_line": f"result_{c} = model.step(params, x[{c}])  # <comment & more>",
                "compile_seconds": compile_seconds,
                "compilations": ({f"jit(step_{c % 7})": rng.randint(1, 4)}
                                 if compile_seconds else {}),
                "loops": ["lax.scan"] if rng.random() < 0.05 else [],
            })
        status = "error" if n % 97 == 0 else "ok"
        records.append(NotebookRecord.from_dict({
            "docname": f"lectures/part{n % 10}/lecture_{n:04d}",
            "title": f"Lecture {n}: dynamic programming & <friends>",
            "status": status, "provenance": "cache" if n % 3 else "executed",
            "method": "cache", "executed_at": "2026-11-29T21:00:00+00:00",
            "runtime_seconds": sum(c["seconds"] for c in cell_list) + 1.5,
            "error": {"type": "ValueError", "message": "shapes (3,) and (4,) <not aligned>",
                      "cell_index": 5} if status == "error" else None,
            "environment": ENVIRONMENT, "cells": cell_list, "capture": "ok",
        }))
    return records


def baseline_of(records: list[NotebookRecord]) -> StatusReport:
    """The same notebooks, 20% faster, one in ten missing (so some are new)."""
    older = []
    for record in records[::1]:
        if hash(record.docname) % 10 == 0:
            continue
        data = record.to_dict()
        data["runtime_seconds"] = (record.runtime_seconds or 0) * 0.8
        for cell in data["cells"]:
            cell["seconds"] *= 0.8
        older.append(NotebookRecord.from_dict(data))
    return StatusReport(older)


def page(fragment: str) -> str:
    """A page as a build writes it: the fragment with both of the extension's
    stylesheets (the notice's and the status table's) and its script."""
    css = "\n".join((STATIC_DIR / name).read_text(encoding="utf-8")
                     for name in (CSS_FILE, STATUS_CSS_FILE))
    js = (STATIC_DIR / JS_FILE).read_text(encoding="utf-8")
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Status benchmark</title><style>{css}</style></head><body>"
            f"{fragment}<script>{js}</script></body></html>")


def write_site(folder: Path, records: list[NotebookRecord], cells: bool = True,
               baseline: StatusReport | None = None) -> tuple[int, int, int]:
    """``status.html`` (and with ``cells``, its data files) in ``folder``, as a build
    writes them; the sizes in bytes of the page, of all the data files and of the
    largest one (what opening a row's details reads)."""
    analysis = analyse(StatusReport(records), Thresholds(), baseline)
    folder.mkdir(parents=True, exist_ok=True)
    builder = types.SimpleNamespace(get_outfilename=lambda docname: str(folder / PAGE))
    sources = write_cells_data(builder, "status", analysis) if cells else None
    html = page(render_html(analysis, StatusOptions(cells=cells), lambda d: f"{d}.html",
                            cells_src=sources)).encode("utf-8")
    (folder / PAGE).write_bytes(html)
    sizes = [path.stat().st_size for path in folder.glob("status.gpu-cells*.json")]
    return len(html), sum(sizes), max(sizes, default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=1000)
    parser.add_argument("--cells", type=int, default=50)
    parser.add_argument("--baseline", action="store_true", help="compare with a baseline")
    parser.add_argument("--write", type=Path, help="save a stand-alone page and its data")
    args = parser.parse_args()

    start = time.perf_counter()
    records = synthetic_records(args.notebooks, args.cells)
    made = time.perf_counter()
    baseline = baseline_of(records) if args.baseline else None
    analysis = analyse(StatusReport(records), Thresholds(), baseline)
    analysed = time.perf_counter()
    fragment = render_html(analysis, StatusOptions(), lambda d: f"{d}.html", cells_src=DATA)
    rendered = time.perf_counter()
    data = json.dumps(cells_data(analysis), ensure_ascii=False, separators=(",", ":"))
    dumped = time.perf_counter()
    without_cells = render_html(analysis, StatusOptions(cells=False), lambda d: f"{d}.html")
    rendered_short = time.perf_counter()

    print(f"{args.notebooks} notebooks x {args.cells} cells"
          f"{' with a baseline' if args.baseline else ''}")
    print(f"  records:            {made - start:7.3f} s")
    print(f"  analyse:            {analysed - made:7.3f} s")
    print(f"  render (cells=yes): {rendered - analysed:7.3f} s, "
          f"{len(fragment.encode()) / 1e6:.1f} MB")
    print(f"  cell data (JSON):   {dumped - rendered:7.3f} s, "
          f"{len(data.encode()) / 1e6:.1f} MB (loaded when a row's details open)")
    print(f"  render (cells=no):  {rendered_short - dumped:7.3f} s, "
          f"{len(without_cells.encode()) / 1e6:.2f} MB")
    if args.write:
        write_site(args.write, records, baseline=baseline)
        print(f"  wrote {args.write / PAGE} and its data files ({DATA} ...)")


if __name__ == "__main__":
    main()
