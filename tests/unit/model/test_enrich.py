"""model/enrich.py: what a page says about its executed cells, the one record builder
of every engine; and model/record.py's cell positions, the one cell identity (with the
migration of a version-1 status file)."""

from __future__ import annotations

import json

from sphinx_gpu_admonition.model.enrich import PageCell, enrich, failing_cell
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    ErrorInfo,
    NotebookRecord,
    StatusReport,
    cell_positions,
)

LOOP = ("from jax import lax\n"
        "def qm(x):\n    return lax.fori_loop(0, 100, lambda i, v: v * 2, x)")


def kernel_cells(*lines: str, errors: dict[int, str] | None = None) -> list[CellRecord]:
    """The cells a kernel ran, numbered 1, 2, 3 ... as IPython numbers them."""
    return [CellRecord(index=None, execution_count=n, seconds=0.1, first_line=line,
                       error=(errors or {}).get(n)) for n, line in enumerate(lines, 1)]


def page(*sources: str, tags: dict[int, tuple[str, ...]] | None = None,
         step: int = 1) -> list[PageCell]:
    """A page's code cells; ``step``: how the engine's index grows (MyST-NB counts the
    Markdown cells between them, mystmd numbers blocks)."""
    return [PageCell(position=n, index=n * step + 1, source=source,
                     tags=(tags or {}).get(n, ()), line=10 * (n + 1))
            for n, source in enumerate(sources)]


SOURCES = ("import numpy as np", "!pip install quantecon", "slow()", LOOP,
           "import jax\nqm_cpu = jax.jit(qm, device=jax.devices('cpu')[0])", "qm(1.0)",
           "1 / 0")


def enriched(step: int, errors_allowed: bool = False) -> NotebookRecord:
    record = NotebookRecord(docname="nb", status="ok")
    record.cells = kernel_cells(*(source.splitlines()[0] for source in SOURCES),
                                errors={7: "ZeroDivisionError"})
    assert enrich(record, page(*SOURCES, tags={2: ("slow-ok",), 6: ("raises-exception",)},
                               step=step), errors_allowed=errors_allowed) == []
    return record


def test_the_marks_are_the_pages_and_the_same_whatever_the_engines_index():
    sphinx, mystmd = enriched(step=2), enriched(step=1)
    for record in (sphinx, mystmd):
        assert [c.position for c in record.cells] == list(range(len(SOURCES)))
        assert [c.line for c in record.cells] == [10 * n for n in range(1, len(SOURCES) + 1)]
        # the loop's cell imports and defines: its time is the import's
        assert [c.imports_only for c in record.cells] == [True, False, False, True, False,
                                                          False, False]
        assert [c.shell for c in record.cells] == [False, True] + [False] * 5
        assert [c.slow_ok for c in record.cells] == [False, False, True] + [False] * 4
        assert record.cells[4].device_twins == ["qm"]
        [run] = record.cells[5].runs
        assert (run.primitive, run.function, run.defined_cell) == ("lax.fori_loop", "qm", 3)
        assert record.cells[6].error_expected and record.status == "ok"
        assert "qm" in (record.user_functions or [])
    assert [c.index for c in sphinx.cells] == [2 * n + 1 for n in range(len(SOURCES))]
    assert [n.label for n in sphinx.cell_names()] == [n.label for n in mystmd.cell_names()]
    assert [n.label for n in sphinx.cell_names()][:3] == ["cell 1", "cell 2", "cell 3"]


def test_an_unexpected_error_fails_the_page_with_its_own_message():
    record = NotebookRecord(docname="nb", status="ok")
    record.cells = kernel_cells("x = 1", "raise Boom", errors={2: "Boom"})
    cells = [PageCell(0, 1, "x = 1"),
             PageCell(1, 2, "raise Boom('bang')",
                      traceback="Boom      Traceback (most recent call last)\nBoom: bang")]
    enrich(record, cells)
    assert failing_cell(record) is record.cells[1]
    assert (record.status, record.error.type, record.error.message) == ("error", "Boom",
                                                                        "Boom: bang")
    assert (record.error.cell_index, record.error.execution_count) == (2, 2)
    # every cell may raise (nb_execution_allow_errors): nothing failed
    allowed = NotebookRecord(docname="nb", status="ok", cells=kernel_cells(
        "x = 1", "raise Boom", errors={2: "Boom"}))
    enrich(allowed, cells, errors_allowed=True)
    assert allowed.status == "ok" and allowed.error is None


def test_a_cell_the_probe_missed_shifts_no_other_cell():
    record = NotebookRecord(docname="nb", status="ok",
                            cells=[CellRecord(None, 1, 0.1, "a = 1"), CellRecord(None, 3, 0.1,
                                                                                "c = 3")])
    enrich(record, page("a = 1", "b = 2", "c = 3"))
    assert [(c.position, c.index) for c in record.cells] == [(0, 1), (2, 3)]
    assert [n.label for n in record.cell_names()] == ["cell 1", "cell 3"]


def test_a_kernel_that_died_names_the_cell_it_was_running():
    record = NotebookRecord(docname="nb", status="kernel_died",
                            error=ErrorInfo(type="DeadKernelError", message="died"))
    record.cells = kernel_cells("x = 1", "crash()", errors={2: "DeadKernelError"})
    enrich(record, page("x = 1", "crash()", "after()"))
    assert (record.error.cell_index, record.error.execution_count) == (2, 2)
    assert record.error.message == "died"  # the engine's, not a cell's exception line
    assert record.error_cell() is record.cells[1]
    between = NotebookRecord(docname="nb", status="kernel_died",
                             error=ErrorInfo(type="DeadKernelError"),
                             cells=kernel_cells("x = 1"))
    enrich(between, page("x = 1", "", "crash()"))
    assert between.error.cell_index == 3  # the next cell with code


def test_positions_follow_the_kernels_counts_else_the_records_order():
    assert cell_positions(kernel_cells("a", "b", "c")) == [0, 1, 2]
    assert cell_positions([CellRecord(None, 2, 0.1), CellRecord(None, 5, 0.1)]) == [1, 4]
    assert cell_positions([CellRecord(None, 2, 0.1), CellRecord(None, 2, 0.1)]) == [0, 1]
    assert cell_positions([CellRecord(None, None, 0.1), CellRecord(None, 1, 0.1)]) == [0, 1]


def test_a_version_1_status_file_is_read_with_its_cells_named_as_it_named_them():
    from sphinx_gpu_admonition.model.record import SCHEMA_ID

    cells = [{"index": 1, "execution_count": 1, "seconds": 0.1, "first_line": "def f(): ..."},
             {"index": 3, "execution_count": 2, "seconds": 0.1, "first_line": "f()",
              "runs": [{"primitive": "lax.scan", "function": "f", "defined_cell": 1}]}]
    document = {"schema": SCHEMA_ID, "schema_version": 1, "build": {}, "notebooks": [
        {"docname": "nb", "status": "ok", "runtime_seconds": None, "environment": {},
         "cells": cells}]}
    [record] = StatusReport.from_dict(json.loads(json.dumps(document))).notebooks
    assert [c.position for c in record.cells] == [0, 1]
    assert record.cells[1].runs[0].defined_cell == 0  # index 1 -> the first cell
    assert StatusReport.from_dict(StatusReport([record]).to_dict()).notebooks == [record]
