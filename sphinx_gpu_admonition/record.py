"""The execution record: one model for what a notebook's execution was.

This is the only definition of the data.  The Sphinx side builds
:class:`NotebookRecord` objects from what the kernel probe wrote, stores them
(as plain dicts, see :meth:`NotebookRecord.to_dict`) in the environment, and
every consumer — the page line, the ``gpu`` admonition, the status page, the
JSON / JUnit / console writers and the command line — reads them back through
:func:`StatusReport.from_dict` / :meth:`NotebookRecord.from_dict`.

The JSON form is described by ``schema/execution-status.schema.json``; bump
:data:`SCHEMA_VERSION` whenever a field changes meaning or disappears.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from typing import Any

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
NOT_EXECUTED = "none"
PROVENANCES = (EXECUTED, CACHE, NOT_EXECUTED)


def _from_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``data`` that are fields of ``cls`` (unknown keys are ignored)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclasses.dataclass
class Device:
    platform: str
    kind: str
    count: int = 1


@dataclasses.dataclass
class GpuInfo:
    """An NVIDIA GPU as NVML or nvidia-smi reported it."""

    name: str
    memory_mb: float | None = None
    driver: str | None = None
    cuda: str | None = None
    source: str = "nvml"


@dataclasses.dataclass
class JaxInfo:
    """JAX as the notebook used it; ``backend`` is None when it never initialised one."""

    backend: str | None = None
    version: str | None = None
    jaxlib_version: str | None = None
    plugins: dict[str, str] = dataclasses.field(default_factory=dict)
    devices: list[Device] = dataclasses.field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> JaxInfo:
        data = dict(data or {})
        data["devices"] = [Device(**_from_fields(Device, d)) for d in data.get("devices") or []]
        return cls(**_from_fields(cls, data))

    @property
    def device_summary(self) -> str | None:
        """``"2x NVIDIA H200"`` style text of the devices of the default backend."""
        if not self.devices:
            return None
        parts = [f"{d.count}x {d.kind}" if d.count > 1 else d.kind for d in self.devices]
        return ", ".join(parts)


@dataclasses.dataclass
class Host:
    cpu: str | None = None
    cores: int | None = None
    memory_gb: float | None = None
    os: str | None = None
    machine: str | None = None


@dataclasses.dataclass
class Environment:
    """Where a notebook ran, as the kernel saw it."""

    host: Host = dataclasses.field(default_factory=Host)
    python: str | None = None
    jax: JaxInfo = dataclasses.field(default_factory=JaxInfo)
    gpus: list[GpuInfo] = dataclasses.field(default_factory=list)
    libraries: dict[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Environment:
        data = dict(data or {})
        return cls(
            host=Host(**_from_fields(Host, data.get("host") or {})),
            python=data.get("python"),
            jax=JaxInfo.from_dict(data.get("jax")),
            gpus=[GpuInfo(**_from_fields(GpuInfo, g)) for g in data.get("gpus") or []],
            libraries=dict(data.get("libraries") or {}),
        )

    @property
    def backend(self) -> str | None:
        return self.jax.backend

    @property
    def machine_id(self) -> str:
        """A short stable id of the machine (host and GPUs), to group notebooks by it."""
        key = json.dumps(
            [dataclasses.asdict(self.host), [g.name for g in self.gpus]], sort_keys=True)
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
class CellRecord:
    """One executed code cell."""

    #: index of the cell in the notebook (as MyST-NB numbers cells); None when
    #: the cell is not rendered on the page and could not be matched
    index: int | None
    execution_count: int | None
    seconds: float
    first_line: str = ""
    #: exception type name when the cell raised
    error: str | None = None
    #: JAX tracing + lowering + compilation time inside this cell
    compile_seconds: float = 0.0
    #: XLA compilations inside this cell, by function name
    compilations: dict[str, int] = dataclasses.field(default_factory=dict)
    #: sequential JAX loop primitives called in the source (lax.scan, fori_loop, while_loop)
    loops: list[str] = dataclasses.field(default_factory=list)
    #: resident memory of the kernel process after the cell (peak so far)
    peak_memory_mb: float | None = None

    @property
    def compilation_count(self) -> int:
        return sum(self.compilations.values())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CellRecord:
        return cls(**_from_fields(cls, data))


@dataclasses.dataclass
class ErrorInfo:
    type: str
    message: str = ""
    cell_index: int | None = None
    execution_count: int | None = None


@dataclasses.dataclass
class NotebookRecord:
    """Everything known about one notebook page's execution."""

    docname: str
    status: str
    title: str = ""
    provenance: str = NOT_EXECUTED
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
    capture: str = "missing"
    capture_message: str | None = None
    peak_memory_mb: float | None = None

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
    def executed(self) -> bool:
        return self.status not in NOT_EXECUTED_STATUSES

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    def compilations_by_function(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for cell in self.cells:
            for name, count in cell.compilations.items():
                total[name] = total.get(name, 0) + count
        return total

    def slowest_cell(self) -> CellRecord | None:
        return max(self.cells, key=lambda c: c.seconds, default=None)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NotebookRecord:
        data = dict(data)
        error = data.get("error")
        data["error"] = ErrorInfo(**_from_fields(ErrorInfo, error)) if error else None
        data["environment"] = Environment.from_dict(data.get("environment"))
        data["cells"] = [CellRecord.from_dict(c) for c in data.get("cells") or []]
        return cls(**_from_fields(cls, data))


class SchemaError(ValueError):
    """Data that is not an execution-status document this version can read."""


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
        if version != SCHEMA_VERSION:
            raise SchemaError(f"schema version {version!r} is not supported "
                              f"(this version reads {SCHEMA_VERSION})")
        try:
            notebooks = [NotebookRecord.from_dict(nb) for nb in data.get("notebooks") or []]
        except (TypeError, AttributeError, KeyError) as error:
            raise SchemaError(f"malformed notebook entry: {error}") from error
        return cls(notebooks=notebooks, build=dict(data.get("build") or {}),
                   analysis=dict(data.get("analysis") or {}))


def sorted_slowest_first(notebooks: Iterable[NotebookRecord]) -> list[NotebookRecord]:
    return sorted(notebooks, key=lambda nb: (-nb.seconds, nb.docname))


def read_status(path: str | Any) -> StatusReport:
    """Read an ``execution-status.json`` file, or find it in a build folder.

    Raises :class:`SchemaError` (or :class:`OSError`) with a message that names
    the file and what is wrong; callers print it as one line.
    """
    from pathlib import Path

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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise SchemaError(f"{path}: not a text file ({error.reason})") from error
    except json.JSONDecodeError as error:
        raise SchemaError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from error
    try:
        return StatusReport.from_dict(data)
    except SchemaError as error:
        raise SchemaError(f"{path}: {error}") from error
