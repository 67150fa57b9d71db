"""The status table as data: its columns, rows, totals and summary.

One row model for every builder: the HTML table (:mod:`.status_html`, through
``templates/status_table.html``) and the plain docutils table of the other
builders read the same :class:`StatusRows`.  A row's value is data (its sort key,
its text and its *marks*: the words around the text, such as ``new`` or
``regression``); :data:`MARKED_COLUMNS` says which columns have marks, and
:func:`plain_text` and the template's ``value`` macro both write a value from its
marks, so the two tables cannot say different things.  Nothing is escaped here:
the template escapes everything.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ..model.analysis import BuildAnalysis, NotebookAnalysis, NotebookComparison
from ..model.device import device_summary
from ..model.findings import BuildTotals, device_changed
from ..model.formatting import format_date, format_mib, format_percent, format_ratio, format_seconds
from ..model.record import (
    CACHE,
    EARLIER_BUILD,
    STATUS_ORDER,
    NotebookRecord,
    sorted_slowest_first,
)
from .labels import GONE, Labels, cache_miss_text

SORT_CHOICES = ("time", "name")
_TRUE = ("yes", "true", "on", "1")
_FALSE = ("no", "false", "off", "0")

#: status -> rank used to sort the status column (the model's order; a notebook
#: only in the baseline last)
STATUS_RANK = {status: rank for rank, status in enumerate((*STATUS_ORDER, GONE))}

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
#: the columns whose values have marks (or markup of their own: a status, a date, a
#: bar); every other value is just its text
MARKED_COLUMNS = ("status", "time", "flags", "executed", "slowest", "baseline")
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


def fixed_widths(keys: list[str]) -> dict[str, Any]:
    """The column widths (percentages) and the table's least width (em) of a table
    laid out with fixed widths (:data:`MANY_ROWS`)."""
    total = sum(COLUMN_WIDTHS[key][0] for key in keys)
    return {"columns": {key: f"{100 * COLUMN_WIDTHS[key][0] / total:.1f}%" for key in keys},
            "least": f"{sum(COLUMN_WIDTHS[key][1] for key in keys)}em"}


# -- values and their marks ---------------------------------------------------------
class Mark(NamedTuple):
    """A word beside a value's text: ``new``, ``regression``, a count, a provenance.

    ``before``: written before the text (else after it), with ``separator`` between
    them; ``classes`` (a ``<span>``), ``href`` (a link) and ``title`` (a tooltip) are
    for HTML only.
    """

    text: str
    before: bool = False
    separator: str = " "
    classes: str | None = None
    href: str | None = None
    title: str | None = None


#: one value of a row: ``sort`` (the table's sort key), ``text``, ``marks``, and for
#: HTML ``classes``/``title`` (a span around the text), ``iso`` (a date) or ``bar``
Value = dict[str, Any]


def value(sort: Any, text: Any, marks: tuple[Mark, ...] = (), **parts: Any) -> Value:
    return {"sort": sort, "text": text, "marks": marks, **parts}


def plain_text(item: Value) -> str:
    """A value as one line of text: its marks and its text, as the HTML table shows
    them, for builders without HTML."""
    marks: tuple[Mark, ...] = item["marks"]
    before = "".join(mark.text + mark.separator for mark in marks if mark.before)
    after = "".join(mark.separator + mark.text for mark in marks if not mark.before)
    return f"{before}{item['text']}{after}"


# -- small texts ---------------------------------------------------------------------
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def row_id(docname: str) -> str:
    """The id of a notebook's row on the status page (stable, unique per docname)."""
    slug = _UNSAFE.sub("-", docname).strip("-")
    if slug != docname:
        slug += "-" + hashlib.sha1(docname.encode("utf-8")).hexdigest()[:6]
    return "gpu-status-" + slug


def flagged_cell_id(docname: str, number: int) -> str:
    """The id of a flagged cell's line in its notebook's row on the status page."""
    return f"{row_id(docname)}-cell-{number}"


def share(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


def ratio_text(ratio: float | None) -> str:
    return format_ratio(ratio, times="×")


def sort_number(number: float | None) -> str:
    return "" if number is None else f"{number:.6g}"


def device_text(record: NotebookRecord, labels: Labels) -> str:
    """``JAX gpu — GPU: Tesla T4`` (:func:`.device.device_summary`), or why there is none."""
    if not record.measured:
        return labels.not_measured(record) if record.executed else "–"
    if record.capture == "partial":
        return f"{device_summary(record.environment, labels.no_jax)} ({labels.partial_capture})"
    return device_summary(record.environment, labels.no_jax)


def order(rows: list[NotebookAnalysis], sort: str) -> list[NotebookAnalysis]:
    """Slowest first (executed notebooks before the others) or by title."""
    if sort == "name":
        return sorted(rows, key=lambda a: ((a.notebook.title or a.notebook.docname).casefold(),
                                           a.notebook.docname))
    return sorted(rows, key=lambda a: (not a.notebook.executed, -a.notebook.seconds,
                                       a.notebook.docname))


def is_listed(result: NotebookAnalysis, options: StatusOptions) -> bool:
    record = result.notebook
    return (not options.min_seconds or record.failed or not record.executed
            or record.seconds >= options.min_seconds)


def status_summary(totals: BuildTotals, labels: Labels) -> str:
    return ", ".join(f"{count} {labels.status_text.get(status, status)}"
                     for status, count in sorted(totals.by_status.items(),
                                                 key=lambda kv: STATUS_RANK.get(kv[0], 9)))


def provenance_summary(totals: BuildTotals, labels: Labels) -> str:
    parts = [f"{totals.executed_now} {labels.executed_now}",
             f"{totals.from_cache} {labels.cache}"]
    if totals.from_earlier_build:
        parts.append(f"{totals.from_earlier_build} {labels.earlier_build}")
    return ", ".join(parts)


# -- the table -------------------------------------------------------------------------
class Column(NamedTuple):
    key: str
    label: str
    #: how the script sorts it: "text" or "number"
    kind: str


class StatusRows(NamedTuple):
    """One status table as data; every builder writes this."""

    #: the shown columns; the first is the row header (the notebook)
    columns: list[Column]
    #: columns not shown: their values go in each row's details
    facts: list[str]
    #: every column's label by key (the details name the facts)
    labels_of: dict[str, str]
    #: the listed notebooks (sorted), then the notebooks only in the baseline
    rows: list[dict[str, Any]]
    #: the totals row: its header, and a text per column
    totals: dict[str, Any]
    #: the sentence above the table
    summary: str
    #: notebooks left out by ``:min-seconds:``
    hidden: int
    #: the slowest notebook and its share of the build (first screen), "" with fewer
    #: than two executed notebooks
    slowest: str = ""


def status_rows(analysis: BuildAnalysis, options: StatusOptions, labels: Labels,
                page_uri: Callable[[str], str | None] = lambda docname: None,
                row_ids: bool = True, with_cells: bool = False,
                cells_file: dict[str, int] | None = None) -> StatusRows:
    """The table of ``analysis``.

    ``page_uri(docname)``: the relative URI of a notebook page (None: no link);
    ``row_ids``: rows and flagged cells get ids (the first table of a page);
    ``with_cells``: the details have a place for the cells (HTML with a data file),
    ``cells_file``: the number of the file that holds each notebook's cells.
    """
    return _Rows(analysis, options, labels, page_uri, row_ids, with_cells,
                 cells_file or {}).build()


def column_label(key: str, labels: Labels) -> str:
    lb = labels
    return {"name": lb.notebook, "status": lb.status, "executed": lb.executed,
            "time": lb.time, "device": lb.device, "cells": lb.cells,
            "slowest": lb.slowest, "flags": lb.flags, "compile": lb.compile,
            "memory": lb.memory, "baseline": lb.baseline, "ratio": lb.ratio,
            "baseline_device": lb.baseline_device}[key]


class _Rows:
    """Builds one :class:`StatusRows` (its state: what every row needs to know)."""

    def __init__(self, analysis: BuildAnalysis, options: StatusOptions, labels: Labels,
                 page_uri: Callable[[str], str | None], row_ids: bool, with_cells: bool,
                 cells_file: dict[str, int]):
        self.analysis = analysis
        self.options = options
        self.labels = labels
        self.page_uri = page_uri
        self.row_ids = row_ids
        self.with_cells = with_cells
        self.cells_file = cells_file
        self.comparing = analysis.baseline is not None
        #: the slowest executed notebook's time: a full time bar
        self.longest = max((r.notebook.seconds for r in analysis.notebooks
                            if r.notebook.executed), default=0.0)
        self.columns = [Column(key, column_label(key, labels), COLUMN_SORT[key])
                        for key in options.columns
                        if self.comparing or key not in COMPARISON_COLUMNS]
        shown = {column.key for column in self.columns}
        self.facts = [key for key in COLUMNS if key not in shown and key not in ("name", "status")
                      and (self.comparing or key not in COMPARISON_COLUMNS)]

    def build(self) -> StatusRows:
        rows = order(self.analysis.notebooks, self.options.sort)
        listed = [r for r in rows if is_listed(r, self.options)]
        totals = BuildTotals.of(self.analysis)
        table_rows = [self._notebook(result) for result in listed]
        table_rows += [self._gone(record)
                       for record in sorted(self.analysis.gone, key=lambda nb: nb.docname)]
        hidden = len(rows) - len(listed)
        return StatusRows(self.columns, self.facts,
                          {key: column_label(key, self.labels) for key in COLUMNS},
                          table_rows, self._totals(totals), self._summary(totals, hidden), hidden,
                          self._slowest_notebook(totals))

    def _slowest_notebook(self, totals: BuildTotals) -> str:
        """``Slowest: JAX intro, 53.0 s (38% of the build).``: what a deploy's time goes
        to, whether or not the notebook has a flagged cell."""
        executed = [r.notebook for r in self.analysis.notebooks if r.notebook.executed]
        if len(executed) < 2 or totals.seconds <= 0:
            return ""
        slowest = sorted_slowest_first(executed)[0]
        return self.labels.slowest_notebook.format(
            notebook=slowest.title or slowest.docname, time=format_seconds(slowest.seconds),
            share=format_percent(slowest.seconds / totals.seconds))

    def _summary(self, totals: BuildTotals, hidden: int) -> str:
        lb = self.labels
        ngettext = lb.ngettext
        if not totals.notebooks and not self.analysis.gone:
            return lb.no_records
        parts = [(ngettext("%d notebook", "%d notebooks", totals.notebooks) % totals.notebooks)
                 + f": {status_summary(totals, lb)} ({provenance_summary(totals, lb)})",
                 lb.in_total.format(time=format_seconds(totals.seconds)),
                 ngettext("%d flagged cell", "%d flagged cells", totals.flagged) % totals.flagged]
        gone = len(self.analysis.gone)
        if gone:  # their rows are in the table too: the counts add up to its rows
            parts.append(ngettext("%d notebook only in the baseline",
                                  "%d notebooks only in the baseline", gone) % gone)
        text = "; ".join(parts) + "."
        if hidden:
            text += " " + lb.hidden_text(hidden, format_seconds(self.options.min_seconds))
        return text

    def _status(self, record: NotebookRecord) -> Value:
        title = record.error.message if record.error is not None else None
        return value(STATUS_RANK.get(record.status, 9), self.labels.status_of(record),
                     classes=f"gpu-status-mark gpu-status-{record.status}", title=title)

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

    def _time(self, result: NotebookAnalysis) -> Value:
        """The time, with the baseline's inline (``88.4 s → 3.59 s, 0.04×``), and its bar."""
        lb = self.labels
        record, comparison = result.notebook, result.comparison
        if not record.executed:
            return value("", "–")
        now = format_seconds(record.seconds)
        bar = self._bar(result)
        if comparison is None or comparison.state == "new":
            marks = (Mark(lb.new, classes="gpu-status-new"),) if comparison is not None else ()
            return value(sort_number(record.seconds), now, marks, bar=bar)
        text = f"{format_seconds(comparison.baseline_seconds)} → {now}"
        if comparison.ratio is not None:
            text += f", {ratio_text(comparison.ratio)}"
        marks = []
        if comparison.regression:
            marks.append(Mark(lb.regression,
                              classes="gpu-status-mark gpu-status-regression-mark"))
        if device_changed(comparison.baseline_device, record):
            marks.append(Mark(lb.device_changed,
                              classes="gpu-status-mark gpu-status-device-change",
                              title=(f"{comparison.baseline_device} → "
                                     f"{record.environment.device_label}")))
        return value(sort_number(record.seconds), text, tuple(marks), bar=bar)

    def _flags(self, result: NotebookAnalysis) -> Value:
        """``2: slow, sequential loop``: the flagged cells and the rules among them."""
        flagged = [flags for flags in result.cell_flags if flags]
        if not flagged:
            return value("0", "0")
        rules = list(dict.fromkeys(flag.rule for flags in flagged for flag in flags))
        counted = len(result.warned_cells)  # a note (slow-ok, imports) is no flagged cell
        if not counted:
            return value(0, self.labels.flag_names(rules))
        return value(counted, self.labels.flag_names(rules),
                     (Mark(str(counted), before=True, separator=": ",
                           classes="gpu-status-flagged"),))

    def _executed(self, record: NotebookRecord) -> Value:
        lb = self.labels
        if not (record.executed and record.executed_at):
            return value("", "–")
        how = {CACHE: lb.cache, EARLIER_BUILD: lb.earlier_build}.get(
            record.provenance, lb.executed_now)
        return value(record.executed_at, format_date(record.executed_at),
                     (Mark(how, before=True,
                           classes=f"gpu-status-provenance gpu-status-{record.provenance}"),),
                     iso=record.executed_at)

    def _slowest(self, record: NotebookRecord, uri: str | None) -> Value:
        slowest = record.slowest_cell()
        if slowest is None:
            return value("", "–")
        name = record.cell_name(slowest)
        part = share(slowest.seconds, record.cells_seconds)
        href = f"{uri}#{name.anchor}" if uri is not None and name.anchor else None
        return value(sort_number(slowest.seconds),
                     f"{format_seconds(slowest.seconds)} ({format_percent(part)})",
                     (Mark(self.labels.cell_label(name), separator=" · ", href=href),))

    def _values(self, result: NotebookAnalysis, uri: str | None) -> dict[str, Value]:
        """Every column of a notebook's row: key -> its sort value, text and marks."""
        record = result.notebook
        device = device_text(record, self.labels)
        count = len(record.cells)
        compile_share = share(record.compile_seconds, record.cells_seconds)
        memory = record.peak_memory_mb  # the kernel's peak, as sphinx-gallery reports
        values: dict[str, Value] = {
            "status": self._status(record), "time": self._time(result),
            "flags": self._flags(result), "device": value(device.casefold(), device),
            "executed": self._executed(record), "cells": value(count or "", count or "–"),
            "slowest": self._slowest(record, uri),
            "compile": value(sort_number(compile_share),
                             f"{format_percent(compile_share)} "
                             f"({format_seconds(record.compile_seconds)})"
                             if record.compile_seconds else "–"),
            "memory": value(sort_number(memory), format_mib(memory) + (
                f" · GPU {format_mib(record.device_peak_memory_mb)}"
                if record.device_peak_memory_mb else "")),
        }
        if self.comparing:
            values.update(self._comparison_values(result.comparison))
        return values

    def _comparison_values(self, comparison: NotebookComparison | None) -> dict[str, Value]:
        if comparison is None:
            return {"baseline": value("", ""), "ratio": value("", ""),
                    "baseline_device": value("", "")}
        if comparison.state == "new":
            return {"baseline": value("", "", (Mark(self.labels.new, separator="",
                                                    classes="gpu-status-new"),)),
                    "ratio": value("", "–"), "baseline_device": value("", "–")}
        device = comparison.baseline_device or comparison.baseline_backend or "–"
        return {"baseline": value(sort_number(comparison.baseline_seconds),
                                  format_seconds(comparison.baseline_seconds)),
                "ratio": value(sort_number(comparison.ratio), ratio_text(comparison.ratio)),
                "baseline_device": value((comparison.baseline_device or "").casefold(),
                                         device)}

    def _notebook(self, result: NotebookAnalysis) -> dict[str, Any]:
        """A notebook's row and its details."""
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
        # the filter finds a notebook by its title and docname (the script reads them
        # from the row's header), and by these words: its status, device, baseline
        # device and the names of its cells' flags
        words = [lb.status_of(record), device_text(record, lb)]
        words += [lb.flag_name(flag.rule) for flags in result.cell_flags for flag in flags]
        if comparison is not None and comparison.baseline_device:
            words.append(comparison.baseline_device)
        return {
            "classes": classes, "ident": row_id(docname) if self.row_ids else None,
            "filter": " ".join(dict.fromkeys(words)).casefold(),
            "flagged": any(result.cell_flags), "title": title,
            "uri": uri, "docname": docname, "gone": False,
            "values": self._values(result, uri), "details": self._details(result, title, uri),
        }

    def _details(self, result: NotebookAnalysis, title: str,
                 uri: str | None) -> dict[str, Any] | None:
        """The row under a notebook: its error, its flagged cells, the columns not
        shown, and a place for its cells (filled by the script from the data file)."""
        lb = self.labels
        record = result.notebook
        has_cells = self.with_cells and bool(
            record.cells or (result.comparison and result.comparison.gone_cells))
        if not (record.error or has_cells or self.facts or record.cache_miss):
            return None
        flagged = len(result.warned_cells)  # notes are not flagged cells
        summary = lb.cells_summary(len(record.cells), title)
        if flagged:
            summary += " (" + lb.ngettext("%d flagged cell", "%d flagged cells",
                                          flagged) % flagged + ")"
        error = None
        if record.error is not None:
            failing = record.error_cell()
            where = (" " + lb.error_in.format(cell=lb.cell_label(record.cell_name(failing)))
                     if failing is not None else "")
            error = {"type": record.error.type, "where": where,
                     "message": record.error.message}
        cells = []
        for cell, flags in result.flagged_cells:
            name = record.cell_name(cell)
            cells.append({
                "ident": flagged_cell_id(record.docname, name.number) if self.row_ids else None,
                "label": lb.cell_label(name),
                "href": f"{uri}#{name.anchor}" if uri is not None and name.anchor else None,
                "time": format_seconds(cell.seconds),
                "names": lb.flag_names([f.rule for f in flags])})
        miss = cache_miss_text(record, lb.translate, lb.cell_label)
        return {"summary": summary, "error": error, "flagged": cells, "cells": has_cells,
                "cells_file": self.cells_file.get(record.docname),
                "cache_miss": lb.translate("Executed instead of taken from the cache: %s.")
                % miss if miss else None}

    def _gone(self, record: NotebookRecord) -> dict[str, Any]:
        lb = self.labels
        title = record.title or record.docname
        baseline_seconds = record.seconds if record.executed else None
        device = record.device_label or "–"
        values = {key: value("", "–") for key in COLUMNS}
        values["status"] = value(STATUS_RANK[GONE], lb.status_text[GONE],
                                 classes=f"gpu-status-mark gpu-status-{GONE}")
        values["time"] = value("", f"{format_seconds(baseline_seconds)} → –")
        values["baseline"] = value(sort_number(baseline_seconds),
                                   format_seconds(baseline_seconds))
        values["baseline_device"] = value(device.casefold(), device)
        details = ({"summary": title, "error": None, "flagged": [], "cells": False,
                    "cells_file": None, "cache_miss": None} if self.facts else None)
        return {"classes": "gpu-status-notebook gpu-status-row-gone", "ident": None,
                "filter": lb.gone.casefold(), "flagged": False, "title": title, "uri": None,
                "docname": record.docname, "gone": True, "values": values,
                "details": details}

    def _totals(self, totals: BuildTotals) -> dict[str, Any]:
        lb = self.labels
        ratio = share(totals.compared_now, totals.compared_before)
        time = format_seconds(totals.seconds)
        if self.comparing:
            time = f"{format_seconds(totals.baseline_seconds)} → {time}, {ratio_text(ratio)}"
        return {"label": f"{lb.total}: {totals.notebooks}", "texts": {
            "status": status_summary(totals, lb),
            "executed": provenance_summary(totals, lb),
            "time": time, "device": lb.ngettext("%d machine", "%d machines", totals.machines)
            % totals.machines, "cells": totals.cells, "slowest": "", "flags": totals.flagged,
            "compile": format_percent(share(totals.compile_seconds, totals.cells_seconds)),
            "memory": "", "baseline": format_seconds(totals.baseline_seconds),
            "ratio": ratio_text(ratio), "baseline_device": "",
        }}
