"""The ``{execution-status}`` directive: the book's execution status page.

A drop-in replacement for MyST-NB's ``{nb-exec-table}``, fed by the execution
records (:mod:`.record`) and their analysis (:mod:`.analysis`).

Flow, the same as MyST-NB's table (see the notes on the execution pipeline):

1. read time: the directive leaves a builder-neutral placeholder node and
   notes its page in ``env.gpu_status_pages`` (:class:`StatusPagesCollector`
   merges and purges it, and keeps the line of every code cell for warnings);
2. ``env-updated`` (main process): the baseline is loaded once, the opt-in
   ``slow_cell`` / ``regression`` warnings are emitted once, and the pages with
   the directive are returned whenever any record changed, was added or was
   removed (a deleted notebook leaves the table), or the baseline file changed;
3. post-transforms at resolve time fill the placeholder from
   the build's one analysis (:func:`build_analysis`): HTML builders get the
   findings (:mod:`.findings`: the flagged cells with why and what to do) and a
   sortable table with one row per notebook, rendered by the templates
   ``templates/findings.html`` and ``templates/status_table.html`` with
   autoescape (:func:`render_html`, priority 7) and, beside the page, a JSON file
   of every notebook's cells
   (:func:`cells_data`, :func:`write_cells_data`); every other builder gets a
   the same findings and a plain docutils table (:func:`status_table_nodes`,
   priority 8, before reference resolution at 10);
4. on every notebook page (HTML only) each code cell container gets an anchor
   ``id="cell-<index>"`` and, with ``gpu_cell_badges``, each flagged cell a badge
   linking to the cell's line on the status page.

Cells are named by the record model (:meth:`.record.NotebookRecord.cell_name`),
like every other view names them.

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
import json
import re
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from docutils import nodes
from docutils.parsers.rst import directives
from markupsafe import Markup
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ..model.analysis import (
    HINT_RULES,
    BuildAnalysis,
    Flag,
    NotebookAnalysis,
    NotebookComparison,
    analyse,
)
from ..model.files import read_status
from ..model.findings import BuildTotals, device_changed, findings, headline
from ..model.formatting import format_date, format_percent, format_ratio, format_seconds
from ..model.record import (
    CACHE,
    CELL_LABEL,
    EARLIER_BUILD,
    ERROR,
    EXCLUDED,
    EXECUTION_OFF,
    KERNEL_DIED,
    OK,
    OUTPUTS_PRESENT,
    TIMEOUT,
    CellRecord,
    NotebookRecord,
    StatusReport,
    cell_anchor,
)
from ..model.schema import SchemaError
from ..render.templates import render as render_template
from .baseline import baseline_path, get_baseline, thresholds
from .capture import all_records, atomic_write, stored_records
from .config import get_config
from .i18n import ngettext, translate
from .state import build_state, env_data
from .support import (  # noqa: F401 - the assets' names are also read from here
    CSS_FILE,
    JS_FILE,
    STATIC_DIR,
    NonHtmlPostTransform,
    add_assets,
    app_of,
    html_tree_may_hold,
    records_changed,
    setup_support,
)
from .warnings import warn

logger = logging.getLogger(__name__)

#: env attributes (plain data, pickled with the environment)
STATUS_PAGES = "gpu_status_pages"  # docnames with a table of this build (see status_pages)
TABLE_PAGES = "gpu_status_table_pages"  # docnames with any {execution-status} table
_LINK_TARGET = "gpu_status_link_target"  # status page the badges linked to last build
_BASELINE_DIGEST = "gpu_status_baseline_digest"

#: document attribute listing the assets a resolved page needs ("css", "js")
SORT_CHOICES = ("time", "name")
_TRUE = ("yes", "true", "on", "1")
_FALSE = ("no", "false", "off", "0")

#: status -> rank used to sort the status column (problems first)
_STATUS_RANK = {ERROR: 0, TIMEOUT: 1, KERNEL_DIED: 2, OK: 3, OUTPUTS_PRESENT: 4,
                EXCLUDED: 5, EXECUTION_OFF: 6, "gone": 7}


#: every column of the status table, in the order :columns: lists them
COLUMNS = ("name", "status", "time", "device", "flags", "executed", "cells", "slowest",
           "compile", "memory", "baseline", "ratio", "baseline_device")
#: what fits a theme's content column at a 1280 px window; the rest is in each
#: row's details
DEFAULT_COLUMNS = ("name", "status", "time", "device", "flags")
#: shown only with a baseline
COMPARISON_COLUMNS = ("baseline", "ratio", "baseline_device")
COLUMN_SORT = {key: "text" if key in ("name", "executed", "device", "baseline_device")
               else "number" for key in COLUMNS}
#: a table of more notebooks than this is laid out with fixed column widths, so that
#: the browser lays out only the rows on screen (content-visibility in the
#: stylesheet): a 1,000-notebook table then loads and sorts in a fraction of the time
#: (docs/performance.md).  Smaller tables keep widths that follow their content.
MANY_ROWS = 200
#: relative widths of the columns of such a table (shares of the table's width) and
#: the least width of each, in em, below which the table scrolls sideways
COLUMN_WIDTHS = {"name": (28, 12), "status": (9, 5), "time": (12, 7), "device": (20, 9),
                 "flags": (20, 8), "executed": (16, 8), "cells": (7, 4), "slowest": (15, 8),
                 "compile": (10, 6), "memory": (9, 5), "baseline": (11, 6), "ratio": (8, 5),
                 "baseline_device": (20, 9)}

#: one value of a row: ``sort`` (the table's sort key), ``text`` and the parts the
#: template marks up (a link, marks, a bar); all of it data, escaped by the template
Value = dict[str, Any]


def _value(sort: Any, text: Any, **parts: Any) -> Value:
    return {"sort": sort, "text": text, **parts}


# -- options -----------------------------------------------------------------------
class StatusOptions(NamedTuple):
    """Options of one ``{execution-status}`` table."""

    #: default order: "time" (slowest first) or "name" (by title)
    sort: str = "time"
    #: notebooks faster than this are not listed (they still count in the totals)
    min_seconds: float = 0.0
    #: show the per-cell breakdown of each notebook
    cells: bool = True
    #: the table's columns (the notebook first); the others go in each row's details
    columns: tuple[str, ...] = DEFAULT_COLUMNS


def parse_options(raw: dict[str, Any], report: Callable[[str], None]) -> StatusOptions:
    """Validate the directive's options; each bad value is reported and its default used."""
    defaults = StatusOptions()
    values: dict[str, Any] = {}
    sort = (raw.get("sort") or "").strip().lower()
    if "sort" in raw:
        if sort in SORT_CHOICES:
            values["sort"] = sort
        else:
            report(f"invalid :sort: {raw['sort']!r} (use one of {', '.join(SORT_CHOICES)}); "
                   f"using {defaults.sort!r}")
    if "min-seconds" in raw:
        text = (raw.get("min-seconds") or "").strip()
        try:
            number = float(text)
            if not number >= 0:  # also rejects nan
                raise ValueError
            values["min_seconds"] = number
        except ValueError:
            report(f"invalid :min-seconds: {text!r} (a number >= 0); "
                   f"using {defaults.min_seconds:g}")
    if "cells" in raw:
        text = (raw.get("cells") or "yes").strip().lower()
        if text in _TRUE:
            values["cells"] = True
        elif text in _FALSE:
            values["cells"] = False
        else:
            report(f"invalid :cells: {raw['cells']!r} (yes or no); using yes")
    if "columns" in raw:
        values["columns"] = _parse_columns(raw.get("columns") or "", report)
    return defaults._replace(**values)


def _parse_columns(text: str, report: Callable[[str], None]) -> tuple[str, ...]:
    """``time, device, memory``: known keys in the given order, the notebook first."""
    words = [word.strip().lower().replace("-", "_") for word in re.split(r"[,\s]+", text)]
    words = [word for word in words if word]
    unknown = [word for word in words if word not in COLUMNS]
    if unknown:
        report(f"invalid :columns: {', '.join(map(repr, unknown))} (use {', '.join(COLUMNS)})"
               "; left out")
    known = [word for word in dict.fromkeys(words) if word in COLUMNS and word != "name"]
    if not known:
        if not unknown:
            report("empty :columns:; using the default columns")
        return DEFAULT_COLUMNS
    return ("name", *known)


def _fixed_widths(keys: list[str]) -> dict[str, Any]:
    """The column widths (percentages) and the table's least width (em) of a table
    laid out with fixed widths (:data:`MANY_ROWS`)."""
    total = sum(COLUMN_WIDTHS[key][0] for key in keys)
    return {"columns": {key: f"{100 * COLUMN_WIDTHS[key][0] / total:.1f}%" for key in keys},
            "least": f"{sum(COLUMN_WIDTHS[key][1] for key in keys)}em"}


# -- the placeholder and the directive --------------------------------------------
class execution_status_placeholder(nodes.container):  # noqa: N801 - docutils node style
    """Where a status table goes; replaced by a post-transform for every builder.

    It subclasses ``container`` so that any writer that meets it (it should not)
    renders an empty block instead of failing.
    """


def status_pages(env: BuildEnvironment) -> dict[str, bool]:
    """docname -> whether every table of this build on it lists all notebooks (no
    ``:min-seconds:``), for the pages with such a table."""
    return env_data(env, STATUS_PAGES, dict)


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
def _baseline_digest(app: Sphinx) -> str | None:
    path = baseline_path(app)
    if path is None:
        return None
    try:
        return f"{path}:{hashlib.sha1(path.read_bytes()).hexdigest()}"
    except OSError:
        return f"{path}:unreadable"


def link_target(env: BuildEnvironment) -> str | None:
    """The status page that badges link to: the first by name whose tables list every
    notebook with its cells (no ``:min-seconds:``, ``:cells: no``), preferring pages
    that are not orphans."""
    pages = status_pages(env)
    if not pages:
        return None
    return min(pages, key=lambda docname: (not pages[docname],
                                           bool(env.metadata.get(docname, {}).get("orphan")),
                                           docname))


def _env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    get_baseline(app)  # read once here, so that write processes inherit it
    build_state(app).analysis = None
    build_analysis(app)  # the records are final: analyse them once for the whole build
    rewrite: set[str] = set()
    digest = _baseline_digest(app)
    baseline_changed = getattr(env, _BASELINE_DIGEST, None) != digest
    setattr(env, _BASELINE_DIGEST, digest)
    if records_changed(app, env) or baseline_changed:
        rewrite.update(status_pages(env).keys())
    target = link_target(env)
    if baseline_changed or getattr(env, _LINK_TARGET, None) != target:
        # the badges of notebook pages show regressions and link to the status page
        rewrite.update(stored_records(env))
    setattr(env, _LINK_TARGET, target)
    _emit_warnings(app, env)
    return sorted(rewrite & env.found_docs)


# -- opt-in warnings -----------------------------------------------------------------
def _cell_location(docname: str, cell: CellRecord) -> tuple[str, int] | str:
    return (docname, cell.line) if cell.line is not None else docname


def _emit_warnings(app: Sphinx, env: BuildEnvironment) -> None:
    config = get_config(app.config)
    if not (config.warn_slow_cells or config.warn_regressions):
        return
    for result in build_analysis(app).notebooks:
        record = result.notebook
        comparison = result.comparison
        if config.warn_regressions and comparison is not None and comparison.regression:
            warn(logger, f"notebook regressed: {format_seconds(record.seconds)}, "
                         f"{comparison.ratio:.1f}x the baseline "
                         f"({format_seconds(comparison.baseline_seconds)})",
                 "regression", location=record.docname)
        for cell, flags in result.flagged_cells:
            location = _cell_location(record.docname, cell)
            label = record.cell_name(cell).label
            if config.warn_slow_cells:
                reasons = "; ".join(f"{f.rule}: {f.text}" for f in flags)
                warn(logger, f"slow {label} ({format_seconds(cell.seconds)}): {reasons}",
                     "slow_cell", location=location)
            if config.warn_regressions:
                for flag in flags:
                    if flag.rule == "regression":
                        warn(logger, f"{label} regressed: {flag.reason}", "regression",
                             location=location)


# -- text helpers ------------------------------------------------------------------
def _ratio(value: float | None) -> str:
    return format_ratio(value, times="×")


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def row_id(docname: str) -> str:
    """The id of a notebook's row on the status page (stable, unique per docname)."""
    slug = _UNSAFE.sub("-", docname).strip("-")
    if slug != docname:
        slug += "-" + hashlib.sha1(docname.encode("utf-8")).hexdigest()[:6]
    return "gpu-status-" + slug


def share(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


class Labels(NamedTuple):
    """Translated texts, looked up once per table.

    A named tuple, not a frozen dataclass: Python generates and compiles a
    dataclass's methods when the module is imported, 1.5 ms of every build's start
    for these 45 fields (0.2 ms as a named tuple).
    """

    notebook: str
    status: str
    executed: str
    time: str
    device: str
    cells: str
    slowest: str
    flags: str
    compile: str
    memory: str
    baseline: str
    ratio: str
    baseline_device: str
    cell: str
    share: str
    source: str
    total: str
    filter: str
    count: str
    caption: str
    status_text: dict[str, str]
    flag_text: dict[str, str]
    new: str
    gone: str
    cache: str
    executed_now: str
    earlier_build: str
    regression: str
    no_jax: str
    no_capture: str
    hidden: str
    no_records: str
    error_in: str
    cells_summary: str
    compilations: str
    why: str
    action: str
    details: str
    share_of_cells: str
    device_changed: str
    bar: str
    expected_error: str
    only_flagged: str
    badge_share: str
    badge_where: str

    @classmethod
    def load(cls) -> Labels:
        return cls(
            notebook=translate("Notebook"),
            status=translate("Status"),
            executed=translate("Executed"),
            time=translate("Time"),
            device=translate("Backend and device"),
            cells=translate("Code cells"),
            slowest=translate("Slowest cell"),
            flags=translate("Flagged cells"),
            compile=translate("JAX compile"),
            memory=translate("Peak memory"),
            baseline=translate("Baseline time"),
            ratio=translate("Ratio"),
            baseline_device=translate("Baseline device"),
            cell=translate("Cell"),
            share=translate("Share"),
            source=translate("First line"),
            # the totals row counts every notebook, whatever the filter shows
            total=translate("All notebooks"),
            filter=translate("Filter notebooks"),
            count=translate("{shown} of {total} notebooks shown"),
            caption=translate("Execution status of the notebooks"),
            status_text={
                OK: translate("ok"), ERROR: translate("error"), TIMEOUT: translate("timeout"),
                KERNEL_DIED: translate("kernel died"),
                OUTPUTS_PRESENT: translate("not executed (outputs present)"),
                EXCLUDED: translate("excluded"),
                EXECUTION_OFF: translate("not executed (execution off)"),
                "gone": translate("gone (only in the baseline)"),
            },
            flag_text={
                "slow": translate("slow"),
                "share": translate("large share"),
                "regression": translate("regression"),
                "compile": translate("compilation"), "recompile": translate("recompilation"),
                "sequential_loop": translate("sequential loop"),
            },
            new=translate("new"), gone=translate("gone"), cache=translate("from the cache"),
            executed_now=translate("this build"),
            earlier_build=translate("an earlier build"),
            regression=translate("regression"),
            no_jax=translate("no JAX"),
            no_capture=translate("no measurements"),
            hidden=translate("{count} notebooks faster than {seconds} are not listed "
                     "(they are included in the totals)."),
            no_records=translate("No notebooks have been executed yet."),
            error_in=translate("in {cell}"),
            cells_summary=translate("{count} code cells of {title}"),
            compilations=translate("{count} compilations"),
            why=translate("Why:"),
            action=translate("What to do:"),
            details=translate("details"),
            share_of_cells=translate("{share} of the notebook's cell time"),
            device_changed=translate("device changed"),
            bar=translate("{share} of the slowest notebook's time; {flagged} in flagged cells, "
                          "{compile} compiling in the others"),
            expected_error=translate("expected {error}"),
            only_flagged=translate("only notebooks with flagged cells"),
            badge_share=translate("{share} of this page's cell time"),
            badge_where=translate("(on the status page)"),
        )


def status_text(record: NotebookRecord, labels: Labels) -> str:
    text = labels.status_text.get(record.status, record.status)
    if record.status == ERROR and record.error is not None:
        text += f": {record.error.type}"
    return text


def device_text(record: NotebookRecord, labels: Labels) -> str:
    if record.capture != "ok":
        return labels.no_capture if record.executed else "–"
    backend = record.environment.backend
    prefix = f"JAX {backend}" if backend else labels.no_jax
    return f"{prefix} — {record.environment.device_label}"


def flag_names(flags: Iterable[Flag], labels: Labels) -> str:
    return ", ".join(labels.flag_text.get(f.rule, f.rule) for f in flags if not f.is_hint)


def order(rows: list[NotebookAnalysis], sort: str) -> list[NotebookAnalysis]:
    """Slowest first (executed notebooks before the others) or by title."""
    if sort == "name":
        return sorted(rows, key=lambda a: ((a.notebook.title or a.notebook.docname).casefold(),
                                           a.notebook.docname))
    return sorted(rows, key=lambda a: (not a.notebook.executed, -a.notebook.seconds,
                                       a.notebook.docname))


def _listed(result: NotebookAnalysis, options: StatusOptions) -> bool:
    record = result.notebook
    return (not options.min_seconds or record.failed or not record.executed
            or record.seconds >= options.min_seconds)


def status_summary(totals: BuildTotals, labels: Labels) -> str:
    return ", ".join(f"{count} {labels.status_text.get(status, status)}"
                     for status, count in sorted(totals.by_status.items(),
                                                 key=lambda kv: _STATUS_RANK.get(kv[0], 9)))


# -- HTML ----------------------------------------------------------------------------
#: flagged cells listed above the table before the rest collapse (as the console's)
FINDINGS_SHOWN = 5
#: at most this many in the collapsed rest: a book of 1,000 notebooks keeps a small
#: page; the table's flags column and its "only flagged" switch show every one
FINDINGS_LISTED = 50


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


class StatusTable:
    """One table: its rows as data (one value per column: sort key, text, parts),
    rendered by ``templates/status_table.html`` (autoescape: nothing is escaped here).

    ``page_uri(docname)`` gives the relative URI of a notebook page (None: no link).
    """

    def __init__(self, analysis: BuildAnalysis, options: StatusOptions,
                 page_uri: Callable[[str], str | None], table_id: str = "gpu-status-1",
                 row_ids: bool = True, labels: Labels | None = None,
                 cells_src: str | Sequence[str] | None = None):
        self.analysis = analysis
        if isinstance(cells_src, str):
            cells_src = (cells_src,)
        #: URLs of the files of per-cell data (:func:`cells_data_files`), relative
        #: to the page; a notebook's cells are in file ``cells_file[docname]``
        self.cells_src = tuple(cells_src) if cells_src and options.cells else None
        self.cells_file = (cells_file_numbers(r.notebook.docname for r in analysis.notebooks)
                           if self.cells_src is not None and len(self.cells_src) > 1 else {})
        self.options = options
        self.page_uri = page_uri
        self.table_id = table_id
        self.row_ids = row_ids
        self.labels = labels or Labels.load()
        self.comparing = analysis.baseline is not None
        #: the slowest executed notebook's time: a full time bar
        self.longest = max((r.notebook.seconds for r in analysis.notebooks
                            if r.notebook.executed), default=0.0)

    def columns(self) -> list[tuple[str, str, str]]:
        """(key, label, sort type) of the shown columns; the first is the row header."""
        return [(key, self._label(key), COLUMN_SORT[key]) for key in self.options.columns
                if self.comparing or key not in COMPARISON_COLUMNS]

    def _label(self, key: str) -> str:
        lb = self.labels
        return {"name": lb.notebook, "status": lb.status, "executed": lb.executed,
                "time": lb.time, "device": lb.device, "cells": lb.cells,
                "slowest": lb.slowest, "flags": lb.flags, "compile": lb.compile,
                "memory": lb.memory, "baseline": lb.baseline, "ratio": lb.ratio,
                "baseline_device": lb.baseline_device}[key]

    def _hidden_columns(self) -> list[str]:
        """Columns not in the table: their values go in each row's details."""
        shown = {key for key, _label, _kind in self.columns()}
        return [key for key in COLUMNS if key not in shown and key not in ("name", "status")
                and (self.comparing or key not in COMPARISON_COLUMNS)]

    def render(self) -> str:
        lb = self.labels
        options = self.options
        rows = order(self.analysis.notebooks, options.sort)
        listed = [r for r in rows if _listed(r, options)]
        hidden = len(rows) - len(listed)
        totals = BuildTotals.of(self.analysis)
        sort_key = "name" if options.sort == "name" else "time"
        columns = [{"key": key, "label": label, "kind": kind,
                    "aria": (("ascending" if key == "name" else "descending")
                             if key == sort_key else None)}
                   for key, label, kind in self.columns()]
        table_rows = [self._notebook(result) for result in listed]
        table_rows += [self._gone(record)
                       for record in sorted(self.analysis.gone, key=lambda nb: nb.docname)]
        return render_template(
            "status_table.html", ident=self.table_id, labels=lb, columns=columns,
            widths=(_fixed_widths([c["key"] for c in columns])
                    if len(table_rows) > MANY_ROWS else None),
            rows=table_rows, facts=self._hidden_columns(),
            labels_of={key: self._label(key) for key in COLUMNS},
            cells_src=" ".join(self.cells_src) if self.cells_src is not None else None,
            cell_labels=_compact_json(cell_labels(lb)) if self.cells_src is not None else "",
            summary=self._summary(totals, hidden), findings=Markup(self._findings()),
            totals=self._totals(totals))

    def _summary(self, totals: BuildTotals, hidden: int) -> str:
        lb = self.labels
        if not totals.notebooks and not self.analysis.gone:
            return lb.no_records
        parts = [(ngettext("%d notebook", "%d notebooks", totals.notebooks) % totals.notebooks)
                 + f": {status_summary(totals, lb)} ({self._provenance_summary(totals)})",
                 f"{format_seconds(totals.seconds)} in total",
                 ngettext("%d flagged cell", "%d flagged cells", totals.flagged) % totals.flagged]
        gone = len(self.analysis.gone)
        if gone:  # their rows are in the table too: the counts add up to its rows
            parts.append(ngettext("%d notebook only in the baseline",
                                  "%d notebooks only in the baseline", gone) % gone)
        text = "; ".join(parts) + "."
        if hidden:
            text += " " + lb.hidden.format(count=hidden,
                                           seconds=format_seconds(self.options.min_seconds))
        return text

    def _findings(self) -> str:
        """The flagged cells, slowest first, and the headline against the baseline."""
        lb = self.labels
        rows = []
        every = findings(self.analysis)
        for finding in every[:FINDINGS_LISTED]:
            record = finding.notebook
            uri = self.page_uri(record.docname)
            name = finding.name
            rows.append({
                "title": record.title or record.docname, "cell": name.label,
                "href": f"{uri}#{name.anchor}" if uri is not None and name.anchor else uri,
                "location": name.location, "time": format_seconds(finding.seconds),
                "share": (lb.share_of_cells.format(share=format_percent(finding.share))
                          if finding.share is not None else ""),
                "device": finding.device or lb.no_capture,
                "flags": ", ".join(lb.flag_text.get(rule, rule) for rule in finding.rules),
                "row_href": ("#" + flagged_cell_id(record.docname, name.number)
                             if self.row_ids else None),
                "reason": finding.reason, "action": finding.action,
            })
        top = FINDINGS_SHOWN
        summary = headline(self.analysis)
        if not rows and summary is None:
            return ""
        title = (ngettext("%d flagged cell, slowest first", "%d flagged cells, slowest first",
                          len(every)) % len(every)) if rows else translate("No flagged cells.")
        more = len(rows) - top
        unlisted = len(every) - len(rows)
        return render_template(
            "findings.html", ident=self.table_id, rows=rows, top=top, labels=lb, title=title,
            more=ngettext("%d more flagged cell", "%d more flagged cells", more) % more,
            unlisted=ngettext("%d more in the table below (its flags column).",
                              "%d more in the table below (its flags column).",
                              unlisted) % unlisted if unlisted else "",
            headline=summary.text(translate, ngettext) if summary else None,
            headline_device_changed=bool(summary and summary.device_changed))

    def _status_cell(self, record: NotebookRecord) -> Value:
        title = record.error.message if record.error is not None else None
        return _value(_STATUS_RANK.get(record.status, 9), status_text(record, self.labels),
                      status=record.status, title=title)

    def _bar(self, result: NotebookAnalysis) -> dict[str, str] | None:
        """The notebook's time as a bar (a full bar: the slowest notebook), its flagged
        cells and the compilation of its other cells shaded; a text for screen readers."""
        record = result.notebook
        if self.longest <= 0 or record.seconds <= 0:
            return None
        flagged = sum(cell.seconds for cell, _flags in result.flagged_cells)
        flagged_cells = {id(cell) for cell, _flags in result.flagged_cells}
        compile_ = sum(c.compile_seconds for c in record.cells if id(c) not in flagged_cells)
        parts = [min(part / record.seconds, 1.0) for part in (flagged, compile_)]
        width = record.seconds / self.longest
        return {"label": self.labels.bar.format(share=format_percent(width),
                                                flagged=format_percent(parts[0]),
                                                compile=format_percent(parts[1])),
                "width": f"{width:.1%}", "flagged": f"{parts[0]:.1%}",
                "compile": f"{parts[1]:.1%}"}

    def _time_cell(self, result: NotebookAnalysis) -> Value:
        """The time, with the baseline's inline (``88.4 s → 3.59 s, 0.04×``), and its bar."""
        record, comparison = result.notebook, result.comparison
        if not record.executed:
            return _value("", "–")
        now = format_seconds(record.seconds)
        bar = self._bar(result)
        if comparison is None or comparison.state == "new":
            return _value(_num(record.seconds), now, bar=bar, new=comparison is not None)
        text = f"{format_seconds(comparison.baseline_seconds)} → {now}"
        if comparison.ratio is not None:
            text += f", {_ratio(comparison.ratio)}"
        change = (f"{comparison.baseline_device} → {record.environment.device_label}"
                  if device_changed(comparison.baseline_device, record) else None)
        return _value(_num(record.seconds), text, bar=bar, regression=comparison.regression,
                      device_change=change)

    def _flags_cell(self, result: NotebookAnalysis) -> Value:
        """``2: slow, sequential loop``: the flagged cells and the rules among them."""
        flagged = [flags for flags in result.cell_flags if flags]
        if not flagged:
            return _value("0", "0")
        rules = list(dict.fromkeys(flag.rule for flags in flagged for flag in flags))
        return _value(len(flagged), ", ".join(self.labels.flag_text.get(rule, rule)
                                              for rule in rules), count=len(flagged))

    def _values(self, result: NotebookAnalysis, uri: str | None) -> dict[str, Value]:
        """Every column of a notebook's row: key -> its sort value, text and parts."""
        lb = self.labels
        record = result.notebook
        values: dict[str, Value] = {"status": self._status_cell(record),
                                    "time": self._time_cell(result),
                                    "flags": self._flags_cell(result)}
        device = device_text(record, lb)
        values["device"] = _value(device.casefold(), device)
        if record.executed and record.executed_at:
            how = {CACHE: lb.cache, EARLIER_BUILD: lb.earlier_build}.get(
                record.provenance, lb.executed_now)
            values["executed"] = _value(record.executed_at, format_date(record.executed_at),
                                        iso=record.executed_at, how=how,
                                        provenance=record.provenance)
        else:
            values["executed"] = _value("", "–")
        count = len(record.cells)
        values["cells"] = _value(count or "", count or "–")
        slowest = record.slowest_cell()
        if slowest is not None:
            name = record.cell_name(slowest)
            part = share(slowest.seconds, record.cells_seconds)
            values["slowest"] = _value(
                _num(slowest.seconds),
                f"{format_seconds(slowest.seconds)} ({format_percent(part)})", label=name.label,
                href=f"{uri}#{name.anchor}" if uri is not None and name.anchor else None)
        else:
            values["slowest"] = _value("", "–")
        compile_share = share(record.compile_seconds, record.cells_seconds)
        values["compile"] = _value(_num(compile_share), f"{format_percent(compile_share)} "
                                   f"({format_seconds(record.compile_seconds)})"
                                   if record.compile_seconds else "–")
        # peak resident memory of the kernel, as sphinx-gallery reports per example
        memory = record.peak_memory_mb
        values["memory"] = _value(_num(memory), f"{memory:.0f} MB" if memory is not None else "–")
        if self.comparing:
            values.update(self._comparison_values(result.comparison))
        return values

    def _comparison_values(self, comparison: NotebookComparison | None) -> dict[str, Value]:
        if comparison is None:
            return {"baseline": _value("", ""), "ratio": _value("", ""),
                    "baseline_device": _value("", "")}
        if comparison.state == "new":
            return {"baseline": _value("", "", new=True), "ratio": _value("", "–"),
                    "baseline_device": _value("", "–")}
        device = comparison.baseline_device or comparison.baseline_backend or "–"
        return {"baseline": _value(_num(comparison.baseline_seconds),
                                   format_seconds(comparison.baseline_seconds)),
                "ratio": _value(_num(comparison.ratio), _ratio(comparison.ratio)),
                "baseline_device": _value((comparison.baseline_device or "").casefold(),
                                          device)}

    def _notebook(self, result: NotebookAnalysis) -> dict[str, Any]:
        """A notebook's row and its details, as data for the template."""
        lb = self.labels
        record = result.notebook
        docname = record.docname
        title = record.title or docname
        uri = self.page_uri(docname)
        comparison = result.comparison
        classes = f"gpu-status-notebook gpu-status-row-{record.status}"
        if any(result.cell_flags):
            classes += " gpu-status-has-flags"
        if comparison is not None and comparison.regression:
            classes += " gpu-status-regression"
        # the filter finds a notebook by its title, status, device, baseline device and
        # the names of its cells' flags
        words = [title, docname, status_text(record, lb), device_text(record, lb)]
        words += [lb.flag_text.get(flag.rule, flag.rule)
                  for flags in result.cell_flags for flag in flags]
        if comparison is not None and comparison.baseline_device:
            words.append(comparison.baseline_device)
        return {
            "classes": classes, "ident": row_id(docname) if self.row_ids else None,
            "filter": " ".join(dict.fromkeys(words)).casefold(),
            "flagged": any(result.cell_flags), "sort": title.casefold(), "title": title,
            "uri": uri, "docname": docname, "values": self._values(result, uri),
            "details": self._details(result, title, uri),
        }

    def _details(self, result: NotebookAnalysis, title: str,
                 uri: str | None) -> dict[str, Any] | None:
        """The row under a notebook: its error, its flagged cells, the columns not
        shown, and a place for its cells.

        The cells themselves are not HTML: the script renders them from the data
        file (:func:`cells_data`) when the details are opened, so that the page of a
        book of 1,000 notebooks x 100 cells stays small.  Without the script (or the
        data file) the details hold the rest; every row links to its notebook page,
        which shows the cells.
        """
        lb = self.labels
        record = result.notebook
        has_cells = self.cells_src is not None and bool(
            record.cells or (result.comparison and result.comparison.gone_cells))
        if not (record.error or has_cells or self._hidden_columns()):
            return None
        flagged = sum(1 for flags in result.cell_flags if flags)
        summary = lb.cells_summary.format(count=len(record.cells), title=title)
        if flagged:
            summary += f" ({flagged} {lb.flags.lower()})"
        error = None
        if record.error is not None:
            failing = record.error_cell()
            where = (" " + lb.error_in.format(cell=record.cell_name(failing).label)
                     if failing is not None else "")
            error = {"type": record.error.type, "where": where,
                     "message": record.error.message}
        cells = []
        for cell, flags in result.flagged_cells:
            name = record.cell_name(cell)
            cells.append({
                "ident": flagged_cell_id(record.docname, name.number) if self.row_ids else None,
                "label": name.label,
                "href": f"{uri}#{name.anchor}" if uri is not None and name.anchor else None,
                "time": format_seconds(cell.seconds),
                "names": ", ".join(lb.flag_text.get(f.rule, f.rule) for f in flags)})
        return {"summary": summary, "error": error, "flagged": cells, "cells": has_cells,
                "cells_file": self.cells_file.get(record.docname)}

    def _gone(self, record: NotebookRecord) -> dict[str, Any]:
        lb = self.labels
        title = record.title or record.docname
        baseline_seconds = record.seconds if record.executed else None
        device = record.device_label or "–"
        values = {key: _value("", "–") for key in COLUMNS}
        values["status"] = _value(_STATUS_RANK["gone"], lb.status_text["gone"], status="gone")
        values["time"] = _value("", f"{format_seconds(baseline_seconds)} → –")
        values["baseline"] = _value(_num(baseline_seconds), format_seconds(baseline_seconds))
        values["baseline_device"] = _value(device.casefold(), device)
        details = ({"summary": title, "error": None, "flagged": [], "cells": False}
                   if self._hidden_columns() else None)
        return {"classes": "gpu-status-notebook gpu-status-row-gone", "ident": None,
                "filter": " ".join((title, record.docname, lb.gone)).casefold(),
                "flagged": False, "sort": title.casefold(), "title": title, "uri": None,
                "docname": record.docname, "values": values, "details": details}

    def _provenance_summary(self, totals: BuildTotals) -> str:
        lb = self.labels
        parts = [f"{totals.executed_now} {lb.executed_now}", f"{totals.from_cache} {lb.cache}"]
        if totals.from_earlier_build:
            parts.append(f"{totals.from_earlier_build} {lb.earlier_build}")
        return ", ".join(parts)

    def _totals(self, totals: BuildTotals) -> dict[str, Any]:
        lb = self.labels
        ratio = share(totals.compared_now, totals.compared_before)
        time = format_seconds(totals.seconds)
        if self.comparing:
            time = f"{format_seconds(totals.baseline_seconds)} → {time}, {_ratio(ratio)}"
        return {"label": f"{lb.total}: {totals.notebooks}", "texts": {
            "status": status_summary(totals, lb), "executed": self._provenance_summary(totals),
            "time": time, "device": ngettext("%d machine", "%d machines", totals.machines)
            % totals.machines, "cells": totals.cells, "slowest": "", "flags": totals.flagged,
            "compile": format_percent(share(totals.compile_seconds, totals.cells_seconds)),
            "memory": "", "baseline": format_seconds(totals.baseline_seconds),
            "ratio": _ratio(ratio), "baseline_device": "",
        }}


def render_html(analysis: BuildAnalysis, options: StatusOptions,
                page_uri: Callable[[str], str | None], table_id: str = "gpu-status-1",
                row_ids: bool = True, cells_src: str | Sequence[str] | None = None) -> str:
    """The status table of ``analysis`` as an HTML fragment (everything escaped).

    ``cells_src``: the URLs (relative to the page) of :func:`cells_data_files`, in
    their order (one URL: all the cells); without it the rows have no per-cell
    details.
    """
    return StatusTable(analysis, options, page_uri, table_id, row_ids,
                     cells_src=cells_src).render()


# -- per-cell data, loaded by the script when a row's details open ----------------
CELLS_DATA_VERSION = 1


def _compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def cell_labels(labels: Labels) -> dict[str, Any]:
    """The texts the script needs for the cell tables (translated, as data)."""
    return {
        "cell": labels.cell, "time": labels.time, "share": labels.share,
        "compile": labels.compile, "source": labels.source, "flags": labels.flags,
        "baseline": labels.baseline, "ratio": labels.ratio, "new": labels.new,
        "gone": labels.gone, "cellName": CELL_LABEL, "expected": labels.expected_error,
        "flag": labels.flag_text, "hints": list(HINT_RULES),
    }


def _cell_entry(position: int, cell: CellRecord, flags: Sequence[Flag], total: float,
                comparison: NotebookComparison | None, labels: Labels) -> dict[str, Any]:
    """One cell with short keys; texts formatted here, so that there is one formatter."""
    entry: dict[str, Any] = {
        "s": float(f"{cell.seconds:.4g}"),  # for sorting only: 4 digits are plenty
        "t": format_seconds(cell.seconds), "p": format_percent(share(cell.seconds, total)),
        "l": cell.first_line,
    }
    if cell.index is not None:
        entry["i"] = cell.index
    if cell.error:
        entry["e"] = cell.error
        if cell.error_expected:
            entry["x"] = 1
    if cell.compile_seconds or cell.compilations:
        functions = sorted(cell.compilations.items(), key=lambda kv: (-kv[1], kv[0]))
        listed = ", ".join(f"{name} {count}×" for name, count in functions[:3])
        if len(functions) > 3:
            listed += ", …"
        entry["k"] = format_seconds(cell.compile_seconds)
        entry["n"] = f"{labels.compilations.format(count=cell.compilation_count)}: {listed}"
    if flags:
        entry["f"] = [[flag.rule, flag.text] for flag in flags]
    if comparison is not None:
        cell_comparison = comparison.cells.get(position)
        if cell_comparison is not None and cell_comparison.state != "new":
            entry["b"] = format_seconds(cell_comparison.baseline_seconds)
            entry["r"] = _ratio(cell_comparison.ratio)
    return entry


def cells_data(analysis: BuildAnalysis, labels: Labels | None = None) -> dict[str, Any]:
    """Per-cell details of every notebook, keyed by docname, as compact plain data.

    ``{"v": 1, "nb": {docname: {"c": [cell...], "g": [gone cell...], "cmp": 1}}}``; a
    cell is ``{"i": index, "s": seconds, "t": time, "p": share, "l": first line,
    "e": error, "x": 1 (the error was expected), "k": compile time, "n": compilations,
    "f": [[rule, reason]...],
    "b": baseline time, "r": ratio}`` with empty keys left out.  Every text is data,
    inserted by the script as text, never as markup.
    """
    labels = labels or Labels.load()
    notebooks: dict[str, Any] = {}
    for result in analysis.notebooks:
        record = result.notebook
        comparison = result.comparison
        total = record.cells_seconds
        entry: dict[str, Any] = {"c": [
            _cell_entry(position, cell, flags, total, comparison, labels)
            for position, (cell, flags) in enumerate(zip(record.cells, result.cell_flags,
                                                         strict=True))]}
        if comparison is not None:
            entry["cmp"] = 1
            if comparison.gone_cells:
                entry["g"] = [{"i": index, "t": format_seconds(seconds), "l": first_line}
                              for index, seconds, first_line in comparison.gone_cells]
        notebooks[record.docname] = entry
    return {"v": CELLS_DATA_VERSION, "nb": notebooks}


#: notebooks per file of per-cell data: opening a row's details reads the file of
#: its notebook only (one file for 1,000 notebooks x 100 cells: 12 MB to read
#: before the first row opens; one of 50 notebooks: about 600 kB)
NOTEBOOKS_PER_CELLS_FILE = 50


def cells_file_numbers(docnames: Iterable[str]) -> dict[str, int]:
    """The file of :func:`cells_data_files` that holds each notebook's cells:
    ``NOTEBOOKS_PER_CELLS_FILE`` notebooks a file, by docname."""
    return {docname: position // NOTEBOOKS_PER_CELLS_FILE
            for position, docname in enumerate(sorted(set(docnames)))}


def cells_data_files(analysis: BuildAnalysis,
                     labels: Labels | None = None) -> list[dict[str, Any]]:
    """:func:`cells_data` in files of ``NOTEBOOKS_PER_CELLS_FILE`` notebooks (at least
    one file), numbered as :func:`cells_file_numbers` says."""
    data = cells_data(analysis, labels)
    numbers = cells_file_numbers(data["nb"])
    files: list[dict[str, Any]] = [{"v": data["v"], "nb": {}}
                                   for _ in range(max(numbers.values(), default=0) + 1)]
    for docname, entry in sorted(data["nb"].items()):
        files[numbers[docname]]["nb"][docname] = entry
    return files


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


def plain_value(key: str, value: Value, lb: Labels) -> str:
    """A value of a row as one line of text: what ``templates/status_table.html``
    shows, for builders without HTML."""
    text = str(value["text"])
    if key == "time":
        marks = [lb.new if value.get("new") else "",
                 lb.regression if value.get("regression") else "",
                 lb.device_changed if value.get("device_change") else ""]
        return " ".join([text, *(mark for mark in marks if mark)])
    if key == "flags" and value.get("count"):
        return f"{value['count']}: {text}"
    if key == "executed" and value.get("iso"):
        return f"{value['how']} {text}"
    if key == "slowest" and value.get("label"):
        return f"{text} · {value['label']}"
    if key == "baseline" and value.get("new"):
        return lb.new
    return text


def status_table_nodes(analysis: BuildAnalysis, options: StatusOptions, fromdoc: str,
                       known_docs: set[str], table_id: str = "gpu-status-1") -> list[nodes.Node]:
    """The same columns and values as the HTML table (:class:`StatusTable`), as a plain
    docutils table for any builder, after the findings."""
    lb = Labels.load()
    model = StatusTable(analysis, options, lambda docname: None, table_id, row_ids=False)
    columns = model.columns()
    rows = order(analysis.notebooks, options.sort)
    listed = [r for r in rows if _listed(r, options)]
    table = nodes.table(classes=["gpu-status-plain", "colwidths-auto"], ids=[table_id])
    table += nodes.title(text=lb.caption)
    group = nodes.tgroup(cols=len(columns))
    table += group
    # relative widths (the text builder takes them as characters)
    for key, _label, _kind in columns:
        group += nodes.colspec(colwidth=24 if key in ("name", "device", "time") else 14)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for _key, label, _kind in columns:
        row += _entry(label)
    head += row
    body = nodes.tbody()
    group += body
    notebook_rows = [model._notebook(result) for result in listed]
    notebook_rows += [model._gone(record)
                      for record in sorted(analysis.gone, key=lambda nb: nb.docname)]
    for data in notebook_rows:
        row = nodes.row()
        docname = data["docname"]
        row += _entry(_doc_link(fromdoc, docname, data["title"])
                      if docname in known_docs and "gpu-status-row-gone" not in data["classes"]
                      else nodes.Text(data["title"]))
        for key, _label, _kind in columns[1:]:
            row += _entry(plain_value(key, data["values"][key], lb))
        body += row
    totals = model._totals(BuildTotals.of(analysis))
    row = nodes.row()
    row += _entry(totals["label"])
    for key, _label, _kind in columns[1:]:
        row += _entry(str(totals["texts"][key]))
    body += row
    result_nodes: list[nodes.Node] = [table]
    hidden = len(rows) - len(listed)
    if hidden:
        result_nodes.append(nodes.paragraph(text=lb.hidden.format(
            count=hidden, seconds=format_seconds(options.min_seconds))))
    return _findings_nodes(analysis, lb) + result_nodes


def _findings_nodes(analysis: BuildAnalysis, lb: Labels) -> list[nodes.Node]:
    """The headline and the flagged cells (why, what to do) before the plain table, as
    on the HTML page; no links to cells (anchors are HTML only)."""
    result: list[nodes.Node] = []
    summary = headline(analysis)
    if summary is not None:
        result.append(nodes.paragraph(text=summary.text(translate, ngettext),
                                     classes=["gpu-status-headline"]))
    items = nodes.enumerated_list(classes=["gpu-status-flagged-cells"])
    for finding in findings(analysis):
        record = finding.notebook
        names = ", ".join(lb.flag_text.get(rule, rule) for rule in finding.rules)
        where = (f"{record.title or record.docname}, {finding.name.label} "
                 f"({format_seconds(finding.seconds)}, {finding.device or lb.no_capture}): "
                 f"{names}.")
        item = nodes.list_item()
        item += nodes.paragraph(text=where)
        item += nodes.paragraph(text=f"{lb.why} {finding.reason}")
        item += nodes.paragraph(text=f"{lb.action} {finding.action}")
        items += item
    if len(items):
        count = len(items)
        result.append(nodes.paragraph(text=ngettext(
            "%d flagged cell, slowest first", "%d flagged cells, slowest first", count) % count))
        result.append(items)
    return result


# -- post-transforms ----------------------------------------------------------------
def _options_of(node: nodes.Element) -> StatusOptions:
    return StatusOptions(**node.get("gpu_status_options", {}))


class _AnalysedBuild(NamedTuple):
    """This build's analysis, and each notebook's by name (made once per build)."""

    analysis: BuildAnalysis
    by_docname: dict[str, NotebookAnalysis]


def _analysed_build(app: Sphinx) -> _AnalysedBuild:
    state = build_state(app)
    memo = state.analysis
    if memo is None:
        analysis = analyse(StatusReport(all_records(app.env)), thresholds(app),
                           get_baseline(app))
        memo = _AnalysedBuild(analysis, {a.notebook.docname: a for a in analysis.notebooks})
        state.analysis = memo
    return memo


def build_analysis(app: Sphinx) -> BuildAnalysis:
    """The analysis of this build's records, made once per build (at ``env-updated``,
    in the main process, where post-transforms run even with ``-j N``) and shared by
    the warnings, every status table, the badges and the reports."""
    return _analysed_build(app).analysis


def notebook_analysis(app: Sphinx, docname: str) -> NotebookAnalysis | None:
    return _analysed_build(app).by_docname.get(docname)


CELLS_DATA_SUFFIX = ".gpu-cells.json"


#: the files of per-cell data after the first: ``status.gpu-cells-1.json`` ...
_NUMBERED_CELLS_FILE = re.compile(r"\.gpu-cells-(\d+)\.json")


def cells_file_name(page_stem: str, number: int) -> str:
    """The name of file ``number`` of the per-cell data of page ``page_stem``."""
    return page_stem + (CELLS_DATA_SUFFIX if number == 0 else f".gpu-cells-{number}.json")


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
        for number, data in enumerate(cells_data_files(analysis)):
            path = page.with_name(cells_file_name(page.stem, number))
            text = _compact_json(data)
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
        placeholders = list(self.document.findall(execution_status_placeholder))
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
                                     table_id=f"gpu-status-{number}", row_ids=number == 1)
            else:
                markup = render_html(analysis, _options_of(node), page_uri,
                                     table_id=f"gpu-status-{number}", row_ids=number == 1,
                                     cells_src=cells_src)
            raw = nodes.raw("", markup, format="html", classes=node["classes"])
            raw["ids"] = node["ids"]
            node.replace_self(raw)
        add_assets(self.document, "css", "js")


class StatusTableToNodes(NonHtmlPostTransform):
    """Every other builder: a plain docutils table (links resolved at priority 10)."""

    default_priority = 8

    def run(self, **kwargs: Any) -> None:
        placeholders = list(self.document.findall(execution_status_placeholder))
        if not placeholders:
            return
        analysis = build_analysis(app_of(self.env))
        known = set(self.env.all_docs)
        for number, node in enumerate(placeholders, start=1):
            shown = analysis
            if "gpu_status_file" in node:
                shown = file_analysis(app_of(self.env), node)
                if shown is None:
                    node.parent.remove(node)
                    continue
            container = nodes.container(classes=node["classes"], ids=node["ids"])
            container.extend(status_table_nodes(shown, _options_of(node), self.env.docname,
                                                known, table_id=f"gpu-status-{number}"))
            node.replace_self(container)


def file_analysis(app: Sphinx, node: nodes.Element) -> BuildAnalysis | None:
    """The analysis of a table's ``:status-file:`` (and ``:baseline-file:``); None, with
    a warning at the directive, when a file cannot be read."""
    try:
        report = read_status(node["gpu_status_file"])
        baseline = (read_status(node["gpu_baseline_file"]) if "gpu_baseline_file" in node
                    else None)
    except (OSError, SchemaError) as error:
        warn(logger, f"execution-status: cannot read the status file: {error}", "directive",
             location=node)
        return None
    return analyse(report, thresholds(app), baseline)


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
        record = result.notebook
        cells = [n for n in self.document.findall(nodes.container)
                 if n.get("nb_element") == "cell_code"]
        if not cells:
            return
        for node in cells:
            anchor = cell_anchor(node["cell_index"])
            if anchor not in node["ids"] and anchor not in self.document.ids:
                node["ids"].append(anchor)
                self.document.ids[anchor] = node
        if not record.cells:
            return
        flagged = {cell.index: flags for cell, flags in result.flagged_cells
                   if cell.index is not None}
        if not flagged:
            return
        add_assets(self.document, "css")  # the findings link here: the cell is highlighted
        if not get_config(app.config).cell_badges:
            return
        target = link_target(self.env)
        href = None
        if target is not None:
            href = app.builder.get_relative_uri(docname, target)
        labels = Labels.load()
        by_index = {cell.index: cell for cell in record.cells}
        for node in cells:
            flags = flagged.get(node["cell_index"])
            if flags and not is_shell_or_magic(_cell_source(node)):
                cell = by_index[node["cell_index"]]
                cell_href = href and f"{href}#{flagged_cell_id(docname, record.cell_number(cell))}"
                node.insert(0, nodes.raw("", badge_html(
                    cell.seconds, share(cell.seconds, record.cells_seconds), flags, cell_href,
                    labels), format="html"))
        add_assets(self.document, "css")


def _cell_source(cell: nodes.Element) -> str:
    block = next(iter(cell.findall(nodes.literal_block)), None)
    return block.astext() if block is not None else ""


#: Cell magics whose body is shell script, not Python.
SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script", "%%system")


def is_shell_or_magic(source: str) -> bool:
    """A cell of only ``!pip install ...`` / ``%magic`` lines (and comments), a
    ``%%bash`` cell, or ``%%capture`` around such lines: its time is the machine's
    (downloads, installs), not the lecture's, so readers get no badge on it."""
    lines = [line.strip() for line in source.splitlines()]
    code = [line for line in lines if line and not line.startswith("#")]
    if not code:
        return False
    if code[0].split()[0] in SHELL_CELL_MAGICS:
        return True
    if code[0].split()[0] == "%%capture":
        code = code[1:]
    return all(line.startswith(("!", "%")) for line in code)


def badge_html(seconds: float, part: float | None, flags: Sequence[Flag], href: str | None,
               labels: Labels) -> str:
    """``2.30 s, 69% of this page's cell time — slow, large share (on the status page)``
    linking to the cell's row on the status page; reasons in the tooltip and as text
    for screen readers."""
    text = format_seconds(seconds)
    if part is not None:
        text += ", " + labels.badge_share.format(share=format_percent(part))
    names = flag_names(flags, labels)
    if names:
        text += f" — {names}"
    reasons = "; ".join(f"{labels.flag_text.get(f.rule, f.rule)}: {f.text}" for f in flags)
    return render_template("badge.html", rules=[f.rule for f in flags], href=href, text=text,
                           reasons=reasons, where=labels.badge_where)


def flagged_cell_id(docname: str, number: int) -> str:
    """The id of a flagged cell's line in its notebook's row on the status page."""
    return f"{row_id(docname)}-cell-{number}"


def _forget_analysis(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                     removed: set[str]) -> list[str]:
    build_state(app).analysis = None  # records are about to change
    return []


def setup_status_page(app: Sphinx) -> None:
    setup_support(app)
    app.connect("env-get-outdated", _forget_analysis)
    app.add_directive("execution-status", ExecutionStatusDirective)
    app.add_env_collector(StatusPagesCollector)
    app.connect("env-updated", _env_updated)
    app.add_post_transform(StatusTableToHtml)
    app.add_post_transform(StatusTableToNodes)
    app.add_post_transform(CellAnchorsAndBadges)
