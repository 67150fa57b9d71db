"""Finding the extension's block nodes in a page's doctree without walking its text.

Every node the extension looks for in a page is a body element: a ``{gpu}`` notice,
MyST-NB's code cell containers, the placeholders of the "executed on" box, the
status table and the environment table. A text element (a paragraph, a title, a
literal block, a math block) holds inline nodes only, and those are most of a page's
nodes, so :func:`block_nodes` does not walk into them (a page had five or six
walks of every node, as ``findall`` makes them: the CHANGELOG has their cost).

Inline nodes (the ``{runtime}`` and timing roles' placeholders) are not found here:
their roles note their pages while the page is parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from docutils import nodes


def block_nodes(doctree: nodes.Node, match: Callable[[nodes.Node], bool], *,
                enter_matches: bool = True) -> Iterator[nodes.Element]:
    """The nodes of ``doctree`` that ``match``, in document order, as
    ``doctree.findall(match)`` finds them among the body elements; with
    ``enter_matches`` false, none inside a match (a code cell holds no other)."""
    pending: list[nodes.Node] = [doctree]
    while pending:
        node = pending.pop()
        if match(node):
            yield node  # type: ignore[misc]
            if not enter_matches:
                continue
        if isinstance(node, nodes.TextElement):
            continue
        children = getattr(node, "children", None)
        if children:
            pending.extend(reversed(children))


def blocks_of(doctree: nodes.Node, kind: type[nodes.Element]) -> list[nodes.Element]:
    """The nodes of one class (a block placeholder) in ``doctree``, in order."""
    return list(block_nodes(doctree, lambda node: isinstance(node, kind)))


#: the class of every ``{gpu}`` notice (``admonition.GpuDirective``), which the other
#: features find the notices by
NOTICE_CLASS = "gpu-admonition"


def _is_notice(node: nodes.Node) -> bool:
    return isinstance(node, nodes.admonition) and NOTICE_CLASS in node["classes"]


def notices(doctree: nodes.Node) -> list[nodes.Element]:
    """The page's ``{gpu}`` notices, in order."""
    return list(block_nodes(doctree, _is_notice))
