"""Reading the probe's lines in the Sphinx adapter (``ext/capture.py``): lines of another process,
bad values (one cell lost, never the notebook), another probe version, first lines on a
cache hit."""

from __future__ import annotations

from typing import Any

import pytest

from sphinx_gpu_admonition.ext import capture
from sphinx_gpu_admonition.model import probe_output
from sphinx_gpu_admonition.probe import (
    protocol,
)
from unit.model.test_probe_output import START, cell


def read_lines(lines: list[dict[str, Any]]) -> capture.ProbeOutput:
    return probe_output.ProbeOutput(iter(lines))


def test_lines_of_another_process_are_ignored() -> None:
    child_start = {**START, "pid": 11}
    output = read_lines([START, cell(1, 0.5), child_start, cell(1, 9.0, pid=11), cell(2, 0.1)])
    assert [(c.execution_count, c.seconds) for c in output.cells] == [(1, 0.5), (2, 0.1)]
    assert not output.errors and not output.warnings


def test_one_bad_value_loses_that_cell_never_the_notebook() -> None:
    from docutils import nodes

    from sphinx_gpu_admonition.model.record import NotebookRecord

    # a negative time, a library version that is no text
    bad_cell = cell(2, -0.2)
    output = read_lines([START, cell(1, 0.5), bad_cell, cell(3, 0.1),
                         {"kind": "libraries", "pid": 10, "libraries": {"numpy": 2}}])
    record = NotebookRecord(docname="hostile", status="error")
    capture.fill_from_probe(output, nodes.document("", None), record)
    assert [c.execution_count for c in record.cells] == [1, 3]
    assert record.capture == "partial"  # it says so: the record has 2 of the 3 cells
    assert "execution count 2" in record.capture_message
    assert len(output.warnings) == 3
    assert any("cell 2" in w and "below" in w for w in output.warnings)
    assert any("environment: libraries['numpy']" in w for w in output.warnings)


def test_an_exception_type_is_recorded_as_one_line_without_lone_surrogates() -> None:
    # an exception class named with a lone surrogate and line breaks keeps its cell
    named = {**cell(2, 0.2), "error": "Bad\ud800\r\n::error x\u2028y"}
    output = read_lines([START, cell(1, 0.5), named])
    assert [c.error for c in output.cells] == [None, "Bad\ufffd ::error x y"]
    assert not output.warnings


def test_another_probe_version_is_one_capture_error() -> None:
    output = read_lines([{**START, "probe_version": 1}, cell(1, 0.5)])
    assert len(output.errors) == 1
    assert "version 1" in output.errors[0]
    assert f"version {protocol.PROBE_VERSION}" in output.errors[0]


@pytest.mark.parametrize("source", ["x = 1", "\n\n  %%capture\ntime.sleep(1)", "y" * 300,
                                    "a = 1\r\nb = 2", "é = 'ü'\n"])
def test_a_cache_hit_reads_first_lines_as_the_probe_records_them(source: str) -> None:
    """The sidecar check has its own copy of the probe's first-line rule (a cache hit
    does not import the probe): the two must agree."""
    expected = probe_output.recorded_text(protocol.first_line(source))
    assert capture._first_line(source) == expected
