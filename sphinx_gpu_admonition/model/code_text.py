"""A code cell as Python: its magics removed, parsed, its lines quoted, walked.

The one place that knows how a cell's text becomes Python for the parse
(:mod:`.code` and the modules it calls on): IPython's timing magics keep their
statement, other magics and shell lines become ``pass`` (line numbers stay), a
constant expression gives a whole number, and a statement reads as one line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Sequence

#: the longest line a record quotes (a finding shows where the cell is, not all of it)
CODE_LINE_LENGTH = 120
#: the largest step count worth computing from a constant expression (``10**7``)
MAX_STEPS = 10**15
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")

#: cell magics whose body is the cell's Python code
PYTHON_CELL_MAGICS = ("time", "timeit", "capture", "prun")
#: line magics whose rest of the line is a Python statement that IPython runs
STATEMENT_LINE_MAGICS = ("time", "timeit", "prun")
#: ``-n 10``: a timing magic's option and its value
_MAGIC_OPTION = re.compile(r"-\w+(?:\s+\d+(?=\s|$))?\s*")


def without_magics(source: str) -> str:
    """The cell as Python, line for line: ``%time x = f(1)`` -> ``x = f(1)`` (the rest of
    the line as written, after the magic's options), ``!ls`` and other line magics
    ``pass``; a cell magic of Python (``%%time``) keeps its body, any other cell magic
    is not Python (``""``)."""
    lines = source.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in PYTHON_CELL_MAGICS:
            return ""
        lines[0] = ""
    cleaned = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            indent = line[: len(line) - len(stripped)]
            line = indent + (magic_statement(stripped) or "pass")
        cleaned.append(line)
    return "\n".join(cleaned)


def magic_statement(line: str) -> str:
    """The Python statement of a timing line magic (``%timeit -n 10 f(x)`` -> ``f(x)``);
    "" for any other line magic."""
    name, _, rest = line.lstrip("%").partition(" ")
    if not line.startswith("%") or line.startswith("%%") or name not in STATEMENT_LINE_MAGICS:
        return ""
    rest = rest.lstrip()
    while rest.startswith("-"):
        match = _MAGIC_OPTION.match(rest)
        if match is None:
            break
        rest = rest[match.end():]
    return rest.rstrip()


def parse(source: str) -> ast.Module | None:
    """The cell's syntax tree (:func:`without_magics`), None where it does not parse."""
    try:
        return ast.parse(without_magics(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def int_value(node: ast.AST | None, constants: dict[str, int]) -> int | None:
    """``10_000_000``, ``n``, ``10**7``, ``2 * n``: a whole number, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        value = node.value
    elif isinstance(node, ast.Constant) and isinstance(node.value, float) \
            and node.value.is_integer() and abs(node.value) <= MAX_STEPS:
        value = int(node.value)  # 1e7
    elif isinstance(node, ast.Name):
        value = constants.get(node.id)  # type: ignore[assignment]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "int" and len(node.args) == 1:
        value = int_value(node.args[0], constants)  # type: ignore[assignment]
    elif isinstance(node, ast.BinOp):
        left, right = int_value(node.left, constants), int_value(node.right, constants)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow):
            if right < 0 or right > 64 or abs(left) > 10**6:
                return None
            value = left**right
        elif isinstance(node.op, ast.Mult):
            value = left * right
        elif isinstance(node.op, ast.Add):
            value = left + right
        elif isinstance(node.op, ast.Sub):
            value = left - right
        elif isinstance(node.op, ast.FloorDiv) and right:
            value = left // right
        else:
            return None
    else:
        return None
    if value is None or abs(value) > MAX_STEPS:
        return None
    return value


def source_line(lines: Sequence[str], node: ast.AST) -> str:
    """The line ``node`` starts on, stripped and cut at :data:`CODE_LINE_LENGTH`."""
    number = getattr(node, "lineno", 0)
    line = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return shorten(line)


def shorten(line: str) -> str:
    return line if len(line) <= CODE_LINE_LENGTH else line[: CODE_LINE_LENGTH - 1] + "…"


def dotted_name(node: ast.AST) -> str | None:
    """``np.linalg.eigvals`` for that attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of its compound statements, in source order,
    not those inside nested functions or classes (they run when called)."""
    for statement in body:
        yield statement
        if isinstance(statement, DEFINITIONS):
            continue
        for field in _BODIES:
            children = getattr(statement, field, None) or []
            for child in children:
                if isinstance(child, ast.stmt):
                    yield from statements([child])
                else:  # an except handler, a match case
                    yield from statements(getattr(child, "body", []))


def child_bodies(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists a compound statement holds: its body, ``else``, ``finally``
    and each ``except`` handler's body, in source order."""
    for field in ("body", "orelse", "finalbody"):
        yield getattr(statement, field, None) or []
    for handler in getattr(statement, "handlers", None) or []:
        yield handler.body


def expressions(statement: ast.stmt) -> Iterator[ast.AST]:
    """The expression nodes of one statement itself (not of the statements it holds,
    nor inside lambdas and nested functions), in source order."""
    stack: list[ast.AST] = []
    for field, value in reversed(list(ast.iter_fields(statement))):
        if field in _BODIES or field == "decorator_list":
            continue
        items = value if isinstance(value, list) else [value]
        stack.extend(item for item in reversed(items) if isinstance(item, ast.AST))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            continue
        yield node
        if isinstance(node, ast.Lambda):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def statement_text(node: ast.AST, lines: Sequence[str]) -> str:
    """A statement (or the lines of any node) on one line: a compound statement's
    header, a simple statement's lines joined (continuations and the spaces inside
    brackets at line ends removed), cut at :data:`CODE_LINE_LENGTH`."""
    first = getattr(node, "lineno", 0)
    if not 0 < first <= len(lines):
        return ""
    last = getattr(node, "end_lineno", None) or first
    body = getattr(node, "body", None)
    if isinstance(node, ast.stmt) and isinstance(body, list) and body:
        last = max(first, body[0].lineno - 1)  # a loop's or a with's header
    text = ""
    for part in (line.strip() for line in lines[first - 1:last]):
        part = part[:-1].rstrip() if part.endswith("\\") else part
        if not part or part.startswith("#"):
            continue
        text = part if not text else (
            text + part if text.endswith(("(", "[", "{")) or part.startswith((")", "]", "}"))
            else f"{text} {part}")
    return shorten(text)
