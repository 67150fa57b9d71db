"""What the quoting roles state: ``{timing}`NAME` `` and ``{timing-ratio}`A / B` ``.

Text that quotes the build stays true: ``{timing}`` gives a named timing's value on
this build and on each other build (``gpu_runtime_sources``) of another device;
``{timing-ratio}`` gives how many times faster A is than B, per device alike (the
checks of the claim ``A < B``, whose ratios are A / B).  The words are
:mod:`..render.claims_text`'s; this module says which values exist, or why not.
"""

from __future__ import annotations

from collections.abc import Sequence

from .claims import (
    BAD_REFERENCE,
    NO_COMPARISON,
    WARNED_REASONS,
    Build,
    ClaimSite,
    ClaimSyntaxError,
    check_claim,
    record_device,
)
from .page_text import RATIO_ROLE, TIMING_ROLE
from .timing_record import PARSE, ClaimCheck, ClaimRules, EvidenceValue
from .timings import Reference, Unavailable, find_timing, parse_reference, resolve_page


def parse_timing(text: str) -> Reference:
    """``{timing}``'s target: ``NAME`` or ``page/path:NAME``; raises
    :class:`.claims.ClaimSyntaxError` (``bad_reference``)."""
    reference = parse_reference(text)
    if reference is None:
        raise ClaimSyntaxError(BAD_REFERENCE, " ".join(text.split()))
    return reference


def timing_values(text: str, page: str, builds: Sequence[Build]
                  ) -> tuple[list[EvidenceValue], Unavailable | None]:
    """``{timing}`text``` on ``page``: its values, this build's first, then one per other
    device (stale ones labelled), and why this build has none (None: it has one)."""
    try:
        reference = parse_timing(text)
    except ClaimSyntaxError as error:
        return [], Unavailable(PARSE, error.subject, error.problem)
    target = resolve_page(reference.page, page)
    values: list[EvidenceValue] = []
    seen: set[tuple[str | None, str | None]] = set()
    missing: Unavailable | None = None
    for position, build in enumerate(builds):
        kind, name, _family = record_device(build.records.get(target))
        found = find_timing(build.records, target, reference.name)
        if isinstance(found, Unavailable):
            if not position:
                missing = found._replace(subject=str(reference)) \
                    if found.subject == reference.name else found
            continue
        if (position and kind is None) or (kind, name) in seen:
            continue  # another build's value without its device, or a device stated
        seen.add((kind, name))
        values.append(EvidenceValue(seconds=float(found.seconds or 0.0), source=found.source,
                                    timer=found.timer, build=build.source, device_kind=kind,
                                    device_name=name, stale=target in build.stale_pages))
    return values, missing


def parse_ratio(text: str) -> tuple[Reference, Reference]:
    """``{timing-ratio}``'s target: ``A / B`` (``a/b`` too when neither names a page);
    raises :class:`.claims.ClaimSyntaxError`."""
    written = " ".join(text.split())
    if " / " in written:
        left, _slash, right = written.partition(" / ")
    elif written.count("/") == 1 and ":" not in written:
        left, _slash, right = written.partition("/")
    else:
        raise ClaimSyntaxError(NO_COMPARISON, written)
    return parse_timing(left), parse_timing(right)


def ratio_checks(text: str, page: str, builds: Sequence[Build],
                 rules: ClaimRules) -> list[ClaimCheck]:
    """``{timing-ratio}`text``` on ``page``: A / B on this build and each other device, as
    the checks of ``A < B`` (their ``ratio``; a check without one says why)."""
    try:
        left, right = parse_ratio(text)
    except ClaimSyntaxError as error:
        return [ClaimCheck(reason=PARSE, subject=error.subject or None, detail=error.problem)]
    return check_claim(ClaimSite(page, f"{left} < {right}"), builds, rules).checks


class Quotes:
    """The quoting roles of one build, each role's text on its page worked out once.

    A role is warned about once the records are final (:meth:`problem`) and filled in
    when its page is written (:meth:`values`, :meth:`ratios`): both read the same answer
    (before, each ``{timing-ratio}`` was checked twice a build). The answers are only
    read, never changed, by the views.
    """

    __slots__ = ("builds", "rules", "_values", "_ratios")

    def __init__(self, builds: Sequence[Build], rules: ClaimRules) -> None:
        self.builds = builds
        self.rules = rules
        self._values: dict[tuple[str, str],
                           tuple[list[EvidenceValue], Unavailable | None]] = {}
        self._ratios: dict[tuple[str, str], list[ClaimCheck]] = {}

    def values(self, text: str, page: str
               ) -> tuple[list[EvidenceValue], Unavailable | None]:
        """:func:`timing_values` of ``{timing}`text``` on ``page``."""
        key = (text, page)
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = timing_values(text, page, self.builds)
        return found

    def ratios(self, text: str, page: str) -> list[ClaimCheck]:
        """:func:`ratio_checks` of ``{timing-ratio}`text``` on ``page``."""
        key = (text, page)
        found = self._ratios.get(key)
        if found is None:
            found = self._ratios[key] = ratio_checks(text, page, self.builds, self.rules)
        return found

    def problem(self, role: str, text: str, page: str) -> ClaimCheck | None:
        """Why this build states no value for a ``{timing}`` or ``{timing-ratio}`` on
        ``page``, when the text or the book can fix it (a reason of ``WARNED_REASONS``,
        that both engines warn about at the role's line); None when there is a value, or
        none for a reason the text cannot fix."""
        if role == TIMING_ROLE:
            _values, missing = self.values(text, page)
            if missing is None or missing.reason not in WARNED_REASONS:
                return None
            return ClaimCheck(reason=missing.reason, subject=missing.subject,
                              detail=missing.detail)
        if role == RATIO_ROLE:
            checks = self.ratios(text, page)
            check = checks[0] if checks else ClaimCheck()
            return None if check.ratio is not None or check.reason not in WARNED_REASONS \
                else check
        return None
