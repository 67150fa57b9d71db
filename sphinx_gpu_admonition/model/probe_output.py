"""The probe's lines read back: what one kernel wrote, for any engine.

The kernel probe (:mod:`..probe.kernel_probe`) writes one JSON line per event into
a file its engine named; :class:`ProbeOutput` reads them into the model's cells and
environment, and :func:`died_in_cell` / :func:`kernel_crash` say where and how a
kernel died.  The Sphinx adapter and the mystmd adapter both read kernels this
way.  Standard library only; the line protocol's names are the probe's own
(:mod:`..probe.protocol`, imported when a kernel wrote lines), so the writer and the
reader cannot drift.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from .files import public_path
from .record import CellRecord, Environment
from .schema import SchemaError

# -- values as a record keeps them ---------------------------------------------------
#: every line break ``str.splitlines`` knows: CR, LF, VT, FF, FS, GS, RS, NEL, LS, PS
_LINE_BREAKS = re.compile("[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")


def recorded_text(value: str) -> str:
    """A value from a kernel as a record keeps it: one line (an exception class may
    be named ``"Boom\\n::error ..."``), lone surrogates replaced by U+FFFD, so that the
    value can be written anywhere and never costs its cell."""
    return _LINE_BREAKS.sub(" ", _LONE_SURROGATES.sub("\ufffd", value)).strip()


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def probe_lines(path: Path) -> Iterator[dict[str, Any]]:
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
def line_protocol() -> ModuleType:
    """The probe's line protocol (its names and version): the module the kernel's
    probe writes by, imported when a kernel wrote lines."""
    from ..probe import protocol

    return protocol


@functools.cache
def _probe_kinds() -> frozenset[str]:
    p = line_protocol()
    return frozenset({p.KIND_START, p.KIND_CELL, p.KIND_CELL_START, p.KIND_JAX,
                      p.KIND_LIBRARIES, p.KIND_ERROR, p.KIND_WARNING, p.KIND_END,
                      p.KIND_LOST})


#: the record's capture states (``NotebookRecord.capture``) this reader gives
CAPTURE_OK, CAPTURE_PARTIAL, CAPTURE_FAILED = "ok", "partial", "failed"


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


class ProbeOutput:
    """What the probe wrote for one kernel (the line protocol is in probe/protocol.py).

    Lines of another process (a kernel the notebook started itself) are
    ignored; a cell line with a value the record cannot hold (a negative or
    non-finite time) is dropped with a warning, never stored.  Lines of a kind the
    probe does not write (an engine's own, such as mystmd's page line) are kept in
    :attr:`other`, the last of each kind.
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
        #: the last cell that started (its cell_start line), finished or not
        self.last_started: dict[str, Any] | None = None
        #: kind -> the last line of each kind the probe does not write
        self.other: dict[str, dict[str, Any]] = {}
        #: the kernel's execution count when it exited (its end line), and the highest
        #: count any line named: together with the counts runs nested in cells took,
        #: how many cells the kernel ran (:meth:`capture_state`)
        self.kernel_count: int | None = None
        self._highest_count = 0
        self._nested_counts: set[int] = set()
        #: lines the probe could not write, and the first reason it gave
        self.lost_lines = 0
        self.lost_reason: str | None = None
        kernel_pid = None
        for item in lines:
            protocol = line_protocol()
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
            elif kind == protocol.KIND_CELL_START:
                self.last_started = item
                self._note_count(item.get(protocol.KEY_EXECUTION_COUNT))
            elif kind == protocol.KIND_JAX:
                self.environment["jax"] = item.get("jax")
            elif kind == protocol.KIND_LIBRARIES:
                self.environment["libraries"] = item.get("libraries")
            elif kind == protocol.KIND_ERROR:
                self.errors.append(str(item.get(protocol.KEY_MESSAGE)))
            elif kind == protocol.KIND_WARNING:
                self.warnings.append(str(item.get(protocol.KEY_MESSAGE)))
            elif kind == protocol.KIND_END:
                self.kernel_count = _count(item.get(protocol.KEY_EXECUTION_COUNT))
                self._note_count(self.kernel_count)
                if item.get(protocol.KEY_CALLBACKS_REGISTERED) is False:
                    self.errors.append("the notebook removed the probe's IPython callbacks; "
                                       "the cells after that were not measured")
            elif kind == protocol.KIND_LOST:
                lines = _count(item.get(protocol.KEY_LOST_LINES))
                self.lost_lines += lines or 0
                if self.lost_reason is None and isinstance(item.get(protocol.KEY_MESSAGE), str):
                    self.lost_reason = recorded_text(item[protocol.KEY_MESSAGE])[:200]
            elif isinstance(kind, str) and kind not in _probe_kinds():
                self.other[kind] = item
        # each cell's identity on every engine (CellRecord.position): its place among
        # the cells the kernel ran, which a cell lost before it does not shift
        for cell, place in zip(self.cells, self.positions(), strict=True):
            cell.position = place

    def _read_start(self, item: dict[str, Any]) -> None:
        version = item.get("probe_version")
        protocol = line_protocol()
        if version != protocol.PROBE_VERSION:
            self.errors.append(f"the kernel's probe wrote version {version!r} of its data, "
                               f"this release reads version {protocol.PROBE_VERSION}")
        self.started = item.get("time")
        self.environment.update(host=item.get("host"), python=item.get("python"),
                                gpus=item.get("gpus") or [],
                                allocator=item.get("allocator") or {})

    def _note_count(self, count: Any) -> None:
        count = _count(count)
        if count is not None and count > self._highest_count:
            self._highest_count = count

    def _read_cell(self, item: dict[str, Any]) -> None:
        protocol = line_protocol()
        count = _count(item.get(protocol.KEY_EXECUTION_COUNT))
        nested = _count(item.get(protocol.KEY_NESTED_RUNS))
        if count is not None:
            self._note_count(count)
            if nested:  # the counts the runs nested in this cell took
                self._nested_counts.update(range(count + 1, count + 1 + nested))
                self._note_count(count + nested)
        # one bad value loses that cell, never the notebook (and its failure)
        item = {**item, "index": None}
        for key in ("error", "first_line"):  # made one line, and never lost to a surrogate
            if isinstance(item.get(key), str):
                item[key] = recorded_text(item[key])
        for key in ("compiled_loops", "compiled_inputs"):
            compiled = item.get(key)
            if isinstance(compiled, list):  # a function's name is the notebook's (f.__name__)
                item[key] = [
                    {**entry, "function": recorded_text(entry["function"])}
                    if isinstance(entry, dict) and isinstance(entry.get("function"), str)
                    else entry for entry in compiled]
        reasons = item.get("recompile_reasons")
        if isinstance(reasons, list):  # names and JAX's words: one line each, no surrogate
            item["recompile_reasons"] = [
                {key: recorded_text(value) if isinstance(value, str) else value
                 for key, value in reason.items()} if isinstance(reason, dict) else reason
                for reason in reasons]
        try:
            self.cells.append(CellRecord.from_dict(item))
        except SchemaError as error:
            self.warnings.append(f"dropped the measurement of cell "
                                 f"{item.get('execution_count')!r}: {error}")


    # -- the environment, one bad value at a time --------------------------------------
    def load_environment(self) -> Environment:
        """The kernel's environment (host, Python, JAX, GPUs, libraries) for the record,
        read tolerantly: a value the model cannot hold is cut (a text too long) or
        dropped (anything else) alone, with a warning in :attr:`warnings` naming it, and
        the rest is kept, so one bad device kind costs neither the host nor JAX (nor
        makes the notebook a machine of its own).  Both engines' adapters call this."""
        environment, problems = load_environment(self.environment)
        self.warnings += problems
        return environment

    # -- how complete the record is -----------------------------------------------------
    def _died_in_count(self) -> int | None:
        """The count of the cell the kernel was running when it stopped (killed, or
        exited in the cell: ``sys.exit()``), which the adapters name as the cell it died
        in: the last cell that started, without its line, unless lines were lost."""
        if self.last_started is None or (self.kernel_count is not None and self.lost_lines):
            return None
        count = _count(self.last_started.get("execution_count"))
        return None if any(c.execution_count == count for c in self.cells) else count

    def missing_counts(self) -> list[int]:
        """The execution counts of cells the kernel ran and the record does not have
        (lines lost, or dropped as unreadable): neither a run nested in a cell nor the
        cell the kernel died in."""
        have = {c.execution_count for c in self.cells} | self._nested_counts
        have.add(self._died_in_count())
        return [count for count in range(1, self._highest_count + 1) if count not in have]

    def positions(self) -> list[int | None]:
        """Each recorded cell's place among the notebook's cells the kernel ran (0 for
        the first; None: no count), counted from the execution counts, so that a cell
        after a missing one still finds its own place (nested runs took counts too)."""
        nested = sorted(self._nested_counts)
        places: list[int | None] = []
        for cell in self.cells:
            count = cell.execution_count
            places.append(None if count is None else
                          count - 1 - sum(1 for n in nested if n < count))
        return places

    def capture_state(self, ran: int = 0) -> tuple[str, str | None]:
        """``(capture, capture_message)`` of the record made from these lines: "failed"
        (the probe broke, or was removed), "partial" (fewer cells than the kernel ran;
        a warning is added to :attr:`warnings`) or "ok".  ``ran``: the cells the engine
        saw run (a lower bound; the probe's own counts may know more).  Call it once
        per record: its failures and warning are added to :attr:`errors` / :attr:`warnings`.
        """
        if self.errors:
            return CAPTURE_FAILED, self.errors[0]
        if ran > 0 and not self.cells:
            # a notebook that broke the probe (a sys.settrace tracer, a patched IPython)
            # would otherwise read as a measured notebook without cells
            self.errors.append(f"the kernel ran {ran} cell{'s' if ran != 1 else ''} and the "
                               "probe recorded none")
            return CAPTURE_FAILED, self.errors[0]
        missing = self.missing_counts()
        known = self._highest_count - len(self._nested_counts) - (
            self._died_in_count() is not None)
        ran = max(ran, known, len(self.cells) + len(missing))
        if ran <= len(self.cells):
            return CAPTURE_OK, None
        message = (f"the probe recorded {len(self.cells)} of the {ran} cells the kernel ran"
                   + (f" (not recorded: the cell{'s' if len(missing) > 1 else ''} with "
                      f"execution count {_counts_text(missing)})" if missing else ""))
        if self.lost_lines:
            message += (f"; {self.lost_lines} line{'s' if self.lost_lines > 1 else ''} could "
                        f"not be written ({self.lost_reason or 'no reason given'})")
        self.warnings.append(f"{message}; the record has the others")
        return CAPTURE_PARTIAL, message


#: bad values repaired in one environment before the rest is given up too
_MAX_REPAIRS = 32


def load_environment(data: Any) -> tuple[Environment, list[str]]:
    """:class:`.record.Environment` from a kernel's data, repairing it one bad value at a
    time (see :meth:`ProbeOutput.load_environment`); the warnings name each value."""
    if not isinstance(data, dict):
        return Environment(), [] if data is None else [
            "the kernel's environment was dropped: not an object"]
    data = copy.deepcopy(data)  # repaired in place; the strings themselves are shared
    problems: list[str] = []
    for _ in range(_MAX_REPAIRS):
        try:
            return Environment.from_dict(data), problems
        except SchemaError as error:
            problem = _repair(data, error)
            if problem is None:
                break
            problems.append(f"the kernel's environment: {problem}; the rest is kept")
    problems.append("the kernel's environment was dropped: too many values it cannot hold")
    return Environment(), problems


def _repair(data: dict[str, Any], error: SchemaError) -> str | None:
    """Cut or drop the value ``error`` names in ``data``; what was done (None: nothing
    could be, the error is not a value's)."""
    message = str(error)
    keys = list(error.keys)
    missing = message.endswith(": missing")
    if missing:  # a required value is missing: the object without it goes
        keys = keys[:-1]
    if not keys:
        return None
    try:
        container: Any = data
        for key in keys[:-1]:
            container = container[key]
        key = keys[-1]
        value = container[key]
    except (IndexError, KeyError, TypeError):
        return None
    limit = line_protocol().TEXT_LENGTH
    if isinstance(value, str) and len(value) > limit:
        container[key] = value[:limit - 1] + "…"
        return f"{message.rsplit(': a string', 1)[0]}: {len(value)} characters, cut to {limit}"
    if not isinstance(container, (list, dict)):
        return None
    del container[key]
    return f"{message} (its object dropped)" if missing else f"{message} (dropped)"


def _counts_text(counts: list[int]) -> str:
    shown = [str(count) for count in counts[:8]]
    if len(counts) > 8:
        shown.append(f"{len(counts) - 8} more")
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def device_peak(cells: list[CellRecord]) -> float | None:
    """The kernel's GPU memory peak (MiB) from its cells, where JAX reported it."""
    return max((c.device_peak_memory_mb for c in cells
                if c.device_peak_memory_mb is not None), default=None)


def device_memory_last_seen(cells: list[CellRecord]) -> float | None:
    """The GPU memory in use after the last cell that measured it (for a dead kernel)."""
    return next((c.device_memory_mb for c in reversed(cells)
                 if c.device_memory_mb is not None), None)


#: faulthandler's first line names the fatal signal: "Fatal Python error: Segmentation fault"
_FATAL_SIGNALS = {
    "Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
    "Floating-point exception": "SIGFPE", "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
}
_STACK_FRAMES = 8


def died_in_cell(probe: ProbeOutput, output: Path) -> CellRecord | None:
    """The cell the kernel was running when it died: the last one that started and
    did not finish (its time is until faulthandler wrote the stack, where it did)."""
    started = probe.last_started
    if started is None:
        return None
    count = started.get("execution_count")
    if type(count) is not int or any(c.execution_count == count for c in probe.cells):
        return None  # the kernel died between cells
    seconds = 0.0
    crash = output.with_name(output.name + line_protocol().CRASH_SUFFIX)
    with contextlib.suppress(OSError, TypeError, ValueError):
        if crash.stat().st_size:
            seconds = max(crash.stat().st_mtime - float(started.get("time")), 0.0)
    first_line = started.get("first_line")
    return CellRecord(index=None, execution_count=count, seconds=seconds,
                      first_line=first_line if isinstance(first_line, str) else "",
                      error="DeadKernelError")


def kernel_crash(output: Path) -> tuple[str | None, list[str]]:
    """The signal and the innermost frames (first) that faulthandler wrote beside the
    probe's file when a signal killed the kernel; (None, []) when it wrote nothing."""
    path = output.with_name(output.name + line_protocol().CRASH_SUFFIX)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:100_000]
    except OSError:
        return None, []
    signal = None
    frames: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Fatal Python error:") and signal is None:
            reason = stripped.split(":", 1)[1].strip()
            signal = _FATAL_SIGNALS.get(reason, reason or None)
        elif stripped.startswith("File ") and len(frames) < _STACK_FRAMES:
            frames.append(_public_frame(stripped))
    return signal, frames


_FRAME_FILE = re.compile(r'^File "([^"]+)"')


def _public_frame(frame: str) -> str:
    """A frame as public files show it: its file named as :func:`.files.public_path` names
    the build machine's files (the stack goes into the status JSON and page)."""
    match = _FRAME_FILE.match(frame)
    if match is None:
        return frame
    return f'File "{public_path(match.group(1))}"' + frame[match.end():]
