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

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any, NamedTuple

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging

from ..model.derivations import Kept
from ..model.enrich import PageCell, enrich
from ..model.files import (
    SIDECAR_FOLDER,
    Sidecar,
    atomic_write,
    kept_again,
    load_sidecar,
    local_module_reader,
    repository_path,
    sidecar_dict,
    sidecar_text,
)
from ..model.formatting import error_message
from ..model.gc_pauses import gc_paused
from ..model.probe_output import (
    ProbeOutput,
    device_memory_last_seen,
    device_peak,
    died_in_cell,
    kernel_crash,
    probe_lines,
    recorded_text,
)
from ..model.record import (
    CACHE,
    CELL_LABEL,
    ERROR,
    EXCLUDED,
    EXECUTED,
    EXECUTION_OFF,
    KERNEL_DIED,
    OK,
    OUTPUTS_PRESENT,
    TIMEOUT,
    CacheMiss,
    CellRecord,
    ErrorInfo,
    NotebookRecord,
)
from ..model.schema import SchemaError
from ..model.timings import tag_problems
from ..probe import (
    ENV_EXPLAIN_RECOMPILATIONS,
    ENV_OUTPUT,
    ENV_PROBE,
    ENV_USER_STARTUP,
    KERNEL_PROBE_FILE,
    STARTUP_FILE,
)
from ..render.claims_text import tag_problem_text
from . import _mystnb, calibration
from .config import get_config, page_budget
from .kernel_packages import kernel_packages
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


# -- building a record ---------------------------------------------------------------
def _title(doctree: nodes.document) -> str:
    for title in doctree.findall(nodes.title):
        return title.astext()
    return ""


def page_cells(rendered: list[_mystnb.RenderedCell], source: Path,
               record: NotebookRecord | None = None) -> list[PageCell]:
    """The page's code cells for :func:`..model.enrich.enrich`: each one's position is
    that of the record's cell with its execution count (MyST-NB keeps the count of the
    cell's run, also for a cache hit; a run nested in a cell takes a count of its own,
    and a ``remove-cell`` cell runs but leaves no node, so neither the counts nor the
    nodes can be ranked), else its place among the page's counts; its line that of its
    fence in a text notebook."""
    lines = _mystnb.cell_start_lines(rendered, source)
    place = _positions_by_count(record) if record is not None else {}
    if not place:
        ran = sorted(cell.execution_count for cell in rendered
                     if isinstance(cell.execution_count, int) and cell.execution_count >= 1)
        place = {count: position for position, count in enumerate(ran)}
    return [PageCell(position=place.get(cell.execution_count)
                     if isinstance(cell.execution_count, int) else None,
                     index=cell.index, source=cell.source, tags=cell.tags,
                     line=lines.get(cell.index, (None, None))[0],
                     code_line=lines.get(cell.index, (None, None))[1], outputs=cell.outputs)
            for cell in rendered]


def _positions_by_count(record: NotebookRecord) -> dict[int, int]:
    """execution count -> position, from the record's cells (empty: the record does not
    know both for every cell, so the page's counts are ranked instead)."""
    pairs = [(cell.execution_count, cell.position) for cell in record.cells]
    if not pairs or any(count is None or position is None for count, position in pairs):
        return {}
    return dict(pairs)


def build_record(app: Sphinx, env: BuildEnvironment, docname: str,
                 doctree: nodes.document,
                 rendered: list[_mystnb.RenderedCell] | None = None) -> NotebookRecord:
    """The page's record: the execution's (MyST-NB's result, the probe's cells, or a
    cache hit's sidecar), then what this build's page says about its cells (a cache
    hit's saved marks and lines may have changed since; its page facts are taken as
    kept in the sidecar when the page is the same)."""
    rendered = _mystnb.rendered_cells(doctree) if rendered is None else rendered
    execution = _build_record(app, env, docname, doctree, rendered)
    record, hit = execution.record, execution.hit
    source = Path(env.doc2path(docname))
    record.source = repository_path(source, Path(env.srcdir))
    kept = hit.kept if hit is not None else Kept()
    cells = page_cells(rendered, source, record)
    for message in enrich(record, cells, local_module_reader(source.parent),
                          errors_allowed=_mystnb.allows_errors(env),
                          traceback=execution.traceback, kept=kept):
        warn(logger, message, "capture", location=docname)
    for problem in tag_problems(cells):  # a time:NAME tag that names nothing
        warn(logger, tag_problem_text(problem), "claim",
             location=(docname, problem.line) if problem.line else docname)
    record.budget_seconds = page_budget(app, docname)
    if execution.sidecar is not None:
        _save_sidecar(execution.sidecar, docname, sidecar_dict(record, kept))
    elif hit is not None:
        _keep_page_facts(execution.hit_path, hit)
    return record


class _Execution(NamedTuple):
    """A page's record as its execution left it, before the page's cells enrich it."""

    record: NotebookRecord
    #: MyST-NB's text of the execution's failure (None: it succeeded, or did not run)
    traceback: str | None = None
    #: where the record is saved beside the jupyter-cache once enriched (a cache miss)
    sidecar: Path | None = None
    #: the sidecar a cache hit's record was read from, and its file
    hit: Sidecar | None = None
    hit_path: Path | None = None


def _build_record(app: Sphinx, env: BuildEnvironment, docname: str,
                  doctree: nodes.document, rendered: list[_mystnb.RenderedCell]
                  ) -> _Execution:
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
        return _Execution(record)

    record.method = result.method
    record.runtime_seconds = result.runtime
    record.executed_at = _mystnb.timestamp_to_iso(result.mtime)
    probe = ProbeOutput(probe_lines(output_file(app, docname)))
    cache_path = _mystnb.execution_cache_path(env) if result.method == "cache" else None
    hit_key = None
    if cache_path is not None and result.succeeded and not probe.seen:
        hit_key = _mystnb.hit_record_key(cache_path, result.mtime)
    record.provenance = CACHE if hit_key else EXECUTED
    if not hit_key:  # a cache hit keeps the calibration of the build that executed it
        record.calibration_seconds = calibration.around_notebook(app, docname)

    hit, hit_path = None, None
    if hit_key:
        hit_path = cache_path / SIDECAR_FOLDER / f"{hit_key}.json"
        hit = _restore_from_sidecar(hit_path, docname, record, rendered, env)
    else:
        fill_from_probe(probe, doctree, record, finished=result.succeeded)
        if probe.errors:
            warn(logger, f"the in-kernel capture failed: {probe.errors[0]} "
                         "(the notebook ran normally)", "capture", location=docname)
        for message in probe.warnings:
            warn(logger, f"in-kernel capture: {message}", "capture", location=docname)

    sidecar = None
    if not result.succeeded:
        # the type and message of nbclient's failure; the page's failing cell refines
        # them (:func:`..model.enrich.enrich`)
        record.status = STATUS_OF_EXECUTION_ERROR.get(result.error or "", ERROR)
        record.error = ErrorInfo(type=recorded_text(result.error or "Error"),
                                 message=recorded_text(error_message(result.traceback)))
        if record.status == KERNEL_DIED:
            record.error.signal, record.error.stack = kernel_crash(output_file(app, docname))
            record.error.device_memory_mb = device_memory_last_seen(record.cells)
            died_in = None if hit_key else died_in_cell(probe, output_file(app, docname))
            if died_in is not None:  # named by every view, as a cell that raised is
                record.cells.append(died_in)
    elif cache_path is not None and not hit_key:
        key = _mystnb.newest_record_key(cache_path, env.doc2path(docname))
        if key:
            _note_cache_miss(env, docname, cache_path, key, record)
            sidecar = cache_path / SIDECAR_FOLDER / f"{key}.json"
    if cache_path is not None and not hit_key and not result.succeeded:
        _note_cache_miss(env, docname, cache_path, None, record)  # not cached: no sidecar
    return _Execution(record, result.traceback if not result.succeeded else None, sidecar,
                      hit, hit_path)


def _note_cache_miss(env: BuildEnvironment, docname: str, cache_path: Path,
                     key: str | None, record: NotebookRecord) -> None:
    """After a cache miss: why it missed, and the kernel environment's packages, kept
    in the sidecar so that the builds that reuse these outputs list the packages of
    the run that produced them (the ``:packages:`` of ``{execution-environment}``)."""
    miss = _mystnb.cache_miss_reason(cache_path, str(env.doc2path(docname)),
                                     Path(env.doc2path(docname, False)).as_posix(), key)
    if miss is not None:
        record.cache_miss = CacheMiss(
            reason=miss.reason,
            cell=CELL_LABEL.format(number=miss.number) if miss.number else None)
    record.packages = kernel_packages(env, docname)


def fill_from_probe(probe: ProbeOutput, doctree: nodes.document,
                    record: NotebookRecord, *, finished: bool = True) -> None:
    """``record``'s capture from the probe's lines; ``finished``: the notebook's
    execution ran to its end (else its last cell may not have finished)."""
    if not probe.seen:
        record.capture = "missing"
        record.capture_message = ("no data from the kernel (not an IPython kernel, a remote "
                                  "kernel, or PYTHONSTARTUP disabled)")
        return
    record.environment = probe.load_environment()  # one bad value loses that value
    record.cells = list(probe.cells)
    ran = sum(1 for _, count, _ in _mystnb.code_cells(doctree) if count is not None)
    if not finished:
        ran -= 1  # the cell the kernel died or stopped in
    record.capture, record.capture_message = probe.capture_state(ran)
    peaks = [c.peak_memory_mb for c in record.cells if c.peak_memory_mb is not None]
    record.peak_memory_mb = max(peaks, default=None)
    record.device_peak_memory_mb = device_peak(record.cells)


# -- the sidecar beside the jupyter-cache ---------------------------------------------
def _save_sidecar(path: Path, docname: str, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, sidecar_text(data))
    except (OSError, ValueError) as error:  # ValueError: a NaN that would not load again
        warn(logger, f"could not save the capture beside the jupyter-cache: {error}",
             "capture", location=docname)


def _keep_page_facts(path: Path | None, hit: Sidecar) -> None:
    """A cache hit whose page facts were derived again (its Markdown moved its cells,
    a local module or this release changed): kept in its sidecar for the next build.
    Nothing is lost when it cannot be written (a read-only cache): the next build
    derives them again, so no warning."""
    text = kept_again(hit)
    if text is not None and path is not None:
        with contextlib.suppress(OSError):
            atomic_write(path, text)


def _restore_from_sidecar(path: Path, docname: str, record: NotebookRecord,
                          rendered: list[_mystnb.RenderedCell], env: BuildEnvironment
                          ) -> Sidecar | None:
    """The cache hit's record from its sidecar (set on ``record``); the sidecar read,
    None when it is missing, unreadable or not this page's."""
    record.capture = "missing"
    record.capture_message = "cached outputs without capture data (executed before the " \
                             "extension was enabled, or the cache was moved)"
    if not path.is_file():
        return None
    try:
        sidecar = load_sidecar(path)
    except (OSError, SchemaError) as error:
        warn(logger, f"unreadable capture data for the cached notebook, ignored: {error}",
             "capture", location=docname)
        return None
    if sidecar is None:
        # Not a warning: after an upgrade every cached notebook would warn (and fail
        # -W builds) though its outputs are fine; the status page shows this message.
        record.capture_message = ("cached outputs with capture data of another version of "
                                  "sphinx-gpu-admonition (re-execute to measure them again)")
        return None
    saved = sidecar.record
    mismatch = _reconcile(saved, docname, rendered, env)
    if mismatch is not None:
        warn(logger, f"the capture data saved for the cached notebook is not this page's, "
                     f"ignored: {mismatch}", "capture", location=docname)
        record.capture_message = f"the capture data saved for the cached notebook is not " \
                                 f"this page's ({mismatch})"
        return None
    record.capture = saved.capture
    record.capture_message = saved.capture_message
    record.environment = saved.environment
    record.cells = saved.cells
    record.peak_memory_mb = saved.peak_memory_mb
    record.device_peak_memory_mb = saved.device_peak_memory_mb
    record.executed_at = saved.executed_at or record.executed_at
    record.calibration_seconds = saved.calibration_seconds  # the machine that ran it
    record.packages = saved.packages  # the kernel environment of the run that made them
    return sidecar


_FIRST_LINE_LENGTH = 120


def _first_line(source: str) -> str:
    """A cell's first line as the probe records it (``kernel_probe._first_line``, which a
    cache hit does not import: 0.7 ms), then as the record keeps it."""
    line = source.lstrip().split("\n", 1)[0].strip()
    line = line if len(line) <= _FIRST_LINE_LENGTH else line[: _FIRST_LINE_LENGTH - 1] + "…"
    return recorded_text(line)


def _reconcile(saved: NotebookRecord, docname: str, rendered: list[_mystnb.RenderedCell],
               env: BuildEnvironment) -> str | None:
    """Why ``saved`` (a cache hit's sidecar) cannot be the record of this page, else None
    after giving each saved cell its index on this page.

    A sidecar is found by the cached notebook's hash; a copied, merged or hostile cache
    can hold another notebook's cells, cells the page does not have, duplicates or
    200,000 phantom cells. Cells are matched by execution count with the page's code
    cells (the cached outputs carry the counts); a matched cell must start with the page
    cell's first line. Cells the page does not show (``remove-cell``) must fit in the
    notebook's code cells. jupyter-cache gives identical notebooks one record, so the
    sidecar of another page with this page's code is this page's execution too.
    """
    reason = _cells_mismatch(saved.cells, rendered, env, docname)
    if reason is not None and saved.docname != docname:
        reason = f"saved for {saved.docname!r}: {reason}"
    return reason


def _cells_mismatch(cells: list[CellRecord], rendered: list[_mystnb.RenderedCell],
                    env: BuildEnvironment, docname: str) -> str | None:
    page = {cell.execution_count: (cell.index, cell.source) for cell in rendered
            if cell.execution_count is not None}
    seen_counts: set[int] = set()
    unplaced = 0
    for cell in cells:
        count = cell.execution_count
        if count is not None:
            if count in seen_counts:
                return f"execution count {count} is recorded twice"
            seen_counts.add(count)
        placed = page.get(count) if count is not None else None
        if placed is None:
            unplaced += 1
            cell.index = None
            continue
        index, source = placed
        expected = _first_line(source)
        if source.strip() and cell.first_line != expected:
            return (f"cell {count} starts with {cell.first_line[:40]!r}, the page's with "
                    f"{expected[:40]!r}")
        cell.index = index
    if unplaced:
        total = _mystnb.executed_code_cell_count(env, docname)
        if total is None or len(cells) > total:
            known = "an unknown number of" if total is None else str(total)
            return f"{len(cells)} cells for a notebook of {known} code cells"
    return None


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
            with gc_paused():  # thousands of short-lived containers (model/gc_pauses.py)
                rendered = _mystnb.rendered_cells(doctree)
                record = build_record(app, env, docname, doctree, rendered)
        except Exception as error:  # the build must go on without the record
            warn(logger, f"could not read the execution data: {type(error).__name__}: {error}",
                 "capture", location=docname)
            return
        if not record.cells and not rendered:
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
    config = get_config(app)
    if not config.capture:
        return
    saved = {name: os.environ.get(name) for name in
             ("PYTHONSTARTUP", ENV_PROBE, ENV_USER_STARTUP, ENV_OUTPUT,
              ENV_EXPLAIN_RECOMPILATIONS)}
    build_state(app).saved_environ = saved
    user_startup = os.environ.get("PYTHONSTARTUP")
    if user_startup and Path(user_startup) != STARTUP_FILE:
        os.environ[ENV_USER_STARTUP] = user_startup
    os.environ["PYTHONSTARTUP"] = str(STARTUP_FILE)
    os.environ[ENV_PROBE] = str(KERNEL_PROBE_FILE)
    if config.explain_recompilations:
        os.environ[ENV_EXPLAIN_RECOMPILATIONS] = "1"
    else:  # one left by the user's shell must not turn it on
        os.environ.pop(ENV_EXPLAIN_RECOMPILATIONS, None)
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
    for name in (ENV_PROBE, ENV_OUTPUT, ENV_EXPLAIN_RECOMPILATIONS):
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
