"""Whether a notebook's record is whole (``model/probe_output.py``): the execution counts the
probe recorded against the cells the kernel ran; missing, lost and dropped cells make it
partial, a broken probe failed."""

from __future__ import annotations

from typing import Any

from sphinx_gpu_admonition.model import probe_output
from sphinx_gpu_admonition.probe import protocol

# -- the reader, on its own lines -------------------------------------------------------
START = {"kind": "start", "pid": 10, "probe_version": protocol.PROBE_VERSION,
         "time": 0.0, "python": "3.12.0", "host": {}, "gpus": []}


def cell(count: int, **more: Any) -> dict[str, Any]:
    return {"kind": "cell", "pid": 10, "execution_count": count, "seconds": 0.1,
            "first_line": f"cell {count}", **more}


def end(count: int) -> dict[str, Any]:
    return {"kind": "end", "pid": 10, "callbacks_registered": True, "execution_count": count}


def read(*lines: dict[str, Any]) -> probe_output.ProbeOutput:
    return probe_output.ProbeOutput(iter([START, *lines]))


def test_every_cell_the_kernel_ran_recorded_is_ok() -> None:
    output = read(cell(1), cell(2), end(2))
    assert output.capture_state() == ("ok", None)
    assert not output.warnings


def test_runs_nested_in_a_cell_took_counts_but_are_no_missing_cells() -> None:
    # cell 2 ran get_ipython().run_cell(..., store_history=True) twice: counts 3 and 4
    output = read(cell(1), cell(2, nested_runs=2), cell(5), end(5))
    assert output.capture_state() == ("ok", None)
    assert output.positions() == [0, 1, 2]


def test_a_gap_in_the_counts_is_partial_and_names_the_missing_cells() -> None:
    lost = {"kind": "lost", "pid": 10, "lines": 3, "message": "OSError: [Errno 28] disk full"}
    output = read(cell(1), lost, cell(4), end(4))
    state, message = output.capture_state()
    assert state == "partial"
    assert message == ("the probe recorded 2 of the 4 cells the kernel ran (not recorded: "
                       "the cells with execution count 2 and 3); 3 lines could not be "
                       "written (OSError: [Errno 28] disk full)")
    assert output.warnings == [f"{message}; the record has the others"]
    assert output.positions() == [0, 3]


def test_cells_lost_at_the_end_are_told_by_the_end_line_or_the_engine() -> None:
    assert read(cell(1), end(3)).capture_state()[0] == "partial"
    # no end line (its write failed too): the engine saw 3 cells run
    state, message = read(cell(1)).capture_state(ran=3)
    assert state == "partial" and message == "the probe recorded 1 of the 3 cells the kernel ran"


def test_the_cell_a_kernel_died_in_is_not_a_missing_cell() -> None:
    started = {"kind": "cell_start", "pid": 10, "execution_count": 3, "first_line": "boom",
               "time": 1.0}
    assert read(cell(1), cell(2), started).capture_state() == ("ok", None)
    # exited in the cell (sys.exit()): the end line still came
    assert read(cell(1), cell(2), started, end(3)).capture_state() == ("ok", None)
    # but its line lost with others: missing
    lost = {"kind": "lost", "pid": 10, "lines": 2, "message": "OSError: disk full"}
    assert read(cell(1), cell(2), started, lost, end(3)).capture_state()[0] == "partial"


def test_a_cell_dropped_as_unreadable_makes_the_record_partial() -> None:
    output = read(cell(1), {**cell(2), "seconds": -1.0}, cell(3), end(3))
    assert output.capture_state()[0] == "partial"
    assert len(output.warnings) == 2  # the dropped value, then the partial record


def test_a_probe_that_broke_is_failed_whatever_the_counts() -> None:
    error = {"kind": "probe_error", "pid": 10, "message": "post_run_cell: boom"}
    assert read(cell(1), error, end(3)).capture_state() == ("failed", "post_run_cell: boom")
    assert read().capture_state(ran=2) == (
        "failed", "the kernel ran 2 cells and the probe recorded none")
