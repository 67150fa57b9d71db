"""The words of named timings, timing claims and the review list, for every engine.

``{timing}`` ("0.46 ms on a GPU (Tesla T4), 12 ms on a CPU (AMD EPYC)"),
``{timing-ratio}`` ("2.4 times faster", "about the same"), a claim's mark, its
hover figures and its warning ("claim `vmap-v2 ~ vmap-v1` fails on GPU (Tesla
T4): 0.46 ms vs 1.1 ms, 2.4 times faster"), the reasons a claim is not
checked, and the status page's sections.  Each function takes the engine's
translator (``translate``, ``ngettext``, as :mod:`.runtime_text` does); without
one the texts are English.  The device phrase is the runtime roles'
(:func:`.runtime_text.kind_phrase`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from ..model import claims as claim_rules
from ..model import timing_record as tr
from ..model.formatting import one_line
from ..model.page_text import RATIO_ROLE, TIMING_ROLE
from ..model.timing_quotes import Quotes
from ..model.timing_record import Claim, ClaimCheck, ClaimRules, EvidenceValue
from ..model.timings import BAD_NAME, TagProblem
from .labels import Labels, NGettext, Translate, english, english_plural
from .runtime_text import kind_phrase

#: a verdict's mark: text, not emoji (no emoji font on many readers' machines); the
#: words are :func:`verdict_text`'s
VERDICT_MARKS = {tr.HOLDS: "✓", tr.FAILS: "✗", tr.TOO_CLOSE: "≈", tr.NOT_CHECKED: "?"}


# -- numbers for readers -----------------------------------------------------------------
#: (seconds per unit, the unit's text) from the largest; ``0.46 ms`` is read before
#: ``460 µs``, so milliseconds go down to 0.1 ms
_UNITS = ((3600.0, "h"), (60.0, "min"), (1.0, "s"), (1e-4, "ms"), (1e-7, "µs"), (0.0, "ns"))
_SCALE = {"h": 3600.0, "min": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


@functools.lru_cache(maxsize=4096)
def significant(value: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant digits, halves up, without an exponent:
    ``0.46``, ``1.1``, ``13`` (12.5), ``120``.  Kept per value: the views of a build
    (the roles and their hovers, the status page, the reports) write the same figures
    again (a 20-page book with claims: 1,380 calls, 159 values), and the exact decimal
    rounding is what costs (3 ms of that book's rebuild)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    exact = Decimal(repr(value))
    quantum = Decimal(1).scaleb(math.floor(math.log10(abs(value))) - digits + 1)
    text = f"{exact.quantize(quantum, rounding=ROUND_HALF_UP):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _unit_text(value: str, unit: str, translate: Translate) -> str:
    if unit == "h":
        return translate("%s h") % value
    if unit == "min":
        return translate("%s min") % value
    if unit == "s":
        return translate("%s s") % value
    if unit == "ms":
        return translate("%s ms") % value
    if unit == "µs":
        return translate("%s µs") % value
    return translate("%s ns") % value


def reader_seconds(seconds: float, translate: Translate = english, digits: int = 2) -> str:
    """A timing as a sentence quotes it, two significant digits: ``0.46 ms``,
    ``12 ms``, ``1.1 s``, ``2.5 min`` (``digits=3``: the hover's exact figures)."""
    if not seconds > 0:
        return _unit_text("0", "s", translate)
    index, unit = next((index, unit) for index, (start, unit) in enumerate(_UNITS)
                       if seconds >= start)
    value = float(significant(seconds / _SCALE[unit], digits))
    if index and value * _SCALE[unit] >= _UNITS[index - 1][0] * (1 - 1e-9):
        # rounding reached the unit above: 999.7 ms is 1 s, 59.7 s is 1 min
        bigger = _UNITS[index - 1][1]
        value, unit = value * _SCALE[unit] / _SCALE[bigger], bigger
    return _unit_text(significant(value, digits), unit, translate)


def device_words(kind: str | None, name: str | None, translate: Translate = english) -> str:
    """``GPU (Tesla T4)``: a device as warnings and tables name it (no article)."""
    if kind is None:
        return translate("an unknown device")
    if name:
        return translate("%(kind)s (%(name)s)") % {"kind": kind, "name": name}
    return kind


def ratio_words(ratio: float, margin: float = 0.1, translate: Translate = english) -> str:
    """How a reader says ``A / B``: ``2.4 times faster``, ``about the same``, ``3.1 times
    slower``; within ``margin`` (``gpu_claim_margin``) of 1 it is the same."""
    if ratio <= 0 or not math.isfinite(ratio):
        return translate("not comparable")
    factor = max(ratio, 1 / ratio)
    if factor <= 1 + margin:
        return translate("about the same")
    if ratio < 1:
        return translate("%s times faster") % significant(factor)
    return translate("%s times slower") % significant(factor)


# -- the roles ---------------------------------------------------------------------------
def value_phrase(value: EvidenceValue, translate: Translate = english) -> str:
    """``0.46 ms on a GPU (Tesla T4)``; the time alone when the device is not known."""
    time = reader_seconds(value.seconds, translate)
    if value.device_kind is None:
        return time
    values = {"seconds": time, "device": kind_phrase(value.device_kind, value.device_name,
                                                     translate)}
    # not the runtime roles' "%(time)s on %(device)s": their time is words ("about 2
    # minutes"), this one a figure, which Chinese sets off with a space
    if value.stale:
        # Translators: a measured time ("0.46 ms") on a device, from an earlier version
        return translate("%(seconds)s on %(device)s, measured on an earlier version") % values
    # Translators: a measured time ("0.46 ms") on a device ("a GPU (Tesla T4)")
    return translate("%(seconds)s on %(device)s") % values


def timing_text(values: Sequence[EvidenceValue], translate: Translate = english) -> str:
    """``{timing}``: this build's value, then each other device's: ``0.46 ms on a GPU
    (Tesla T4), 12 ms on a CPU (AMD EPYC)``; "an unknown time" without one."""
    if not values:
        return unknown_text(TIMING_ROLE, translate)
    return translate(", ").join(value_phrase(value, translate) for value in values)


def unknown_text(role: str, translate: Translate = english) -> str:
    """What a ``{timing}`` (or, for ``role`` ``timing-ratio``, a ``{timing-ratio}``)
    says with nothing measured: on both engines, also where the role's page is not
    known."""
    if role == RATIO_ROLE:
        return translate("an unknown ratio (not measured yet)")
    return translate("an unknown time (not measured yet)")


def ratio_text(checks: Sequence[ClaimCheck], margin: float = 0.1,
               translate: Translate = english) -> str:
    """``{timing-ratio}`A / B```: ``2.4 times faster on a GPU (Tesla T4), about the same
    on a CPU (AMD EPYC)`` from the checks of ``A < B`` (one per device); the device is
    named when there are several."""
    known = [check for check in checks if check.ratio is not None]
    if not known:
        return unknown_text(RATIO_ROLE, translate)
    if len(known) == 1:
        return ratio_words(known[0].ratio or 0.0, margin, translate)
    return translate(", ").join(
        translate("%(ratio)s on %(device)s") % {
            "ratio": ratio_words(check.ratio or 0.0, margin, translate),
            "device": kind_phrase(check.device_kind, check.device_name, translate)
            if check.device_kind else translate("an unknown device")}
        for check in known)


# -- claims --------------------------------------------------------------------------------
def verdict_text(verdict: str, translate: Translate = english) -> str:
    if verdict == tr.HOLDS:
        return translate("holds")
    if verdict == tr.FAILS:
        return translate("fails")
    if verdict == tr.TOO_CLOSE:
        # Translators: a timing claim whose measured ratio is within the noise margin
        return translate("too close to call")
    return translate("not checked")


def mark_label(claim: Claim, translate: Translate = english) -> str:
    """The mark's accessible name: ``timing claim: holds``."""
    return translate("timing claim: %s") % verdict_text(claim.verdict, translate)


def figures(check: ClaimCheck, translate: Translate = english) -> str:
    """``0.46 ms vs 1.1 ms, 2.4 times faster``"""
    if check.left is None or check.right is None or check.ratio is None:
        return ""
    return translate("%(left)s vs %(right)s, %(ratio)s") % {
        "left": reader_seconds(check.left.seconds, translate),
        "right": reader_seconds(check.right.seconds, translate),
        "ratio": ratio_words(check.ratio, check.margin or 0.0, translate)}


def _where(check: ClaimCheck, translate: Translate) -> str:
    words = device_words(check.device_kind, check.device_name, translate)
    if check.stale:
        words = translate("%s, measured on an earlier version") % words
    return words


def _status_text(status: str | None, translate: Translate) -> str:
    return Labels.load(translate).status_text.get(status or "", status or "")


def reason_text(check: ClaimCheck, translate: Translate = english,
                ngettext: NGettext = english_plural) -> str:
    """Why ``check`` was not checked, in words (the status page's, a warning's)."""
    subject = check.subject or ""
    values = {"name": subject, "page": subject, "nearest": check.detail or ""}
    reason = check.reason
    if reason == tr.PARSE:
        return syntax_text(check.detail or "", subject, translate)
    if reason == tr.UNKNOWN_PAGE:
        return translate("no notebook '%(page)s' was executed in that build") % values \
            if check.build else translate("no notebook '%(page)s' in this build") % values
    if reason == tr.NOT_EXECUTED:
        return translate("the notebook of '%(name)s' was not executed") % values
    if reason == tr.PAGE_NOT_EXECUTED:
        return translate("'%(page)s' was not executed: %(status)s") % {
            "page": subject, "status": _status_text(check.detail, translate)}
    if reason == tr.UNKNOWN_NAME:
        if check.detail:
            return translate("no timing is named '%(name)s' (did you mean '%(nearest)s'?)") \
                % values
        return translate("no timing is named '%(name)s'") % values
    if reason == tr.NOT_UNIQUE:
        return translate("'%(name)s' names more than one cell") % values
    if reason == tr.NOT_RUN:
        return translate("the cell of '%(name)s' did not run") % values
    if reason == tr.CELL_FAILED:
        return translate("the cell of '%(name)s' failed") % values
    if reason == tr.TIMER_VALUES:
        count = int(check.detail) if (check.detail or "").isdigit() else 2
        return ngettext("the cell of '%(name)s' printed %(count)d timer value",
                        "the cell of '%(name)s' printed %(count)d timer values", count) % {
            "name": subject, "count": count}
    if reason == tr.NOT_MEASURED:
        return translate("the cell of '%(name)s' printed no timer and was not measured "
                         "(no capture data)") % values
    if reason == tr.ZERO_TIME:
        return translate("'%(name)s' took 0 s as printed: its timer needs more digits") % values
    if reason == tr.OTHER_DEVICE:
        return translate("the claim is about the %(scope)s") % {"scope": subject.upper()}
    if reason == tr.NO_DEVICE:
        return translate("the device it ran on is not known (no capture data)")
    if reason == tr.MIXED_DEVICES:
        return translate("the two timings ran on different devices (%(left)s and %(right)s)") \
            % {"left": device_words(check.device_kind, check.device_name, translate),
               "right": device_words(check.detail, check.subject or None, translate)}
    return reason


def syntax_text(problem: str, subject: str = "", translate: Translate = english) -> str:
    """Why an expression does not parse, with what a claim looks like."""
    values = {"part": subject}
    if problem == claim_rules.EMPTY:
        text = translate("the claim is empty")
    elif problem == claim_rules.NO_COMPARISON:
        text = translate("no comparison in '%(part)s'") % values
    elif problem == claim_rules.EQUALITY:
        text = translate("'%(part)s' is not a comparison of timings (they are never "
                         "exactly equal)") % values
    elif problem == claim_rules.TWO_COMPARISONS:
        text = translate("one comparison per claim, not '%(part)s'") % values
    elif problem == claim_rules.MISSING_SIDE:
        text = translate("a timing is missing on one side")
    elif problem == claim_rules.BAD_REFERENCE:
        text = translate("'%(part)s' is not a timing name (letters, digits, - and _; "
                         "page/path:NAME for another page's)") % values
    elif problem == claim_rules.FACTOR_NOT_ALLOWED:
        text = translate("'%(part)s' takes no factor (write A < B / 3)") % values
    elif problem == claim_rules.FACTOR_ON_LEFT:
        text = translate("the factor goes on the right: A < B / 3, not '%(part)s'") % values
    elif problem == claim_rules.BAD_FACTOR:
        text = translate("the factor must be a number above 0, not '%(part)s'") % values
    elif problem == claim_rules.BAD_SCOPE:
        text = translate("'on %(part)s' is not a device: write 'on gpu' or 'on cpu'") % values
    elif problem == claim_rules.SAME_TIMING:
        text = translate("'%(part)s' is compared with itself") % values
    else:
        text = problem
    return translate("%(problem)s; a claim reads A < B, A > B, A << B, A >> B or A ~ B") % {
        "problem": text}


def check_text(check: ClaimCheck, translate: Translate = english,
               ngettext: NGettext = english_plural) -> str:
    """One build's verdict: ``fails on GPU (Tesla T4): 0.46 ms vs 1.1 ms, 2.4 times
    faster``; ``not checked on CPU (AMD EPYC): the claim is about the GPU``."""
    values = {"verdict": verdict_text(check.verdict, translate),
              "device": _where(check, translate)}
    if check.verdict == tr.NOT_CHECKED:
        values["why"] = reason_text(check, translate, ngettext)
        if check.device_kind is None:
            return translate("%(verdict)s: %(why)s") % values
        return translate("%(verdict)s on %(device)s: %(why)s") % values
    values["figures"] = figures(check, translate)
    return translate("%(verdict)s on %(device)s: %(figures)s") % values


def _build_name(check: ClaimCheck, translate: Translate) -> str:
    return Path(check.build).name if check.build else translate("this build")


def _exact(value: tr.TimedValue, translate: Translate) -> str:
    return f"{reader_seconds(value.seconds, translate, digits=3)} " \
           f"({value.timer or value.source})"


def hover_text(claim: Claim, translate: Translate = english) -> str:
    """The mark's exact figures, one build after the other: ``this build, GPU (Tesla
    T4): 0.46 ms (qe.Timer) vs 1.10 ms (qe.Timer), ratio 0.418, bound 0.25 ± 10%:
    fails``."""
    parts = []
    for check in claim.checks:
        values = {"build": _build_name(check, translate), "device": _where(check, translate),
                  "verdict": verdict_text(check.verdict, translate)}
        if check.left is None or check.right is None or check.ratio is None:
            parts.append(translate("%(build)s: %(check)s") % {
                "build": values["build"], "check": check_text(check, translate)})
            continue
        values.update(left=_exact(check.left, translate), right=_exact(check.right, translate),
                      ratio=f"{check.ratio:.3g}", bound=f"{check.bound or 0:.3g}",
                      margin=f"{check.margin or 0:.0%}")
        parts.append(translate("%(build)s, %(device)s: %(left)s vs %(right)s, ratio "
                               "%(ratio)s, bound %(bound)s ± %(margin)s: %(verdict)s")
                     % values)
    return one_line(" · ".join(parts))


def claim_warning(claim: Claim, translate: Translate = english,
                  ngettext: NGettext = english_plural) -> str | None:
    """The warning of a claim that fails (``gpu_admonition.claim``), None otherwise:
    ``claim `vmap-v2 ~ vmap-v1` fails on GPU (Tesla T4): 0.46 ms vs 1.1 ms, 2.4 times
    faster``, each failing build's figures after the first's."""
    failing = claim_rules.failures(claim)
    if not failing:
        return None
    builds = translate("; ").join(
        translate("%(device)s: %(figures)s") % {"device": _where(check, translate),
                                                "figures": figures(check, translate)}
        for check in failing)
    return one_line(translate("claim `%(claim)s` fails on %(builds)s") % {
        "claim": claim.expression, "builds": builds})


def problem_warning(claim: Claim, translate: Translate = english,
                    ngettext: NGettext = english_plural) -> str | None:
    """The warning of a claim this build could not check because of the text or the
    book (:func:`..model.claims.problem`), None otherwise."""
    check = claim_rules.problem(claim)
    if check is None:
        return None
    return one_line(translate("claim `%(claim)s` is not checked: %(why)s") % {
        "claim": claim.expression, "why": reason_text(check, translate, ngettext)})


def tag_problem_text(problem: TagProblem, translate: Translate = english) -> str:
    """The warning of a ``time:`` tag that names nothing, at its cell."""
    if problem.problem == BAD_NAME:
        return translate("the tag '%(tag)s' names no timing: a timing name is letters, "
                         "digits, - and _") % {"tag": problem.tag}
    return translate("the tag '%(tag)s' is on more than one cell of this page: claims "
                     "that use the name are not checked") % {"tag": problem.tag}


# -- the status page -----------------------------------------------------------------------
def claims_title(translate: Translate = english) -> str:
    return translate("Timing claims")


def claims_summary(found: Sequence[Claim], ngettext: NGettext = english_plural,
                   translate: Translate = english) -> str:
    """``4 timing claims: 1 fails, 2 hold, 1 not checked``"""
    return claims_summary_of([claim.verdict for claim in found], ngettext, translate)


def claims_summary_of(verdicts: Sequence[str], ngettext: NGettext = english_plural,
                      translate: Translate = english) -> str:
    """:func:`claims_summary` of the claims' verdicts."""
    counts = {verdict: sum(1 for found in verdicts if found == verdict)
              for verdict in tr.VERDICTS}
    head = ngettext("%d timing claim", "%d timing claims", len(verdicts)) % len(verdicts)
    parts = []
    for verdict in tr.VERDICTS:
        count = counts[verdict]
        if not count:
            continue
        if verdict == tr.HOLDS:
            parts.append(ngettext("%d holds", "%d hold", count) % count)
        elif verdict == tr.FAILS:
            parts.append(ngettext("%d fails", "%d fail", count) % count)
        elif verdict == tr.TOO_CLOSE:
            parts.append(ngettext("%d too close to call", "%d too close to call", count)
                         % count)
        else:
            parts.append(ngettext("%d not checked", "%d not checked", count) % count)
    if not parts:
        return head
    return translate("%(claims)s: %(verdicts)s") % {"claims": head,
                                                    "verdicts": translate(", ").join(parts)}


def review_title(translate: Translate = english) -> str:
    return translate("Timing statements to review")


def review_summary(count: int, pages: int, ngettext: NGettext = english_plural,
                   translate: Translate = english) -> str:
    """``Timing statements to review: 6 on 2 pages``"""
    # Translators: %(statements)s is "6", %(pages)s is "on 2 pages"
    return translate("Timing statements to review: %(statements)s %(pages)s") % {
        "statements": count, "pages": ngettext("on %d page", "on %d pages", pages) % pages}


def review_note(translate: Translate = english) -> str:
    return translate("Sentences about speed that no claim checks, with the timed cells "
                     "just before them. They are not judged: the figures are beside them.")


def column_texts(translate: Translate = english) -> dict[str, str]:
    """The headers and empty texts of the claims' and the review list's tables."""
    return {
        "claim": translate("Claim"), "sentence": translate("Sentence"),
        "page": translate("Page"), "line": translate("Line"), "device": translate("Device"),
        "values": translate("Times"), "ratio": translate("Ratio"),
        "verdict": translate("Verdict"), "build": translate("Build"),
        "cells": translate("Timed cells before it"), "why": translate("Why"),
        "no_claims": translate("No timing claims."),
        "no_statements": translate("No timing statements to review."),
        "unnamed": unnamed_text(translate),
    }


def unnamed_text(translate: Translate = english) -> str:
    """What a timed cell without a name is called (the review list's evidence: real
    lectures name few of their cells, so this is asked once per evidence)."""
    return translate("unnamed timed cell")


# -- the quoting roles' hover and warnings ---------------------------------------------------
def value_hover(value: EvidenceValue, translate: Translate = english) -> str:
    """``this build, CPU (AMD EPYC 7763): 0.457 ms (qe.Timer)``: a value's exact figure
    and where it comes from."""
    name = Path(value.build).name if value.build else translate("this build")
    device = device_words(value.device_kind, value.device_name, translate)
    if value.stale:
        device = translate("%s, measured on an earlier version") % device
    return translate("%(build)s, %(device)s: %(value)s") % {
        "build": name, "device": device,
        "value": _exact(tr.TimedValue(value.seconds, value.source, value.timer), translate)}


def quoted_text(role: str, text: str, page: str, quotes: Quotes | None,
                translate: Translate = english) -> tuple[str, str]:
    """A ``{timing}`` or ``{timing-ratio}`` on ``page`` as both engines show it: its text
    and its hover (the exact figures), from the build's answers (None: nothing is
    measured yet, "an unknown time")."""
    if role == TIMING_ROLE:
        values = quotes.values(text, page)[0] if quotes is not None else []
        return timing_text(values, translate), timing_hover(values, translate)
    checks = quotes.ratios(text, page) if quotes is not None else []
    margin = quotes.rules.margin if quotes is not None else ClaimRules().margin
    return ratio_text(checks, margin, translate), ratio_hover(checks, translate)


def timing_hover(values: Sequence[EvidenceValue], translate: Translate = english) -> str:
    """The hover of ``{timing}``: every value's exact figure, one build after the other."""
    return one_line(" · ".join(value_hover(value, translate) for value in values))


def ratio_hover(checks: Sequence[ClaimCheck], translate: Translate = english) -> str:
    """The hover of ``{timing-ratio}``: ``this build, CPU (AMD EPYC 7763): 11.0 ms (cell) /
    12.0 ms (cell) = 0.917``, one build after the other."""
    parts = []
    for check in checks:
        if check.left is None or check.right is None or check.ratio is None:
            continue
        parts.append(translate("%(build)s, %(device)s: %(left)s / %(right)s = %(ratio)s") % {
            "build": _build_name(check, translate), "device": _where(check, translate),
            "left": _exact(check.left, translate), "right": _exact(check.right, translate),
            "ratio": f"{check.ratio:.3g}"})
    return one_line(" · ".join(parts))


def quote_warning(role: str, text: str, why: str) -> str:
    """The warning of a ``{timing}`` or ``{timing-ratio}`` this build has no value for
    (``gpu_admonition.claim``), at the role's line (English, as every warning)."""
    return one_line(f"{{{role}}}`{text}` states no value of this build: {why}; the text "
                    "says 'an unknown time' instead" if role != "timing-ratio" else
                    f"{{{role}}}`{text}` states no ratio of this build: {why}; the text "
                    "says 'an unknown ratio' instead")


def mark_text(claim: Claim | None, translate: Translate = english) -> str:
    """A claim's mark in printed output (LaTeX, text, man pages): its verdict in words,
    ``(timing claim: holds)`` (the marks' symbols are HTML only: LaTeX lacks them)."""
    if claim is None:
        return translate("(timing claim: not checked)")
    return translate("(%s)") % mark_label(claim, translate)
