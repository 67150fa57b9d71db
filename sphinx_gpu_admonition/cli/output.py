"""What every command shares: exit codes, usage errors, the flagging defaults, reading
a status file, and the output forms (aligned text with optional colour, GitHub
Markdown, strict JSON)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ..model.analysis import Thresholds
from ..model.files import read_status
from ..model.formatting import format_ratio, format_seconds
from ..model.record import StatusReport
from ..model.schema import SchemaError

PROG = "sphinx-gpu-admonition"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

FIRST_LINE_WIDTH = 60

#: the flagging rules' defaults: the model's (:class:`.analysis.Thresholds`), as the build's
DEFAULT_THRESHOLDS = Thresholds()


class UsageError(Exception):
    """Bad input: printed as one ``sphinx-gpu-admonition: error: ...`` line, exit code 2."""


class Style:
    """ANSI styling, a no-op unless enabled."""

    _CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33",
              "cyan": "36"}

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        codes = ";".join(self._CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def colour_enabled(no_color: bool, stream: TextIO) -> bool:
    """Colour only on a terminal, never with ``--no-color`` or a non-empty ``NO_COLOR``."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


#: a table cell: text, or (text, style names)
Cell = Any


def _cell_text(cell: Cell) -> str:
    return cell[0] if isinstance(cell, tuple) else str(cell)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], style: Style,
               right: Sequence[int] = (), indent: str = "  ") -> list[str]:
    """Aligned columns; ``right`` lists the columns aligned right (numbers)."""
    widths = [len(h) for h in headers]
    for row in rows:
        for column, cell in enumerate(row):
            widths[column] = max(widths[column], len(_cell_text(cell)))

    def line(cells: Sequence[Cell], header: bool = False) -> str:
        parts = []
        for column, cell in enumerate(cells):
            text = _cell_text(cell)
            last = column == len(cells) - 1
            padded = text.rjust(widths[column]) if column in right else (
                text if last else text.ljust(widths[column]))
            styles = ("bold",) if header else (cell[1] if isinstance(cell, tuple) else ())
            parts.append(style(padded, *styles) if text else padded)
        return (indent + "  ".join(parts)).rstrip()

    return [line(headers, header=True)] + [line(row) for row in rows]


_MD_SPECIAL = set("\\`*_[]<>|#~")


def md_text(text: Any) -> str:
    """Text for a Markdown table cell: punctuation that means something escaped."""
    text = " ".join(str(text).split())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)


def md_code(text: str) -> str:
    """A code span for a table cell, safe with backticks and ``|`` in ``text``."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
             right: Sequence[int] = ()) -> list[str]:
    """A GitHub table; cells must already be escaped (:func:`md_text`, :func:`md_code`)."""
    rule = ["---:" if i in right else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def fmt_seconds(seconds: float | None) -> str:
    return format_seconds(seconds, missing="-")  # ASCII for terminals and Markdown


def fmt_ratio(ratio: float | None) -> str:
    return format_ratio(ratio, missing="-")


def fmt_change(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "-"
    delta = after - before
    return ("+" if delta >= 0 else "-") + fmt_seconds(abs(delta))


def shorten(text: str, width: int = FIRST_LINE_WIDTH) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def emit(lines: Sequence[str], stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    stream.write("\n".join(lines).rstrip("\n") + "\n")


def json_safe(data: Any) -> Any:
    """``data`` with non-finite numbers as null: loaded data is finite, but a ratio of
    two valid times can still overflow (1e15 s / 5e-324 s)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: json_safe(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [json_safe(value) for value in data]
    return data


def emit_json(data: Any) -> None:
    text = json.dumps(json_safe(data), indent=2, ensure_ascii=False, allow_nan=False,
                      default=str)
    sys.stdout.write(text + "\n")


def read_report(path: str) -> StatusReport:
    try:
        return read_status(path)
    except SchemaError as error:
        raise UsageError(str(error)) from error
    except OSError as error:
        raise UsageError(f"{error.filename or path}: {error.strerror or error}") from error


def utf8_safe(stream: TextIO) -> None:
    """Never fail on a character the terminal's encoding lacks (``…``, ``—``)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors="backslashreplace")


def one_line(error: BaseException) -> str:
    """The message on one line (a file name may hold a line break)."""
    return str(error).replace("\r", "\\r").replace("\n", "\\n")
