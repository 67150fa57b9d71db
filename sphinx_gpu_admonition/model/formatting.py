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
# Characters that show nothing, removed from untrusted text: format characters (Unicode's
# Cf: zero-width spaces and joiners, the soft hyphen, the byte-order mark, bidirectional
# marks, embeddings, overrides and isolates, tag characters), the other unprintable
# default-ignorable code points and lone surrogates.  A right-to-left override makes a
# text read backwards; and a GitHub runner's command parsers compare culture-sensitively,
# which on .NET (ICU) skips ignorable characters: ``#\u200b#[error]`` may read as
# ``##[error]``.
_INVISIBLE_CHARS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\ufeff\ufff0-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff\ud800-\udfff")
# The default-ignorable code points Python prints (variation selectors, which choose an
# emoji's look, Hangul fillers, the combining grapheme joiner): kept, and looked through
# when a line is checked for a command.
_IGNORABLE_MARKS = ("\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164"
                    "\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef")
# Controls (C0 but tab and newlines, DEL, C1) and the invisible characters above
_INVISIBLE = f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_INVISIBLE_CHARS}]"
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
# Text from a notebook, a status file, a label or the machine never becomes a GitHub
# workflow command.  A runner (actions/runner, ``ActionCommandManager.TryProcessCommand``)
# tries two parsers on every line of a step's output (both streams):
# ``ActionCommand.TryParseV2``, a line that starts, after whitespace, with ``::``
# (``::error ...::``, ``::stop-commands::``), and the older ``ActionCommand.TryParse``,
# ``##[`` anywhere in the line, then ``]`` (``##[error]...``, ``##[add-mask]...``,
# ``##[stop-commands]...``).  The runner splits on CR and LF; Python's ``splitlines``
# (what a reader of the log or a test uses) also on the other separators below.
_LINE_BREAK_CHARS = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
#: what no line may start with (after whitespace): a workflow command
WORKFLOW_COMMAND_PREFIX = "::"
#: what no line may contain anywhere: a workflow command of the older syntax
LEGACY_COMMAND_PREFIX = "##["
#: the "no data" wording of every view that names a notebook without capture data
NO_DATA = "no measurements"
# the colour codes of the command line's own styles (``cli.output.Style``)
_STYLE = r"\x1b\[[0-9;]*m"


def _cleaned(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"  # a lone surrogate cannot be written as UTF-8
    if char in _LINE_BREAK_CHARS or char < "\x20" or "\x7f" <= char <= "\x9f":
        return " "
    return ""  # a format character: nothing to see, nothing to keep


def one_line(text: object) -> str:
    """``text`` on one line of visible characters: line breaks and other control
    characters become a space; invisible characters (zero-width, bidirectional
    controls, tags) are removed; a lone surrogate becomes U+FFFD."""
    text = str(text)
    if text.isprintable():  # the common case, without a regular expression
        return text
    return re.sub(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_INVISIBLE_CHARS}]", _cleaned, text)


# what a culture-sensitive comparison may skip in a cleaned line: the escape character
# of a colour code, and the ignorable marks
_SKIPPED_CHAR = f"[\x1b{_IGNORABLE_MARKS}]"
_SKIPPED = f"{_SKIPPED_CHAR}*"


def without_legacy_commands(text: str) -> str:
    """``text`` with no ``##[`` in it: the first ``#`` of each is written ``%23``, as the
    runner's own escaping writes a character (``%3A`` for ``:``).  What a comparison may
    skip between the three (a colour code's escape character, a variation selector) is
    looked through."""
    if "#" not in text or "[" not in text:
        return text
    return re.sub(f"#(?={_SKIPPED}#{_SKIPPED}\\[)", "%23", text)


def safe_line(line: str) -> str:
    """An output line that neither of the runner's parsers reads as a command: the one
    rule for every line the package prints (and JUnit's and Markdown's text).

    Line breaks (a value that was not made one line) and control characters become
    spaces and invisible characters go (:func:`one_line`; the command line's colour
    codes are kept), a leading ``::`` is written ``%3A:`` and every ``##[`` is written
    ``%23#[`` (:func:`without_legacy_commands`)."""
    if not line.isprintable():
        line = "".join(part if index % 2 else one_line(part)
                       for index, part in enumerate(re.split(f"({_STYLE})", line)))
    line = without_legacy_commands(line)
    if ":" in line:
        command = re.match(f"(?:\\s|{_STYLE}|{_SKIPPED_CHAR})*(?=:{_SKIPPED}:)", line)
        if command:
            cut = command.end()
            line = line[:cut] + "%3A" + line[cut + 1:]
    return line


def safe_lines(lines: list[str] | tuple[str, ...]) -> list[str]:
    return [safe_line(line) for line in lines]


def safe_text(text: str) -> str:
    """Text of several lines (a JUnit failure's body) with each line a :func:`safe_line`;
    its line breaks are kept as LF."""
    return "\n".join(safe_line(line) for line in re.split(f"\r\n|[{_LINE_BREAK_CHARS}]", text))


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON writes it as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def safe_json(text: str) -> str:
    """JSON text (``json.dumps``) that reads back the same and that no line of holds a
    workflow command: the line separators JSON leaves raw and the invisible characters
    are written as ``\\uXXXX`` escapes (a reader splitting lines on them sees no line
    begin inside a string; a runner skipping them sees no ``##[``), and the ``[`` of a
    ``##[`` as ``\\u005b`` (JSON has no ``#`` outside a string).  Indented JSON starts
    no line with ``::``."""
    if not text.isprintable():
        text = re.sub(f"[\x85\u2028\u2029{_INVISIBLE_CHARS}{_IGNORABLE_MARKS}]", _json_escape,
                      text)
    return text.replace(LEGACY_COMMAND_PREFIX, "##\\u005b")


def shorten(text: str | None, width: int = 60) -> str:
    """One line of at most ``width`` characters (``…`` where it was cut)."""
    text = " ".join(one_line(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def plural(count: int, noun: str) -> str:
    """``1 notebook``, ``3 notebooks`` (English: the command line's and the reports')."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
