"""The standard MyST (mdast) nodes the plugin emits: every mystmd theme renders them."""

from __future__ import annotations

import string
from collections.abc import Iterator
from typing import Any

Node = dict[str, Any]


def text(value: str) -> Node:
    return {"type": "text", "value": value}


def paragraph(*children: Node | str, css: str | None = None) -> Node:
    node: Node = {"type": "paragraph",
                  "children": [text(c) if isinstance(c, str) else c for c in children]}
    if css:
        node["class"] = css
    return node


def sentence(template: str, **parts: Node | str) -> list[Node]:
    """``template`` (a translated ``"Slowest cell: {cell} ..."``) as nodes: its text,
    and each ``{name}`` replaced by ``parts[name]``, a node or a string; so that a
    translation may put the parts in its own order."""
    nodes: list[Node] = []
    for literal, name, _spec, _conversion in string.Formatter().parse(template):
        if literal:
            nodes.append(text(literal))
        if name is not None:
            part = parts[name]
            nodes.append(text(part) if isinstance(part, str) else part)
    return nodes


def link(url: str, label: str) -> Node:
    return {"type": "link", "url": url, "children": [text(label)]}


def strong(value: str) -> Node:
    return {"type": "strong", "children": [text(value)]}


def inline_code(value: str) -> Node:
    return {"type": "inlineCode", "value": value}


def heading(value: str, depth: int = 2) -> Node:
    return {"type": "heading", "depth": depth, "children": [text(value)]}


def list_node(items: list[list[Node]], ordered: bool = False) -> Node:
    return {"type": "list", "ordered": ordered, "spread": False,
            "children": [{"type": "listItem", "spread": False, "children": item}
                         for item in items]}


def table(header: list[str] | None, rows: list[list[Any]], css: str | None = None) -> Node:
    """A table; ``header`` None: no header row (a two-column list of fields); a value is
    a text, a node or a list of them."""

    def cell(value: Node | str | list[Node | str], is_header: bool = False) -> Node:
        parts = value if isinstance(value, list) else [value]
        node: Node = {"type": "tableCell",
                      "children": [text(part) if isinstance(part, str) else part
                                   for part in parts]}
        if is_header:
            node["header"] = True
        return node

    head = [{"type": "tableRow", "children": [cell(h, True) for h in header]}] if header else []
    node: Node = {"type": "table", "children": [
        *head, *({"type": "tableRow", "children": [cell(v) for v in row]} for row in rows)]}
    if css:
        node["class"] = css
    return node


def admonition(title: str, body: list[Node], css: str, kind: str = "warning") -> Node:
    return {"type": "admonition", "kind": kind, "class": css,
            "children": [{"type": "admonitionTitle", "children": [text(title)]}, *body]}


def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.get("children") or []:
        if isinstance(child, dict):
            yield from walk(child)


def has_class(node: Node, name: str) -> bool:
    return name in str(node.get("class") or "").split()
