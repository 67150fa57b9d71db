"""The probe's own file (standard library only): written only while it is the file the
probe opened, whatever the notebook does with its descriptors.

A notebook can close descriptors it did not open (``os.closerange``, a daemonising
helper) or put its own file on a number (``os.dup2``); a descriptor number the probe
kept would then be closed, or the user's file, and once the number is reused the
probe's lines would go into the user's file.  So the probe keeps its descriptor
where user code does not reach it by accident (a high number, close-on-exec), checks
before each write that the descriptor is still its file (device and inode), and
opens the file again (appending) when it was closed or replaced, never touching a
descriptor that is no longer its own.  A line that cannot be written (a full disk,
a file-size limit, a folder removed) is counted, and the count said in the next
line that can be (:attr:`ProbeFile.lost_lines`): the reader then knows that the
record misses cells.

Loaded by the kernel probe (``kernel_probe.py``, beside itself) at kernel start.
"""

from __future__ import annotations

import os
from os import close as _close
from os import fstat as _fstat
from os import open as _open
from os import write as _write

try:
    import fcntl
except ImportError:  # Windows: descriptors stay where the system puts them
    fcntl = None

#: how far below the kernel's descriptor limit (and 1024, where ``select`` stops) the
#: probe's descriptors go: user code gets the lowest free number, so it reaches them
#: only with ~1000 files open
_BELOW_THE_LIMIT = 24
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


def _high_base() -> int:
    """The lowest number of the probe's descriptors: below the descriptor limit
    (``F_DUPFD`` refuses numbers at or above it) and below 1024."""
    limit = 1024
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if 0 <= soft < limit:  # RLIM_INFINITY is -1
            limit = soft
    except (ImportError, OSError, ValueError):
        pass
    return limit - _BELOW_THE_LIMIT


def owned_descriptor(fd: int) -> int:
    """``fd`` moved to a high number, close-on-exec (the low number closed); ``fd``
    itself where the system cannot move it (Windows, a limit of a few descriptors)."""
    if fcntl is None:
        return fd
    base = _high_base()
    if fd >= base or base < 3:
        return fd
    try:
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base)
    except (OSError, AttributeError):  # no free number up there, or no F_DUPFD_CLOEXEC
        return fd
    _close(fd)
    return high


class ProbeFile:
    """The append-only file of the probe's lines: one ``write(2)`` per line, checked."""

    def __init__(self, path: str) -> None:
        self.path = path
        #: lines that could not be written since the last one that could, and why
        #: (the first error); the probe says so in a line of its own
        self.lost_lines = 0
        self.lost_reason: str | None = None
        self._fd = -1
        self._device = self._inode = -1
        self._open()  # raises: a probe without its file does not start

    def _open(self) -> None:
        fd = owned_descriptor(_open(self.path, _FLAGS, 0o644))
        stat = _fstat(fd)
        self._fd, self._device, self._inode = fd, stat.st_dev, stat.st_ino

    def _is_own(self) -> bool:
        try:
            stat = _fstat(self._fd)
        except OSError:  # closed by the notebook
            return False
        return stat.st_ino == self._inode and stat.st_dev == self._device

    def write(self, data: bytes) -> bool:
        """Append ``data`` (one whole line); False when it could not be written."""
        try:
            if not self._is_own():
                # closed, or the notebook's own file now: that descriptor is not ours to
                # close or write; the path is
                self._open()
            written = _write(self._fd, data)
            while written < len(data):  # only a full disk or a signal writes less
                data = data[written:]
                written = _write(self._fd, data)
            return True
        except OSError as error:
            self.lost_lines += 1
            if self.lost_reason is None:  # not the path: it names the build machine's folders
                self.lost_reason = f"{type(error).__name__}: {error.strerror or error}"
            return False

    def close(self) -> None:
        """Close the descriptor if it is still the probe's."""
        if self._is_own():
            _close(self._fd)
        self._fd = -1
