"""Where a text notebook's code cells lie in its source, for both engines: the lines of
their opening fences (```` ```{code-cell} ````, ``~~~``, ``:::``) and of each cell's
first line of code after its options.

A warning about a cell points at these lines; MyST-NB and mystmd read the same MyST
Markdown, so both adapters take them from here (the fence a cell opens with, the code
line a timing claim or a slow cell is shown at).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

#: the opening fence of a MyST code cell, at any indentation (a cell inside a list item
#: or a ``::::{solution}`` block is indented)
CODE_CELL_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{code-cell\}")


def fence_lines(source: Sequence[str]) -> list[int]:
    """The lines (from 1) of ``source`` that open a code cell, in order: found once per
    page (the substring test first: a page of a thousand lines has a few dozen)."""
    return [number for number, line in enumerate(source, 1)
            if "{code-cell}" in line and CODE_CELL_FENCE.match(line)]


def fence_at_or_above(fences: Sequence[int], line: int) -> int:
    """The line of the code cell's fence at or above ``line`` (else ``line``), among a
    page's :func:`fence_lines`: where a cell starts, from a line inside it."""
    above = bisect.bisect_right(fences, line)
    return fences[above - 1] if above else line


def code_start_line(source: Sequence[str], fence: int, code: str) -> int | None:
    """The line (from 1) of the first line of ``code`` in a text notebook's lines
    ``source``, whose cell opens at line ``fence`` (```` ```{code-cell} ````): the
    first line after the fence and its options (``:tags: [...]`` lines, a ``---``
    block) that is the code's first line, before the cell's closing fence; None where
    it is not there (or the code starts with an empty line).  An indented cell's
    lines are read without the fence's indentation, which the engines remove from its
    code."""
    first = code.split("\n", 1)[0].rstrip()
    if not first or not 0 < fence <= len(source):
        return None
    fence_line = source[fence - 1]
    opening = fence_line.strip()
    indent = len(fence_line) - len(fence_line.lstrip())
    marker = opening[:len(opening) - len(opening.lstrip(opening[:1]))]  # ``` or ~~~~
    for number in range(fence + 1, len(source) + 1):
        line = source[number - 1].rstrip()
        if line[indent:] == first and not line[:indent].strip():
            return number
        if marker and line.strip().startswith(marker) and not line.strip().strip(marker[0]):
            return None  # the cell closed without it
    return None
