"""Loaded data is checked against the record model: a bad file is one clear error.

In-process: the validator (``StatusReport.from_dict``, ``read_status``,
``read_sidecar``) on mutations of a valid document, and the JSON schema tied to
the dataclasses.  Real builds: a bad ``gpu_status_baseline`` (execution off, no
kernel) and bad capture sidecars beside the jupyter-cache (one kernel run, then
cache hits).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import threading
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bs4 import BeautifulSoup
from conftest import MYST_HEADER, TESTS, ProjectBuild, build_project, gpu_baseline
from status_documents import BAD_DOCUMENTS, DATA, SCHEMA, _set, valid_document

from sphinx_gpu_admonition.model import files, record, schema
from sphinx_gpu_admonition.model.files import read_sidecar, read_status, sidecar_dict
from sphinx_gpu_admonition.model.record import (
    CacheMiss,
    CellRecord,
    Device,
    DispatchLoop,
    Environment,
    ErrorInfo,
    GpuInfo,
    Host,
    HostSync,
    JaxInfo,
    JitCall,
    KernelPackages,
    NotebookRecord,
    StatusReport,
    WorkLine,
)
from sphinx_gpu_admonition.model.schema import SchemaError
from sphinx_gpu_admonition.model.timing_record import (
    Claim,
    ClaimCheck,
    Evidence,
    EvidenceValue,
    TimedValue,
    Timing,
    TimingStatement,
)


# -- the schema is the model's ---------------------------------------------------------
def _schema_types(hint: Any) -> set[str]:
    """The JSON types a field of this Python type is written as."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return set().union(*(_schema_types(arg) for arg in typing.get_args(hint)))
    if hint is type(None):
        return {"null"}
    if dataclasses.is_dataclass(hint) or typing.get_origin(hint) is dict:
        return {"object"}
    if typing.get_origin(hint) is list:
        return {"array"}
    return {{str: "string", int: "integer", float: "number", bool: "boolean"}[hint]}


def _item_type(hint: Any) -> Any:
    """``T`` of ``list[T]`` / ``dict[str, T]`` (through ``| None``), else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    if typing.get_origin(hint) in (list, dict):
        return typing.get_args(hint)[-1]
    return None


_NOTEBOOK = ("properties", "notebooks", "items")
_ENVIRONMENT = (*_NOTEBOOK, "properties", "environment")
_CELL = (*_NOTEBOOK, "properties", "cells", "items")
_CHECK = ("properties", "claims", "items", "properties", "checks", "items")
_STATEMENT = ("properties", "timing_statements", "items")
#: each dataclass of the model and where the schema describes it
MODEL_IN_SCHEMA = [
    (StatusReport, ()),
    (NotebookRecord, _NOTEBOOK),
    (ErrorInfo, (*_NOTEBOOK, "properties", "error")),
    (CellRecord, _CELL),
    (Environment, _ENVIRONMENT),
    (Host, (*_ENVIRONMENT, "properties", "host")),
    (JaxInfo, (*_ENVIRONMENT, "properties", "jax")),
    (Device, (*_ENVIRONMENT, "properties", "jax", "properties", "devices", "items")),
    (GpuInfo, (*_ENVIRONMENT, "properties", "gpus", "items")),
    (CacheMiss, (*_NOTEBOOK, "properties", "cache_miss")),
    (KernelPackages, (*_NOTEBOOK, "properties", "packages")),
    (DispatchLoop, (*_CELL, "properties", "dispatch_loops", "items")),
    (HostSync, (*_CELL, "properties", "dispatch_loops", "items", "properties", "syncs",
                "items")),
    (JitCall, (*_CELL, "properties", "jit_calls", "items")),
    (WorkLine, (*_CELL, "properties", "work")),
    (Timing, (*_NOTEBOOK, "properties", "timings", "items")),
    (Claim, ("properties", "claims", "items")),
    (ClaimCheck, _CHECK),
    (TimedValue, (*_CHECK, "properties", "left")),
    (TimedValue, (*_CHECK, "properties", "right")),
    (TimingStatement, _STATEMENT),
    (Evidence, (*_STATEMENT, "properties", "evidence", "items")),
    (EvidenceValue, (*_STATEMENT, "properties", "evidence", "items", "properties", "values",
                     "items")),
]


@pytest.mark.parametrize(("model", "pointer"), MODEL_IN_SCHEMA,
                         ids=[m.__name__ for m, _ in MODEL_IN_SCHEMA])
def test_schema_and_model_agree(model: type, pointer: tuple[str, ...]) -> None:
    node = SCHEMA
    for key in pointer:
        node = node[key]
    assert node["additionalProperties"] is False  # strict: no undocumented field
    properties = dict(node["properties"])
    if model is StatusReport:
        assert properties.pop("schema") == {"const": record.SCHEMA_ID}
        assert properties.pop("schema_version") == {"const": record.SCHEMA_VERSION}
    hints = typing.get_type_hints(model)
    fields = {f.name: f for f in dataclasses.fields(model)}
    assert set(properties) == set(fields)
    required = {name for name, f in fields.items() if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING}
    assert required <= set(node.get("required", []))
    for name, field in fields.items():
        prop, hint = properties[name], hints[name]
        if "choices" in field.metadata:
            assert prop["enum"] == list(field.metadata["choices"]), name
            continue
        if hint == dict[str, Any]:  # free-form (build, analysis)
            assert prop["type"] == "object", name
            continue
        written = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        assert set(written) == _schema_types(hint), name
        item = _item_type(hint)
        if item is not None and not dataclasses.is_dataclass(item):
            prop = prop.get("items") or prop["additionalProperties"]
            assert {prop["type"]} == _schema_types(item), name
            hint = item
        if _schema_types(hint) & {"number", "integer"}:
            assert prop["minimum"] == field.metadata.get("minimum", 0), name


def test_the_test_data_is_valid_against_the_strict_schema() -> None:
    """The recorded data as this version reads and writes it: the incident files are of
    schema version 1, migrated on load (positions from the cells' order), the
    diagnosis files of this version (judged again by make_gpu_fixture.py --judge)."""
    versions = set()
    for path in DATA.glob("*.json"):
        raw = json.loads(path.read_text(encoding="utf-8"))
        versions.add(raw["schema_version"])
        if raw["schema_version"] == record.SCHEMA_VERSION:
            jsonschema.validate(raw, SCHEMA)
        jsonschema.validate(files.read_status(path).to_dict(), SCHEMA)
    assert versions == {1, record.SCHEMA_VERSION}
    jsonschema.validate(json.loads(json.dumps(gpu_baseline())) | {"build": {}}, SCHEMA)


@pytest.mark.parametrize("kind", BAD_DOCUMENTS)
def test_bad_document_names_the_field(kind: str) -> None:
    mutate, message = BAD_DOCUMENTS[kind]
    data = valid_document()
    mutate(data)
    with pytest.raises(SchemaError) as caught:
        StatusReport.from_dict(data)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_null_container_reads_as_empty_and_unknown_keys_are_ignored() -> None:
    data = valid_document()
    notebook = data["notebooks"][0]
    notebook["environment"]["gpus"] = None
    notebook["cells"][0]["loops"] = None
    notebook["written_by_a_newer_release"] = {"anything": [1, 2]}
    loaded = StatusReport.from_dict(data).notebooks[0]
    assert loaded.environment.gpus == [] and loaded.cells[0].loops == []


def _write(tmp_path: Path, text: str | bytes, name: str = "status.json") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 10_000 + "]" * 10_000, "nested too deeply"),
    ('{"build": ' + "[" * 10_000 + "]" * 10_000 + "}", "nested too deeply"),
    ('{"n": ' + "1" * 5000 + "}", "not JSON this version reads"),
    (b"\xff\xfe\x00", "not a text file"),
    ("{", "not JSON"),
    ('{"schema": "sphinx-gpu-admonition/execution-status", "schema_version": 1, '
     '"notebooks": [], "build": {"t": NaN}}', "build['t']: not a finite number"),
])
def test_read_status_never_raises_anything_but_schema_error(tmp_path: Path, text: str | bytes,
                                                              message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(SchemaError, match=re.escape(message)) as caught:
        read_status(path)
    assert str(caught.value).startswith(str(path))


def test_too_large_files_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, json.dumps(valid_document()))
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    with pytest.raises(SchemaError, match="too large"):
        read_status(path)


def test_files_without_a_size_are_read_to_the_limit(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO (``--baseline <(curl ...)``) has no size: it is read on, up to the limit;
    a file of exactly the limit is read whole."""
    text = json.dumps(valid_document())
    fifo = tmp_path / "status.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(text,))
    writer.start()
    try:
        assert read_status(fifo).to_dict() == read_status(_write(tmp_path, text)).to_dict()
    finally:
        writer.join()
    monkeypatch.setattr(files, "MAX_FILE_BYTES", len(text.encode()))
    assert read_status(_write(tmp_path, text)).notebooks
    os.mkfifo(tmp_path / "big.fifo")
    writer = threading.Thread(target=(tmp_path / "big.fifo").write_text, args=(text + " ",))
    writer.start()
    try:
        with pytest.raises(SchemaError, match="too large"):
            read_status(tmp_path / "big.fifo")
    finally:
        writer.join()


# -- sidecars ------------------------------------------------------------------------------
def _a_record() -> NotebookRecord:
    return StatusReport.from_dict(valid_document()).notebooks[0]


def test_sidecar_round_trip_and_versions(tmp_path: Path) -> None:
    saved = _a_record()
    path = _write(tmp_path, json.dumps(sidecar_dict(saved)), "sidecar.json")
    assert read_sidecar(path) == saved
    # an unversioned sidecar (0.1.0) or another release's: not read, not an error
    _write(tmp_path, json.dumps(saved.to_dict()), "sidecar.json")
    assert read_sidecar(path) is None
    _write(tmp_path, json.dumps(sidecar_dict(saved) | {"sidecar_version": 99}), "sidecar.json")
    assert read_sidecar(path) is None


def test_plain_data_is_what_asdict_makes() -> None:
    """The model's conversions give what ``dataclasses.asdict`` gives: ``plain_data``
    (any value; the free-form fallback) for the recorded incident data and for the
    values the model never holds (tuples, named tuples, sets), and ``to_dict`` (the
    converter specialised from the field types) for the incident data."""
    data = TESTS / "data"
    for name in ("incident-gpu-t4-status.json", "incident-cpu-status.json"):
        for notebook in files.read_status(data / name).notebooks:
            assert schema.plain_data(notebook) == dataclasses.asdict(notebook)
            # to_dict, specialised from the field types: the same keys, in the same
            # order (the JSON text of a build must not change with it)
            assert json.dumps(notebook.to_dict()) == json.dumps(dataclasses.asdict(notebook))

    @dataclasses.dataclass
    class Odd:
        pair: tuple
        named: typing.Any
        tags: set
        nested: dict

    class Point(typing.NamedTuple):
        x: int
        y: list
    odd = Odd((1, [2]), Point(1, [2]), {"a"}, {"k": (Point(3, []),)})
    assert schema.plain_data(odd) == dataclasses.asdict(odd)
    assert type(schema.plain_data(odd)["named"]) is Point


def test_sidecar_with_bad_data_names_file_and_field(tmp_path: Path) -> None:
    data = sidecar_dict(_a_record())
    data["record"]["cells"][0]["seconds"] = "1.5"
    path = _write(tmp_path, json.dumps(data), "sidecar.json")
    with pytest.raises(SchemaError, match=re.escape(
            f"{path}: record.cells[0].seconds: not a number (got a string: '1.5')")):
        read_sidecar(path)
    _write(tmp_path, "[]", "sidecar.json")
    with pytest.raises(SchemaError, match="not a capture sidecar"):
        read_sidecar(path)


# -- a bad baseline in a real build ----------------------------------------------------------
_NOTEBOOK_PAGE = (MYST_HEADER + "# Slow\n\n"
                  "```{code-cell} ipython3\nx = 1\n```\n")
def _deeply_nested(data: dict[str, Any]) -> str:
    """The document with 10,000 nested lists in it (too deep for json.dumps to write)."""
    return json.dumps(data)[:-1] + ', "extra": ' + "[" * 10_000 + "]" * 10_000 + "}"


def _mutated(mutate: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], str]:
    def text(data: dict[str, Any]) -> str:
        mutate(data)
        return json.dumps(data)  # not the writer: NaN is what a bad file holds

    return text


DEVICE_0 = (0, "environment", "jax", "devices", 0)
BAD_BASELINES = {
    "notebooks_dict": (_mutated(_set("notebooks", value={})), "notebooks: not an array"),
    "notebooks_string": (_mutated(_set("notebooks", value="slow")), "notebooks: not an array"),
    "runtime_string": (_mutated(_set("notebooks", 0, "runtime_seconds", value="12")),
                       "notebooks[0].runtime_seconds: not a number"),
    "runtime_nan": (_mutated(_set("notebooks", 0, "runtime_seconds", value=float("nan"))),
                    "notebooks[0].runtime_seconds: not a finite number"),
    "device_count_string": (_mutated(_set("notebooks", *DEVICE_0, "count", value="2")),
                            "notebooks[0].environment.jax.devices[0].count: not an integer"),
    "deep_nesting": (_deeply_nested, "nested too deeply"),
}


def _build_with_baseline(tmp_path: Path, baseline_text: str) -> ProjectBuild:
    """A book with one notebook page and a status page; no kernel (execution off)."""
    files = {"index.md": "# Book\n\n```{toctree}\nslow\nstatus\n```\n",
             "status.md": "# Status\n\n```{execution-status}\n```\n",
             "slow.md": _NOTEBOOK_PAGE, "baseline.json": baseline_text}
    return build_project("cli", tmp_path, files=files, confoverrides={
        "nb_execution_mode": "off", "gpu_status_baseline": "baseline.json",
        "gpu_status_console": False, "show_warning_types": True,
        "exclude_patterns": ["_build", "*.json", "failing.md", "gone.md", "jaxpage.md",
                             "sleepy.md"]})


@pytest.mark.parametrize("kind", ["valid", *BAD_BASELINES])
def test_bad_baseline_is_one_warning_and_the_page_renders(tmp_path: Path, kind: str) -> None:
    to_text, message = BAD_BASELINES.get(kind, (json.dumps, ""))
    build = _build_with_baseline(tmp_path, to_text(gpu_baseline()))
    table = BeautifulSoup(build.read("status.html"), "html.parser").select_one("table")
    assert "Slow" in table.select_one("tbody").get_text()  # the notebook's row
    warnings = [line for line in build.warning_lines if "gpu_admonition.baseline" in line]
    if kind == "valid":
        assert warnings == [] and "Baseline time" in table.get_text()
        return
    assert len(warnings) == 1, build.warnings
    assert "baseline.json: " in warnings[0] and message in warnings[0]
    assert "Baseline time" not in table.get_text()  # rendered without comparison
    assert (build.outdir / "execution-status.json").is_file()  # the build went on


# -- bad capture sidecars in a real build -------------------------------------------------------
def test_bad_or_foreign_sidecar_on_a_cache_hit(tmp_path: Path) -> None:
    """One kernel run fills the jupyter-cache; two cache hits read a changed sidecar."""
    from capture_builds import build_again, forget_environment, notebooks, only

    cache = {"nb_execution_mode": "cache", "show_warning_types": True}
    first = build_project("capture", tmp_path, confoverrides=cache, **only("timing"))
    (sidecar,) = (tmp_path / "_build" / ".jupyter_cache" / "sphinx-gpu-admonition").glob("*.json")
    saved = json.loads(sidecar.read_text(encoding="utf-8"))
    assert saved["sidecar_version"] == files.SIDECAR_VERSION

    def hit_with(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        sidecar.write_text(json.dumps(data), encoding="utf-8")
        forget_environment(tmp_path / "_build")
        build = build_again(first, confoverrides=cache)
        capture = [w for w in build.warnings.splitlines() if "gpu_admonition.capture" in w]
        return notebooks(build)["timing"], capture

    wrong = copy.deepcopy(saved)
    wrong["record"]["cells"][0]["seconds"] = "1.5"
    timing, warnings = hit_with(wrong)
    assert timing["provenance"] == "cache" and timing["capture"] == "missing"
    assert timing["cells"] == []  # ignored, not half read
    assert len(warnings) == 1
    assert "record.cells[0].seconds: not a number" in warnings[0] and "timing" in warnings[0]

    # an unversioned sidecar, as 0.1.0 wrote them: treated as missing, without a warning
    timing, warnings = hit_with(saved["record"])
    assert timing["capture"] == "missing" and warnings == []
    assert "another version of sphinx-gpu-admonition" in timing["capture_message"]

    # a sidecar of an earlier release (version 2: no error_expected) keeps its
    # measurements after an upgrade, so that a -W build reusing its cache still passes
    earlier = copy.deepcopy(saved)
    earlier["sidecar_version"] = 2
    for cell in earlier["record"]["cells"]:
        cell.pop("error_expected", None)
    timing, warnings = hit_with(earlier)
    assert timing["capture"] == "ok" and len(timing["cells"]) == 3 and warnings == []

    # a later release's sidecar: as missing, without a warning
    later = {**saved, "sidecar_version": files.SIDECAR_VERSION + 1}
    timing, warnings = hit_with(later)
    assert timing["capture"] == "missing" and warnings == []
    assert "another version of sphinx-gpu-admonition" in timing["capture_message"]

    timing, warnings = hit_with(saved)
    assert timing["capture"] == "ok" and len(timing["cells"]) == 3 and warnings == []


def test_a_cache_hit_from_an_earlier_release_knows_its_expected_errors(tmp_path: Path) -> None:
    """Sidecars of version 2 do not say whether a cell's error was expected: a cache
    hit works it out from the page (``raises-exception``), as an execution does."""
    from capture_builds import build_again, forget_environment, notebooks

    cache = {"nb_execution_mode": "cache"}
    page = (MYST_HEADER + "# Expected\n\n```{code-cell} ipython3\n:tags: [raises-exception]\n"
            '{}["an expected error"]\n```\n\n```{code-cell} ipython3\nx = 1\n```\n')
    first = build_project("samecell", tmp_path, confoverrides=cache,
                          files={"samecell.md": page})
    (sidecar,) = (tmp_path / "_build" / ".jupyter_cache" / "sphinx-gpu-admonition").glob("*.json")
    saved = json.loads(sidecar.read_text(encoding="utf-8"))
    saved["sidecar_version"] = 2
    for cell in saved["record"]["cells"]:
        cell.pop("error_expected")
    sidecar.write_text(json.dumps(saved), encoding="utf-8")
    forget_environment(tmp_path / "_build")
    hit = notebooks(build_again(first, confoverrides=cache))["samecell"]
    assert hit["provenance"] == "cache" and hit["capture"] == "ok"
    assert [(c["error"], c["error_expected"]) for c in hit["cells"]] == [
        ("KeyError", True), (None, False)]
    assert hit["status"] == "ok"


# -- what the extension writes stays valid ------------------------------------------------------
def test_junit_xml_is_valid_with_control_characters_in_names_and_types() -> None:
    from lxml import etree

    from sphinx_gpu_admonition.render.junit import junit_xml

    failed = NotebookRecord(docname="bad\x01name", status="error", provenance="executed",
                            error=ErrorInfo(type="Esc\x1bError", message="m\x00es\x0bsage\ud800"))
    cached = NotebookRecord(docname="old\x1f", status="ok", provenance="cache",
                            executed_at="2026-01-01T00:00:00\x07")
    suite = etree.fromstring(junit_xml(StatusReport([failed, cached])).encode("utf-8"))
    cases = suite.findall("testcase")
    # the one rule of every output (model.formatting.safe_line): a control character is
    # a space, a vertical tab a line break, a lone surrogate U+FFFD
    assert [case.get("name") for case in cases] == ["bad name", "old "]
    failure = cases[0].find("failure")
    assert failure.get("type") == "Esc Error"
    assert failure.get("message") == "error: Esc Error"
    assert failure.text == "m es\nsage\ufffd"
    assert "\x07" not in cases[1].find("system-out").text
