"""Anchors and badges on notebook pages (HTML only).

Each code cell container gets an anchor ``id="cell-<index>"`` (the status page and
the findings link to it) and, with ``gpu_cell_badges``, each flagged cell of the
build's analysis a badge (:mod:`..render.badges`) linking to the cell's line on the
status page.  Cells that only run shell commands get no flags in the analysis, so
no badge either.  MyST-NB's node attributes are read through :mod:`._mystnb`.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

from ..model.record import cell_anchor
from ..render.badges import badge_html
from ..render.labels import Labels
from ..render.status_rows import flagged_cell_id, share
from ._mystnb import code_cell_nodes
from .build_analysis import notebook_analysis
from .config import get_config
from .i18n import ngettext, translate
from .support import add_assets, app_of, link_target


class CellAnchorsAndBadges(SphinxPostTransform):
    """HTML notebook pages: ``id="cell-<index>"`` on code cells, a badge on flagged ones."""

    default_priority = 400
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        docname = self.env.docname
        app = app_of(self.env)
        result = notebook_analysis(app, docname)
        if result is None:
            return
        cells = list(code_cell_nodes(self.document))
        if not cells:
            return
        for node, index in cells:
            anchor = cell_anchor(index)
            if anchor not in node["ids"] and anchor not in self.document.ids:
                node["ids"].append(anchor)
                self.document.ids[anchor] = node
        flagged = {cell.index: flags for cell, flags in result.flagged_cells
                   if cell.index is not None}
        if not flagged:
            return
        add_assets(self.document, "css")  # the findings link here: the cell is highlighted
        if get_config(app).cell_badges:
            self._add_badges(app, docname, result, cells, flagged)

    def _add_badges(self, app: Sphinx, docname: str, result: Any,
                    cells: list[tuple[nodes.Element, int]], flagged: dict[int, Any]) -> None:
        record = result.notebook
        target = link_target(self.env)
        href = app.builder.get_relative_uri(docname, target) if target is not None else None
        labels = Labels.load(translate, ngettext)
        by_index = {cell.index: cell for cell in record.cells}
        for node, index in cells:
            flags = flagged.get(index)
            if not flags:
                continue
            cell = by_index[index]
            cell_href = href and f"{href}#{flagged_cell_id(docname, record.cell_number(cell))}"
            node.insert(0, nodes.raw("", badge_html(
                cell.seconds, share(cell.seconds, record.cells_seconds), flags, cell_href,
                labels), format="html"))


def setup_cell_badges(app: Sphinx) -> None:
    app.add_post_transform(CellAnchorsAndBadges)
