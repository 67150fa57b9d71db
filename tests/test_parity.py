"""One lecture, two engines, one truth (issue 30): ``tests/roots/parity``, one folder
with ``_config.yml`` / ``_toc.yml`` (Jupyter Book 1, built by Sphinx in-process as
tests/quantecon_book.py builds QuantEcon's shape) and ``myst.yml`` (mystmd 1.8.3),
built once by each engine with real kernels; both records give the same cells,
names, marks, flags and verdicts, and ``compare`` of the two status files pairs
every cell. Every later feature adds its case to that book.

The numbers in a reason are each engine's own measurement; everything else of it is
the same words.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import quantecon_book
from conftest import ROOTS
from test_mystmd import myst_build, requires_mystmd

from sphinx_gpu_admonition.cli import main as cli_main
from sphinx_gpu_admonition.model.analysis import analyse
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.model.judging import judged_by
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS

ROOT = ROOTS / "parity"
EXECUTED = ["failing", "lecture"]


@pytest.fixture(scope="module")
def sphinx_status(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The book as Jupyter Book 1 builds it (its _config.yml's Sphinx settings)."""
    pytest.importorskip("sphinx_exercise", reason="the gated solution needs sphinx-exercise "
                                                  "(pyproject's test extra)")
    dest = tmp_path_factory.mktemp("parity-sphinx")
    build = quantecon_book.build(ROOT, dest, dest / "cache")
    status = dest / "sphinx-execution-status.json"
    shutil.copyfile(build.outdir / "execution-status.json", status)
    return status


@pytest.fixture(scope="module")
def mystmd_status(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same folder as mystmd builds it (its myst.yml); the book is beside it."""
    requires_mystmd()
    book = tmp_path_factory.mktemp("parity-mystmd") / "lectures"
    shutil.copytree(ROOT, book)
    shutil.copytree(ROOTS / "mystmd" / "template", book / "template")
    completed = myst_build(book)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "sphinx-gpu-admonition" not in completed.stderr.replace(
        "sphinx-gpu-admonition (gpu_admonition.py) loaded", "")  # no warning of ours
    status = book.parent / "mystmd-execution-status.json"  # (the book: status.parent)
    shutil.copyfile(book / "_build" / "execution-status.json", status)
    return status


def masked(text: str) -> str:
    """A reason without its numbers (each engine measured its own times)."""
    return re.sub(r"\d[\d,.]*", "N", text)


def cells_of(record: NotebookRecord) -> list[dict[str, Any]]:
    """What each engine must agree on about a cell: everything but its times."""
    return [{"name": name.label, "position": cell.position, "first_line": cell.first_line,
             "line": cell.line, "error": cell.error, "error_expected": cell.error_expected,
             "slow_ok": cell.slow_ok, "imports_only": cell.imports_only, "shell": cell.shell,
             "device_twins": cell.device_twins,
             "runs": [dataclasses.asdict(run) for run in cell.runs],
             "compiled_loops": sorted(loop.function for loop in cell.compiled_loops),
             # the parse's facts of issue 32, from the same enrich on both engines
             "dispatch_loops": [dataclasses.asdict(loop) for loop in cell.dispatch_loops],
             "jit_calls": [dataclasses.asdict(jit) for jit in cell.jit_calls],
             "work": dataclasses.asdict(cell.work) if cell.work else None,
             "compiled": sorted(cell.compilations)}
            for cell, name in zip(record.cells, record.cell_names(), strict=True)]


def with_times_of(report: StatusReport, timed: StatusReport) -> StatusReport:
    """``report`` with each cell's times (and each notebook's) taken from ``timed``'s cell
    of the same position: each engine measured its own run, and a cell near a limit (the
    import cell, on a loaded machine) may fall on either side of it; with the same times,
    the same rules must give the same findings."""
    copy = StatusReport.from_dict(report.to_dict())
    times = timed.by_docname()
    for record in copy.notebooks:
        other = times.get(record.docname)
        if other is None:
            continue
        record.runtime_seconds = other.runtime_seconds
        by_position = {cell.position: cell for cell in other.cells}
        for cell in record.cells:
            source = by_position.get(cell.position)
            if source is not None:
                cell.seconds, cell.compile_seconds = source.seconds, source.compile_seconds
    return copy


def flags_of(report: StatusReport) -> dict[str, list[list[tuple[str, str]]]]:
    """Each notebook's cells' flags (rule, reason without numbers), as each build's
    status file says it judged them."""
    analysis = analyse(report, judged_by(report.build).thresholds)
    return {result.notebook.docname: [[(flag.rule, masked(WORDS.reason(flag))) for flag in flags]
                                      for flags in result.cell_flags]
            for result in analysis.notebooks}


@pytest.mark.mystmd
def test_both_engines_give_the_same_cells_names_marks_and_verdicts(sphinx_status,
                                                                     mystmd_status):
    sphinx, mystmd = read_status(sphinx_status), read_status(mystmd_status)
    assert (sphinx.build["engine"], mystmd.build["engine"]) == ("sphinx", "mystmd")
    assert judged_by(sphinx.build).thresholds == judged_by(mystmd.build).thresholds
    assert sorted(sphinx.by_docname()) == sorted(mystmd.by_docname()) == EXECUTED
    for docname in EXECUTED:
        one, other = sphinx.by_docname()[docname], mystmd.by_docname()[docname]
        assert (one.status, one.capture) == (other.status, other.capture), docname
        assert cells_of(one) == cells_of(other), docname
        assert one.user_functions == other.user_functions, docname
        assert one.environment.device_label == other.environment.device_label
    assert flags_of(sphinx) == flags_of(with_times_of(mystmd, sphinx))

    lecture = mystmd.by_docname()["lecture"]
    # every executed cell, the gated solution's two included, in mystmd's order
    assert [c.first_line for c in lecture.cells] == [
        "import numpy as np", "!pip --version", "import time", "def step(x, n):",
        'g_cpu = jax.jit(step, static_argnums=1, device=jax.devices("cpu")[0])',
        'int(jnp.searchsorted(jnp.arange(10.0), 3.5, method="scan"))',
        'raise ValueError("shown on purpose")', "total = sum(range(10))", "total * 2",
        "print(np.float64(total))"]
    marks = [(c.imports_only, c.shell, c.slow_ok, c.error_expected) for c in lecture.cells]
    assert marks[:3] == [(True, False, False, False), (False, True, False, False),
                         (False, False, True, False)]
    assert marks[6] == (False, False, False, True) and lecture.status == "ok"
    assert lecture.cells[4].device_twins == ["step"]
    runs = lecture.cells[3].runs
    # the loop of step, defined in this cell (position 3: "cell 4"), run through g
    assert {(run.primitive, run.function, run.defined_cell) for run in runs} == {
        ("lax.fori_loop", "step", 3), ("lax.fori_loop", "g", 3)}, runs
    # the slow-ok cell is a note, never a warned finding, on both engines
    assert flags_of(mystmd)["lecture"][2] == [("slow_ok", "slow on purpose (tagged slow-ok), "
                                                          "took N s")]
    # the failing page: its own exception, whatever its class name's length and escape
    for report in (sphinx, mystmd):
        failing = report.by_docname()["failing"]
        assert failing.status == "error"
        assert failing.error.type == "Parity" * 10 + "Error"
        assert failing.error.message == "Parity" * 10 + "Error: it went bang"
        assert failing.cell_name(failing.error_cell()).label == "cell 2"


@pytest.mark.mystmd
def test_compare_of_the_two_builds_pairs_every_cell(sphinx_status, mystmd_status):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["compare", str(sphinx_status), str(mystmd_status), "--json",
                         "--top", "0"]) == 0
    data = json.loads(out.getvalue())
    assert [row["state"] for row in data["notebooks"]] == ["compared"] * len(EXECUTED)
    # the cells whose time changed are listed (none new, none gone), the others counted
    states = {(row["docname"], row["cell"]): row["state"] for row in data["cells"]}
    assert set(states.values()) <= {"compared"}, states
    cells = sum(len(nb.cells) for nb in read_status(sphinx_status).notebooks)
    assert len(states) + data["cells_unchanged"] == cells == 12


@pytest.mark.mystmd
def test_mystmd_keys_the_record_as_it_keys_its_cache_with_nested_cells(mystmd_status):
    """The lecture's gated solution nests two code cells and it raises on purpose: the
    sidecar's key is the name of mystmd's own cache file of the page, and no kernel's
    file is left behind."""
    build = mystmd_status.parent / "lectures" / "_build"
    cached = {path.stem for path in (build / "execute").glob("*.json")}
    sidecars = {path.stem for path in (build / "sphinx-gpu-admonition" / "sidecars")
                .glob("*.json")}
    assert len(sidecars) == 1 and sidecars <= cached  # the lecture's (failing is not cached)
    assert not list((build / "sphinx-gpu-admonition" / "kernels").glob("*"))
