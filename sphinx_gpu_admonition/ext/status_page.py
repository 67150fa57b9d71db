"""The ``{execution-status}`` directive: the book's execution status page.

A drop-in replacement for MyST-NB's ``{nb-exec-table}``, fed by the execution
records and the build's one analysis (:mod:`.build_analysis`).

Flow, the same as MyST-NB's table (see the notes on the execution pipeline):

1. read time: the directive leaves a builder-neutral placeholder node and
   notes its page (:func:`.support.status_pages`, :func:`table_pages`;
   :class:`StatusPagesCollector` merges and purges them);
2. ``env-updated`` (main process): the baseline is loaded once, the records are
   analysed once, the opt-in ``slow_cell`` / ``regression`` warnings are emitted
   once, and the pages with the directive are returned whenever any record
   changed, was added or was removed (a deleted notebook leaves the table), or the
   baseline file changed;
3. post-transforms at resolve time fill the placeholder from the analysis: HTML
   builders get the findings and a sortable table (:mod:`..render.status_html`,
   priority 7) and, beside the page, the JSON files of every notebook's cells
   (:func:`write_cells_data`); every other builder gets the same findings and a
   plain docutils table of the same rows (:mod:`..render.status_rows`,
   :func:`status_table_nodes`, priority 8, before reference resolution at 10).

The anchors and badges on notebook pages are :mod:`.cell_badges`.  The texts are
:class:`..render.labels.Labels`, through the extension's message catalog.

JavaScript (``static/gpu-status.js``) and CSS (``static/gpu-status.css``) are
added by ``html-page-context`` only to pages that contain a table or a badge.
The page is complete without JavaScript (every notebook is a sorted row linked
to its page, where the cells are); the script sorts and filters the rows, and
renders a notebook's cells from the JSON file when its details are opened, so
that a book of 1,000 notebooks x 50 cells gives a page of about 2.2 MB, not tens
of megabytes (settings and texts come from ``data-`` attributes).
"""

from __future__ import annotations

import glob
import hashlib
import re
import urllib.parse
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ..model.analysis import BuildAnalysis
from ..model.files import atomic_write
from ..model.findings import budget_findings, findings, flagged_and_notes, headline
from ..model.formatting import format_seconds
from ..render.finding_text import FindingText, code_spans
from ..render.labels import Labels
from ..render.status_html import (
    cells_data_files,
    cells_file_name,
    compact_json,
    render_html,
)
from ..render.status_rows import StatusOptions, parse_options, plain_text, status_rows
from .blocks import blocks_of
from .build_analysis import (
    baseline_digest,
    build_analysis,
    emit_warnings,
    file_analysis,
    forget_analysis,
    get_baseline,
    thresholds,
)
from .capture import stored_records
from .changes import records_changed
from .i18n import ngettext, translate
from .state import env_data
from .support import (
    NonHtmlPostTransform,
    add_assets,
    app_of,
    html_tree_may_hold,
    in_download_notebook,
    link_target,
    notebook_table_text,
    status_pages,
)
from .warnings import warn

logger = logging.getLogger(__name__)

#: env attributes (plain data, pickled with the environment)
TABLE_PAGES = "gpu_status_table_pages"  # docnames with any {execution-status} table
_LINK_TARGET = "gpu_status_link_target"  # status page the badges linked to last build
_BASELINE_DIGEST = "gpu_status_baseline_digest"
_THRESHOLDS = "gpu_status_thresholds"  # the flagging limits the last build judged by


def labels() -> Labels:
    """The texts in the book's language (call at build time)."""
    return Labels.load(translate, ngettext)


# -- the placeholder and the directive --------------------------------------------
class execution_status_placeholder(nodes.container):  # noqa: N801 - docutils node style
    """Where a status table goes; replaced by a post-transform for every builder.

    It subclasses ``container`` so that any writer that meets it (it should not)
    renders an empty block instead of failing.
    """


def table_pages(env: BuildEnvironment) -> set[str]:
    """The pages with a status table, of this build or of a status file: the pages
    whose HTML the post-transform walks for one (:func:`.support.html_tree_may_hold`)."""
    return env_data(env, TABLE_PAGES, set)


class ExecutionStatusDirective(SphinxDirective):
    """``{execution-status}``: the execution status table of all notebooks of the book."""

    has_content = False
    option_spec = {
        # validated by parse_options, so that a bad value warns and uses the default
        "sort": directives.unchanged,
        "min-seconds": directives.unchanged,
        "cells": directives.unchanged,
        "columns": directives.unchanged,
        # a status file (and its baseline) instead of this build: examples, other builds
        "status-file": directives.unchanged_required,
        "baseline-file": directives.unchanged_required,
        "class": directives.class_option,
        "name": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        location = self.get_location()
        options = parse_options(
            self.options, lambda message: warn(logger, f"execution-status: {message}",
                                               "directive", location=location))
        node = execution_status_placeholder(
            classes=["gpu-execution-status", *self.options.get("class", [])])
        node["gpu_status_options"] = options._asdict()
        for option in ("status-file", "baseline-file"):
            if option in self.options:
                _relative, path = self.env.relfn2path(self.options[option], self.env.docname)
                self.env.note_dependency(path)
                node[f"gpu_{option.replace('-', '_')}"] = path
        table_pages(self.env).add(self.env.docname)
        if "gpu_status_file" not in node:
            pages = status_pages(self.env)
            # a page is a link target for badges when its tables list every notebook
            # with its cells (see link_target)
            complete = options.cells and not options.min_seconds
            pages[self.env.docname] = pages.get(self.env.docname, True) and complete
        self.set_source_info(node)
        self.add_name(node)
        return [node]


class StatusPagesCollector(EnvironmentCollector):
    """The pages with the directive (the directive notes its page itself)."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        status_pages(env).pop(docname, None)
        table_pages(env).discard(docname)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: set[str],
                    other: BuildEnvironment) -> None:
        mine, theirs = status_pages(env), status_pages(other)
        for docname in docnames & theirs.keys():
            mine[docname] = theirs[docname]
        table_pages(env).update(table_pages(other) & docnames)

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        """Nothing to collect from the doctree: the directive notes its page."""


# -- which pages to rewrite --------------------------------------------------------
def _env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    get_baseline(app)  # read once here, so that write processes inherit it
    forget_analysis(app)
    build_analysis(app)  # the records are final: analyse them once for the whole build
    rewrite: set[str] = set()
    digest = baseline_digest(app)
    baseline_changed = getattr(env, _BASELINE_DIGEST, None) != digest
    setattr(env, _BASELINE_DIGEST, digest)
    # the flagging limits are registered to read no page again (model.settings._JUDGED):
    # what shows the judgement is rewritten here, also for builders other than HTML
    limits = tuple(thresholds(app))
    judged_again = getattr(env, _THRESHOLDS, None) != limits
    setattr(env, _THRESHOLDS, limits)
    if records_changed(app, env) or baseline_changed:
        rewrite.update(status_pages(env).keys())
    if judged_again:  # the tables of status files too
        rewrite.update(table_pages(env))
    target = link_target(env)
    if baseline_changed or judged_again or getattr(env, _LINK_TARGET, None) != target:
        # the badges of notebook pages show the flags and link to the status page
        rewrite.update(stored_records(env))
    setattr(env, _LINK_TARGET, target)
    emit_warnings(app)
    return sorted(rewrite & env.found_docs)


# -- docutils table for other builders --------------------------------------------
def _entry(*children: nodes.Node | str) -> nodes.entry:
    paragraph = nodes.paragraph()
    for child in children:
        paragraph += nodes.Text(child) if isinstance(child, str) else child
    return nodes.entry("", paragraph)


def _doc_link(fromdoc: str, docname: str, text: str) -> nodes.Node:
    link = addnodes.pending_xref("", refdoc=fromdoc, reftarget="/" + docname, reftype="doc",
                                 refdomain="std", refexplicit=True, refwarn=False)
    link += nodes.inline(text=text)
    return link


def status_table_nodes(analysis: BuildAnalysis, options: StatusOptions, fromdoc: str,
                       known_docs: set[str], table_id: str = "gpu-status-1",
                       notebook: bool = False) -> list[nodes.Node]:
    """The same columns and values as the HTML table (:func:`.status_rows.status_rows`),
    as a plain docutils table for any builder, after the findings.

    ``notebook``: for sphinx-tojupyter, which writes a table as a Markdown pipe table
    but a link inside it before the table (the header line began with one empty
    link per notebook): the titles are text, and a ``|`` in a value is escaped.
    """
    lb = labels()
    cell_text = notebook_table_text if notebook else str
    table_rows = status_rows(analysis, options, lb, row_ids=False)
    columns = table_rows.columns
    table = nodes.table(classes=["gpu-status-plain", "colwidths-auto"], ids=[table_id])
    table += nodes.title(text=lb.caption)
    group = nodes.tgroup(cols=len(columns))
    table += group
    # relative widths (the text builder takes them as characters)
    for column in columns:
        group += nodes.colspec(colwidth=24 if column.key in ("name", "device", "time") else 14)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for column in columns:
        row += _entry(cell_text(column.label))
    head += row
    body = nodes.tbody()
    group += body
    for data in table_rows.rows:
        row = nodes.row()
        docname = data["docname"]
        row += _entry(_doc_link(fromdoc, docname, data["title"])
                      if docname in known_docs and not data["gone"] and not notebook
                      else nodes.Text(cell_text(data["title"])))
        for column in columns[1:]:
            row += _entry(cell_text(plain_text(data["values"][column.key])))
        body += row
    totals = table_rows.totals
    row = nodes.row()
    row += _entry(cell_text(totals["label"]))
    for column in columns[1:]:
        row += _entry(cell_text(str(totals["texts"][column.key])))
    body += row
    result_nodes: list[nodes.Node] = [table]
    if notebook:  # a Markdown table ends at a blank line, else it takes the next line
        result_nodes.append(nodes.paragraph())
    if table_rows.hidden:
        result_nodes.append(nodes.paragraph(text=lb.hidden_text(
            table_rows.hidden, format_seconds(options.min_seconds))))
    first: list[nodes.Node] = []
    if table_rows.slowest:  # what a deploy's time goes to, as on the HTML page
        first.append(nodes.paragraph(text=table_rows.slowest, classes=["gpu-status-slowest"]))
    over = budget_findings(analysis)
    if over:
        first.append(nodes.paragraph(text=lb.budget_title(len(over))))
        items = nodes.bullet_list(classes=["gpu-status-budget-list"])
        for row in over:
            items += nodes.list_item("", nodes.paragraph(text=lb.budget_item.format(
                notebook=row.notebook.title or row.notebook.docname,
                time=format_seconds(row.seconds), budget=format_seconds(row.budget_seconds))))
        first.append(items)
    return first + _findings_nodes(analysis, lb) + result_nodes


def _prose(label: str, sentence: str) -> nodes.paragraph:
    """``Why: runs `qm_jax` ...`` as a paragraph, its backticked code as literals."""
    paragraph = nodes.paragraph(text=f"{label} ")
    for piece, code in code_spans(sentence):
        paragraph += nodes.literal(text=piece) if code else nodes.Text(piece)
    return paragraph


def _findings_nodes(analysis: BuildAnalysis, lb: Labels) -> list[nodes.Node]:
    """The headline and the flagged cells (why, what to do) before the plain table, as
    on the HTML page; no links to cells (anchors are HTML only)."""
    result: list[nodes.Node] = []
    words = FindingText.of(lb)
    summary = headline(analysis)
    if summary is not None:
        result.append(nodes.paragraph(text=words.headline(summary),
                                     classes=["gpu-status-headline"]))
    for flag in analysis.build_flags:
        result.append(_prose(lb.whole_build, words.reason(flag)))
        result.append(_prose(lb.action, words.rule_action(flag)))
    items = nodes.enumerated_list(classes=["gpu-status-flagged-cells"])
    rows = findings(analysis)
    for finding in rows:
        record = finding.notebook
        names = lb.flag_names(finding.rules)
        where = (f"{record.title or record.docname}, {lb.cell_label(finding.name)} "
                 f"({format_seconds(finding.seconds)}, {finding.device or lb.no_capture}): "
                 f"{names}.")
        item = nodes.list_item()
        item += nodes.paragraph(text=where)
        if finding.code:  # as the HTML findings: the code, then compile against run
            item += nodes.paragraph("", "", nodes.literal(text=finding.code_text()))
        timing = words.timing(finding)
        if timing:
            item += nodes.paragraph(text=timing)
        item += _prose(lb.why, words.finding_reason(finding))
        action = words.finding_action(finding)
        if action:  # a slow-ok cell has none: no empty "What to do:"
            item += _prose(lb.action, action)
        items += item
    if len(items):
        # a note (slow-ok, imports) is listed after the flagged cells, not counted
        count = len(flagged_and_notes(rows)[0])
        result.append(nodes.paragraph(text=lb.ngettext(
            "%d flagged cell, slowest first", "%d flagged cells, slowest first", count) % count
            if count else lb.no_flagged))
        result.append(items)
    return result


# -- post-transforms ----------------------------------------------------------------
def _options_of(node: nodes.Element) -> StatusOptions:
    return StatusOptions(**node.get("gpu_status_options", {}))


#: the files of per-cell data after the first: ``status.gpu-cells-1.json`` ...
_NUMBERED_CELLS_FILE = re.compile(r"\.gpu-cells-(\d+)\.json")


def write_cells_data(builder: Any, docname: str,
                     analysis: BuildAnalysis) -> list[str] | None:
    """Write :func:`cells_data_files` beside the page of ``docname``; their URLs from
    the page, in order.

    Written here, in the main process, together with the page that uses them; a
    file left untouched when unchanged, files of an earlier build with more
    notebooks removed.  A URL carries a digest of the content, so that a browser
    never shows the cells of an older build.  None (no per-cell details) for
    builders without an output file per page, for packaged HTML (EPUB, HTML help:
    ``embedded``; EPUB would warn about the unknown file type), or when they cannot
    be written.
    """
    get_outfilename = getattr(builder, "get_outfilename", None)
    if get_outfilename is None or getattr(builder, "embedded", False) or not analysis.notebooks:
        return None
    page = Path(get_outfilename(docname))
    urls = []
    try:
        for number, data in enumerate(cells_data_files(analysis, labels())):
            path = page.with_name(cells_file_name(page.stem, number))
            text = compact_json(data)
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, text)
            digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
            urls.append(f"{urllib.parse.quote(path.name)}?v={digest}")
        for stale in page.parent.glob(glob.escape(page.stem) + ".gpu-cells-*.json"):
            numbered = _NUMBERED_CELLS_FILE.fullmatch(stale.name[len(page.stem):])
            if numbered and int(numbered.group(1)) >= len(urls):
                stale.unlink()
    except OSError as error:
        warn(logger, f"could not write the per-cell data of the status page: {error}",
             "output", location=docname)
        return None
    return urls


class StatusTableToHtml(SphinxPostTransform):
    """HTML builders: the sortable table with per-cell details, as escaped markup."""

    default_priority = 7
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        if not html_tree_may_hold(self.env, self.env.docname, table_pages(self.env)):
            return
        placeholders = blocks_of(self.document, execution_status_placeholder)
        if not placeholders:
            return
        app = app_of(self.env)
        builder = app.builder
        fromdoc = self.env.docname
        known = self.env.all_docs
        analysis = build_analysis(app)

        def page_uri(docname: str) -> str | None:
            if docname not in known:
                return None
            return builder.get_relative_uri(fromdoc, docname)

        texts = labels()
        cells_src = None
        if any(_options_of(node).cells and "gpu_status_file" not in node
               for node in placeholders):
            cells_src = write_cells_data(builder, fromdoc, analysis)
        for number, node in enumerate(placeholders, start=1):
            if "gpu_status_file" in node:
                from_file = file_analysis(app, node)
                if from_file is None:
                    node.parent.remove(node)
                    continue
                markup = render_html(from_file, _options_of(node), page_uri,
                                     table_id=f"gpu-status-{number}", row_ids=number == 1,
                                     labels=texts)
            else:
                markup = render_html(analysis, _options_of(node), page_uri,
                                     table_id=f"gpu-status-{number}", row_ids=number == 1,
                                     cells_src=cells_src, labels=texts)
            raw = nodes.raw("", markup, format="html", classes=node["classes"])
            raw["ids"] = node["ids"]
            node.replace_self(raw)
        add_assets(self.document, "css", "js")


class StatusTableToNodes(NonHtmlPostTransform):
    """Every other builder: a plain docutils table (links resolved at priority 10)."""

    default_priority = 8

    def run(self, **kwargs: Any) -> None:
        placeholders = blocks_of(self.document, execution_status_placeholder)
        if not placeholders:
            return
        analysis = build_analysis(app_of(self.env))
        known = set(self.env.all_docs)
        notebook = in_download_notebook(self.env)
        for number, node in enumerate(placeholders, start=1):
            shown = analysis
            if "gpu_status_file" in node:
                shown = file_analysis(app_of(self.env), node)
                if shown is None:
                    node.parent.remove(node)
                    continue
            container = nodes.container(classes=node["classes"], ids=node["ids"])
            container.extend(status_table_nodes(shown, _options_of(node), self.env.docname,
                                                known, table_id=f"gpu-status-{number}",
                                                notebook=notebook))
            node.replace_self(container)


def _forget_analysis(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                     removed: set[str]) -> list[str]:
    forget_analysis(app)  # records are about to change
    return []


def setup_status_page(app: Sphinx) -> None:
    app.connect("env-get-outdated", _forget_analysis)
    app.add_directive("execution-status", ExecutionStatusDirective)
    app.add_env_collector(StatusPagesCollector)
    app.connect("env-updated", _env_updated)
    app.add_post_transform(StatusTableToHtml)
    app.add_post_transform(StatusTableToNodes)
