"""Status documents for tests: a valid one (a real GPU runner's) and bad mutations of it,
each with the error message that names its field (used by tests/unit/model/test_schema.py,
the command line's tests and the fuzz tests)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema

from sphinx_gpu_admonition.model import record
from sphinx_gpu_admonition.model.record import ErrorInfo, NotebookRecord, StatusReport

SCHEMA = json.loads((Path(record.__file__).parents[1] / "schema" / "execution-status.schema.json")
                    .read_text(encoding="utf-8"))
DATA = Path(__file__).parent / "data"


def valid_document() -> dict[str, Any]:
    """A real status document (a GPU runner's, written by schema version 1), as this
    version reads and writes it, valid against the schema."""
    data = json.loads((DATA / "incident-gpu-t4-status.json").read_text(encoding="utf-8"))
    data = StatusReport.from_dict(data).to_dict()
    jsonschema.validate(data, SCHEMA)
    return data


def nested_lists(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


# -- bad values, named by their path -----------------------------------------------------
def _set(*path: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _drop(*path: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


NB, CELL = ("notebooks", 0), ("notebooks", 0, "cells", 1)


DEVICE = (*NB, "environment", "jax", "devices", 0)


BAD_DOCUMENTS = {
    "notebooks_dict": (_set("notebooks", value={}), "notebooks: not an array (got an object)"),
    "notebooks_string": (_set("notebooks", value="all"),
                         "notebooks: not an array (got a string: 'all')"),
    "notebooks_missing": (_drop("notebooks"), "notebooks: missing"),
    "build_list": (_set("build", value=[]), "build: not an object"),
    "runtime_string": (_set(*NB, "runtime_seconds", value="12"),
                       "notebooks[0].runtime_seconds: not a number (got a string: '12')"),
    "runtime_nan": (_set(*NB, "runtime_seconds", value=float("nan")),
                    "notebooks[0].runtime_seconds: not a finite number (got nan)"),
    "seconds_infinity": (_set(*CELL, "seconds", value=float("inf")),
                         "notebooks[0].cells[1].seconds: not a finite number (got inf)"),
    "seconds_string": (_set(*CELL, "seconds", value="1.5"),
                       "notebooks[0].cells[1].seconds: not a number (got a string: '1.5')"),
    "seconds_negative": (_set(*CELL, "seconds", value=-1591.06),
                         "notebooks[0].cells[1].seconds: -1591.06 is below 0"),
    "seconds_huge": (_set(*CELL, "seconds", value=1e300),
                     "notebooks[0].cells[1].seconds: 1e+300 is too large"),
    "seconds_boolean": (_set(*CELL, "seconds", value=True),
                        "notebooks[0].cells[1].seconds: not a number (got a boolean: True)"),
    "device_count_string": (_set(*DEVICE, "count", value="2"),
                            "devices[0].count: not an integer (got a string: '2')"),
    "device_count_zero": (_set(*DEVICE, "count", value=0), "devices[0].count: 0 is below 1"),
    "compilations_list": (_set(*CELL, "compilations", value=["f"]),
                          "notebooks[0].cells[1].compilations: not an object (got an array)"),
    "compilation_count_float": (_set(*CELL, "compilations", value={"f": 1.5}),
                                "cells[1].compilations['f']: not an integer"),
    "error_message_null": (_set(*NB, "error", value={"type": "ValueError", "message": None}),
                           "notebooks[0].error.message: not a string (got null)"),
    "status_unknown": (_set(*NB, "status", value="green"),
                       "notebooks[0].status: 'green' is not one of ok, error"),
    "status_missing": (_drop(*NB, "status"), "notebooks[0].status: missing"),
    "environment_string": (_set(*NB, "environment", value="gpu"),
                           "notebooks[0].environment: not an object (got a string: 'gpu')"),
    "first_line_huge": (_set(*CELL, "first_line", value="x" * 200_000),
                        "first_line: a string of 200000 characters"),
    "first_line_surrogate": (_set(*CELL, "first_line", value="\ud800"),
                             "first_line: not valid Unicode"),
    "build_nested": (_set("build", "x", value=nested_lists(100)), "nested deeper than 32"),
    "build_nan": (_set("build", "created", value=float("nan")),
                  "build['created']: not a finite number"),
    "schema_version_true": (_set("schema_version", value=True), "schema version True"),
}


def _base() -> dict[str, Any]:
    """A real document plus a notebook whose kernel died in its first cell."""
    data = valid_document()
    died = NotebookRecord(docname="died", status="kernel_died", provenance="executed",
                          error=ErrorInfo(type="DeadKernelError", message="Kernel died",
                                          execution_count=1))
    data["notebooks"].append(died.to_dict())
    return data


#: valid_document() and a notebook whose kernel died: what the fuzz tests mutate
BASE = _base()
