"""The execution record: one model for what a notebook's execution was.

This is the only definition of the data.  The Sphinx side builds
:class:`NotebookRecord` objects from what the kernel probe wrote, stores them
(as plain dicts, see :meth:`NotebookRecord.to_dict`) in the environment, and
every consumer — the page line, the ``gpu`` admonition, the status page, the
JSON / JUnit / console writers and the command line — reads them back through
:func:`StatusReport.from_dict` / :meth:`NotebookRecord.from_dict`.

Loading checks every value against the dataclasses' field types (one validator,
:func:`load_model`): a bad value raises :class:`SchemaError` naming its path
(``notebooks[3].cells[2].seconds: not a number``), never a ``TypeError`` later.

The JSON form is described by ``schema/execution-status.schema.json`` (strict; a
test fails when it and the dataclasses disagree); bump :data:`SCHEMA_VERSION`
whenever a field changes meaning or disappears, and :data:`SIDECAR_VERSION`
whenever the model changes at all (and keep :data:`READABLE_SIDECAR_VERSIONS` to
the versions whose data still means the same).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
import operator
import os
import re
import types
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

SCHEMA_ID = "sphinx-gpu-admonition/execution-status"
SCHEMA_VERSION = 1

# Notebook statuses, in the order the status page explains them.
OK = "ok"
ERROR = "error"
TIMEOUT = "timeout"
KERNEL_DIED = "kernel_died"
OUTPUTS_PRESENT = "outputs_present"
EXCLUDED = "excluded"
EXECUTION_OFF = "execution_off"
STATUSES = (OK, ERROR, TIMEOUT, KERNEL_DIED, OUTPUTS_PRESENT, EXCLUDED, EXECUTION_OFF)
FAILED_STATUSES = (ERROR, TIMEOUT, KERNEL_DIED)
NOT_EXECUTED_STATUSES = (OUTPUTS_PRESENT, EXCLUDED, EXECUTION_OFF)

# Where a notebook's outputs (and so its measurements) came from.
EXECUTED = "executed"  # executed by this build
CACHE = "cache"  # reused from the jupyter-cache; measurements are from that execution
#: executed by an earlier build of the same environment; this build did not read the
#: page again (its source was unchanged), so outputs and measurements are that build's
EARLIER_BUILD = "earlier_build"
NOT_EXECUTED = "none"
PROVENANCES = (EXECUTED, CACHE, EARLIER_BUILD, NOT_EXECUTED)

# Whether the build that wrote a status document finished (``build.outcome``).
BUILD_SUCCEEDED = "succeeded"
BUILD_FAILED = "failed"
BUILD_OUTCOMES = (BUILD_SUCCEEDED, BUILD_FAILED)


CAPTURE_STATES = ("ok", "missing", "failed")
GPU_SOURCES = ("nvml", "nvidia-smi")

# Limits of what a loaded document may hold: far above any real book, low enough
# that a corrupt or hostile file cannot exhaust memory or the recursion limit, and
# that sums of times cannot overflow to infinity.
MAX_FILE_BYTES = 64 * 2**20
MAX_STRING_CHARS = 100_000
MAX_NUMBER = 1e15
#: nesting of the free-form parts (``build``, ``analysis``); the model itself is 6 deep
MAX_DEPTH = 32


class SchemaError(ValueError):
    """Data that is not an execution-status document this version can read.

    The message names the field (``notebooks[3].cells[2].seconds: not a number``);
    :func:`read_status` prefixes the file.
    """


def choices(values: tuple[str, ...], **field_options: Any) -> Any:
    """A dataclass field whose value must be one of ``values`` (checked on loading)."""
    return dataclasses.field(metadata={"choices": values}, **field_options)


_Model = TypeVar("_Model")


class Loadable:
    """A dataclass of the model, loaded from JSON data by :func:`load_model`."""

    @classmethod
    def from_dict(cls: type[_Model], data: Any, where: str = "") -> _Model:
        """Checked against the model's field types; raises :class:`SchemaError`."""
        return load_model(cls, {} if data is None else data, where)


@dataclasses.dataclass
class Device(Loadable):
    """Devices of one kind that JAX saw (``count`` of them)."""

    platform: str
    kind: str
    count: int = dataclasses.field(default=1, metadata={"minimum": 1})


@dataclasses.dataclass
class GpuInfo(Loadable):
    """An NVIDIA GPU as NVML or nvidia-smi reported it."""

    name: str
    memory_mb: float | None = None
    driver: str | None = None
    cuda: str | None = None
    source: str = choices(GPU_SOURCES, default="nvml")


@dataclasses.dataclass
class JaxInfo(Loadable):
    """JAX as the notebook used it; ``backend`` is None when it never initialised one."""

    backend: str | None = None
    version: str | None = None
    jaxlib_version: str | None = None
    plugins: dict[str, str] = dataclasses.field(default_factory=dict)
    devices: list[Device] = dataclasses.field(default_factory=list)

    @property
    def device_summary(self) -> str | None:
        """``"2x NVIDIA H200"`` style text of the devices of the default backend."""
        if not self.devices:
            return None
        parts = [f"{d.count}x {d.kind}" if d.count > 1 else d.kind for d in self.devices]
        return ", ".join(parts)


@dataclasses.dataclass
class Host(Loadable):
    """The machine the kernel ran on."""

    cpu: str | None = None
    cores: int | None = None
    memory_gb: float | None = None
    os: str | None = None
    machine: str | None = None


@dataclasses.dataclass
class Environment(Loadable):
    """Where a notebook ran, as the kernel saw it."""

    host: Host = dataclasses.field(default_factory=Host)
    python: str | None = None
    jax: JaxInfo = dataclasses.field(default_factory=JaxInfo)
    gpus: list[GpuInfo] = dataclasses.field(default_factory=list)
    libraries: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def backend(self) -> str | None:
        return self.jax.backend

    @property
    def machine_id(self) -> str:
        """A short stable id of the machine (host and GPUs), to group notebooks by it."""
        # vars(): the host's fields as asdict gives them (all plain values), without
        # its deep copy; the status page asks for it for every notebook
        key = json.dumps([vars(self.host), [g.name for g in self.gpus]], sort_keys=True)
        return hashlib.sha1(key.encode()).hexdigest()[:10]

    @property
    def device_label(self) -> str:
        """One line: ``"GPU: NVIDIA H200"``, ``"CPU: AMD EPYC 7763, 4 cores"``."""
        backend = self.jax.backend
        if backend and backend != "cpu":
            name = self.jax.device_summary or (self.gpus[0].name if self.gpus else backend)
            return f"{backend.upper()}: {name}"
        cpu = self.host.cpu or "unknown CPU"
        cores = f", {self.host.cores} cores" if self.host.cores else ""
        return f"CPU: {cpu}{cores}"


@dataclasses.dataclass
class CellRecord(Loadable):
    """One executed code cell."""

    #: index of the cell in the notebook (as MyST-NB numbers cells); None when
    #: the cell is not rendered on the page and could not be matched
    index: int | None
    execution_count: int | None
    seconds: float
    first_line: str = ""
    #: exception type name when the cell raised
    error: str | None = None
    #: the cell was allowed to raise (tagged ``raises-exception``, or the book sets
    #: ``nb_execution_allow_errors``): its error is expected, not a failure
    error_expected: bool = False
    #: JAX tracing + lowering + compilation time inside this cell
    compile_seconds: float = 0.0
    #: XLA compilations inside this cell, by function name
    compilations: dict[str, int] = dataclasses.field(default_factory=dict,
                                                     metadata={"minimum": 1})
    #: sequential JAX loop primitives called in the source (lax.scan, fori_loop, while_loop)
    loops: list[str] = dataclasses.field(default_factory=list)
    #: resident memory of the kernel process after the cell (peak so far)
    peak_memory_mb: float | None = None
    #: line of the cell in the source file (text notebooks; None for .ipynb sources),
    #: so that CI annotations point at it from the JSON alone
    line: int | None = dataclasses.field(default=None, metadata={"minimum": 1})

    @property
    def compilation_count(self) -> int:
        return sum(self.compilations.values())


#: how a cell is named in every view (page, badge, console, warnings, JUnit, JSON, CLI)
CELL_LABEL = "cell {number}"


def cell_anchor(index: int) -> str:
    """The id of the code cell with MyST-NB index ``index`` on its notebook's page."""
    return f"cell-{index}"


@dataclasses.dataclass(frozen=True)
class CellName:
    """The one identity of a code cell, derived from the record (never stored).

    ``number`` counts the notebook's code cells that ran, from 1, in order: hidden
    cells count, markdown cells do not, so in a top-to-bottom run "cell 3" is the
    cell Jupyter shows as ``In [3]``.  ``index`` is MyST-NB's index of the cell among
    all cells (what the page's anchor ``cell-<index>`` uses); ``source`` and ``line``
    say where the cell starts in a text notebook (MyST / rST), for editors and CI.
    """

    docname: str
    number: int
    index: int | None
    first_line: str = ""
    source: str | None = None
    line: int | None = None

    @property
    def label(self) -> str:
        """``cell 3``"""
        return CELL_LABEL.format(number=self.number)

    @property
    def anchor(self) -> str | None:
        """The id of the cell on its notebook's page (None: not on the page)."""
        return None if self.index is None else cell_anchor(self.index)

    @property
    def location(self) -> str | None:
        """``lectures/intro.md:42`` for a text notebook, else None."""
        if self.source is None or self.line is None:
            return None
        return f"{self.source}:{self.line}"

    @property
    def full(self) -> str:
        """``intro cell 3 (lectures/intro.md:42)``: the notebook, the cell and its line."""
        where = self.location
        return f"{self.docname} {self.label}" + (f" ({where})" if where else "")


@dataclasses.dataclass
class ErrorInfo(Loadable):
    """Why a notebook failed, and in which cell."""

    type: str
    message: str = ""
    cell_index: int | None = None
    execution_count: int | None = None


@dataclasses.dataclass
class NotebookRecord(Loadable):
    """Everything known about one notebook page's execution."""

    docname: str
    status: str = choices(STATUSES)
    title: str = ""
    provenance: str = choices(PROVENANCES, default=NOT_EXECUTED)
    #: MyST-NB execution mode that produced it (force, auto, cache, inline, off)
    method: str | None = None
    #: ISO 8601 time of the execution that produced the outputs
    executed_at: str | None = None
    #: MyST-NB's run time (includes kernel start-up and shutdown)
    runtime_seconds: float | None = None
    error: ErrorInfo | None = None
    environment: Environment = dataclasses.field(default_factory=Environment)
    cells: list[CellRecord] = dataclasses.field(default_factory=list)
    #: "ok", "missing" (no probe data: non-IPython kernel, disabled) or "failed"
    capture: str = choices(CAPTURE_STATES, default="missing")
    capture_message: str | None = None
    peak_memory_mb: float | None = None
    #: the source file, relative to the repository root when the build knew it
    #: (``GITHUB_WORKSPACE`` or the current folder), for CI annotations
    source: str | None = None
    #: the machine calibration (:mod:`.calibration`) measured right after the notebook
    #: was executed: the runner's speed when it ran, kept by merges and cache hits
    calibration_seconds: float | None = None

    @property
    def cells_seconds(self) -> float:
        return sum(c.seconds for c in self.cells)

    @property
    def compile_seconds(self) -> float:
        return sum(c.compile_seconds for c in self.cells)

    @property
    def seconds(self) -> float:
        """The notebook's time: MyST-NB's run time, else the sum of its cells."""
        if self.runtime_seconds is not None:
            return self.runtime_seconds
        return self.cells_seconds

    @property
    def device_label(self) -> str | None:
        """Where it ran (``Environment.device_label``), None without capture data:
        a notebook never claims a device nobody measured."""
        return self.environment.device_label if self.capture == "ok" else None

    @property
    def executed(self) -> bool:
        return self.status not in NOT_EXECUTED_STATUSES

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    def slowest_cell(self) -> CellRecord | None:
        return max(self.cells, key=lambda c: c.seconds, default=None)

    def cell_name(self, cell: CellRecord) -> CellName:
        """How every view names ``cell`` (one of :attr:`cells`): see :class:`CellName`."""
        return CellName(docname=self.docname, number=self.cell_number(cell),
                        index=cell.index, first_line=cell.first_line,
                        source=self.source, line=cell.line)

    def cell_number(self, cell: CellRecord) -> int:
        """1 for the first code cell that ran (by identity: two cells may be equal)."""
        return next(n for n, c in enumerate(self.cells, 1) if c is cell)

    def error_cell(self) -> CellRecord | None:
        """The cell that raised the notebook's error, when the record knows it."""
        if self.error is None or self.error.cell_index is None:
            return None
        return next((c for c in self.cells if c.index == self.error.cell_index), None)

    def to_dict(self) -> dict[str, Any]:
        return _dumper(NotebookRecord)(self)


@dataclasses.dataclass
class StatusReport:
    """The whole build: the content of ``execution-status.json``."""

    notebooks: list[NotebookRecord]
    build: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: derived data written for consumers that do not share this model (flags,
    #: baseline comparison); keyed by docname
    analysis: dict[str, Any] = dataclasses.field(default_factory=dict)

    def by_docname(self) -> dict[str, NotebookRecord]:
        return {nb.docname: nb for nb in self.notebooks}

    def machines(self) -> dict[str, tuple[Environment, list[str]]]:
        """Machine id -> (an environment seen on it, docnames executed there)."""
        result: dict[str, tuple[Environment, list[str]]] = {}
        for nb in self.notebooks:
            if nb.capture != "ok":
                continue
            env = nb.environment
            entry = result.setdefault(env.machine_id, (env, []))
            entry[1].append(nb.docname)
            # prefer an environment that knows the JAX backend
            if entry[0].jax.backend is None and env.jax.backend is not None:
                result[env.machine_id] = (env, entry[1])
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_ID,
            "schema_version": SCHEMA_VERSION,
            "build": self.build,
            "notebooks": [nb.to_dict() for nb in self.notebooks],
            "analysis": self.analysis,
        }

    @classmethod
    def from_dict(cls, data: Any) -> StatusReport:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_ID:
            raise SchemaError("not an execution-status document (no 'schema' field "
                              f"{SCHEMA_ID!r})")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION or type(version) is not int:
            raise SchemaError(f"schema version {_shown(version)} is not supported "
                              f"(this version reads {SCHEMA_VERSION})")
        return load_model(cls, data)


#: the values :func:`plain_data` returns as they are (immutable)
_SCALARS = frozenset({str, int, float, bool, type(None)})


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(cls))


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    """The field types of a model class, resolved once: the annotations are text
    (``from __future__ import annotations``), and resolving compiles each of them
    (the loader and the dumper both need them: 2 ms of a build, twice)."""
    return typing.get_type_hints(cls)


def plain_data(value: Any) -> Any:
    """``dataclasses.asdict`` of a model object, the same dicts and lists, several
    times faster (it runs for every record a build stores and writes): the model
    holds dataclasses, lists, dicts and JSON scalars only."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [plain_data(item) for item in value]
    if kind is dict:
        return {plain_data(key): plain_data(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: plain_data(getattr(value, name)) for name in _field_names(kind)}
    # anything else as asdict makes it
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return kind(*[plain_data(item) for item in value])
    if isinstance(value, (list, tuple)):
        return kind(plain_data(item) for item in value)
    if isinstance(value, dict):
        return kind((plain_data(key), plain_data(item)) for key, item in value.items())
    return copy.deepcopy(value)


Dumper = Callable[[Any], Any]


@functools.cache
def _dumper(hint: Any) -> Dumper | None:
    """:func:`plain_data` for a value of the model type ``hint``, specialised from the
    field types once per type (None: the value is kept as it is, a JSON scalar).

    The status JSON converts every record of the book; walking the values and asking
    each for its type, as :func:`plain_data` does, took twice as long.
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):  # every union of the model is "X | None"
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        dump_inner = _dumper(inner)
        if dump_inner is None:
            return None
        return lambda value: None if value is None else dump_inner(value)
    if hint in (str, int, float, bool):
        return None
    if dataclasses.is_dataclass(hint):
        return _object_dumper(hint)  # type: ignore[arg-type]
    if origin is list:
        dump_item = _dumper(typing.get_args(hint)[0])
        if dump_item is None:
            return list
        return lambda value: [dump_item(item) for item in value]
    if origin is dict:
        dump_value = _dumper(typing.get_args(hint)[1])
        if dump_value is None:
            return dict
        return lambda value: {key: dump_value(item) for key, item in value.items()}
    return plain_data  # free-form (``Any``)


def _object_dumper(cls: type) -> Dumper:
    hints = _field_types(cls)
    names = _field_names(cls)
    fields = tuple((name, _dumper(hints[name])) for name in names)
    values = operator.attrgetter(*names) if len(names) > 1 else \
        (lambda value: (getattr(value, names[0]),))

    def dump(value: Any) -> dict[str, Any]:
        return {name: item if dump_field is None else dump_field(item)
                for (name, dump_field), item in zip(fields, values(value), strict=True)}

    return dump


def sorted_slowest_first(notebooks: Iterable[NotebookRecord]) -> list[NotebookRecord]:
    return sorted(notebooks, key=lambda nb: (-nb.seconds, nb.docname))


# -- loading: one validator, derived from the dataclasses' field types ------------------
_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _Invalid(Exception):
    """A bad value deep in a document; the path to it is collected on the way up."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem
        self.steps: list[str] = []  # innermost first: "seconds", "[2]", "cells", ...

    def path(self, where: str) -> str:
        path = where
        for step in reversed(self.steps):
            path += step if step.startswith("[") or not path else f".{step}"
        return path or "the document"


def _shown(value: Any) -> str:
    """A value as an error message shows it: short, one line, escaped."""
    if isinstance(value, (dict, list)):
        return _JSON_NAMES[type(value)]
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _wrong_type(expected: str, value: Any) -> _Invalid:
    got = _JSON_NAMES.get(type(value), type(value).__name__)
    shown = "" if isinstance(value, (dict, list, type(None))) else f": {_shown(value)}"
    return _Invalid(f"not {expected} (got {got}{shown})")


def load_model(cls: type[_Model], data: Any, where: str = "") -> _Model:
    """``cls`` (a dataclass of the model) from JSON data, every field checked.

    Types come from the field annotations; numbers must be finite, not negative and
    at most :data:`MAX_NUMBER`; strings at most :data:`MAX_STRING_CHARS` and valid
    Unicode; ``choices`` fields one of their values.  Unknown keys are ignored (a
    newer writer may add fields), a missing field takes its default, and null where
    an object or array is expected reads as empty.  Raises :class:`SchemaError`
    naming the field path (``where`` is the path of ``data`` itself).
    """
    try:
        return _loader(cls)(data)
    except _Invalid as error:
        raise SchemaError(f"{error.path(where)}: {error.problem}") from None


Loader = Callable[[Any], Any]


@functools.cache
def _loader(hint: Any, minimum: float = 0, allowed: tuple[str, ...] | None = None) -> Loader:
    """The function that checks and converts one value of type ``hint`` (built once)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        # every union of the model is "X | None"
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        load_inner = _loader(inner, minimum, allowed)
        return lambda value: None if value is None else load_inner(value)
    if hint is Any:
        return _free_form
    if dataclasses.is_dataclass(hint):
        return _object_loader(hint)  # type: ignore[arg-type]
    if origin is list:  # ``minimum`` and ``allowed`` apply to the items
        load_item = _loader(typing.get_args(hint)[0], minimum, allowed)
        return functools.partial(_load_list, load_item)
    if origin is dict:
        load_item = _loader(typing.get_args(hint)[1], minimum, allowed)
        return functools.partial(_load_dict, load_item)
    if hint is str:
        return functools.partial(_load_string, allowed)
    if hint is int:
        return functools.partial(_load_integer, minimum)
    if hint is float:
        return _load_float
    if hint is bool:
        return _load_boolean
    raise TypeError(f"no loader for the model type {hint!r}")  # a bug in the model


def _object_loader(cls: type) -> Loader:
    hints = _field_types(cls)
    fields = [(field.name,
               _loader(hints[field.name], field.metadata.get("minimum", 0),
                       field.metadata.get("choices")),
               field.default is dataclasses.MISSING
               and field.default_factory is dataclasses.MISSING)
              for field in dataclasses.fields(cls)]

    def load(data: Any) -> Any:
        if data is None:
            data = {}
        elif not isinstance(data, dict):
            raise _wrong_type("an object", data)
        values = {}
        for name, load_field, required in fields:
            if name in data:
                try:
                    values[name] = load_field(data[name])
                except _Invalid as error:
                    error.steps.append(name)
                    raise
            elif required:
                error = _Invalid("missing")
                error.steps.append(name)
                raise error
        return cls(**values)

    return load


def _load_list(load_item: Loader, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _wrong_type("an array", value)
    result = []
    for position, item in enumerate(value):
        try:
            result.append(load_item(item))
        except _Invalid as error:
            error.steps.append(f"[{position}]")
            raise
    return result


def _load_dict(load_item: Loader, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong_type("an object", value)
    result = {}
    for key, item in value.items():
        try:
            result[_load_string(None, key)] = load_item(item)
        except _Invalid as error:
            error.steps.append(f"[{_shown(key)}]")
            raise
    return result


def _load_string(allowed: tuple[str, ...] | None, value: Any) -> str:
    if type(value) is not str:
        raise _wrong_type("a string", value)
    if len(value) > MAX_STRING_CHARS:
        raise _Invalid(f"a string of {len(value)} characters (at most {MAX_STRING_CHARS})")
    if _LONE_SURROGATE.search(value):
        raise _Invalid("not valid Unicode (a lone surrogate)")
    if allowed is not None and value not in allowed:
        raise _Invalid(f"{_shown(value)} is not one of {', '.join(allowed)}")
    return value


def _load_integer(minimum: float, value: Any) -> int:
    if type(value) is not int:
        raise _wrong_type("an integer", value)
    _check_range(value, minimum)
    return value


def _load_boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise _wrong_type("a boolean", value)
    return value


def _load_float(value: Any) -> float:
    if type(value) is not float and type(value) is not int:
        raise _wrong_type("a number", value)
    _check_range(value, 0)
    return float(value)


def _check_range(value: float, minimum: float) -> None:
    if not minimum <= value <= MAX_NUMBER:  # False for NaN
        if not math.isfinite(value):
            raise _Invalid(f"not a finite number (got {value!r})")
        if value < minimum:
            raise _Invalid(f"{value!r} is below {minimum!r}")
        raise _Invalid(f"{value!r} is too large (at most {MAX_NUMBER:g})")


def _free_form(value: Any) -> Any:
    """JSON of any shape (``build``, ``analysis``), walked without recursion."""
    pending: list[tuple[Any, list[str]]] = [(value, [])]
    while pending:
        item, steps = pending.pop()
        try:
            if len(steps) > MAX_DEPTH:
                raise _Invalid(f"nested deeper than {MAX_DEPTH} levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    _load_string(None, key)
                    pending.append((child, [*steps, f"[{_shown(key)}]"]))
            elif isinstance(item, list):
                pending.extend((child, [*steps, f"[{i}]"]) for i, child in enumerate(item))
            elif isinstance(item, str):
                _load_string(None, item)
            elif isinstance(item, float) and not math.isfinite(item):
                raise _Invalid(f"not a finite number (got {item!r})")
            elif type(item) is int and abs(item) > MAX_NUMBER:
                raise _Invalid(f"{item!r} is too large (at most {MAX_NUMBER:g})")
        except _Invalid as error:
            error.steps.extend(reversed(steps))
            raise
    return value


def read_json(path: Path) -> Any:
    """The JSON in ``path``; :class:`SchemaError` naming the file for anything but JSON.

    Too large files, invalid UTF-8, syntax errors and nesting deeper than the
    parser's recursion limit are all a :class:`SchemaError` (OSError is left to
    the caller: a missing or unreadable file is not bad data).
    """
    with path.open("rb") as stream:
        # one read of the file's size (a read of the limit allocated 64 MiB for every
        # sidecar a cache hit reads); a FIFO or device has no size, and a file may
        # grow: they are read on up to the limit
        chunk = min(os.fstat(stream.fileno()).st_size, MAX_FILE_BYTES) + 1
        data = stream.read(chunk)
        if len(data) == chunk <= MAX_FILE_BYTES:
            data += stream.read(MAX_FILE_BYTES + 1 - chunk)
    if len(data) > MAX_FILE_BYTES:
        raise SchemaError(f"{path}: too large (more than {MAX_FILE_BYTES} bytes)")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise SchemaError(f"{path}: not a text file ({error.reason})") from error
    except json.JSONDecodeError as error:
        raise SchemaError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from error
    except RecursionError:
        raise SchemaError(f"{path}: not JSON this version reads (nested too deeply)") from None
    except ValueError as error:  # e.g. an integer of more than 4300 digits
        raise SchemaError(f"{path}: not JSON this version reads ({error})") from error


def read_status(path: str | Path) -> StatusReport:
    """Read an ``execution-status.json`` file, or find it in a build folder.

    Raises :class:`SchemaError` (or :class:`OSError`) with a message that names
    the file and what is wrong; callers print it as one line.
    """
    path = Path(path)
    if path.is_dir():
        # an output folder, a build folder, or a book's source folder
        candidates = [path / "execution-status.json", path / "html" / "execution-status.json",
                      path / "_build" / "html" / "execution-status.json"]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise SchemaError(f"{path}: build folder without execution-status.json "
                              "(was it built with sphinx_gpu_admonition?)")
        path = found
    if not path.exists():
        raise SchemaError(f"{path}: no such file")
    data = read_json(path)
    try:
        return StatusReport.from_dict(data)
    except SchemaError as error:
        raise SchemaError(f"{path}: {error}") from error


# -- the capture sidecar beside the jupyter-cache ---------------------------------------
#: A record saved beside a cached notebook; the version is bumped whenever the record
#: model changes, so a cache restored from another release is never misread.
SIDECAR_ID = "sphinx-gpu-admonition/capture-sidecar"
SIDECAR_VERSION = 3  # 3: cells say whether their error was expected
#: the sidecar versions this release reads: every version after 1 only added fields,
#: whose defaults stand for what an older sidecar did not save (the cells' lines
#: and sources are looked up again by every build, and whether their errors were
#: expected on every cache hit), so an upgrade keeps the measurements of a cache
READABLE_SIDECAR_VERSIONS = frozenset({1, 2, SIDECAR_VERSION})


def sidecar_dict(record: NotebookRecord) -> dict[str, Any]:
    return {"sidecar": SIDECAR_ID, "sidecar_version": SIDECAR_VERSION,
            "record": record.to_dict()}


def read_sidecar(path: Path) -> NotebookRecord | None:
    """The record saved in ``path``; None when another version of the extension saved it.

    Raises :class:`SchemaError` naming the file and field for bad data (and
    :class:`OSError` when the file cannot be read).
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise SchemaError(f"{path}: not a capture sidecar (no JSON object)")
    if data.get("sidecar") != SIDECAR_ID or \
            data.get("sidecar_version") not in READABLE_SIDECAR_VERSIONS:
        return None  # an unversioned sidecar (0.1.0 and earlier) or a later release's
    try:
        return NotebookRecord.from_dict(data.get("record"), where="record")
    except SchemaError as error:
        raise SchemaError(f"{path}: {error}") from error
