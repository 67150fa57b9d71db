"""What a GitHub runner reads as a workflow command: the lines of an output a runner would
read as commands the extension did not write (forged_commands), and the command line run
in-process with a UTF-8 terminal's streams (run); used by the fuzz tests, the workflow
commands' tests and the mystmd adapter's."""

from __future__ import annotations

import contextlib
import io
import re
import unicodedata
from collections.abc import Iterator

from sphinx_gpu_admonition import cli

_ANNOTATION = re.compile(r"::(error|warning|notice)(?: ([a-z]+=[^,:]*(?:,[a-z]+=[^,:]*)*))?"
                         r"::(.*)")


def runner_lines(text: str) -> Iterator[str]:
    """``text`` split as the runner splits it (CR, LF), and each piece as
    ``str.splitlines`` splits it (the other separators too)."""
    for piece in re.split(r"\r\n|\r|\n", text):
        yield from piece.splitlines() or [piece]


#: bidirectional controls (embeddings, overrides, isolates, marks): never in any output
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def skeleton(line: str) -> str:
    """The line as a culture-sensitive comparison on .NET (ICU) sees it: controls,
    format characters and the other ignorable code points skipped (written apart from
    the package's own list, from the Unicode database)."""
    return "".join(ch for ch in line
                   if unicodedata.category(ch) not in ("Cc", "Cf")
                   and not ("\ufe00" <= ch <= "\ufe0f" or ch in "\u034f\u115f\u1160\u3164\uffa0"))


def forged_commands(text: str, annotations: bool = False) -> list[str]:
    """The lines of ``text`` a runner would read as commands and the extension did not
    write, by either of the runner's parsers (``ActionCommand.TryParseV2``: ``::`` at
    the start after whitespace; ``ActionCommand.TryParse``: ``##[`` anywhere), on the
    line as written and on its :func:`skeleton`; a line with a bidirectional control
    counts too.  With ``annotations``, the extension's own ``::error`` / ``::warning`` /
    ``::notice`` lines are allowed when their properties and message are escaped."""
    forged = []
    for line in runner_lines(text):
        if "##[" in line or "##[" in skeleton(line) or BIDI.search(line):
            forged.append(line)
            continue
        start = line.lstrip()
        if not start.startswith("::") and not skeleton(start).lstrip().startswith("::"):
            continue
        match = _ANNOTATION.fullmatch(start)
        properties = dict(item.split("=", 1) for item in (match.group(2) or "").split(",")
                          if item) if match else {}
        if (annotations and match and properties.get("file") != "evil.py"
                and not re.search(r"%(?!25|0D|0A|23#\[)", match.group(3))):
            continue
        forged.append(line)
    return forged


#: documents tried and refused, reported at the end of the module
TRIED = {"documents": 0, "refused": 0, "commands": 0}


def run(*argv: str) -> tuple[int, str, str]:
    """``cli.main(argv)`` with the streams of a UTF-8 terminal (no capsys: hypothesis)."""
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = cli.main(list(argv))
    stdout.flush()
    stderr.flush()
    TRIED["commands"] += 1
    return (code, stdout.buffer.getvalue().decode("utf-8"),  # type: ignore[attr-defined]
            stderr.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
