"""What this build read, and the records of a build that stopped.

The reports must say what *this* build did, whatever its outcome:

- a page this build did not read again (its source was unchanged) keeps the
  record of the build that executed it, marked :data:`~.record.EARLIER_BUILD`
  instead of "executed by this build";
- a build that stops (``-W`` without ``--keep-going``, ``nb_execution_raise_on_error``,
  a dead kernel, a failed ``-j`` worker) still reports what it read: a ``-j``
  worker also keeps each record in a small file beside the probe's output as soon
  as the document is read (a worker's environment is lost when its chunk fails;
  the main process, reading serially, keeps its records in its own environment),
  and a notebook whose execution never finished is rebuilt from the probe's lines.

Main process only, except the per-document backup, which runs in the ``-j``
worker that reads the document.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from ..model.files import atomic_write, repository_path
from ..model.formatting import MESSAGE_LENGTH, error_message, plain_text
from ..model.probe_output import (
    ProbeOutput,
    device_memory_last_seen,
    died_in_cell,
    kernel_crash,
    probe_lines,
    recorded_text,
)
from ..model.record import (
    EARLIER_BUILD,
    ERROR,
    EXECUTED,
    KERNEL_DIED,
    ErrorInfo,
    NotebookRecord,
    cell_positions,
)
from ..model.schema import SchemaError
from . import _mystnb
from .capture import (
    STATUS_OF_EXECUTION_ERROR,
    capture_folder,
    fill_from_probe,
    output_file,
    stored_records,
)
from .state import BuildState, build_state

logger = logging.getLogger(__name__)


#: the type of a notebook that was still executing when another part of the build failed
BUILD_STOPPED = "BuildStopped"


def progress(app: Sphinx) -> BuildState:
    """What the main process knows of this build's reading."""
    return build_state(app)


def _backup_file(app: Sphinx, docname: str) -> Path:
    return output_file(app, docname).with_suffix(".record.json")


# -- events ----------------------------------------------------------------------------
def _start(app: Sphinx) -> None:
    state = build_state(app)
    state.main_pid = os.getpid()
    state.read = set()


def _before_reading(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Pages not read again keep their records, as executed by an earlier build;
    the files of pages about to be read are removed, so that any found after a
    failure are this build's."""
    state = progress(app)
    state.to_read = set(docnames)
    # one listing of the folder, not two removals per page that find nothing (a
    # rebuild of cache hits leaves no file there); a page's output file and its
    # backup are named by the same digest (output_file, _backup_file)
    digests = {output_file(app, docname).stem for docname in state.to_read}
    with contextlib.suppress(OSError), os.scandir(capture_folder(app)) as entries:
        for entry in entries:
            if entry.name.partition(".")[0] in digests:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    records = stored_records(env)
    for docname, record in list(records.items()):
        if docname not in state.to_read and record.provenance == EXECUTED:
            # a new record: readers may hold the old one (records are never changed)
            records[docname] = dataclasses.replace(record, provenance=EARLIER_BUILD)


def _after_reading_one(app: Sphinx, doctree: nodes.document) -> None:
    """Note the record just stored as read by this build; a ``-j`` worker also keeps
    it outside the environment (a failing chunk loses its worker's environment)."""
    docname = app.env.docname
    record = stored_records(app.env).get(docname)
    if record is None:
        return
    state = progress(app)
    state.read.add(docname)  # the main process, when reading serially
    if state.main_pid == os.getpid():
        return  # the record stays in the main process's environment, whatever happens
    # only needed if the build fails; the build itself must not
    with contextlib.suppress(OSError, TypeError, ValueError):
        atomic_write(_backup_file(app, docname), json.dumps(record.to_dict()))


def _merged(app: Sphinx, env: BuildEnvironment, docnames: set[str],
            other: BuildEnvironment) -> None:
    theirs = stored_records(other)
    progress(app).read.update(d for d in docnames if d in theirs)


# -- a build that stopped ----------------------------------------------------------------
def _describe(error: BaseException) -> tuple[str, str, str]:
    """(status, exception type, message) of the notebook whose execution raised ``error``."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = (current.__cause__ or current.__context__
                   or getattr(current, "orig_exc", None))
    for link in chain:
        name = type(link).__name__
        if name in STATUS_OF_EXECUTION_ERROR:
            return STATUS_OF_EXECUTION_ERROR[name], name, error_message(str(link))
        ename = getattr(link, "ename", None)  # nbclient's CellExecutionError
        if isinstance(ename, str) and ename:
            evalue = getattr(link, "evalue", "")
            line = recorded_text(plain_text(f"{ename}: {evalue}"))[:MESSAGE_LENGTH]
            return ERROR, recorded_text(ename), line
    text = "\n".join(str(link) for link in chain)  # a -j worker's traceback, as text
    for name, status in STATUS_OF_EXECUTION_ERROR.items():
        if name in text:
            return status, name, error_message(text)
    return ERROR, type(error).__name__, error_message(text)


def failure_text(error: BaseException) -> str:
    """``build.failure``: the exception's type and the gist of its message."""
    message = error_message(str(error))
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _from_probe(app: Sphinx, docname: str, status: str, error_type: str,
                message: str) -> NotebookRecord:
    probe = ProbeOutput(probe_lines(output_file(app, docname)))
    record = NotebookRecord(docname=docname, status=status, provenance=EXECUTED,
                            method=_mystnb.execution_mode(app.env))
    page = nodes.document("", None)  # the build stopped before the page was read
    fill_from_probe(probe, page, record)
    record.source = repository_path(Path(app.env.doc2path(docname)), Path(app.env.srcdir))
    died_in = died_in_cell(probe, output_file(app, docname)) if status == KERNEL_DIED else None
    if died_in is not None:
        record.cells.append(died_in)  # so that every view names the cell it died in
    # no page to enrich them from (it was never read): named by the kernel's counts
    for cell, position in zip(record.cells, cell_positions(record.cells), strict=True):
        cell.position = position
    last = max((c.execution_count or 0 for c in record.cells if c is not died_in), default=0)
    record.error = ErrorInfo(type=error_type, message=message, execution_count=last + 1)
    if status == KERNEL_DIED:
        record.error.signal, record.error.stack = kernel_crash(output_file(app, docname))
        record.error.device_memory_mb = device_memory_last_seen(record.cells)
        if record.error.signal:
            record.error.message = f"{message} ({record.error.signal})"
    if probe.started is not None:
        record.executed_at = _mystnb.timestamp_to_iso(probe.started)
    return record


def _backup(app: Sphinx, docname: str) -> NotebookRecord | None:
    path = _backup_file(app, docname)
    if not path.is_file():
        return None
    try:
        return NotebookRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, SchemaError, RecursionError):
        return None


def records_of_stopped_build(app: Sphinx, error: BaseException) -> list[NotebookRecord]:
    """Records this build read but did not keep because it stopped, and the notebooks
    it was executing when it stopped; pages it had not reached yet keep their earlier
    records, marked as such."""
    state = progress(app)
    env = app.env
    stored = stored_records(env)
    status, error_type, message = _describe(error)
    recovered: list[NotebookRecord] = []
    unfinished: list[str] = []
    for docname in sorted(state.to_read - state.read):
        backup = _backup(app, docname)
        if backup is not None:
            recovered.append(backup)
        elif output_file(app, docname).is_file():
            unfinished.append(docname)
        elif docname in stored:
            earlier = stored[docname]
            if earlier.provenance == EXECUTED:
                earlier = dataclasses.replace(earlier, provenance=EARLIER_BUILD)
            recovered.append(earlier)
    text = str(error)
    for docname in unfinished:
        # the notebook named by the error (or the only one running) raised it; any
        # other was still running in another -j worker when the build stopped
        culprit = len(unfinished) == 1 or docname in text or \
            Path(str(env.doc2path(docname))).name in text
        if culprit:
            recovered.append(_from_probe(app, docname, status, error_type, message))
        else:
            recovered.append(_from_probe(
                app, docname, ERROR, BUILD_STOPPED,
                "the build stopped while this notebook was executing"))
    return recovered


def setup_outcome(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _start)
    app.connect("env-before-read-docs", _before_reading)
    # after ExecutionRecordCollector.process_doc (priority 500) has stored the record
    app.connect("doctree-read", _after_reading_one, priority=600)
    app.connect("env-merge-info", _merged)
    return {}
