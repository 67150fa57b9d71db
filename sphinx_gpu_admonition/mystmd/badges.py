"""Anchors and badges on a notebook's page on mystmd, as on Sphinx (``ext/cell_badges.py``).

The document stage gives the block of every executed cell the id the status page
links to (``html_id``: ``cell-<index>``, :attr:`..model.record.CellName.anchor`; a
block the author labelled keeps its label), which the themes write as the block's
``id``. With ``cell_badges``, the project stage (once the build's one analysis is
made) puts a badge above each flagged cell: a ``div`` inside the cell's block, first,
whose words are the Sphinx badge's (:func:`..render.badges.badge_text`) and whose
reasons are the tooltip of an ``abbreviation``, linking to the cell's line on the
status page where mystmd linked that page.
"""

from __future__ import annotations

from ..model.analysis import NotebookAnalysis
from ..model.record import NotebookRecord
from ..render.badges import badge_text
from ..render.labels import Labels
from ..render.status_rows import flagged_cell_id, share
from . import mdast
from .cells import executable_nodes
from .page_links import PageLink

BADGE_CLASS = "gpu-cell-badge"


def anchor_cells(tree: mdast.Node, record: NotebookRecord) -> None:
    """Document stage: each executed cell's block gets its anchor as its ``html_id``."""
    blocks = {node.index: node.block for node in executable_nodes(tree)
              if node.block is not None and node.index is not None}
    for cell, name in zip(record.cells, record.cell_names(), strict=True):
        block = blocks.get(cell.index) if cell.index is not None else None
        if block is not None and name.anchor and not block.get("html_id"):
            block["html_id"] = name.anchor


def add_badges(tree: mdast.Node, result: NotebookAnalysis, labels: Labels,
               status_page: PageLink | None = None) -> int:
    """Project stage: a badge in the block of each flagged cell of ``result`` (its
    notebook's analysis); the number of badges."""
    record = result.notebook
    flagged = {record.cell_name(cell).anchor: (cell, flags)
               for cell, flags in result.flagged_cells}
    added = 0
    for node in mdast.walk(tree):
        if node.get("type") != "block" or node.get("html_id") not in flagged:
            continue
        children = node.setdefault("children", [])
        if children and mdast.has_class(children[0], BADGE_CLASS):
            continue  # a badge of an earlier call
        cell, flags = flagged[node["html_id"]]
        words = badge_text(cell.seconds, share(cell.seconds, record.cells_seconds), flags,
                           labels)
        content: list[mdast.Node] = [{"type": "abbreviation", "title": words.reasons,
                                      "children": [mdast.text(words.text)]}]
        if status_page is not None:
            content = [status_page.node(words.text, flagged_cell_id(
                record.docname, record.cell_number(cell))), mdast.text(" "),
                {"type": "abbreviation", "title": words.reasons,
                 "children": [mdast.text(labels.badge_where)]}]
        rules = " ".join(f"{BADGE_CLASS}-{flag.rule}" for flag in flags)
        children.insert(0, {"type": "div", "class": f"{BADGE_CLASS} {rules}",
                            "children": [mdast.paragraph(*content)]})
        added += 1
    return added
