"""model/timings.py: time:NAME tags, references to timings, a timing's value and where it
comes from, and the record that keeps them (status file, sidecar: a cache hit's values)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sphinx_gpu_admonition.model import files
from sphinx_gpu_admonition.model.record import CellRecord, NotebookRecord, StatusReport
from sphinx_gpu_admonition.model.timing_record import (
    CELL,
    CELL_FAILED,
    NOT_EXECUTED,
    NOT_MEASURED,
    NOT_RUN,
    NOT_UNIQUE,
    PAGE_NOT_EXECUTED,
    TIMER,
    TIMER_VALUES,
    TIMING_OK,
    UNKNOWN_NAME,
    UNKNOWN_PAGE,
    Timing,
)
from sphinx_gpu_admonition.model.timings import (
    BAD_NAME,
    Reference,
    Unavailable,
    find_timing,
    nearest_name,
    page_timings,
    parse_reference,
    resolve_page,
    tag_names,
    tag_problems,
)

SCHEMA = json.loads((Path(files.__file__).parents[1] / "schema"
                     / "execution-status.schema.json").read_text(encoding="utf-8"))
PROPERTY = settings(deadline=None, database=None, derandomize=True)


class Cell(NamedTuple):
    position: int
    index: int | None
    source: str
    tags: tuple[str, ...] = ()
    line: int | None = None
    outputs: str | list[str] = ""


def record(*cells: CellRecord, status: str = "ok", capture: str = "ok") -> NotebookRecord:
    return NotebookRecord(docname="lectures/jax", status=status, provenance="executed",
                          capture=capture, cells=list(cells))


def measured(index: int, seconds: float, compile_seconds: float = 0.0,
             error: str | None = None) -> CellRecord:
    return CellRecord(index=index, execution_count=index, seconds=seconds,
                      compile_seconds=compile_seconds, error=error)


# -- tags and names -------------------------------------------------------------------------
def test_tags_name_timings():
    assert tag_names(["time:vmap-v2", "hide-input", "time:vmap_v2", "time:vmap-v2"]) == (
        ["vmap-v2", "vmap_v2"], [])
    assert tag_names(["time:", "time:a.b", "time:vmap v2", "time:zeit:1", "Time:x", 3]) == (
        [], ["time:", "time:a.b", "time:vmap v2", "time:zeit:1"])


@pytest.mark.parametrize(("text", "reference"), [
    ("vmap-v2", Reference("vmap-v2")),
    ("  vmap_v2 ", Reference("vmap_v2")),
    ("lectures/jax:vmap-v2", Reference("vmap-v2", "lectures/jax")),
    ("/lectures/jax.md:v1", Reference("v1", "/lectures/jax.md")),
    ("../jax:v1", Reference("v1", "../jax")),
    ("a b", None), ("", None), ("jax:", None), (":v1", None), ("a b:v1", None),
    ("x:y:z", None), ("vmap.v2", None), ("{doc}`x`:v1", None),
])
def test_references(text, reference):
    assert parse_reference(text) == reference
    if reference is not None:
        assert parse_reference(str(reference)) == reference


@pytest.mark.parametrize(("page", "referring", "docname"), [
    (None, "lectures/jax", "lectures/jax"),
    ("numba", "lectures/jax", "lectures/numba"),
    ("numba.md", "lectures/jax", "lectures/numba"),
    ("numba.ipynb", "lectures/jax", "lectures/numba"),
    ("/intro", "lectures/jax", "intro"),
    ("/lectures/numba.md", "index", "lectures/numba"),
    ("../intro", "lectures/jax", "intro"),
    ("./numba", "lectures/jax", "lectures/numba"),
    ("../../../intro", "lectures/jax", "intro"),  # never above the source folder
    ("sub/page", "index", "sub/page"),
])
def test_pages_resolve_as_doc_targets(page, referring, docname):
    assert resolve_page(page, referring) == docname


def test_the_nearest_name_catches_typos_and_case():
    assert nearest_name("vmap-V2", ["vmap-v2", "vmap-v1"]) == "vmap-v2"
    assert nearest_name("vmap-v3", ["vmap-v2"]) == "vmap-v2"
    assert nearest_name("numpy", ["vmap-v2", "vmap-v1"]) is None


# -- values ----------------------------------------------------------------------------------
def test_a_timer_that_printed_one_value_is_the_value():
    cells = [Cell(2, 1, "with qe.Timer(): ...", ("time:mesh",), 40,
                  ["result 0.99\n", "0.0190 seconds elapsed\n"])]
    (timing,) = page_timings(cells, record(measured(1, 0.5, 0.3)))
    assert tag_problems(cells) == []
    assert timing == Timing(name="mesh", status=TIMING_OK, seconds=0.019, source=TIMER,
                            timer="qe.Timer", printed=[0.019], cell_index=1, position=2,
                            line=40)


def test_without_a_timer_the_value_is_the_run_time_without_compilation():
    (timing,) = page_timings([Cell(1, 0, "f(x)", ("time:f",))],
                                record(measured(0, 0.5, compile_seconds=0.3)))
    assert (timing.status, timing.source, timing.timer) == (TIMING_OK, CELL, None)
    assert timing.seconds == pytest.approx(0.2)


@pytest.mark.parametrize(("cells", "notebook", "status"), [
    ([Cell(1, 0, "x", ("time:a",)), Cell(2, 1, "y", ("time:a",))],
     record(measured(0, 1.0), measured(1, 1.0)), NOT_UNIQUE),
    ([Cell(1, 0, "x", ("time:a",))], record(status="execution_off"), NOT_EXECUTED),
    ([Cell(1, 0, "x", ("time:a",))], record(status="outputs_present"), NOT_EXECUTED),
    ([Cell(1, 3, "x", ("time:a",))], record(measured(0, 1.0), status="error"), NOT_RUN),
    ([Cell(1, 0, "x", ("time:a",), outputs="0.5 seconds elapsed")],
     record(measured(0, 1.0, error="ZeroDivisionError"), status="error"), CELL_FAILED),
    ([Cell(1, 0, "x", ("time:a",), outputs="0.5 seconds elapsed\n0.6 seconds elapsed")],
     record(measured(0, 1.0)), TIMER_VALUES),
    ([Cell(1, 0, "x", ("time:a",))], record(capture="missing"), NOT_MEASURED),
    ([Cell(1, 0, "x", ("time:a",))], record(capture="failed"), NOT_MEASURED),
])
def test_a_timing_without_a_trustworthy_value_says_why(cells, notebook, status):
    timings = page_timings(cells, notebook)
    assert {timing.status for timing in timings} == {status}
    assert all(timing.seconds is None for timing in timings)


def test_without_capture_a_timer_still_gives_the_value():
    (timing,) = page_timings([Cell(1, 0, "x", ("time:a",), outputs="Wall time: 2 ms")],
                                record(capture="missing"))
    assert (timing.status, timing.seconds, timing.timer) == (TIMING_OK, 0.002, "%time")


def test_timer_values_keep_what_was_printed():
    (timing,) = page_timings(
        [Cell(1, 0, "x", ("time:a",), outputs="TAC: Elapsed: 0:00:0.01\nTOC: Elapsed: 0:00:0.02")],
        record(measured(0, 1.0)))
    assert timing.status == TIMER_VALUES and timing.printed == [0.01, 0.02]


def test_unnamed_cells_that_printed_a_timer_are_timed_cells_too():
    cells = [Cell(1, 0, "import qe"), Cell(3, 1, "with qe.Timer(): ...", (),
                                          outputs="0.25 seconds elapsed"),
             Cell(4, 2, "x", ("time:x", "time:alias"))]
    timings = page_timings(cells, record(measured(0, 1.0), measured(1, 0.3),
                                            measured(2, 0.1)))
    assert [(t.name, t.cell_index, t.seconds) for t in timings] == [
        (None, 1, 0.25), ("x", 2, 0.1), ("alias", 2, 0.1)]


def test_tag_problems_are_reported_once_with_the_cell():
    cells = [Cell(1, 0, "x", ("time:a.b",), 10), Cell(2, 1, "y", ("time:d",), 20),
             Cell(3, 2, "z", ("time:d",), 30)]
    problems = tag_problems(cells)
    assert [(p.problem, p.tag, p.cell_index, p.line) for p in problems] == [
        (BAD_NAME, "time:a.b", 0, 10), (NOT_UNIQUE, "time:d", 1, 20)]


# -- looking timings up -----------------------------------------------------------------------
def _records() -> dict[str, NotebookRecord]:
    jax = record(measured(0, 0.5), measured(1, 0.2))
    jax.timings = page_timings([Cell(1, 0, "x", ("time:v1",)),
                                Cell(2, 1, "y", ("time:v2",), outputs="0.1 seconds elapsed\n"
                                                                     "0.2 seconds elapsed")],
                               jax)
    off = record(status="execution_off")
    off.docname = "lectures/off"
    off.timings = page_timings([Cell(1, 0, "x", ("time:v1",))], off)
    return {"lectures/jax": jax, "lectures/off": off,
            "plain": NotebookRecord(docname="plain", status="execution_off")}


@pytest.mark.parametrize(("page", "name", "found"), [
    ("lectures/jax", "v1", 0.5),
    ("lectures/jax", "v2", Unavailable(TIMER_VALUES, "v2", "2")),
    ("lectures/jax", "v3", Unavailable(UNKNOWN_NAME, "v3", None)),  # nothing close
    ("lectures/jax", "V1", Unavailable(UNKNOWN_NAME, "V1", "v1")),
    ("lectures/numba", "v1", Unavailable(UNKNOWN_PAGE, "lectures/numba")),
    ("lectures/off", "v1", Unavailable(PAGE_NOT_EXECUTED, "lectures/off", "execution_off")),
    ("plain", "v1", Unavailable(PAGE_NOT_EXECUTED, "plain", "execution_off")),
])
def test_find_timing(page, name, found):
    result = find_timing(_records(), page, name)
    if isinstance(found, float):
        assert isinstance(result, Timing) and result.seconds == found
    else:
        assert result == found


# -- kept in the record -------------------------------------------------------------------------
def test_timings_are_kept_by_the_status_file_and_the_sidecar(tmp_path):
    records = _records()
    notebook = records["lectures/jax"]
    report = StatusReport(notebooks=[notebook], build={})
    data = json.loads(files.status_json_text(report))
    jsonschema.validate(data, SCHEMA)
    assert StatusReport.from_dict(data).notebooks[0].timings == notebook.timings
    # a cache hit's record comes from the sidecar: the values of the run that made the
    # outputs
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps(files.sidecar_dict(notebook)), encoding="utf-8")
    restored = files.read_sidecar(path)
    assert restored is not None and restored.timings == notebook.timings
    # an older sidecar (before timings) still reads: no timings
    older = files.sidecar_dict(notebook) | {"sidecar_version": 6}
    del older["record"]["timings"]
    path.write_text(json.dumps(older), encoding="utf-8")
    assert files.read_sidecar(path).timings == []


@pytest.mark.parametrize(("mutation", "message"), [
    ({"status": "fine"}, "timings[0].status: 'fine' is not one of"),
    ({"seconds": -1.0}, "timings[0].seconds: -1.0 is below 0"),
    ({"source": "clock"}, "timings[0].source: 'clock' is not one of"),
    ({"line": 0}, "timings[0].line: 0 is below 1"),
    ({"printed": ["1 s"]}, "timings[0].printed[0]: not a number"),
])
def test_a_bad_timing_in_a_file_is_one_clear_error(mutation, message):
    from sphinx_gpu_admonition.model.schema import SchemaError

    data = _records()["lectures/jax"].to_dict()
    data["timings"][0].update(mutation)
    with pytest.raises(SchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        NotebookRecord.from_dict(data)


@PROPERTY
@given(st.lists(st.sampled_from(["time:a", "time:b", "time:a-1", "time:", "time:a.b",
                                 "slow-ok", "hide-input"]), max_size=4), st.integers(1, 4))
def test_every_named_cell_gets_a_timing_per_name(tags, copies):
    cells = [Cell(n, n, "x", tuple(tags)) for n in range(copies)]
    notebook = record(*(measured(n, 1.0) for n in range(copies)))
    timings, problems = page_timings(cells, notebook), tag_problems(cells)
    names, bad = tag_names(tags)
    assert len(timings) == len(names) * copies
    assert {t.status for t in timings} <= ({TIMING_OK} if copies == 1 else {NOT_UNIQUE})
    assert len(problems) == len(bad) * copies + (len(names) if copies > 1 else 0)

