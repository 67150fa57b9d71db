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
from ..model.files import find_status_file, junit_beside, read_status, repository_path
from ..model.formatting import one_line as one_line_text
from ..model.formatting import plural, safe_json, safe_lines, shorten
from ..model.judging import Judging, judged_by
from ..model.record import StatusReport
from ..model.schema import SchemaError
from ..render.markdown import fmt_change, fmt_ratio, fmt_seconds, md_code, md_table, md_text

__all__ = ["fmt_change", "fmt_ratio", "fmt_seconds", "md_code", "md_table", "md_text",
           "plural", "shorten", "github_enabled", "judging_of", "thresholds_from", "write_github"]

PROG = "sphinx-gpu-admonition"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

FIRST_LINE_WIDTH = 60

#: the flagging rules' defaults: the model's (:class:`.analysis.Thresholds`), as the build's
DEFAULT_THRESHOLDS = Thresholds()


def thresholds_from(base: Thresholds = DEFAULT_THRESHOLDS, args: Any = None,
                    **overrides: Any) -> Thresholds:
    """``base`` (the thresholds a status file stores: how its build judged it) with the
    command's options (``args``: the parsed thresholds options, None where not given)
    and ``overrides``, built in one place."""
    given = {name: getattr(args, name, None) for name in Thresholds._fields}
    given.update(overrides)
    return base._replace(**{name: value for name, value in given.items() if value is not None})


def judging_of(report: StatusReport) -> Judging:
    """How ``report``'s build judged it (:func:`..model.judging.judged_by`); a value no
    build writes is bad input."""
    try:
        return judged_by(report.build)
    except SchemaError as error:
        raise UsageError(str(error)) from error


def github_enabled(args: Any) -> bool:
    """``--github``, or on GitHub Actions unless ``--no-github``."""
    from ..render import github  # the annotations' module, only when asked

    return github.enabled(True if args.github else "auto") and not args.no_github


def write_github(report: StatusReport, analysis: Any, markdown: list[str],
                 status_json: str) -> None:
    """Annotations (standard error), the step outputs and the job summary of ``report``
    and ``compare`` (``--github``); a file that cannot be written is bad input.  The
    step outputs name files, as the build's do: the status file found in a build
    folder, and the JUnit file beside it."""
    from ..render import github

    found = find_status_file(status_json)
    junit = junit_beside(found)
    try:
        github.write_github(report, analysis, markdown, repository_path(found),
                            repository_path(junit) if junit is not None else None,
                            workspace=os.environ.get("GITHUB_WORKSPACE"), stream=sys.stderr)
    except OSError as error:
        raise UsageError(f"cannot write the GitHub Actions summary or outputs: "
                         f"{error.filename or ''} {error.strerror or error}") from error


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
    return one_line_text(cell[0] if isinstance(cell, tuple) else cell)


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


def emit(lines: Sequence[str], stream: TextIO | None = None) -> None:
    """Print ``lines``; none can be a workflow command (:func:`..model.formatting.safe_line`)."""
    stream = stream or sys.stdout
    stream.write("\n".join(safe_lines(list(lines))).rstrip("\n") + "\n")


def say(message: str, stream: TextIO | None = None) -> None:
    """One message line (``merge``'s), safe as :func:`emit`'s."""
    emit([message], stream or sys.stdout)


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
    sys.stdout.write(safe_json(text) + "\n")



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


def one_line(error: BaseException | str) -> str:
    """The message on one line (a file name may hold a line break)."""
    return one_line_text(str(error).replace("\r", "\\r").replace("\n", "\\n"))
