"""GitHub Markdown of ``report`` and ``compare`` (and so of the job summary and a
pull-request comment), from the plain-data summaries of :mod:`.summary`.

Within GitHub's limits: a table shows at most :data:`MAX_TABLE_ROWS` rows and then
says how many more there are, the whole text stays under :data:`MAX_MARKDOWN_BYTES`
(the runner drops a job summary over 1 MiB), and an ``@`` in untrusted text is
written ``&#64;`` so that a notebook or a status file cannot mention (notify) anyone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model.formatting import format_ratio, format_seconds, one_line, safe_lines, shorten
from .claims_text import claims_summary_of, review_summary
from .finding_text import code_spans
from .summary import (
    MACHINE_FIELDS,
    cells_heading,
    machine_value,
    plural,
    stopped_line,
    time_line,
    totals_line,
    unchanged_line,
)

#: rows of one table; a longer one ends with "N more not shown"
MAX_TABLE_ROWS = 100
#: the most a summary or comment may take (GitHub drops a job summary over 1 MiB)
MAX_MARKDOWN_BYTES = 512 * 1024

_MD_SPECIAL = set("\\`*_[]<>|#~")


def md_text(text: Any) -> str:
    """Text for a Markdown table cell: punctuation that means something escaped, ``@``
    as an entity (no mention)."""
    return _escaped(" ".join(one_line(text).split()))


def _escaped(text: str) -> str:
    return "".join("\\" + ch if ch in _MD_SPECIAL else "&#64;" if ch == "@" else ch
                   for ch in text)


def md_prose(text: Any) -> str:
    """A sentence of the findings for a table cell: its backticked code as code spans
    (:func:`.finding_text.code_spans`), the rest as :func:`md_text` escapes it."""
    text = " ".join(one_line(text).split())
    return "".join(md_code(piece) if code else _escaped(piece)
                   for piece, code in code_spans(text))


def md_code(text: str) -> str:
    """A code span for a table cell, safe with backticks and ``|`` in ``text`` (GitHub
    does not mention anyone from a code span)."""
    text = " ".join(one_line(text).split())
    if not text:
        return ""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
             right: Sequence[int] = (), max_rows: int = MAX_TABLE_ROWS) -> list[str]:
    """A GitHub table; cells must already be escaped (:func:`md_text`, :func:`md_code`).
    Rows past ``max_rows`` are counted in a line under the table."""
    rule = ["---:" if i in right else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows[:max_rows]]
    if len(rows) > max_rows:
        lines += ["", f"*{len(rows) - max_rows} more not shown.*"]
    return lines


def capped(lines: list[str], limit: int = MAX_MARKDOWN_BYTES) -> list[str]:
    """``lines`` cut to at most ``limit`` bytes (UTF-8), ending with how many lines
    were left out; each a :func:`~..model.formatting.safe_line` (a code span keeps its
    text raw otherwise, and the comment is printed into the log)."""
    lines = safe_lines(lines)
    size = 0
    for count, line in enumerate(lines):
        size += len(line.encode("utf-8")) + 1
        if size > limit - 200:  # room for the closing line
            return lines[:count] + ["", f"*{len(lines) - count} more lines not shown "
                                        f"(the summary is capped at {limit // 1024} KiB).*"]
    return lines


def fmt_seconds(seconds: float | None) -> str:
    return format_seconds(seconds, missing="-")  # ASCII for terminals and Markdown


def fmt_ratio(ratio: float | None) -> str:
    return format_ratio(ratio, missing="-")


def fmt_change(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "-"
    delta = after - before
    return ("+" if delta >= 0 else "-") + fmt_seconds(abs(delta))


def machines_markdown(machines: list[dict[str, Any]], prefix: str = "") -> list[str]:
    if not machines:
        return ["No machine data (no notebook was captured)."]
    headers = ["", *[md_text(f"{prefix}{m['id']} ({plural(len(m['notebooks']), 'notebook')})")
                     for m in machines]]
    rows = [[label, *[md_text(machine_value(m, key)) for m in machines]]
            for key, label in MACHINE_FIELDS]
    return md_table(headers, rows)


def render_report_markdown(summary: dict[str, Any], top: int) -> list[str]:
    totals = summary["totals"]
    against = summary.get("baseline")
    # a regression or a change of device is news, as on the status page: never a green mark
    news = bool(against and (against["regressed"] or against["device_change"]))
    mark = "❌" if totals["failed"] or totals["build_failure"] else "⚠️" if news else "✅"
    lines = [f"### {mark} Notebook execution: {md_text(totals_line(totals))}", ""]
    if against:
        lines += [f"**{md_text(against['headline'])}**", ""]
    lines.append(f"Total time: {md_text(time_line(totals))}.")
    stopped = stopped_line(totals)
    if stopped:
        lines += ["", f"**{md_text(stopped)}**"]
    if summary["build"]:
        lines += ["", f"<sub>{md_text(summary['build_line'])}</sub>"]
    if summary["failures"]:
        lines += ["", "#### Failures", ""]
        lines += md_table(["Notebook", "Status", "Error", "Cell", "Message"], [
            [md_text(f["docname"]), md_text(f["status"]), md_text(f["error_type"] or "-"),
             md_text(f["cell"] or "-"),
             md_code(shorten(f["message"], 100))] for f in summary["failures"]])
    if summary.get("capture_failures"):
        lines += ["", "#### Not measured", ""]
        lines += [f"- {md_text(row['docname'])}: capture failed: "
                  f"{md_text(shorten(row['message'], 200))}"
                  for row in summary["capture_failures"]]
    if summary["slowest_notebooks"]:
        lines += ["", f"#### Slowest notebooks (top {top})", ""]
        lines += md_table(["Time", "Notebook", "Status", "Outputs", "Cells", "Device"], [
            [fmt_seconds(nb["seconds"]), md_text(nb["docname"]), md_text(nb["status"]),
             md_text(nb["provenance"]), str(nb["cells"]), md_text(nb["device"] or "-")]
            for nb in summary["slowest_notebooks"]], right=(0, 4))
    if summary["slowest_cells"]:
        lines += ["", f"#### Slowest cells (top {top})", ""]
        lines += md_table(["Time", "Compile", "Notebook", "Cell", "First line"], [
            [fmt_seconds(c["seconds"]), fmt_seconds(c["compile_seconds"] or None),
             md_text(c["docname"]), md_text(c["cell"]),
             md_code(shorten(c["first_line"]))] for c in summary["slowest_cells"]],
            right=(0, 1))
    if summary["flagged_cells"]:
        lines += ["", f"#### Flagged cells ({len(summary['flagged_cells'])})", ""]
        # the code and the compile/run split, as the console and the page show them
        lines += md_table(["Time", "Notebook", "Cell", "Where", "Code", "Compile, run",
                           "Why", "What to do"], [
            [fmt_seconds(c["seconds"]), md_text(c["docname"]),
             md_text(c["cell"]), md_code(c["location"] or ""),
             md_code(shorten(c["code"] or c["first_line"])), md_text(c["timing"] or "-"),
             md_prose("; ".join(c["reasons"] + [f"hint: {h}" for h in c["causes"]])),
             md_prose(c["action"])]
            for c in summary["flagged_cells"]], right=(0,))
    if summary.get("notes"):  # shown, never counted as flagged (slow-ok, imports)
        lines += ["", f"#### Notes ({len(summary['notes'])}): slow on purpose or only imports",
                  ""]
        lines += md_table(["Time", "Notebook", "Cell", "Where", "Why", "What to do"], [
            [fmt_seconds(c["seconds"]), md_text(c["docname"]), md_text(c["cell"]),
             md_code(c["location"] or ""), md_prose("; ".join(c["reasons"])),
             md_prose(c["action"] or "-")]
            for c in summary["notes"]], right=(0,))
    if summary["over_budget"]:
        lines += ["", f"#### Over their time budget ({len(summary['over_budget'])})", ""]
        lines += md_table(["Time", "Notebook", "Where", "Budget"], [
            [fmt_seconds(row["seconds"]), md_text(row["docname"]),
             md_code(row["location"] or ""), fmt_seconds(row["budget_seconds"])]
            for row in summary["over_budget"]], right=(0, 3))
    for flag in summary["build_findings"]:  # the build's, not a cell's
        lines += ["", f"**This build:** {md_prose(flag['reason'])}. "
                      f"**What to do:** {md_prose(flag['action'])}."]
    lines += claims_markdown(summary["claims"], summary["timing_statements"])
    warnings = [item for item in summary["warnings"] if not item["repeats_finding"]]
    if warnings:  # what the build's log said, but for the findings listed above
        lines += ["", f"#### Build warnings ({len(warnings)})", ""]
        lines += md_table(["Where", "Warning", "Message"], [
            [md_code(item["where"]), md_code(item["name"]), md_text(item["message"])]
            for item in warnings])
    lines += ["", "#### Machines", ""]
    lines += machines_markdown(summary["machines"])
    return capped(lines)


_VERDICT_SIGNS = {"fails": "❌", "too_close": "⚠️", "holds": "✅", "not_checked": "❔"}


def claims_markdown(claims: list[dict[str, Any]], statements: list[dict[str, Any]]
                    ) -> list[str]:
    """The timing claims (failing first, each build's verdict) and the review list's
    count: what the status page lists, for a job summary or a pull request."""
    if not claims and not statements:
        return []
    lines = ["", f"#### {md_text(claims_summary_of([row['verdict'] for row in claims]))}", ""]
    if claims:
        lines += md_table(["", "Claim", "Where", "Sentence", "Each build"], [
            [_VERDICT_SIGNS.get(row["verdict"], ""), md_code(row["expression"]),
             md_code(row["where"]), md_text(shorten(row["sentence"], 120) or "-"),
             md_text("; ".join(check["text"] for check in row["checks"]))]
            for row in claims])
    if statements:
        pages = len({row["page"] for row in statements})
        lines += ["", f"*{md_text(review_summary(len(statements), pages))}: sentences about "
                      "speed that no claim checks, listed on the status page with the timed "
                      "cells before them.*"]
    return lines


def compare_claims_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The claims whose verdict differs between A and B (``compare``)."""
    if not rows:
        return []
    lines = ["", f"#### Timing claims that differ ({len(rows)})", ""]
    lines += md_table(["Claim", "Where", "A", "B"], [
        [md_code(row["expression"]), md_code(row["where"]), md_text(row["a"] or "-"),
         md_text(row["b"] or "-")] for row in rows])
    return lines


def _state(row: dict[str, Any]) -> str:
    return "" if row["state"] == "compared" else row["state"]


def _ratio_text(row: dict[str, Any]) -> str:
    return ("**" + fmt_ratio(row["ratio"]) + "**") if row["regression"] else fmt_ratio(
        row["ratio"])


def both_machines(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The machines of A, then of B, each named after its build."""
    return [dict(m, id=f"{side.upper()} {m['id']}") for side in ("a", "b")
            for m in data["machines"][side]]


def render_compare_markdown(data: dict[str, Any]) -> list[str]:
    a, b = data["baseline"], data["new"]
    summary = data["summary"]["text"]
    lines = [f"### {md_text(summary)}", "", f"**{md_text(data['machine']['text'])}**", ""]
    if data["fail_above"] is not None:
        count = len(data["regressions"])
        lines += [(f"❌ **{count} regression{'s' if count != 1 else ''}** " if count else
                   "✅ No regression ")
                  + md_text(f"(B/A above {fmt_ratio(data['fail_above'])} and at least "
                            f"{fmt_seconds(data['min_seconds'])} in B)"), ""]
        lines += [f"- {md_text(line)}" for line in data["regressions"][:MAX_TABLE_ROWS]]
        if count > MAX_TABLE_ROWS:
            lines.append(f"- *{count - MAX_TABLE_ROWS} more not shown*")
        if data["regressions"]:
            lines.append("")
    lines += [f"A (baseline): {md_text(a['label'])}, {a['notebooks']} notebooks, "
              f"{fmt_seconds(a['seconds'])}; B (new): {md_text(b['label'])}, "
              f"{b['notebooks']} notebooks, {fmt_seconds(b['seconds'])}.", "",
              "#### Notebooks", ""]
    lines += md_table(["Notebook", "A", "B", "B/A", "Change", "A device", "B device", "State"], [
        [md_text(row["docname"]), fmt_seconds(row["a_seconds"]), fmt_seconds(row["b_seconds"]),
         _ratio_text(row), fmt_change(row["a_seconds"], row["b_seconds"]),
         md_text(row["a_device"] or "-"), md_text(row["b_device"] or "-"), _state(row)]
        for row in data["notebooks"]], right=(1, 2, 3, 4))
    lines += ["", f"#### {md_text(cells_heading(data))}", ""]
    unchanged = unchanged_line(data)
    if unchanged:  # not a table of "+0.00 ms"
        lines.append(md_text(unchanged))
    else:
        lines += md_table(["Notebook", "Cell", "First line", "A", "B", "B/A", "Change",
                           "State"], [
            [md_text(row["docname"]), md_text(row["cell"]),
             md_code(shorten(row["first_line"])), fmt_seconds(row["a_seconds"]),
             fmt_seconds(row["b_seconds"]), _ratio_text(row),
             fmt_change(row["a_seconds"], row["b_seconds"]), _state(row)]
            for row in data["cells"]], right=(3, 4, 5, 6))
    lines += compare_claims_markdown(data.get("claims") or [])
    lines += ["", "<details><summary>Machines</summary>", ""]
    lines += machines_markdown(both_machines(data))
    lines += ["", "</details>"]
    return capped(lines)
