"""``benchmarks/run.py --quick``: the benchmark command runs and prints its table.

A smoke test with tiny sizes (one notebook of two cells, one round): it
checks the table's structure and the one non-timing result the benchmark
reports (``-j 2`` writes the same ``execution-status.json`` as a serial build),
never a timing value.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT

RUN = PROJECT / "benchmarks" / "run.py"

pytestmark = [pytest.mark.slow, pytest.mark.tooling]

MEASURES = ("forced build", "forced build, 1 nb x 2 cells, less kernel-shutdown waits",
            "forced build, 1 nb x 2 cells, CPU time", "-j 2 vs serial", "environment pickle",
            "cache-hit record lookup", "all-cache-hit -E rebuild", "its own code in that rebuild",
            "all-cache-hit -E rebuild with timing claims", "its own code with timing claims",
            "status page HTML")


def test_quick_benchmark_prints_one_table(tmp_path: Path) -> None:
    rows_file = tmp_path / "rows.json"
    # ``--before``: the cache-hit book is also built by the package of another checkout
    # (a copy of this one, marked by its version), in the same rounds
    before = tmp_path / "before"
    shutil.copytree(PROJECT / "sphinx_gpu_admonition", before / "sphinx_gpu_admonition",
                    ignore=shutil.ignore_patterns("__pycache__"))
    version = before / "sphinx_gpu_admonition" / "_version.py"
    version.write_text(version.read_text(encoding="utf-8").replace(
        '__version__ = "', '__version__ = "0.0.0+before-'), encoding="utf-8")
    done = subprocess.run([sys.executable, str(RUN), "--quick", "--json", str(rows_file),
                           "--before", str(before)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # the machine, then a Markdown table, then the probe benchmark (or why not)
    assert "CPUs" in lines[0]
    table = [line for line in lines if line.startswith("|")]
    assert [cell.strip() for cell in table[0].split("|")[1:-1]] == [
        "measure", "with the extension", "reference (without)", "ratio median (min-max)",
        "target"]
    assert set(table[1]) <= {"|", "-"}
    rows = json.loads(rows_file.read_text(encoding="utf-8"))
    assert len(table) == len(rows) + 2
    for measure in MEASURES:
        assert any(row["measure"].startswith(measure) for row in rows), measure
    for row in rows:
        assert row["ratio"] == "–" or float(row["ratio"].split()[0].rstrip(";")) > 0
    # the extension's own code was timed inside the real build (its listeners wrapped)
    own = next(row for row in rows if row["measure"].startswith("its own code in that"))
    assert float(own["with_extension"].split()[0]) > 0
    assert float(own["ratio"].split()[0].rstrip(";")) > 1
    # the rows of --before name the version its builds wrote (the copy's, not this one's)
    compared = [row["measure"] for row in rows if "--before checkout" in row["measure"]]
    assert [measure.split(",")[0] for measure in compared] == [
        "all-cache-hit -E rebuild", "its own code in that rebuild",
        "garbage collector's pauses in that rebuild"]
    assert all("(sphinx-gpu-admonition 0.0.0+before-" in measure for measure in compared)
    parallel = next(row for row in rows if row["measure"].startswith("-j 2"))
    assert parallel["target"].endswith("same JSON apart from times: 1/1")
    after_table = done.stdout.split(table[-1], 1)[1]
    assert "probe" in after_table


def _run_module():
    sys.path.insert(0, str(RUN.parent))
    try:
        import run
    finally:
        sys.path.remove(str(RUN.parent))
    return run


def test_kernel_shutdown_waits_are_the_notebooks_far_over_the_typical_one() -> None:
    """The forced rows less the waits: a notebook 3.4 s over the book's median one
    waited for its kernel to exit; ordinary spread between notebooks is no wait."""
    run = _run_module()
    lines = [f"/src/nb{n}.md: Executed notebook in {seconds} seconds [mystnb]"
             for n, seconds in enumerate([0.63, 0.71, 4.02, 0.66, 0.65, 1.9])]
    waits, waited = run.shutdown_waits("\n".join(["reading sources...", *lines]))
    assert waited == 1
    assert waits == pytest.approx(4.02 - 0.685)
    assert run.shutdown_waits("build succeeded.") == (0.0, 0)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs Valgrind")
def test_instruction_counts_follow_the_work() -> None:
    """The steadier measure of ``--instructions``: Valgrind's count of what a command
    executes, which grows with the work it does (not with other load)."""
    run = _run_module()
    idle = run.instructions([sys.executable, "-c", "pass"])
    busy = run.instructions([sys.executable, "-c", "sum(range(10**6))"])
    assert 0 < idle < busy
    with pytest.raises(SystemExit, match="valgrind failed"):
        run.instructions([sys.executable, "-c", "raise SystemExit(3)"])


def test_before_needs_a_checkout_of_the_package(tmp_path: Path) -> None:
    run = _run_module()
    with pytest.raises(SystemExit, match="--before: no sphinx_gpu_admonition package"):
        run.compile_extension(tmp_path)


def test_the_machine_line_says_when_every_build_pays_for_rfc3987_syntax(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment with rfc3987-syntax (one pip made, not scripts/test) adds some 1.8 s
    to every build, with the extension and without: the table's first line says so."""
    import importlib.util

    run = _run_module()
    found = importlib.util.find_spec

    def machine_line(installed: bool) -> str:
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: (
            (found("json") if installed else None) if name == "rfc3987_syntax"
            else found(name, *rest)))
        return run.machine()

    assert "CPUs" in machine_line(False) and "rfc3987" not in machine_line(False)
    assert "CPUs" in machine_line(True) and "rfc3987-syntax is installed" in machine_line(True)
