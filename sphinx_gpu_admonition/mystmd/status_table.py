"""The parts of the mystmd status page that the Sphinx page has, as far as mdast
carries them, from the same data: the summary line, the slowest notebook, the
headline against the baseline, the notebooks over their budget and the findings about
the whole build (:mod:`..render.status_rows`, :mod:`..model.findings`); the table of
notebooks (the Sphinx table's columns and values, :func:`..render.status_rows.plain_text`,
and its totals row); and under it, collapsed, each notebook's details: the columns
the table does not show, its error, its flagged cells and every cell
(:func:`..render.status_html.cells_data`, what the Sphinx page's script shows).

The notebooks link to their pages and cells where mystmd linked the pages
(:mod:`.page_links`); a notebook's details and each flagged cell's line carry the
Sphinx page's ids (``html_id``), which the themes write as ``id``.
"""

from __future__ import annotations

from typing import Any

from ..model.analysis import BuildAnalysis
from ..model.findings import budget_findings, headline
from ..model.formatting import format_seconds
from ..render.finding_text import FindingText
from ..render.labels import Labels
from ..render.status_html import cell_labels, cells_data
from ..render.status_rows import StatusOptions, StatusRows, plain_text, status_rows
from . import mdast
from .page_links import PageLink

SUMMARY_CLASS = "gpu-status-summary"
DETAILS_CLASS = "gpu-status-details"


def rows(analysis: BuildAnalysis, labels: Labels, links: dict[str, PageLink],
         options: StatusOptions | None = None) -> StatusRows:
    """The Sphinx table's rows of ``analysis`` (the directive's ``options``: columns,
    order, the notebooks left out, the cells; ids on; the pages mystmd linked by their
    URL)."""
    options = options or StatusOptions()
    return status_rows(analysis, options, labels,
                       lambda docname: links[docname].url if docname in links else None,
                       with_cells=options.cells)


def first_screen(table: StatusRows) -> list[mdast.Node]:
    """The summary line and the slowest notebook (above the findings, as on Sphinx)."""
    nodes = [mdast.paragraph(table.summary, css=SUMMARY_CLASS)]
    if table.slowest:
        nodes.append(mdast.paragraph(table.slowest, css="gpu-status-slowest"))
    return nodes


def build_findings(analysis: BuildAnalysis, labels: Labels,
                   links: dict[str, PageLink]) -> list[mdast.Node]:
    """The headline against the baseline, the notebooks over their budget and the
    findings about the whole build, before the flagged cells (as on Sphinx)."""
    words = FindingText.of(labels)
    nodes: list[mdast.Node] = []
    summary = headline(analysis)
    if summary is not None:
        nodes.append(mdast.paragraph(mdast.strong(words.headline(summary)),
                                     css="gpu-status-headline"))
    over = budget_findings(analysis)
    if over:
        nodes.append(mdast.paragraph(labels.budget_title(len(over))))
        items = []
        for row in over:
            record = row.notebook
            link = links.get(record.docname)
            name = record.title or record.docname
            text = labels.budget_item.format(notebook="\0", time=format_seconds(row.seconds),
                                             budget=format_seconds(row.budget_seconds))
            before, _, after = text.partition("\0")
            items.append([mdast.paragraph(before, link.node(name) if link else name, after)])
        nodes.append(mdast.list_node(items))
    for flag in analysis.build_flags:
        nodes.append(mdast.paragraph(mdast.strong(labels.whole_build),
                                     f" {words.reason(flag)}"))
        nodes.append(mdast.paragraph(mdast.strong(labels.action),
                                     f" {words.rule_action(flag)}"))
    return nodes


def _name_cell(row: dict[str, Any], links: dict[str, PageLink]) -> list[mdast.Node]:
    link = links.get(row["docname"]) if not row["gone"] else None
    title = link.title if link is not None and link.title and not row["title"] else row["title"]
    name: list[mdast.Node] = [link.node(title) if link is not None else mdast.text(title)]
    if title != row["docname"]:
        name += [{"type": "break"}, mdast.inline_code(row["docname"])]
    return name


def table_node(table: StatusRows, links: dict[str, PageLink]) -> mdast.Node:
    """The table of notebooks, its totals row last."""
    body: list[list[Any]] = [
        [_name_cell(row, links), *(plain_text(row["values"][column.key])
                                   for column in table.columns[1:])]
        for row in table.rows]
    totals = table.totals
    body.append([totals["label"], *(str(totals["texts"][column.key])
                                    for column in table.columns[1:])])
    return mdast.table([column.label for column in table.columns], body,
                       css="gpu-status-table")


def _cell_table(entry: dict[str, Any], labels: Labels, link: PageLink | None
                ) -> mdast.Node:
    """A notebook's cells as the Sphinx page's script shows them (its texts)."""
    texts = cell_labels(labels)
    comparing = entry.get("cmp") == 1
    header = [texts["cell"], texts["time"], texts["share"], texts["compile"], texts["source"],
              texts["flags"]]
    if comparing:
        header += [texts["baseline"], texts["ratio"]]
    body: list[list[Any]] = []
    for cell in entry["c"]:
        name: list[mdast.Node] = [link.node(cell["m"], cell["a"]) if link is not None
                                  and cell.get("a") else mdast.text(cell["m"])]
        if cell.get("e"):
            error = (texts["expected"].replace("{error}", cell["e"]) if cell.get("x")
                     else cell["e"])
            name.append(mdast.text(f" ({error})"))
        compiled = cell.get("k", "–") + (f" · {cell['n']}" if cell.get("n") else "")
        flags = labels.translate("; ").join(f"{texts['flag'].get(rule, rule)}: {reason}"
                                             for rule, reason in cell.get("f", []))
        values: list[Any] = [name, cell["t"], cell["p"], compiled,
                             mdast.inline_code(cell["l"]), flags]
        if comparing:
            values += ([cell["b"], cell["r"]] if "b" in cell else [texts["new"], "–"])
        body.append(values)
    for gone in entry.get("g", []):
        body.append([f"#{gone['i']} {texts['gone']}", gone["t"], "–", "–",
                     mdast.inline_code(gone["l"]), "", *(["", ""] if comparing else [])])
    return mdast.table(header, body, css="gpu-status-cell-table")


def details_nodes(table: StatusRows, analysis: BuildAnalysis, labels: Labels,
                  links: dict[str, PageLink]) -> list[mdast.Node]:
    """Each notebook's details, collapsed, in the table's order, in a ``div`` with its
    row's id."""
    cells = cells_data(analysis, labels)["nb"]
    nodes = []
    for row in table.rows:
        details = row["details"]
        if details is None:
            continue
        link = links.get(row["docname"]) if not row["gone"] else None
        body: list[mdast.Node] = []
        if details["cache_miss"]:
            body.append(mdast.paragraph(details["cache_miss"]))
        error = details["error"]
        if error is not None:
            body.append(mdast.paragraph(mdast.strong(error["type"]), f"{error['where']}: ",
                                        mdast.inline_code(error["message"])))
        if details["flagged"]:
            body.append(mdast.list_node([[mdast.paragraph(
                {"type": "span", "html_id": cell["ident"], "children": [
                    link.node(cell["label"], cell["href"].partition("#")[2])
                    if link is not None and cell["href"] else mdast.text(cell["label"])]},
                f": {cell['time']} — {cell['names']}")] for cell in details["flagged"]]))
        if table.facts:
            body.append({"type": "definitionList", "children": [
                part for key in table.facts for part in (
                    {"type": "definitionTerm",
                     "children": [mdast.text(table.labels_of[key])]},
                    {"type": "definitionDescription", "children": [
                        mdast.text(plain_text(row["values"][key]))]})]})
        entry = cells.get(row["docname"])
        if details["cells"] and entry is not None:
            body.append(_cell_table(entry, labels, link))
        summary = {"type": "summary", "children": [mdast.text(details["summary"])]}
        container: mdast.Node = {"type": "div", "class": DETAILS_CLASS, "children": [
            {"type": "details", "children": [summary, *body]}]}
        if row["ident"]:
            container["html_id"] = row["ident"]
        nodes.append(container)
    return nodes
