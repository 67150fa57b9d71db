"""The timers' real output, from a real kernel, read as named timings' values.

One notebook of timed cells runs in a real IPython kernel (nbclient); the cells'
stream and ``text/plain`` outputs, as a notebook holds them, are what the
engines pass to :func:`.timings.page_timings`.  IPython's ``%time``,
``%%time`` and ``%timeit`` (its mean, the ``-o`` result shown too) are real
here.  quantecon is not installed in the test environments: its ``qe.Timer``,
``toc`` and ``qe.timeit`` run here when it is, and otherwise
``tests/unit/model/test_timers.py`` feeds their exact format (written as in quantecon
0.11.4's ``util/timing.py``).
"""

from __future__ import annotations

import importlib.util
from datetime import datetime
from typing import Any, NamedTuple

import nbformat
import pytest
from nbclient import NotebookClient

from sphinx_gpu_admonition.model import timers
from sphinx_gpu_admonition.model.record import NotebookRecord
from sphinx_gpu_admonition.model.timing_record import TIMER, TIMER_VALUES, TIMING_OK
from sphinx_gpu_admonition.model.timings import page_timings, tag_problems

HAVE_QUANTECON = importlib.util.find_spec("quantecon") is not None

#: (tag, source, timer that must read it, seconds it sleeps at least)
CELLS = [
    ("time:line-time", "import time\n%time time.sleep(0.05)", timers.IPYTHON_TIME, 0.05),
    ("time:cell-time", "%%time\ntime.sleep(0.03)\nsum(range(1000))", timers.IPYTHON_TIME,
     0.03),
    ("time:timeit", "%timeit -n 3 -r 2 time.sleep(0.01)", timers.IPYTHON_TIMEIT, 0.01),
    ("time:timeit-once", "%timeit -n 1 -r 1 time.sleep(0.02)", timers.IPYTHON_TIMEIT, 0.02),
    ("time:timeit-o", "%timeit -o -n 2 -r 2 time.sleep(0.01)", timers.IPYTHON_TIMEIT, 0.01),
    ("time:cell-timeit", "%%timeit -n 2 -r 2\ntime.sleep(0.01)", timers.IPYTHON_TIMEIT, 0.01),
    ("time:two", "%time time.sleep(0.01)\n%time time.sleep(0.01)", None, 0.0),
]
QE_CELLS = [
    ("time:qe-timer", "import quantecon as qe\nwith qe.Timer(precision=8):\n"
                      "    time.sleep(0.02)", timers.QE_TIMER, 0.02),
    ("time:qe-ms", "with qe.Timer('vmap', unit='milliseconds'):\n    time.sleep(0.02)",
     timers.QE_TIMER, 0.02),
    ("time:qe-toc", "qe.tic()\ntime.sleep(0.02)\nqe.toc()", timers.QE_TOC, 0.02),
    ("time:qe-timeit", "qe.timeit(lambda: time.sleep(0.01), runs=3)", timers.QE_TIMEIT, 0.01),
    ("time:qe-tac-toc", "qe.tic()\ntime.sleep(0.01)\nqe.tac()\nqe.toc()", None, 0.0),
]


class Cell(NamedTuple):
    """What an engine passes for a code cell (``model.timings.PageCell``)."""

    position: int
    index: int | None
    source: str
    tags: tuple[str, ...]
    line: int | None
    outputs: list[str]


def outputs_text(cell: Any) -> list[str]:
    """A cell's stream and text/plain outputs, one string each, as a notebook holds them."""
    texts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            texts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            texts.append(output.get("data", {}).get("text/plain", ""))
    return texts


def cell_seconds(cell: Any) -> float:
    """The cell's time as nbclient timed it (input received to reply sent)."""
    timing = cell.metadata["execution"]
    start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


@pytest.fixture(scope="module")
def executed() -> tuple[list[Any], list[tuple[str, str, str | None, float]]]:
    cells = CELLS + (QE_CELLS if HAVE_QUANTECON else [])
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Timers"),
        *(nbformat.v4.new_code_cell(source, metadata={"tags": [tag]})
          for tag, source, _timer, _sleep in cells)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    return notebook.cells[1:], cells


def _timings(executed_cells: list[Any]) -> dict[str, Any]:
    page = [Cell(position, position, cell.source, tuple(cell.metadata["tags"]), None,
                 outputs_text(cell)) for position, cell in enumerate(executed_cells, 1)]
    # no probe here (capture missing): the values are the timers' alone
    record = NotebookRecord(docname="timers", status="ok", provenance="executed")
    found = page_timings(page, record)
    assert tag_problems(page) == []
    return {timing.name: timing for timing in found}


def _check(executed_cells, cells) -> None:
    by_name = _timings(executed_cells)
    for cell, (tag, _source, timer, sleeps) in zip(executed_cells, cells, strict=True):
        timing = by_name[tag.removeprefix("time:")]
        if timer is None:  # a cell whose timers printed two values
            assert timing.status == TIMER_VALUES and len(timing.printed) == 2, tag
            assert timing.seconds is None
            continue
        assert timing.status == TIMING_OK, (tag, outputs_text(cell))
        assert (timing.source, timing.timer) == (TIMER, timer), tag
        assert len(timing.printed) == 1, (tag, outputs_text(cell))
        # the timer's value: at least what the code sleeps, at most the cell's own time
        assert sleeps * 0.999 <= timing.seconds <= cell_seconds(cell) + 0.005, tag


def test_ipython_timers_print_one_value_each(executed):
    executed_cells, cells = executed
    _check(executed_cells[:len(CELLS)], cells[:len(CELLS)])
    # %timeit -o shows its result after its line: one reading, not two
    timeit_o = executed_cells[[tag for tag, *_ in CELLS].index("time:timeit-o")]
    assert any("TimeitResult" in text for text in outputs_text(timeit_o))


@pytest.mark.skipif(not HAVE_QUANTECON, reason="quantecon is not installed in the test "
                    "environment; tests/unit/model/test_timers.py feeds its exact formats")
def test_quantecon_timers_print_one_value_each(executed):
    executed_cells, cells = executed
    _check(executed_cells[len(CELLS):], cells[len(CELLS):])
