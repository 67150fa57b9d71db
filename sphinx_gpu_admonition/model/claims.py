"""Timing claims: their grammar, and their verdicts on this build and other builds.

A claim compares two named timings (:mod:`.timings`)::

    A < B              A is faster than B (takes less time)
    A > B              A is slower
    A << B             A is much faster: at least gpu_claim_much_factor (4) times
    A >> B             A is much slower: at least gpu_claim_much_factor times
    A ~ B              about the same: neither takes gpu_claim_similar_factor (2)
                       times the other's time or more
    A < B / 3          A takes less than a third of B's time: at least 3 times faster
    A > B * 3          at least 3 times slower
    A < B * 2          A takes less than twice B's time: at most 2 times slower
    A > B / 2          A takes more than half of B's time: less than 2 times faster
    ... on gpu         a claim about one kind of device (``on cpu``, ``on tpu``)

``<`` and ``>`` are inequalities of times, so a factor (``* k``, ``/ k``, any
number above 0) scales B's time; ``<<``, ``>>`` and ``~`` have their factor in
the settings and take none.  ``≪``, ``≫``, ``≈`` and ``×`` read as ``<<``,
``>>``, ``~`` and ``*``.  A and B are ``NAME`` or ``page/path:NAME``.

Every claim reduces to the ratio ``r = A / B`` against a bound ``c`` (``A < B /
3``: ``c = 1/3``; ``A ~ B``: ``1/f <= r <= f``).  Verdicts (:func:`judge`):
**holds**, **fails**, or **too close to call** when ``r`` is within
``gpu_claim_margin`` of ``c`` (both ways: ``c / (1 + m) <= r <= c (1 + m)``),
so that a noisy CI runner cannot flip a verdict back and forth.  The margin is
symmetric in the ratio, so ``A < B`` and ``B > A`` always get the same verdict.

A claim is checked against this build and each other build (``gpu_runtime_sources``)
that has its pages, one per device (kind and name), this build first; a claim
with a scope is **not checked** on a build of another device, and says so.  Bad
input is never a false verdict: it is "not checked" with the reason.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from . import device
from .page_text import CLAIM_ROLE, Sentence
from .record import NotebookRecord
from .timing_record import (
    CELL_FAILED,
    FAILS,
    HOLDS,
    MIXED_DEVICES,
    NO_DEVICE,
    NOT_CHECKED,
    NOT_EXECUTED,
    NOT_MEASURED,
    NOT_RUN,
    NOT_UNIQUE,
    OTHER_DEVICE,
    PAGE_NOT_EXECUTED,
    PARSE,
    TIMER_VALUES,
    TOO_CLOSE,
    UNKNOWN_NAME,
    UNKNOWN_PAGE,
    VERDICTS,
    ZERO_TIME,
    Claim,
    ClaimCheck,
    ClaimRules,
    TimedValue,
    Timing,
)
from .timings import Reference, Unavailable, find_timing, parse_reference, resolve_page

# -- the grammar ---------------------------------------------------------------------------
FASTER, SLOWER, MUCH_FASTER, MUCH_SLOWER, SIMILAR = "<", ">", "<<", ">>", "~"
RELATIONS = (FASTER, SLOWER, MUCH_FASTER, MUCH_SLOWER, SIMILAR)
SCOPES = (device.GPU, device.CPU, device.TPU)

# Why an expression does not parse (``ClaimSyntaxError.problem``; texts:
# render/claims_text.py); ``subject`` is the part of the expression concerned.
EMPTY = "empty"
NO_COMPARISON = "no_comparison"
EQUALITY = "equality"  # "<=", "=", "==": timings are never exactly equal
TWO_COMPARISONS = "two_comparisons"
MISSING_SIDE = "missing_side"
BAD_REFERENCE = "bad_reference"
FACTOR_NOT_ALLOWED = "factor_not_allowed"  # "A << B / 3", "A ~ B * 2"
FACTOR_ON_LEFT = "factor_on_left"  # "A * 3 < B"
BAD_FACTOR = "bad_factor"  # "/ 0"
BAD_SCOPE = "bad_scope"  # "on mac"
SAME_TIMING = "same_timing"  # "A < A"
SYNTAX_PROBLEMS = (EMPTY, NO_COMPARISON, EQUALITY, TWO_COMPARISONS, MISSING_SIDE,
                   BAD_REFERENCE, FACTOR_NOT_ALLOWED, FACTOR_ON_LEFT, BAD_FACTOR, BAD_SCOPE,
                   SAME_TIMING)

_SYNONYMS = {"≪": "<<", "≫": ">>", "≈": "~", "×": "*", "÷": "/", "≤": "<=", "≥": ">=",
             "≠": "!="}
_NUMBER = r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+"


class ClaimSyntaxError(ValueError):
    """An expression that is not a claim: ``problem`` (one of :data:`SYNTAX_PROBLEMS`)
    and the part of it concerned (``subject``)."""

    def __init__(self, problem: str, subject: str = ""):
        super().__init__(problem, subject)
        self.problem = problem
        self.subject = subject

    def __str__(self) -> str:  # the words are render/claims_text.py's
        return f"{self.problem}: {self.subject}" if self.subject else self.problem


class ParsedClaim(NamedTuple):
    """A claim's parts."""

    left: Reference
    relation: str
    right: Reference
    #: the number after ``*`` or ``/`` (None: no factor)
    factor: float | None = None
    #: ``*`` or ``/``
    factor_operator: str | None = None
    #: ``gpu``, ``cpu``, ``tpu``; None: every device
    scope: str | None = None

    def log_bound(self, rules: ClaimRules) -> float:
        """The logarithm of the ratio A / B the claim compares with (for ``~``: the
        similar factor, both ways)."""
        if self.relation == MUCH_FASTER:
            return -math.log(rules.much_factor)
        if self.relation == MUCH_SLOWER:
            return math.log(rules.much_factor)
        if self.relation == SIMILAR:
            return math.log(rules.similar_factor)
        if self.factor is None:
            return 0.0
        return math.log(self.factor) if self.factor_operator == "*" else -math.log(self.factor)


@functools.cache
def _grammar() -> dict[str, re.Pattern[str]]:
    """The patterns, compiled at the first claim (not at import)."""
    return {
        "scope": re.compile(r"\s+on\s+(\S+)\s*$", re.IGNORECASE),
        "equality": re.compile(r"<=|>=|==|!=|=(?!=)"),
        "relation": re.compile(r"<<|>>|<|>|~"),
        "factor": re.compile(rf"^(?P<rest>.*?)\s*(?P<operator>[*/])\s*(?P<number>{_NUMBER})\s*$"),
    }


def _reference(text: str) -> Reference:
    text = text.strip()
    if not text:
        raise ClaimSyntaxError(MISSING_SIDE)
    reference = parse_reference(text)
    if reference is None:
        raise ClaimSyntaxError(BAD_REFERENCE, text)
    return reference


def parse_claim(expression: str) -> ParsedClaim:
    """The parts of ``expression``; raises :class:`ClaimSyntaxError`."""
    grammar = _grammar()
    text = " ".join(str(expression).split())
    for synonym, written in _SYNONYMS.items():
        text = text.replace(synonym, written)
    if not text:
        raise ClaimSyntaxError(EMPTY)
    scope = None
    found = grammar["scope"].search(text)
    if found:
        scope = found.group(1).lower()
        if scope not in SCOPES:
            raise ClaimSyntaxError(BAD_SCOPE, found.group(1))
        text = text[: found.start()]
    equality = grammar["equality"].search(text)
    if equality:
        raise ClaimSyntaxError(EQUALITY, equality.group(0))
    relations = list(grammar["relation"].finditer(text))
    if not relations:
        raise ClaimSyntaxError(NO_COMPARISON, text)
    if len(relations) > 1:
        raise ClaimSyntaxError(TWO_COMPARISONS, text)
    (relation,) = relations
    left_text, right_text = text[: relation.start()], text[relation.end():]
    if grammar["factor"].match(left_text):
        raise ClaimSyntaxError(FACTOR_ON_LEFT, left_text.strip())
    factor = operator = None
    scaled = grammar["factor"].match(right_text)
    if scaled:
        if relation.group(0) not in (FASTER, SLOWER):
            raise ClaimSyntaxError(FACTOR_NOT_ALLOWED, relation.group(0))
        factor, operator = float(scaled.group("number")), scaled.group("operator")
        if not factor > 0:
            raise ClaimSyntaxError(BAD_FACTOR, scaled.group("number"))
        right_text = scaled.group("rest")
    left, right = _reference(left_text), _reference(right_text)
    if left == right:
        raise ClaimSyntaxError(SAME_TIMING, str(left))
    return ParsedClaim(left, relation.group(0), right, factor, operator, scope)


# -- verdicts ---------------------------------------------------------------------------------
#: what the logarithms of two times may lose: a ratio at the margin's edge is too close
_ROUNDING = 1e-12


def judge(relation: str, log_ratio: float, log_bound: float, margin: float) -> str:
    """``holds``, ``fails`` or ``too_close`` for a measured ``log(A / B)``.

    ``too_close``: the ratio is within ``margin`` of the bound, a factor ``1 +
    margin`` either way (inclusive).  Logarithms keep it symmetric: the verdict of
    ``A < B`` is that of ``B > A`` to the last bit.
    """
    if relation in (FASTER, MUCH_FASTER):
        distance = log_ratio - log_bound
    elif relation in (SLOWER, MUCH_SLOWER):
        distance = log_bound - log_ratio
    else:
        distance = abs(log_ratio) - log_bound
    if abs(distance) <= math.log1p(margin) + _ROUNDING:
        return TOO_CLOSE
    return HOLDS if distance < 0 else FAILS


def worst_verdict(checks: Iterable[ClaimCheck]) -> str:
    """The claim's verdict: its worst check's (fails, too close, holds); ``not_checked``
    when none was checked."""
    found = {check.verdict for check in checks}
    return next((verdict for verdict in VERDICTS if verdict in found), NOT_CHECKED)


class Build(NamedTuple):
    """The records of one build a claim is checked against."""

    #: the build's notebook records by docname
    records: Mapping[str, NotebookRecord]
    #: its status file as configured (``gpu_runtime_sources``); None: this build
    source: str | None = None
    #: the pages this build measured in an earlier version (:func:`..render.runtime_text.
    #: is_stale`, which the adapter asks)
    stale_pages: frozenset[str] = frozenset()


class ClaimSite(NamedTuple):
    """A claim where the text makes it."""

    page: str
    expression: str
    line: int | None = None
    source: str | None = None
    sentence: str = ""


def claim_sites(page: str, found: Iterable[Sentence], source: str | None = None
                ) -> list[ClaimSite]:
    """The claims of a page's sentences (:func:`.page_text.sentences`), at their roles'
    lines, each with the sentence it marks."""
    return [ClaimSite(page, role.content, role.line, source, sentence.text)
            for sentence in found for role in sentence.roles if role.name == CLAIM_ROLE]


def record_device(record: NotebookRecord | None) -> tuple[str | None, str | None, str | None]:
    """(kind, name, family) of the device a record ran on; Nones when not known."""
    if record is None or not record.executed or not record.measured:
        return None, None, None
    environment = record.environment
    return (device.device_kind(environment), device.device_name(environment),
            device.backend_family(environment.backend))


def _value(timing: Timing) -> TimedValue:
    return TimedValue(seconds=float(timing.seconds or 0.0), source=timing.source,
                      timer=timing.timer)


def _not_checked(check: ClaimCheck, problem: Unavailable) -> ClaimCheck:
    check.reason, check.subject, check.detail = problem.reason, problem.subject, problem.detail
    return check


def _as_written(problem: Unavailable, reference: Reference) -> Unavailable:
    """A problem of a timing named as the claim writes it (``lectures/jax:vmap-v2``); a
    page's problem names the page's docname."""
    if problem.reason in (UNKNOWN_PAGE, PAGE_NOT_EXECUTED):
        return problem
    return problem._replace(subject=str(reference))


def check_on(parsed: ParsedClaim, page: str, build: Build, log_bound: float,
             margin: float) -> ClaimCheck:
    """The claim checked against one build (whatever its device)."""
    left_page = resolve_page(parsed.left.page, page)
    right_page = resolve_page(parsed.right.page, page)
    kind, name, family = record_device(build.records.get(left_page))
    check = ClaimCheck(build=build.source, device_kind=kind, device_name=name,
                       stale=bool({left_page, right_page} & build.stale_pages),
                       bound=math.exp(log_bound), margin=margin)
    if parsed.scope is not None:
        if family is None:
            return _not_checked(check, Unavailable(NO_DEVICE, parsed.scope))
        if family != parsed.scope:
            return _not_checked(check, Unavailable(OTHER_DEVICE, parsed.scope))
    left = find_timing(build.records, left_page, parsed.left.name)
    if isinstance(left, Unavailable):
        return _not_checked(check, _as_written(left, parsed.left))
    right = find_timing(build.records, right_page, parsed.right.name)
    if isinstance(right, Unavailable):
        return _not_checked(check, _as_written(right, parsed.right))
    right_kind, right_name, _family = record_device(build.records.get(right_page))
    if (right_kind, right_name) != (kind, name):
        return _not_checked(check, Unavailable(MIXED_DEVICES, right_name or "",
                                               right_kind))
    check.left, check.right = _value(left), _value(right)
    for reference, timing in ((parsed.left, left), (parsed.right, right)):
        if not timing.seconds:
            return _not_checked(check, Unavailable(ZERO_TIME, str(reference)))
    check.ratio = check.left.seconds / check.right.seconds
    log_ratio = math.log(check.left.seconds) - math.log(check.right.seconds)
    check.verdict = judge(parsed.relation, log_ratio, log_bound, margin)
    return check


def _in_build(parsed: ParsedClaim, page: str, build: Build) -> bool:
    """Whether another build has the claim's pages, executed on a known device (a
    build without them did not build them: it has nothing to say)."""
    pages = {resolve_page(parsed.left.page, page), resolve_page(parsed.right.page, page)}
    return all(p in build.records for p in pages) and \
        record_device(build.records[resolve_page(parsed.left.page, page)])[0] is not None


def check_claim(site: ClaimSite, builds: Sequence[Build], rules: ClaimRules) -> Claim:
    """``site`` checked against ``builds`` (this build first): one check on this build,
    and one per other device on the other builds that have its pages."""
    claim = Claim(page=site.page, expression=site.expression, source=site.source,
                  line=site.line, sentence=site.sentence)
    try:
        parsed = parse_claim(site.expression)
    except ClaimSyntaxError as error:
        claim.checks = [ClaimCheck(reason=PARSE, subject=error.subject or None,
                                   detail=error.problem)]
        return claim
    log_bound = parsed.log_bound(rules)
    seen: set[tuple[str | None, str | None]] = set()
    for position, build in enumerate(builds):
        if position and not _in_build(parsed, site.page, build):
            continue
        check = check_on(parsed, site.page, build, log_bound, rules.margin)
        key = (check.device_kind, check.device_name)
        if position and key in seen:
            continue  # a device already stated (this build's own earlier file, ...)
        seen.add(key)
        claim.checks.append(check)
    claim.verdict = worst_verdict(claim.checks)
    return claim


def check_claims(sites: Iterable[ClaimSite], builds: Sequence[Build],
                 rules: ClaimRules) -> list[Claim]:
    """Every claim of the book, in the order given."""
    return [check_claim(site, builds, rules) for site in sites]


#: reasons a claim is not checked that are the text's or the book's to fix (a warning);
#: a claim about another device, or a build that does not know its device, is not
WARNED_REASONS = (PARSE, UNKNOWN_PAGE, PAGE_NOT_EXECUTED, UNKNOWN_NAME, NOT_UNIQUE,
                  NOT_EXECUTED, NOT_RUN, CELL_FAILED, TIMER_VALUES, NOT_MEASURED, ZERO_TIME,
                  MIXED_DEVICES)


def problem(claim: Claim) -> ClaimCheck | None:
    """The check on this build that says why the claim could not be checked, when that
    is a problem to warn about (at the claim's line)."""
    return next((check for check in claim.checks if check.build is None
                 and check.verdict == NOT_CHECKED and check.reason in WARNED_REASONS), None)


def failures(claim: Claim) -> list[ClaimCheck]:
    """The checks the claim fails (each a warning's part)."""
    return [check for check in claim.checks if check.verdict == FAILS]


# -- merged status files ----------------------------------------------------------------------
def recheck(claim: Claim, records: Mapping[str, NotebookRecord]) -> Claim:
    """``claim`` with its check on the build that wrote it made again against
    ``records`` (a merged file's: a claim of one job may name a page another job
    executed), with the bound and margin it was checked with; the other builds'
    checks are kept."""
    own = next((check for check in claim.checks if check.build is None), None)
    if own is None or own.bound is None or own.margin is None or own.bound <= 0:
        return claim
    try:
        parsed = parse_claim(claim.expression)
    except ClaimSyntaxError:
        return claim
    fresh = check_on(parsed, claim.page, Build(records), math.log(own.bound), own.margin)
    checks = [fresh if check is own else check for check in claim.checks]
    return Claim(page=claim.page, expression=claim.expression, source=claim.source,
                 line=claim.line, sentence=claim.sentence, verdict=worst_verdict(checks),
                 checks=checks)

