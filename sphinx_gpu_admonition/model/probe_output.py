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
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from .files import public_path
from .record import CellRecord
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
                      p.KIND_LIBRARIES, p.KIND_ERROR, p.KIND_WARNING, p.KIND_END})


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
            elif isinstance(kind, str) and kind not in _probe_kinds():
                self.other[kind] = item

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

    def _read_cell(self, item: dict[str, Any]) -> None:
        # one bad value loses that cell, never the notebook (and its failure)
        item = {**item, "index": None}
        for key in ("error", "first_line"):  # made one line, and never lost to a surrogate
            if isinstance(item.get(key), str):
                item[key] = recorded_text(item[key])
        loops = item.get("compiled_loops")
        if isinstance(loops, list):  # a function's name is the notebook's (f.__name__ = ...)
            item["compiled_loops"] = [
                {**loop, "function": recorded_text(loop["function"])}
                if isinstance(loop, dict) and isinstance(loop.get("function"), str) else loop
                for loop in loops]
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
