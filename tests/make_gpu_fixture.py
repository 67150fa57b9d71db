"""Move a status file executed on the CPU to a GPU's device fields (Tesla T4).

Only the device fields change (each notebook's JAX backend and devices, the GPUs
seen, the platform its loops were compiled for; the host stays); the cell times,
compilations and code are the real CPU execution's.  A CPU reports no device memory,
so the GPU memory fields are synthetic (a fixed pattern, for the views to show).
The file says so: ``build.synthetic_device`` is true and ``build.note`` tells what
was changed.  Rerun it after executing the
``tests/roots/diagnosis`` notebooks again:

    python tests/make_gpu_fixture.py _build/execution-status.json tests/data/gpu.json

(``--pages DOC,DOC`` keeps only those notebooks: the parity book's GPU runner,
``tests/roots/parity/README.md``), or let it execute them (the docs' GPU case page,
docs/gpu-case.md, renders the result); it writes ``diagnosis-cpu-status.json`` (the
CPU execution as it was recorded) and ``diagnosis-gpu-t4-status.json`` (the same, moved)
into the folder:

    PYTHONPATH=$PWD .venv/bin/python tests/make_gpu_fixture.py --diagnosis tests/data

The execution is judged as the docs book judges it (its ``gpu_slow_cell_seconds``,
stored in the files' ``build.thresholds``, so that ``report`` on them flags what
the page flags); ``--judge FOLDER`` judges the committed files again, measurements
unchanged, after that limit changed (or to write them with this release's schema):

    PYTHONPATH=$PWD .venv/bin/python tests/make_gpu_fixture.py --judge tests/data

For that page the lecture runs its ``lax.scan`` for :data:`DOCS_STEPS` steps instead
of the tests' 20,000, so that its two timed cells take seconds on a CPU as the real
lecture's take on the GPU (a CPU runs such a loop at a few ns a step); both files
say so in ``build.note``.  ``--root NAME FOLDER`` does the same for any root of
``tests/roots`` (``jax_loops``: its Python loop of small jitted calls at the issue's
200,000 calls, :data:`DOCS_SCALE`), writing ``NAME-cpu-status.json`` and
``NAME-gpu-t4-status.json``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
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
    return _claims_on_gpu(moved)


def _claims_on_gpu(moved: dict[str, Any]) -> dict[str, Any]:
    """The timing claims checked again on the moved records (a claim ``on gpu`` holds or
    fails there, where the CPU build did not check it), and the review list's values of
    this build on the GPU: what a GPU build of the same execution would have written."""
    if not moved.get("claims") and not moved.get("timing_statements"):
        return moved
    from sphinx_gpu_admonition.model.claims import recheck
    from sphinx_gpu_admonition.model.record import StatusReport

    report = StatusReport.from_dict(moved)
    records = report.by_docname()
    report.claims = [recheck(claim, records) for claim in report.claims]
    for statement in report.timing_statements:
        for evidence in statement.evidence:
            for value in evidence.values:
                if value.build is None:
                    value.device_kind, value.device_name = "GPU", GPU_NAME
    return json.loads(json.dumps(report.to_dict()))


#: the lecture's step count for the docs (tests/roots/diagnosis/lecture.md has 20,000)
DOCS_STEPS = 1_500_000_000
TESTS_STEPS_LINE = "n = 20_000"
ROOTS = Path(__file__).resolve().parent / "roots"
DIAGNOSIS = ROOTS / "diagnosis"
#: per root, the line of a page that the docs' execution scales up (the tests' line,
#: the docs' line, what it means), so that the timed cells take seconds on a CPU as
#: the real lectures' take on a GPU
DOCS_SCALE = {
    "diagnosis": ("lecture.md", TESTS_STEPS_LINE, f"n = {DOCS_STEPS:_}",
                  f"the lecture's lax.scan at {DOCS_STEPS:,} steps (the tests' copy: 20,000)"),
    "jax_loops": ("dispatch.md", "calls = 2_000", "calls = 200_000",
                  "the Python loop of small jitted calls at 200,000 calls (the tests' copy: "
                  "2,000)"),
}


def _write(data: dict[str, Any], target: Path) -> None:
    target.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def docs_slow_cell_seconds() -> float:
    """The docs book's ``gpu_slow_cell_seconds`` (docs/_config.yml)."""
    config = (DIAGNOSIS.parents[2] / "docs" / "_config.yml").read_text(encoding="utf-8")
    return float(re.search(r"gpu_slow_cell_seconds: ([\d.]+)", config).group(1))


def execute_root(folder: Path, name: str) -> dict[str, Any]:
    """Build a copy of tests/roots/``name`` on this machine's CPU (real kernels, scaled
    as :data:`DOCS_SCALE` says) and return its status document; a build that stops
    (the diagnosis root's killed kernel) still writes the file."""
    # where it lies in this repository, so that the file names the sources as the
    # repository does (tests/roots/diagnosis/lecture.md, relative to the build's folder)
    source = folder / "tests" / "roots" / name
    shutil.copytree(ROOTS / name, source)
    scaled = DOCS_SCALE.get(name)
    if scaled is not None:
        page, tests_line, docs_line, _ = scaled
        text = (source / page).read_text(encoding="utf-8")
        assert tests_line in text, f"{page}'s scaled line moved: update this script"
        (source / page).write_text(text.replace(tests_line, docs_line), encoding="utf-8")
    environ = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
               "JAX_PLATFORMS": "cpu"}
    environ.pop("JAX_COMPILATION_CACHE_DIR", None)
    environ.pop("CI", None)
    environ.pop("GITHUB_ACTIONS", None)
    environ.pop("GITHUB_WORKSPACE", None)  # sources named from the build's folder
    # judged as the docs book judges (its gpu_slow_cell_seconds), which the file then
    # stores: report on the file flags what the docs' page of it flags
    # no other build's file: the execution is this machine's alone
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-E", "-q",
                    "-D", f"gpu_slow_cell_seconds={docs_slow_cell_seconds()}",
                    "-D", "gpu_runtime_sources=", str(source),
                    str(folder / "html")], env=environ, check=False, cwd=folder)
    data = json.loads((folder / "html" / "execution-status.json").read_text(encoding="utf-8"))
    option = "--diagnosis" if name == "diagnosis" else f"--root {name}"
    data["build"]["note"] = (f"tests/roots/{name} executed on a CPU by "
                             f"tests/make_gpu_fixture.py {option}"
                             + (f", {scaled[3]}" if scaled is not None else ""))
    return data


def judge(data: dict[str, Any], slow_cell_seconds: float) -> dict[str, Any]:
    """``data`` (a status document of any schema version this release reads) as a build
    of the same execution judged with ``gpu_slow_cell_seconds`` would write it: the
    measurements as they are, the thresholds in ``build`` and the analysis made with
    them (the execution does not depend on them)."""
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.model.judging import Rules, build_fields
    from sphinx_gpu_admonition.model.record import StatusReport

    report = StatusReport.from_dict(data)
    thresholds = Thresholds(slow_cell_seconds=slow_cell_seconds)
    report.build.update(build_fields(thresholds, Rules(), None))
    report.analysis = analyse(report, thresholds).to_dict()
    return json.loads(json.dumps(report.to_dict()))
def execute_diagnosis(folder: Path) -> dict[str, Any]:
    """:func:`execute_root` of tests/roots/diagnosis (the build stops at the killed
    kernel, as the tests' build does)."""
    return execute_root(folder, "diagnosis")


def write_root(name: str, target: Path) -> None:
    """``NAME-cpu-status.json`` (the CPU execution as recorded) and
    ``NAME-gpu-t4-status.json`` (the same, moved) into ``target``."""
    with tempfile.TemporaryDirectory() as folder:
        cpu = execute_root(Path(folder), name)
    gpu = to_gpu(cpu)
    gpu["build"]["note"] = f"{NOTE}; {cpu['build']['note']}"
    _write(cpu, target / f"{name}-cpu-status.json")
    _write(gpu, target / f"{name}-gpu-t4-status.json")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--judge":
        # the committed files judged again with the docs' limit (same measurements)
        for name in ("diagnosis-cpu-status.json", "diagnosis-gpu-t4-status.json"):
            path = Path(argv[1]) / name
            _write(judge(json.loads(path.read_text(encoding="utf-8")),
                         docs_slow_cell_seconds()), path)
        return 0
    if len(argv) == 2 and argv[0] == "--diagnosis":
        write_root("diagnosis", Path(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "--root" and (ROOTS / argv[1] / "conf.py").is_file():
        write_root(argv[1], Path(argv[2]))
        return 0
    pages = None
    if len(argv) == 4 and argv[2] == "--pages":
        argv, pages = argv[:2], argv[3].split(",")
    if len(argv) != 2 or argv[0].startswith("--"):
        print("usage: make_gpu_fixture.py STATUS_JSON OUTPUT_JSON [--pages DOC,DOC]\n"
              "       make_gpu_fixture.py --diagnosis FOLDER\n"
              "       make_gpu_fixture.py --judge FOLDER\n"
              "       make_gpu_fixture.py --root NAME FOLDER  (NAME: a folder of tests/roots)",
              file=sys.stderr)
        return 2
    source, target = (Path(arg) for arg in argv)
    data = json.loads(source.read_text(encoding="utf-8"))
    if pages is not None:  # only these notebooks (the analysis of the others goes too)
        data["notebooks"] = [nb for nb in data["notebooks"] if nb["docname"] in pages]
        data.pop("analysis", None)
        data["build"].pop("warnings", None)  # the executing build's, about its files
    _write(to_gpu(data), target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
