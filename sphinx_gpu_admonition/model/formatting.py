"""How durations, times and error messages read: the same on the page, in the
status table, in flag reasons, in the build summary, in JUnit and on the command line."""

from __future__ import annotations

import re
from datetime import datetime, timezone


def format_seconds(seconds: float | None, missing: str = "–") -> str:
    """``0.47 ms``, ``2.31 s``, ``82.4 s``, ``12 min 3 s``; ``missing`` for None."""
    if seconds is None:
        return missing
    if seconds < 0.01:
        return f"{seconds * 1000:.2f} ms"
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 600:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)} min {rest:.0f} s"


def format_ratio(ratio: float | None, missing: str = "–", times: str = "x") -> str:
    """How many times as long: ``1.50x`` (the page writes ``1.50×``); ``missing`` for None."""
    return missing if ratio is None else f"{ratio:.2f}{times}"


def format_percent(share: float | None, missing: str = "–") -> str:
    """A share as a whole percentage: ``69%``; ``missing`` for None."""
    return missing if share is None else f"{share:.0%}"


def format_gpu_memory(memory_mib: float | None) -> str:
    """A GPU's memory as NVML and nvidia-smi report it (MiB), in GiB: ``16 GiB``; ``""``
    when unknown."""
    return f"{memory_mib / 1024:.0f} GiB" if memory_mib else ""


def format_bytes(size: float | None, missing: str = "–") -> str:
    """A device's memory limit in bytes (JAX's ``memory_stats``), in GiB: ``15.8 GiB``."""
    return f"{size / 2**30:.1f} GiB" if size else missing


def format_mib(size_mib: float | None, missing: str = "–") -> str:
    """A process's memory in MiB (the records' ``peak_memory_mb``: resident set size
    / 2**20), labelled as such: ``512 MiB``."""
    return missing if size_mib is None else f"{size_mib:.0f} MiB"


def format_gib(size_gib: float | None, missing: str = "–") -> str:
    """A machine's memory in GiB (the records' ``memory_gb``: bytes / 2**30, rounded
    to 0.1), labelled as such: ``23.5 GiB``."""
    return missing if size_gib is None else f"{size_gib:g} GiB"


def format_date(iso: str | None) -> str:
    """An ISO 8601 time in UTC, to the minute (``2026-11-29 21:36 UTC``): records keep
    the executing machine's offset, readers compare times of several machines."""
    if not iso:
        return ""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso[:16].replace("T", " ")
    if when.tzinfo is None:  # no offset: the time as written
        return when.strftime("%Y-%m-%d %H:%M")
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# The patterns are compiled the first time a message is cleaned (``re`` keeps them):
# only a failed notebook has one, and compiling them was 0.8 ms of every build's start.
# Terminal escapes: OSC (hyperlinks, titles; ended by BEL or ESC \ or left open),
# CSI (colours, cursor moves) and the two-character ones.
_TERMINAL_ESCAPE = r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]?"
# Controls (C0 but tab and newlines, DEL, C1), bidirectional overrides and isolates
# (a right-to-left override can make a message read backwards) and lone surrogates.
_INVISIBLE = ("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
              "\u2066-\u2069\ud800-\udfff]")
# An IPython traceback's first line: "ZeroDivisionError    Traceback (most recent call last)"
_TRACEBACK_HEAD = r"^(\S+)\s+Traceback \(most recent call last\)"
_EXCEPTION_LINE = r"^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b:?"
_SEPARATOR = r"^[\W_]+$"

MESSAGE_LENGTH = 300


def plain_text(text: str) -> str:
    """``text`` without terminal escapes and invisible or direction-changing characters."""
    return re.sub(_INVISIBLE, "", re.sub(_TERMINAL_ESCAPE, "", text))


def error_message(traceback: str | None) -> str:
    """The line of a traceback or error text that says what went wrong.

    The exception line of a traceback (``ZeroDivisionError: division by zero``, also
    for exception classes not named ``...Error``), else the first line that is not
    a separator (nbclient's timeout message ends with ``-----`` lines).
    """
    lines = [line.strip() for line in plain_text(traceback or "").splitlines()]
    lines = [line for line in lines if line and not re.match(_SEPARATOR, line)]
    if not lines:
        return ""
    head = re.match(_TRACEBACK_HEAD, lines[0])
    if head:
        name = head.group(1)
        matching = [line for line in lines[1:] if line == name or line.startswith(name + ":")]
        if matching:
            return matching[-1][:MESSAGE_LENGTH]
    exception_lines = [line for line in lines if re.match(_EXCEPTION_LINE, line)]
    message = exception_lines[-1] if exception_lines else lines[0]
    return message[:MESSAGE_LENGTH]


# -- untrusted text in line-based output ----------------------------------------------
# Text from a notebook, a status file, a label or the machine is made one line and never
# starts an output line with ``::``: a GitHub runner reads every line of a step's output
# that starts (after spaces) with ``::`` as a workflow command (``::error``,
# ``::stop-commands::``).  The runner splits on CR and LF; Python's ``splitlines`` (what
# a reader of the log or a test uses) also on the other separators below.
_LINE_BREAK_CHARS = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
#: what no line may start with (after whitespace): a workflow command
WORKFLOW_COMMAND_PREFIX = "::"
#: the "no data" wording of every view that names a notebook without capture data
NO_DATA = "no measurements"


def one_line(text: object) -> str:
    """``text`` on one line: line breaks and other control characters as a space."""
    text = str(text)
    if text.isprintable():  # the common case, without a regular expression
        return text
    return re.sub("[\x00-\x1f\x7f-\x9f\u2028\u2029]", " ", text)


def _without_leading_styles(line: str) -> str:
    """The line as a runner's parser sees its start: whitespace and colour codes skipped."""
    return re.sub(r"^(?:\s|\x1b\[[0-9;]*m)+", "", line)


def safe_line(line: str) -> str:
    """An output line that cannot be a workflow command: line breaks (a value that was
    not made one line) become spaces, and a leading ``::`` is written ``%3A:``, as the
    runner's own escaping writes a colon (colour codes are kept)."""
    if any(ch in line for ch in _LINE_BREAK_CHARS):
        line = re.sub(f"[{_LINE_BREAK_CHARS}]", " ", line)
    start = _without_leading_styles(line)
    if start.startswith(WORKFLOW_COMMAND_PREFIX):
        cut = len(line) - len(start)
        line = line[:cut] + "%3A" + line[cut + 1:]
    return line


def safe_lines(lines: list[str] | tuple[str, ...]) -> list[str]:
    return [safe_line(line) for line in lines]


def shorten(text: str | None, width: int = 60) -> str:
    """One line of at most ``width`` characters (``…`` where it was cut)."""
    text = " ".join(one_line(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def plural(count: int, noun: str) -> str:
    """``1 notebook``, ``3 notebooks`` (English: the command line's and the reports')."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
