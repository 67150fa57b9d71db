"""A page's code cells as mystmd executes them, read from its mdast.

mystmd executes every code block of a page, wherever it is nested (the cells of a
gated ``{solution-start}`` ... ``{solution-end}`` or ``{exercise-start}`` end up inside
the ``solution`` / ``exercise`` node, those of an ``{exercise}`` directive inside it),
and its inline expressions, in document order, skipping the blocks tagged
``skip-execution`` (myst-execute's ``getExecutableNodes``: ``selectAll`` of
``block[kind=notebook-code],inlineExpression``). The execution cache's key is built
from the same list (``buildCacheKey``). The document-stage transforms see the tree
after mystmd nested the gated blocks, which keeps their order.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

from ..model.cell_lines import code_start_line, fence_lines
from ..model.enrich import PageCell
from .mdast import walk

#: the notebook cell kind of a code block in mystmd's mdast
CODE_BLOCK = "notebook-code"
#: mystmd's tag of a code block it does not execute
SKIP_EXECUTION = "skip-execution"
#: the kernel name assumed for the cache key (mystmd's default kernel)
DEFAULT_KERNEL = "python3"


class Executable(NamedTuple):
    """One node mystmd executes, as its cache key names it."""

    #: ``block`` (a code cell) or ``inlineExpression``
    kind: str
    content: str
    raises: bool
    #: the code block's node (None for an inline expression)
    block: dict[str, Any] | None = None
    #: the block's number among the page's ``block`` nodes, in document order (its index)
    index: int | None = None
    #: the block's number among the page's code blocks, skipped ones included (the n-th
    #: ``{code-cell}`` fence of the page's source)
    fence: int | None = None


def _tags(block: dict[str, Any]) -> tuple[str, ...]:
    found = (block.get("data") or {}).get("tags") if isinstance(block.get("data"), dict) else None
    return tuple(tag for tag in found or () if isinstance(tag, str))


def _code(block: dict[str, Any]) -> str:
    return next((str(n.get("value", "")) for n in walk(block) if n.get("type") == "code"), "")


def executable_nodes(tree: dict[str, Any]) -> list[Executable]:
    """What mystmd executes on the page, in its order."""
    found = []
    blocks = fences = 0
    for node in walk(tree):
        kind = node.get("type")
        if kind == "inlineExpression":
            found.append(Executable(kind, str(node.get("value", "")), False))
            continue
        if kind != "block":
            continue
        blocks += 1
        if node.get("kind") != CODE_BLOCK:
            continue
        fences += 1
        tags = _tags(node)
        if SKIP_EXECUTION not in tags:
            found.append(Executable("block", _code(node), "raises-exception" in tags, node,
                                    blocks - 1, fences - 1))
    return found


def cache_key(nodes: list[Executable], kernel: str = DEFAULT_KERNEL) -> str:
    """mystmd's execution-cache key of a page (myst-execute ``buildCacheKey``) for
    pages without ``depends_on_env``: the sidecar's name."""
    items = [{"kind": n.kind, "content": n.content, "raisesException": n.raises}
             for n in nodes]
    text = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    return hashlib.md5(kernel.encode("utf-8") + text.encode("utf-8")).hexdigest()


def page_lines(page: Path) -> list[str]:
    """The lines of a MyST Markdown page (none for a ``.ipynb`` page: a line of its
    JSON means nothing to a reader, nor for a page that cannot be read)."""
    if page.suffix == ".ipynb":
        return []
    try:
        return page.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _outputs(block: dict[str, Any]) -> tuple[str, str | None]:
    """(what the cell printed and returned as text, the traceback of its error)."""
    texts, traceback = [], None
    for node in walk(block):
        data = node.get("jupyter_data") if node.get("type") == "output" else None
        if not isinstance(data, dict):
            continue
        kind = data.get("output_type")
        if kind == "stream" and data.get("name", "stdout") == "stdout":
            texts.append(_text(data.get("text")))
        elif kind in ("execute_result", "display_data") and isinstance(data.get("data"), dict):
            if "text/plain" in data["data"]:
                texts.append(_text(data["data"]["text/plain"]))
        elif kind == "error" and traceback is None:
            lines = data.get("traceback")
            traceback = ("\n".join(map(str, lines)) if isinstance(lines, list)
                         else str(lines or "")) or f"{data.get('ename')}: {data.get('evalue')}"
    return "\n".join(texts), traceback


def _text(value: Any) -> str:
    return "".join(map(str, value)) if isinstance(value, list) else str(value or "")


def page_cells(tree: dict[str, Any], page: Path | None = None) -> list[PageCell]:
    """The page's executed code cells for :func:`..model.enrich.enrich`: a cell's
    position counts the cells with code (IPython gives an empty cell no execution
    count), its line is its fence's in ``page`` when the page's fences are the tree's
    code blocks (an ``{include}``d file's cells are not)."""
    nodes = executable_nodes(tree)
    source = page_lines(page) if page is not None else []
    fences = fence_lines(source)
    blocks = sum(1 for node in walk(tree)
                 if node.get("type") == "block" and node.get("kind") == CODE_BLOCK)
    cells = []
    position = 0
    for node in nodes:
        if node.block is None:
            continue
        outputs, traceback = _outputs(node.block)
        line = (fences[node.fence] if node.fence is not None and len(fences) == blocks
                and node.fence < len(fences) else None)
        cells.append(PageCell(position=position if node.content.strip() else None,
                              index=node.index, source=node.content,
                              tags=_tags(node.block), line=line,
                              code_line=(code_start_line(source, line, node.content)
                                         if line is not None else None),
                              outputs=outputs,
                              traceback=traceback))
        position += bool(node.content.strip())
    return cells
