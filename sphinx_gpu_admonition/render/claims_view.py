"""The timing claims and the review list as every view shows them, from the build's
one analysis (``BuildAnalysis.claims``, ``.timing_statements``): plain data made once
(:func:`claim_entries`, :func:`statement_entries`: ``report --json``'s and the
page's), the status page's HTML section (``templates/claims.html``), and the lines of
the console and of ``report``.

The words are :mod:`.claims_text`'s, through the engine's translator (English in the
logs, JUnit, GitHub output, the JSON and the command line).  Claims are listed failing
first (the worst verdict first: fails, too close to call, holds, not checked), then by
page and line; each has an anchor on the status page (:func:`claim_anchor`), which its
mark on the page links to.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from ..model.formatting import one_line
from ..model.timing_record import (
    HOLDS,
    VERDICTS,
    Claim,
    ClaimCheck,
    Evidence,
    TimingStatement,
)
from . import claims_text as words
from .labels import Labels, NGettext, Translate, english, english_plural
from .templates import render as render_template

#: claims listed on the status page before the rest collapse
CLAIMS_SHOWN = 10
#: the console's and report's text lists at most this many of each
LINES_SHOWN = 5


def claim_anchor(claim: Claim) -> str:
    """The claim's row on the status page: the same from every page that links to it,
    and from one build to the next while the claim stays on its line."""
    key = f"{claim.page}\0{claim.line or 0}\0{' '.join(claim.expression.split())}"
    return "gpu-claim-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:10]


def ordered(claims: Sequence[Claim]) -> list[Claim]:
    """Failing first, then by page and line."""
    rank = {verdict: number for number, verdict in enumerate(VERDICTS)}
    return sorted(claims, key=lambda claim: (rank.get(claim.verdict, len(rank)), claim.page,
                                             claim.line or 0))


def where(page: str, source: str | None, line: int | None) -> str:
    """``lectures/jax.md:52`` (the page's docname without a source file)."""
    place = source or page
    return f"{place}:{line}" if line else place


def check_entry(check: ClaimCheck, translate: Translate = english,
                ngettext: NGettext = english_plural) -> dict[str, Any]:
    return {
        "build": check.build, "device_kind": check.device_kind,
        "device_name": check.device_name,
        "device": words.device_words(check.device_kind, check.device_name, translate),
        "stale": check.stale, "verdict": check.verdict,
        "verdict_text": words.verdict_text(check.verdict, translate),
        "left_seconds": check.left.seconds if check.left else None,
        "right_seconds": check.right.seconds if check.right else None,
        "ratio": check.ratio, "bound": check.bound,
        "figures": words.figures(check, translate),
        "reason": check.reason or None,
        "why": words.reason_text(check, translate, ngettext) if check.reason else "",
        "text": words.check_text(check, translate, ngettext),
    }


def claim_entry(claim: Claim, translate: Translate = english,
                ngettext: NGettext = english_plural) -> dict[str, Any]:
    """One claim as plain data: where it is, what it says, its verdict per build."""
    warning = words.claim_warning(claim, translate, ngettext) or \
        words.problem_warning(claim, translate, ngettext)
    return {
        "anchor": claim_anchor(claim), "page": claim.page, "source": claim.source,
        "line": claim.line, "where": where(claim.page, claim.source, claim.line),
        "expression": claim.expression, "sentence": claim.sentence,
        "verdict": claim.verdict, "verdict_text": words.verdict_text(claim.verdict, translate),
        "mark": words.VERDICT_MARKS.get(claim.verdict, "?"),
        "label": words.mark_label(claim, translate),
        "checks": [check_entry(check, translate, ngettext) for check in claim.checks],
        "hover": words.hover_text(claim, translate),
        # what the build warned at the claim's line (None: it did not)
        "warning": warning,
    }


def claim_entries(claims: Sequence[Claim], translate: Translate = english,
                  ngettext: NGettext = english_plural) -> list[dict[str, Any]]:
    return [claim_entry(claim, translate, ngettext) for claim in ordered(claims)]


def evidence_text(evidence: Evidence, translate: Translate = english) -> str:
    """``vmap-v2 (line 80): 0.46 ms on a GPU (Tesla T4), 11 ms on a CPU (AMD EPYC)``"""
    name = evidence.name or words.unnamed_text(translate)
    values = words.timing_text(evidence.values, translate) if evidence.values else \
        translate("not measured")
    if evidence.line:
        return translate("%(name)s (line %(line)d): %(values)s") % {
            "name": name, "line": evidence.line, "values": values}
    return translate("%(name)s: %(values)s") % {"name": name, "values": values}


def statement_entries(statements: Sequence[TimingStatement],
                      translate: Translate = english) -> list[dict[str, Any]]:
    """The review list as plain data, by page and line."""
    return [{
        "page": statement.page, "source": statement.source, "line": statement.line,
        "where": where(statement.page, statement.source, statement.line),
        "sentence": statement.sentence, "cues": list(statement.cues),
        "evidence": [{"name": evidence.name, "cell_index": evidence.cell_index,
                      "line": evidence.line, "text": evidence_text(evidence, translate),
                      "values": [{"seconds": value.seconds, "source": value.source,
                                  "timer": value.timer, "build": value.build,
                                  "device_kind": value.device_kind,
                                  "device_name": value.device_name, "stale": value.stale}
                                 for value in evidence.values]}
                     for evidence in statement.evidence],
    } for statement in sorted(statements, key=lambda s: (s.page, s.line or 0))]


def review_pages(statements: Sequence[TimingStatement]) -> int:
    return len({statement.page for statement in statements})


# -- the status page ----------------------------------------------------------------------
def claims_html(claims: Sequence[Claim], statements: Sequence[TimingStatement],
                labels: Labels, page_uri: Callable[[str], str | None],
                ident: str = "gpu-status-1", anchors: bool = True) -> str:
    """The status page's "Timing claims" section and its review list (empty without
    either); ``anchors``: give each claim its id (the first table of the page)."""
    if not claims and not statements:
        return ""
    translate, ngettext = labels.translate, labels.ngettext
    rows = claim_entries(claims, translate, ngettext)
    for row in rows:
        row["href"] = page_uri(row["page"])
        row["ident"] = row["anchor"] if anchors else None
    reviewed = statement_entries(statements, translate)
    for row in reviewed:
        row["href"] = page_uri(row["page"])
    texts = words.column_texts(translate)
    return render_template(
        "claims.html", ident=ident, rows=rows, top=CLAIMS_SHOWN,
        title=words.claims_title(translate),
        summary=words.claims_summary(claims, ngettext, translate) if claims
        else texts["no_claims"],
        more=ngettext("%d more timing claim", "%d more timing claims",
                      max(0, len(rows) - CLAIMS_SHOWN)) % max(0, len(rows) - CLAIMS_SHOWN),
        review=reviewed,
        review_summary=words.review_summary(len(reviewed), review_pages(statements),
                                            ngettext, translate),
        review_note=words.review_note(translate))


# -- text: the console summary, report ---------------------------------------------------
def listed(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The claims the text views list one by one: those that do not hold, or that this
    build warned about (the others are counted)."""
    return [row for row in entries if row["verdict"] != HOLDS or row["warning"]]


def claims_lines(entries: Sequence[dict[str, Any]], statements: int, pages: int,
                 shown: int = LINES_SHOWN) -> list[str]:
    """The console's and ``report``'s lines (English) of :func:`claim_entries`: the
    summary, the claims that do not hold (each with its place and each build's
    verdict), then the review list's count."""
    lines: list[str] = []
    if entries:
        counts = [row["verdict"] for row in entries]
        lines.append(words.claims_summary_of(counts))
        rows = listed(entries)
        for row in rows[:shown]:
            lines.append(f"  {row['mark']} {one_line(row['where'])}: "
                         f"`{one_line(row['expression'])}`")
            for check in row["checks"]:
                lines.append(f"      {one_line(check['text'])}")
        if len(rows) > shown:
            lines.append(f"  ... {len(rows) - shown} more in execution-status.json")
    if statements:
        lines.append(words.review_summary(statements, pages)
                     + " (listed on the status page with the timed cells beside them)")
    return lines


# -- compare: the claims whose verdict differs ------------------------------------------
def _own(claim: Claim) -> ClaimCheck | None:
    """The check of the build that wrote the file."""
    return next((check for check in claim.checks if check.build is None), None)


def _keyed(claims: Sequence[Claim]) -> dict[tuple[str, str, int], Claim]:
    keyed: dict[tuple[str, str, int], Claim] = {}
    for claim in claims:
        written = " ".join(claim.expression.split())
        number = sum(1 for key in keyed if key[:2] == (claim.page, written))
        keyed[(claim.page, written, number)] = claim
    return keyed


def claim_differences(a: Sequence[Claim], b: Sequence[Claim]) -> list[dict[str, Any]]:
    """The claims whose verdict on build A's own machine differs from B's on B's (each
    file's own check), and those only one build has: is this different on the CPU?"""
    before, after = _keyed(a), _keyed(b)
    rows = []
    for key in sorted(set(before) | set(after)):
        first, second = before.get(key), after.get(key)
        own_a = _own(first) if first is not None else None
        own_b = _own(second) if second is not None else None
        verdict_a = own_a.verdict if own_a is not None else None
        verdict_b = own_b.verdict if own_b is not None else None
        if first is not None and second is not None and verdict_a == verdict_b:
            continue
        shown = second or first
        assert shown is not None
        rows.append({
            "page": key[0], "expression": shown.expression, "sentence": shown.sentence,
            "where": where(shown.page, shown.source, shown.line),
            "state": "new" if first is None else "gone" if second is None else "changed",
            "a_verdict": verdict_a, "b_verdict": verdict_b,
            "a": words.check_text(own_a) if own_a is not None else None,
            "b": words.check_text(own_b) if own_b is not None else None,
        })
    return rows
