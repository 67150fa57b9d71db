"""The record model and the JSON schema (``model/schema.py``, ``model/record.py``): they agree, the
test data is valid, a bad document names its field, plain data is what ``asdict`` makes."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

import jsonschema
import pytest
from conftest import TESTS, gpu_baseline
from status_documents import BAD_DOCUMENTS, DATA, SCHEMA, valid_document

from sphinx_gpu_admonition.model import files, record, schema
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


