"""The Sphinx side of the capture: start the probe in every kernel, collect its data.

Flow for one notebook page:

1. ``builder-inited``: ``PYTHONSTARTUP`` points every kernel MyST-NB starts at
   the probe's startup file (a user's own ``PYTHONSTARTUP`` is chained).
2. ``source-read``: the file the kernel of *this* document writes to is named
   in an environment variable, just before MyST-NB parses (and executes) it.
3. ``doctree-read`` (:class:`ExecutionRecordCollector`): the probe's lines and
   MyST-NB's execution result become one :class:`~.record.NotebookRecord`,
   stored in ``env.gpu_execution_records``.  After a jupyter-cache miss the
   record is also saved beside the cache, keyed by the cached notebook's hash,
   so that a cache hit in a later build (or on a restored ``_build``) reports
   the measurements of the execution that produced the cached outputs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging

from ..model.analysis import is_imports_only
from ..model.files import SIDECAR_FOLDER, atomic_write, read_sidecar, repository_path, sidecar_dict
from ..model.formatting import error_message
from ..model.record import (
    CACHE,
    ERROR,
    EXCLUDED,
    EXECUTED,
    EXECUTION_OFF,
    KERNEL_DIED,
    OK,
    OUTPUTS_PRESENT,
    SLOW_OK_TAG,
    TIMEOUT,
    CellRecord,
    Environment,
    ErrorInfo,
    NotebookRecord,
)
from ..model.schema import SchemaError
from ..probe import ENV_OUTPUT, ENV_PROBE, ENV_USER_STARTUP, KERNEL_PROBE_FILE, STARTUP_FILE
from . import _mystnb, calibration
from .config import get_config, page_budget
from .state import build_state, env_data
from .warnings import warn

logger = logging.getLogger(__name__)

RECORDS_ATTRIBUTE = "gpu_execution_records"


#: nbclient's exception names -> the status of the notebook whose execution raised
#: them (anything else is an error); the one map, also for a build that stopped
STATUS_OF_EXECUTION_ERROR = {"CellTimeoutError": TIMEOUT, "DeadKernelError": KERNEL_DIED}


# -- access to the stored records --------------------------------------------------
def stored_records(env: BuildEnvironment) -> dict[str, NotebookRecord]:
    """docname -> record.

    The environment keeps (and pickles) the records themselves: every page, table
    and report reads the same object, and there is no second copy as plain dicts
    to parse again.
    """
    return env_data(env, RECORDS_ATTRIBUTE, dict)


def get_record(env: BuildEnvironment, docname: str) -> NotebookRecord | None:
    """The record of ``docname``; shared between readers, so never change it."""
    return stored_records(env).get(docname)


def all_records(env: BuildEnvironment) -> list[NotebookRecord]:
    """Every record, by docname (shared between readers, so never change them)."""
    records = stored_records(env)
    return [records[docname] for docname in sorted(records)]


# -- the kernel side's output ---------------------------------------------------------
def capture_folder(app: Sphinx) -> Path:
    return Path(app.doctreedir) / SIDECAR_FOLDER


#: (doctree folder, docname) -> the page's capture file: the hash and the paths cost
#: 20 µs, and each page asks for it four times
_OUTPUT_FILES: dict[tuple[str, str], Path] = {}


def output_file(app: Sphinx, docname: str) -> Path:
    key = (str(app.doctreedir), docname)
    path = _OUTPUT_FILES.get(key)
    if path is None:
        digest = hashlib.sha1(docname.encode("utf-8")).hexdigest()[:16]
        path = _OUTPUT_FILES[key] = capture_folder(app) / f"{digest}.jsonl"
    return path


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _probe_lines(path: Path) -> Iterator[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for line in text.splitlines():
        try:
            item = json.loads(line, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            continue  # a line cut short by a dying kernel (or not the probe's)
        if isinstance(item, dict):
            yield item


@functools.cache
def _protocol() -> ModuleType:
    """The probe's line protocol (its names and version): the kernel's probe module
    itself, imported when a kernel wrote lines (0.7 ms that a cache hit never needs)."""
    from ..probe import kernel_probe

    return kernel_probe


class ProbeOutput:
    """What the probe wrote for one kernel (the line protocol is in kernel_probe.py).

    Lines of another process (a kernel the notebook started itself) are
    ignored; a cell line with a value the record cannot hold (a negative or
    non-finite time) is dropped with a warning, never stored.
    """

    def __init__(self, lines: Iterator[dict[str, Any]]):
        self.started: float | None = None
        self.environment: dict[str, Any] = {}
        self.cells: list[CellRecord] = []  # index None until matched with the page
        #: the capture failed ("capture: failed" and one warning)
        self.errors: list[str] = []
        #: worth a warning; the capture itself is fine
        self.warnings: list[str] = []
        self.seen = False
        kernel_pid = None
        for item in lines:
            protocol = _protocol()
            kind = item.get(protocol.KEY_KIND)
            pid = item.get(protocol.KEY_PID)
            if kernel_pid is None:
                kernel_pid = pid  # the notebook's kernel writes first
            elif pid is not None and pid != kernel_pid:
                continue
            self.seen = True
            if kind == protocol.KIND_START:
                self._read_start(item)
            elif kind == protocol.KIND_CELL:
                self._read_cell(item)
            elif kind == protocol.KIND_JAX:
                self.environment["jax"] = item.get("jax")
            elif kind == protocol.KIND_LIBRARIES:
                self.environment["libraries"] = item.get("libraries")
            elif kind == protocol.KIND_ERROR:
                self.errors.append(str(item.get(protocol.KEY_MESSAGE)))
            elif kind == protocol.KIND_WARNING:
                self.warnings.append(str(item.get(protocol.KEY_MESSAGE)))
            elif kind == protocol.KIND_END and item.get(protocol.KEY_CALLBACKS_REGISTERED) is False:
                self.errors.append("the notebook removed the probe's IPython callbacks; "
                                   "the cells after that were not measured")

    def _read_start(self, item: dict[str, Any]) -> None:
        version = item.get("probe_version")
        protocol = _protocol()
        if version != protocol.PROBE_VERSION:
            self.errors.append(f"the kernel's probe wrote version {version!r} of its data, "
                               f"this release reads version {protocol.PROBE_VERSION}")
        self.started = item.get("time")
        self.environment.update(host=item.get("host"), python=item.get("python"),
                                gpus=item.get("gpus") or [])

    def _read_cell(self, item: dict[str, Any]) -> None:
        # one bad value loses that cell, never the notebook (and its failure)
        try:
            self.cells.append(CellRecord.from_dict({**item, "index": None}))
        except SchemaError as error:
            self.warnings.append(f"dropped the measurement of cell "
                                 f"{item.get('execution_count')!r}: {error}")


# -- building a record ---------------------------------------------------------------
def _title(doctree: nodes.document) -> str:
    for title in doctree.findall(nodes.title):
        return title.astext()
    return ""


def _cells(probe: ProbeOutput, doctree: nodes.document) -> list[CellRecord]:
    index_of = {count: index for index, count, _ in _mystnb.code_cells(doctree)
                if count is not None}
    return _with_expected_errors(
        [dataclasses.replace(cell, index=index_of.get(cell.execution_count))
         for cell in probe.cells], doctree)


def _with_expected_errors(cells: list[CellRecord],
                          doctree: nodes.document) -> list[CellRecord]:
    """``cells`` with ``error_expected`` set from the page: a cell tagged
    ``raises-exception``, or any cell when the book allows errors, may raise."""
    if not any(cell.error for cell in cells):
        return cells
    tags = _mystnb.cell_tags(doctree)
    env = getattr(doctree.settings, "env", None)
    allowed = env is not None and _mystnb.allows_errors(env)
    return [dataclasses.replace(cell, error_expected=cell.error is not None and (
                allowed or "raises-exception" in tags.get(cell.index, [])))  # type: ignore[arg-type]
            for cell in cells]


def _died_in(cells: list[CellRecord], doctree: nodes.document) -> int | None:
    """Index of the code cell after the last finished one: the cell the kernel died in."""
    done = {c.index for c in cells if c.index is not None}
    last = max(done, default=-1)
    for index, _, source in _mystnb.code_cells(doctree):
        if index > last and index not in done and source.strip():
            return index
    return None


def _locate(env: BuildEnvironment, docname: str, doctree: nodes.document,
            record: NotebookRecord) -> None:
    """The record's source file and each cell's line in it, from this build's page
    (a cache hit's saved lines may have moved since): every view, from the status
    page to the annotations, names a cell by them."""
    source = Path(env.doc2path(docname))
    record.source = repository_path(source)
    lines = _mystnb.cell_start_lines(doctree, source)
    for cell in record.cells:  # this record's own cells (parsed or made for it)
        cell.line = lines.get(cell.index) if cell.index is not None else None


def _mark_from_page(app: Sphinx, docname: str, doctree: nodes.document,
                    record: NotebookRecord) -> None:
    """What this build's page says about the cells and the notebook (a cache hit's
    saved marks may have changed since): the cells tagged ``slow-ok``, those of only
    imports, and the notebook's time budget (the page's ``gpu_budget_seconds``, else
    ``gpu_notebook_budget_seconds``)."""
    tags = _mystnb.cell_tags(doctree)
    sources = {index: source for index, _, source in _mystnb.code_cells(doctree)}
    for cell in record.cells:
        if cell.index is not None:
            cell.slow_ok = SLOW_OK_TAG in tags.get(cell.index, [])
            cell.imports_only = is_imports_only(sources.get(cell.index, ""))
    record.budget_seconds = page_budget(app, docname)


def build_record(app: Sphinx, env: BuildEnvironment, docname: str,
                 doctree: nodes.document) -> NotebookRecord:
    record = _build_record(app, env, docname, doctree)
    _locate(env, docname, doctree, record)
    _mark_from_page(app, docname, doctree, record)
    return record


def _build_record(app: Sphinx, env: BuildEnvironment, docname: str,
                  doctree: nodes.document) -> NotebookRecord:
    result = _mystnb.execution_result(env, docname)
    record = NotebookRecord(docname=docname, status=OK, title=_title(doctree))
    if result is None:
        mode = _mystnb.execution_mode(env)
        record.method = mode
        if mode == "off":
            record.status = EXECUTION_OFF
        elif _mystnb.is_excluded(env, docname):
            record.status = EXCLUDED
        else:
            record.status = OUTPUTS_PRESENT
        return record

    record.method = result.method
    record.runtime_seconds = result.runtime
    record.executed_at = _mystnb.timestamp_to_iso(result.mtime)
    probe = ProbeOutput(_probe_lines(output_file(app, docname)))
    cache_path = _mystnb.execution_cache_path(env) if result.method == "cache" else None
    hit_key = None
    if cache_path is not None and result.succeeded and not probe.seen:
        hit_key = _mystnb.hit_record_key(cache_path, result.mtime)
    record.provenance = CACHE if hit_key else EXECUTED
    if not hit_key:  # a cache hit keeps the calibration of the build that executed it
        record.calibration_seconds = calibration.around_notebook(app, docname)

    if hit_key:
        _restore_from_sidecar(cache_path / SIDECAR_FOLDER / f"{hit_key}.json", docname, record)
        # from the page, as for an execution (sidecars before version 3 did not say)
        record.cells = _with_expected_errors(record.cells, doctree)
    else:
        _fill_from_probe(probe, doctree, record)
        if probe.errors:
            warn(logger, f"the in-kernel capture failed: {probe.errors[0]} "
                         "(the notebook ran normally)", "capture", location=docname)
        for message in probe.warnings:
            warn(logger, f"in-kernel capture: {message}", "capture", location=docname)

    if not result.succeeded:
        record.status = STATUS_OF_EXECUTION_ERROR.get(result.error or "", ERROR)
        failing = next((c for c in reversed(record.cells) if c.error), None)
        error_type = result.error or "Error"
        if record.status == ERROR and failing is not None and failing.error:
            error_type = failing.error
        record.error = ErrorInfo(
            type=error_type,
            message=error_message(result.traceback),
            cell_index=failing.index if failing and record.status != KERNEL_DIED
            else _died_in(record.cells, doctree),
            execution_count=failing.execution_count if failing else None,
        )
    elif cache_path is not None and not hit_key:
        key = _mystnb.newest_record_key(cache_path, env.doc2path(docname))
        if key:
            _save_sidecar(cache_path / SIDECAR_FOLDER / f"{key}.json", docname, record)
    return record


def _fill_from_probe(probe: ProbeOutput, doctree: nodes.document,
                     record: NotebookRecord) -> None:
    if not probe.seen:
        record.capture = "missing"
        record.capture_message = ("no data from the kernel (not an IPython kernel, a remote "
                                  "kernel, or PYTHONSTARTUP disabled)")
        return
    record.capture = "failed" if probe.errors else "ok"
    record.capture_message = probe.errors[0] if probe.errors else None
    try:
        record.environment = Environment.from_dict(probe.environment)
    except SchemaError as error:
        probe.warnings.append(f"the kernel's environment was dropped: {error}")
    record.cells = _cells(probe, doctree)
    peaks = [c.peak_memory_mb for c in record.cells if c.peak_memory_mb is not None]
    record.peak_memory_mb = max(peaks, default=None)


# -- the sidecar beside the jupyter-cache ---------------------------------------------
def _save_sidecar(path: Path, docname: str, record: NotebookRecord) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(sidecar_dict(record), sort_keys=True, allow_nan=False))
    except (OSError, ValueError) as error:  # ValueError: a NaN that would not load again
        warn(logger, f"could not save the capture beside the jupyter-cache: {error}",
             "capture", location=docname)


def _restore_from_sidecar(path: Path, docname: str, record: NotebookRecord) -> None:
    record.capture = "missing"
    record.capture_message = "cached outputs without capture data (executed before the " \
                             "extension was enabled, or the cache was moved)"
    if not path.is_file():
        return
    try:
        saved = read_sidecar(path)
    except (OSError, SchemaError) as error:
        warn(logger, f"unreadable capture data for the cached notebook, ignored: {error}",
             "capture", location=docname)
        return
    if saved is None:
        # Not a warning: after an upgrade every cached notebook would warn (and fail
        # -W builds) though its outputs are fine; the status page shows this message.
        record.capture_message = ("cached outputs with capture data of another version of "
                                  "sphinx-gpu-admonition (re-execute to measure them again)")
        return
    record.capture = saved.capture
    record.capture_message = saved.capture_message
    record.environment = saved.environment
    record.cells = saved.cells
    record.peak_memory_mb = saved.peak_memory_mb
    record.executed_at = saved.executed_at or record.executed_at
    record.calibration_seconds = saved.calibration_seconds  # the machine that ran it


# -- events ------------------------------------------------------------------------
class ExecutionRecordCollector(EnvironmentCollector):
    """Keeps one record per notebook document; merges and purges with the environment."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        stored_records(env).pop(docname, None)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: set[str],
                    other: BuildEnvironment) -> None:
        mine, theirs = stored_records(env), stored_records(other)
        for docname in docnames:
            if docname in theirs:
                mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        env = app.env
        docname = env.docname
        if not _mystnb.is_notebook(env, docname, doctree):
            return
        try:
            record = build_record(app, env, docname, doctree)
        except Exception as error:  # the build must go on without the record
            warn(logger, f"could not read the execution data: {type(error).__name__}: {error}",
                 "capture", location=docname)
            return
        if not record.cells and not _mystnb.code_cells(doctree):
            return  # executed, but without code (a status page with notebook front matter)
        stored_records(env)[docname] = record
        env.metadata[docname].update(page_metadata(record))


def page_metadata(record: NotebookRecord) -> dict[str, Any]:
    """What themes and templates find in ``env.metadata[docname]`` (documented)."""
    environment = record.environment
    return {
        "gpu_execution_status": record.status,
        "gpu_execution_backend": environment.backend,
        "gpu_execution_device": record.device_label,
        "gpu_execution_seconds": record.seconds if record.executed else None,
        "gpu_execution_time": record.executed_at,
        "gpu_execution_provenance": record.provenance,
    }


def _start_capture(app: Sphinx) -> None:
    _forget_leaked_capture()
    if not get_config(app.config).capture:
        return
    saved = {name: os.environ.get(name) for name in
             ("PYTHONSTARTUP", ENV_PROBE, ENV_USER_STARTUP, ENV_OUTPUT)}
    build_state(app).saved_environ = saved
    user_startup = os.environ.get("PYTHONSTARTUP")
    if user_startup and Path(user_startup) != STARTUP_FILE:
        os.environ[ENV_USER_STARTUP] = user_startup
    os.environ["PYTHONSTARTUP"] = str(STARTUP_FILE)
    os.environ[ENV_PROBE] = str(KERNEL_PROBE_FILE)
    capture_folder(app).mkdir(parents=True, exist_ok=True)


def _forget_leaked_capture() -> None:
    """Undo the kernel environment a build in this process left set.

    A build stopped by KeyboardInterrupt gets no ``build-finished`` (Sphinx emits it
    for exceptions only), so its variables stay; a later build in the same process
    (a test suite, an IDE, a notebook calling Sphinx) must not start kernels that
    write into the earlier build's capture folder.
    """
    if os.environ.get("PYTHONSTARTUP") == str(STARTUP_FILE):
        user_startup = os.environ.pop(ENV_USER_STARTUP, None)
        if user_startup:
            os.environ["PYTHONSTARTUP"] = user_startup
        else:
            os.environ.pop("PYTHONSTARTUP")
    for name in (ENV_PROBE, ENV_OUTPUT):
        os.environ.pop(name, None)


def _before_reading(app: Sphinx, docname: str, source: list[str]) -> None:
    """Name the file the page's kernel will write to, and start the calibration
    sampler, which samples once that file exists (the kernel started)."""
    kernel_file = None
    if build_state(app).saved_environ is not None:  # capture is on
        path = output_file(app, docname)
        path.unlink(missing_ok=True)  # data of an earlier build of this document
        kernel_file = os.environ[ENV_OUTPUT] = str(path)
    calibration.before_notebook(app, docname, source, kernel_file)


def _index_cache_hits(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Before reading (and before ``-j`` forks its workers): the cache's records,
    so that finding each hit's record is a dictionary lookup."""
    cache_path = _mystnb.execution_cache_path(env)
    if docnames and cache_path is not None and _mystnb.execution_mode(env) == "cache":
        _mystnb.index_cache_hits(cache_path)


def _stop_capture(app: Sphinx, exception: Exception | None) -> None:
    saved = build_state(app).saved_environ
    if saved is None:
        return
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def setup_capture(app: Sphinx) -> None:
    app.add_env_collector(ExecutionRecordCollector)
    app.connect("builder-inited", _start_capture)
    app.connect("env-before-read-docs", _index_cache_hits)
    app.connect("source-read", _before_reading)
    app.connect("build-finished", _stop_capture, priority=900)
