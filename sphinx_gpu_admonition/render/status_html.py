"""The status page's HTML: the findings and the table, through the templates, and
the per-cell data the script loads when a row's details open.

The table's rows come from :mod:`.status_rows` (the same rows as every other
builder's table); ``templates/findings.html`` and ``templates/status_table.html``
escape every value.  The page is complete without JavaScript; the script
(``static/gpu-status.js``) sorts and filters the rows and renders a notebook's
cells from :func:`cells_data`, which names each cell and its anchor on the
notebook page, so that the script derives neither.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from markupsafe import Markup

from ..model.analysis import (
    HINT_RULES,
    BuildAnalysis,
    Flag,
    NotebookComparison,
    is_user_compilation,
)
from ..model.findings import budget_findings, findings, flagged_and_notes, headline
from ..model.formatting import format_percent, format_seconds
from ..model.record import CellName, CellRecord, NotebookRecord
from .claims_view import claims_html
from .finding_text import FindingText, code_spans
from .labels import Labels
from .status_rows import (
    MANY_ROWS,
    MARKED_COLUMNS,
    StatusOptions,
    StatusRows,
    fixed_widths,
    flagged_cell_id,
    ratio_text,
    share,
    status_rows,
)
from .templates import render as render_template

#: flagged cells listed above the table before the rest collapse (as the console's)
FINDINGS_SHOWN = 5
#: at most this many in the collapsed rest: a book of 1,000 notebooks keeps a small
#: page; the table's flags column and its "only flagged" switch show every one
FINDINGS_LISTED = 50

#: the per-cell data files: ``status.gpu-cells.json``, ``status.gpu-cells-1.json`` ...
CELLS_DATA_SUFFIX = ".gpu-cells.json"
CELLS_DATA_VERSION = 1
#: notebooks per file of per-cell data: opening a row's details reads the file of
#: its notebook only (one file for 1,000 notebooks x 100 cells: 12 MB to read
#: before the first row opens; one of 50 notebooks: about 600 kB)
NOTEBOOKS_PER_CELLS_FILE = 50


def compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def render_html(analysis: BuildAnalysis, options: StatusOptions,
                page_uri: Callable[[str], str | None], table_id: str = "gpu-status-1",
                row_ids: bool = True, cells_src: str | Sequence[str] | None = None,
                labels: Labels | None = None) -> str:
    """The findings and the status table of ``analysis`` as an HTML fragment
    (everything escaped).

    ``page_uri(docname)``: the relative URI of a notebook page (None: no link);
    ``cells_src``: the URLs (relative to the page) of :func:`cells_data_files`, in
    their order (one URL: all the cells); without it the rows have no per-cell
    details.
    """
    labels = labels or Labels.load()
    if isinstance(cells_src, str):
        cells_src = (cells_src,)
    sources = tuple(cells_src) if cells_src and options.cells else None
    numbers = (cells_file_numbers(r.notebook.docname for r in analysis.notebooks)
               if sources is not None and len(sources) > 1 else {})
    table = status_rows(analysis, options, labels, page_uri, row_ids,
                        with_cells=sources is not None, cells_file=numbers)
    return table_html(table, options, labels, table_id, sources,
                      findings_html(analysis, labels, page_uri, table_id, row_ids),
                      claims_html(analysis.claims, analysis.timing_statements, labels,
                                  page_uri, table_id, row_ids))


def table_html(table: StatusRows, options: StatusOptions, labels: Labels, table_id: str,
               cells_src: Sequence[str] | None, findings_markup: str,
               claims_markup: str = "") -> str:
    """``templates/status_table.html`` of rows made by :func:`.status_rows.status_rows`;
    the timing claims right after the findings (:func:`.claims_view.claims_html`)."""
    sort_key = "name" if options.sort == "name" else "time"
    columns = [{"key": c.key, "label": c.label, "kind": c.kind,
                "aria": (("ascending" if c.key == "name" else "descending")
                         if c.key == sort_key else None)}
               for c in table.columns]
    widths = fixed_widths([c["key"] for c in columns]) if len(table.rows) > MANY_ROWS else None
    return render_template(
        "status_table.html", ident=table_id, labels=labels, columns=columns, widths=widths,
        table_style=table_style(columns, widths),
        rows=table.rows, facts=table.facts, labels_of=table.labels_of, rich=MARKED_COLUMNS,
        cells_src=" ".join(cells_src) if cells_src is not None else None,
        cell_labels=compact_json(cell_labels(labels)) if cells_src is not None else "",
        summary=table.summary, slowest=table.slowest, findings=Markup(findings_markup),
        claims=Markup(claims_markup), totals=table.totals)


def css_string(text: str) -> str:
    """``text`` as a CSS string (quoted, ``\\``, ``"`` and line breaks escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\{ord(m.group()):x} ", escaped) + '"'


def table_style(columns: Sequence[dict[str, Any]], widths: dict[str, Any] | None) -> str:
    """The table's ``style``: each value column's label by its position in a row
    (``--gpu-status-label-2`` is the first ``td``'s), which the phone's layout writes
    before each value: once a table, not once a cell; and a long table's least width."""
    style = [f"--gpu-status-label-{position}:{css_string(column['label'])}"
             for position, column in enumerate(columns[1:], start=2)]
    if widths:
        style.append(f"--gpu-status-least-width:{widths['least']}")
    return ";".join(style)
def code_markup(text: str) -> Markup:
    """A sentence with its backticked code as ``<code>`` (:func:`.finding_text.code_spans`),
    every piece escaped."""
    return Markup("").join(Markup("<code>{}</code>").format(piece) if code
                           else Markup.escape(piece) for piece, code in code_spans(text))


def findings_html(analysis: BuildAnalysis, labels: Labels,
                  page_uri: Callable[[str], str | None], table_id: str = "gpu-status-1",
                  row_ids: bool = True) -> str:
    """The flagged cells, slowest first, and the headline against the baseline
    (``templates/findings.html``; empty when there is neither)."""
    lb = labels
    ngettext = lb.ngettext
    words = FindingText.of(lb)
    rows = []
    every = findings(analysis)
    for finding in every[:FINDINGS_LISTED]:
        record = finding.notebook
        uri = page_uri(record.docname)
        name = finding.name
        rows.append({
            "title": record.title or record.docname, "cell": lb.cell_label(name),
            "href": f"{uri}#{name.anchor}" if uri is not None and name.anchor else uri,
            "location": name.location, "time": format_seconds(finding.seconds),
            "share": words.share(finding.share) if finding.share is not None else "",
            "device": finding.device or lb.no_capture,
            "flags": lb.flag_names(finding.rules),
            "row_href": ("#" + flagged_cell_id(record.docname, name.number)
                         if row_ids else None),
            "code": finding.code_text(), "timing": words.timing(finding),
            "reason": code_markup(words.finding_reason(finding)),
            "action": code_markup(words.finding_action(finding)),
        })
    top = FINDINGS_SHOWN
    summary = headline(analysis)
    budgets = [{"text": lb.budget_item.format(
                    notebook=row.notebook.title or row.notebook.docname,
                    time=format_seconds(row.seconds), budget=format_seconds(row.budget_seconds)),
                "href": page_uri(row.notebook.docname)}
               for row in budget_findings(analysis)]
    build_flags = [{"reason": code_markup(words.reason(flag)),
                    "action": code_markup(words.rule_action(flag))}
                   for flag in analysis.build_flags]
    if not rows and summary is None and not budgets and not build_flags:
        return ""
    counted = len(flagged_and_notes(every)[0])  # a note (slow-ok, imports) is not flagged
    title = (ngettext("%d flagged cell, slowest first", "%d flagged cells, slowest first",
                      counted) % counted) if counted else lb.no_flagged
    more = len(rows) - top
    unlisted = len(every) - len(rows)
    return render_template(
        "findings.html", ident=table_id, rows=rows, top=top, labels=lb, title=title,
        more=ngettext("%d more flagged cell", "%d more flagged cells", more) % more,
        unlisted=ngettext("%d more in the table below (its flags column).",
                          "%d more in the table below (its flags column).",
                          unlisted) % unlisted if unlisted else "",
        headline=words.headline(summary) if summary else None,
        headline_device_changed=bool(summary and summary.device_changed),
        budgets=budgets, budget_title=lb.budget_title(len(budgets)),
        build_flags=build_flags)


# -- per-cell data, loaded by the script when a row's details open ----------------
def cell_labels(labels: Labels) -> dict[str, Any]:
    """The texts the script needs for the cell tables (translated, as data)."""
    return {
        "cell": labels.cell, "time": labels.time, "share": labels.share,
        "compile": labels.compile, "source": labels.source, "flags": labels.flags,
        "baseline": labels.baseline, "ratio": labels.ratio, "new": labels.new,
        "gone": labels.gone, "expected": labels.expected_error,
        "flag": labels.flag_text, "hints": list(HINT_RULES),
    }


def _cell_entry(position: int, cell: CellRecord, name: CellName, flags: Sequence[Flag],
                total: float, comparison: NotebookComparison | None,
                labels: Labels, notebook: NotebookRecord, words: FindingText
                ) -> dict[str, Any]:
    """One cell with short keys; texts formatted here, so that there is one formatter."""
    entry: dict[str, Any] = {
        "m": labels.cell_label(name),
        "s": float(f"{cell.seconds:.4g}"),  # for sorting only: 4 digits are plenty
        "t": format_seconds(cell.seconds),
        "p": format_percent(share(cell.seconds, total)),
        "l": cell.first_line,
    }
    if cell.index is not None:
        entry["i"] = cell.index
        entry["a"] = name.anchor
    if cell.error:
        entry["e"] = cell.error
        if cell.error_expected:
            entry["x"] = 1
    if cell.compile_seconds or cell.compilations:
        # the user's functions by name: what to change is the user's code; JAX's own
        # operations (``jit(iota)``, compiled for the shapes it passes them) as one group
        functions = sorted(((function, count) for function, count in cell.compilations.items()
                            if is_user_compilation(function, notebook)),
                           key=lambda kv: (-kv[1], kv[0]))
        internal = cell.compilation_count - sum(count for _, count in functions)
        parts = [f"{function} {count}×" for function, count in functions[:3]]
        if len(functions) > 3:
            parts.append("…")
        if internal:
            parts.append(f"{labels.jax_internals} {internal}×")
        listed = ", ".join(parts)
        entry["k"] = format_seconds(cell.compile_seconds)
        entry["n"] = f"{labels.compilations_text(cell.compilation_count)}: {listed}"
    if flags:
        entry["f"] = [[flag.rule, words.text(flag)] for flag in flags]
    if comparison is not None:
        cell_comparison = comparison.cells.get(position)
        if cell_comparison is not None and cell_comparison.state != "new":
            entry["b"] = format_seconds(cell_comparison.baseline_seconds)
            entry["r"] = ratio_text(cell_comparison.ratio)
    return entry


def cells_data(analysis: BuildAnalysis, labels: Labels | None = None) -> dict[str, Any]:
    """Per-cell details of every notebook, keyed by docname, as compact plain data.

    ``{"v": 1, "nb": {docname: {"c": [cell...], "g": [gone cell...], "cmp": 1}}}``; a
    cell is ``{"m": its name ("cell 3"), "i": index, "a": its anchor on the notebook
    page ("cell-5"), "s": seconds, "t": time, "p": share, "l": first line,
    "e": error, "x": 1 (the error was expected), "k": compile time, "n": compilations,
    "f": [[rule, reason]...], "b": baseline time, "r": ratio}`` with empty keys left
    out.  Every text is data, inserted by the script as text, never as markup.
    """
    labels = labels or Labels.load()
    words = FindingText.of(labels)
    notebooks: dict[str, Any] = {}
    for result in analysis.notebooks:
        record = result.notebook
        comparison = result.comparison
        total = record.cells_seconds
        entry: dict[str, Any] = {"c": [
            _cell_entry(position, cell, name, flags, total, comparison, labels, record, words)
            for position, (cell, name, flags) in enumerate(
                zip(record.cells, record.cell_names(), result.cell_flags, strict=True))]}
        if comparison is not None:
            entry["cmp"] = 1
            if comparison.gone_cells:
                # "i": the gone cell's number ("#3": cell 3 of the baseline)
                entry["g"] = [{"i": key + 1, "t": format_seconds(seconds), "l": first_line}
                              for key, seconds, first_line in comparison.gone_cells]
        notebooks[record.docname] = entry
    return {"v": CELLS_DATA_VERSION, "nb": notebooks}


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


def cells_file_name(page_stem: str, number: int) -> str:
    """The name of file ``number`` of the per-cell data of page ``page_stem``."""
    return page_stem + (CELLS_DATA_SUFFIX if number == 0 else f".gpu-cells-{number}.json")
