"""The statement of a cell that takes its time, for a finding's code line.

A cell's first line is often not where its time goes: ``%%time``, ``with
qe.Timer(precision=8):``, ``n = 20`` before the ``np.linalg.eigvals(X)`` that
works, ``attempt = 1`` before the loop that calls ``newton``.  :func:`work_line`
looks inside the timed code first (a timing cell magic, the ``%time`` / ``%timeit``
line magics, ``with ...Timer(...):`` blocks, the statements between ``start =
time.perf_counter()`` and the line reading it again), and there picks the statement
whose calls weigh most (:data:`.record.WORK_KINDS`, the surest first), as the
caller classifies them: a call of a function running a JAX loop, a Python loop
dispatching JAX work, a jitted call, a known-heavy library call ...  A Python loop
is the work unless a statement inside it weighs more.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from .code_text import (
    STATEMENT_LINE_MAGICS,
    dotted_name,
    expressions,
    statement_text,
    statements,
)
from .record import WORK_KINDS, WorkLine

#: how each kind ranks (higher weighs more)
RANK = {kind: len(WORK_KINDS) - position for position, kind in enumerate(WORK_KINDS)}
#: timing cell magics
TIMING_CELL_MAGICS = ("%%time", "%%timeit", "%%prun")
#: a context manager that times its block: ``qe.Timer()``, ``Timer("x")``, ``timer()``
_TIMER = re.compile(r"(?i)(timer|timing|timed|stopwatch)$")
#: clocks read before and after the timed statements (``start = time.perf_counter()``)
_CLOCKS = ("perf_counter", "perf_counter_ns", "time", "monotonic", "default_timer",
           "process_time", "time_ns")

#: the kind of one call, as the caller knows the notebook (None: no work, e.g. print)
CallKind = Callable[[ast.Call], "str | None"]


def work_line(source: str, tree: ast.Module, lines: Sequence[str], call_kind: CallKind,
              dispatch_lines: frozenset[int] = frozenset()) -> WorkLine | None:
    """The statement of the cell (``source``, parsed as ``tree`` from ``lines``, the
    cell without its magics) that does the work; ``dispatch_lines``: the lines of its
    own Python loops that dispatch JAX work.  None: nothing better than the first
    line is known (no call, no loop, no timed code)."""
    timed = timed_lines(source, tree)
    candidates = []
    for statement in statements(tree.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.Import, ast.ImportFrom)):
            continue
        kind = _statement_kind(statement, call_kind, dispatch_lines)
        candidates.append((statement, kind, statement.lineno in timed))
    pool = [item for item in candidates if item[2]] if timed else candidates
    weighed = [item for item in pool if item[1] is not None]
    if weighed:
        statement, kind, is_timed = max(weighed, key=lambda item: RANK[item[1]])  # first of ties
        return WorkLine(statement_text(statement, lines), statement.lineno, kind, is_timed)
    if pool and timed:
        statement = pool[0][0]
        return WorkLine(statement_text(statement, lines), statement.lineno, "timed", True)
    return None


def _statement_kind(statement: ast.stmt, call_kind: CallKind,
                    dispatch_lines: frozenset[int]) -> str | None:
    if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
        kind: str | None = "dispatch_loop" if statement.lineno in dispatch_lines \
            else "python_loop"
    elif isinstance(statement, (ast.With, ast.AsyncWith, ast.If, ast.Try)):
        return None  # its header is not the work; the statements inside are candidates
    else:
        kind = None
    for node in expressions(statement):
        if isinstance(node, ast.Call):
            found = call_kind(node)
            if found is not None and (kind is None or RANK[found] > RANK[kind]):
                kind = found
    return kind


def timed_lines(source: str, tree: ast.Module) -> set[int]:
    """The line numbers of the statements the cell times: all of a ``%%time`` cell,
    a ``%time`` / ``%timeit`` line's statement, a ``with qe.Timer():`` block's body,
    the statements between two readings of a clock."""
    raw = source.split("\n")
    first = next((line.strip() for line in raw if line.strip()), "")
    if first.split(maxsplit=1)[:1] and first.split(maxsplit=1)[0] in TIMING_CELL_MAGICS:
        return {line for statement in tree.body for line in _span(statement)}
    timed: set[int] = set()
    magic_lines = {number for number, line in enumerate(raw, 1)
                   if _line_magic(line.lstrip()) in STATEMENT_LINE_MAGICS} \
        if "%" in source else set()
    if magic_lines or "with" in source:
        for statement in statements(tree.body):
            if statement.lineno in magic_lines:
                timed |= _span(statement)
            if isinstance(statement, (ast.With, ast.AsyncWith)) and any(
                    _is_timer(item.context_expr) for item in statement.items):
                for inner in statement.body:
                    timed |= _span(inner)
    if any(clock in source for clock in _CLOCKS):
        timed |= _between_clocks(tree.body)
    return timed


def _line_magic(line: str) -> str:
    """``time`` for ``%time f(x)``; "" for anything else (a cell magic, code)."""
    if not line.startswith("%") or line.startswith("%%"):
        return ""
    return line[1:].split(maxsplit=1)[0] if line[1:].strip() else ""


def _span(statement: ast.stmt) -> set[int]:
    return set(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))


def _is_timer(expression: ast.expr) -> bool:
    if not isinstance(expression, ast.Call):
        return False
    name = dotted_name(expression.func) or ""
    return bool(_TIMER.search(name.rpartition(".")[2]))


def _reads_clock(node: ast.AST) -> bool:
    return any(isinstance(part, ast.Call)
               and (dotted_name(part.func) or "").rpartition(".")[2] in _CLOCKS
               for part in ast.walk(node))


def _between_clocks(body: Sequence[ast.stmt]) -> set[int]:
    """``start = time.perf_counter()`` ... ``elapsed = time.perf_counter() - start``:
    the lines of the statements in between."""
    timed: set[int] = set()
    start: str | None = None
    for statement in body:
        if start is not None:
            uses = any(isinstance(node, ast.Name) and node.id == start
                       for node in ast.walk(statement))
            if uses:
                start = None
                continue
            timed |= _span(statement)
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) \
                and _reads_clock(statement.value):
            start = statement.targets[0].id
    return timed
