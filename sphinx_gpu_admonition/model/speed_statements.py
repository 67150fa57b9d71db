"""The review list: sentences of the text that speak about speed and have no claim.

Most timing statements are written before anyone marks them with a
``{timing-claim}``.  This finds them (English), and puts beside each the timed
cells just before it with their values on every build, as a maintainer checking
a lecture by hand would: it never says a sentence is wrong.

A sentence speaks about speed when it has a cue (:mod:`.speed_words`: faster,
speed-up, similar, the same time, 3 times, much better, seconds ...); a sentence
with a ``{timing-claim}`` or a ``{timing-ratio}`` is not listed (the build checks
or states it), nor a question or a sentence that leads to the code after it.

Its evidence (:func:`evidence_places`) is the :data:`EVIDENCE_CELLS` timed cells
nearest before it on the page (named or printing a timer: :mod:`.timings`); a
sentence with none before it in its section gets the first one after it there
(text that introduces the cell it describes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .claims import Build, record_device
from .page_text import CLAIM_ROLE, RATIO_ROLE, Place, Sentence
from .record import NotebookRecord
from .speed_words import may_have_cues, speed_cues
from .timing_record import TIMING_OK, Evidence, EvidenceValue, Timing, TimingStatement

#: how many timed cells before a sentence its evidence shows
EVIDENCE_CELLS = 4

def may_matter(markdown: str) -> bool:
    """Whether a paragraph may hold a claim, a quoting role or a sentence about speed
    (:func:`.page_text.sentences`'s ``wanted``: the others need not be read)."""
    return "timing" in markdown or may_have_cues(markdown)


_LEADS_TO_CODE = re.compile(r"(?:now\s+)?(?:let's|let us|here's|here is)\b")


def is_statement(text: str) -> bool:
    """Whether a sentence states something: not a question, and not one that leads to
    the code after it ("Let's run it again to eliminate compile time:", "Here's the
    timing.")."""
    text = text.strip()
    if text.endswith(("?", ":")):
        return False
    return _LEADS_TO_CODE.match(text.lower()) is None


def is_checked(sentence: Sentence) -> bool:
    """Whether the sentence has a claim or states a ratio (the build checks it)."""
    return any(role.name in (CLAIM_ROLE, RATIO_ROLE) for role in sentence.roles)


def _with_cues(found: Iterable[Sentence]) -> list[tuple[Sentence, list[str]]]:
    listed = []
    for sentence in found:
        if is_checked(sentence) or not is_statement(sentence.text):
            continue
        cues = speed_cues(sentence.text)
        if cues:
            listed.append((sentence, cues))
    return listed


def review_candidates(found: Iterable[Sentence]) -> list[Sentence]:
    """The sentences the review list may list, before any build is known: an engine may
    keep these (and the headings) per page instead of every sentence."""
    return [sentence for sentence, _cues in _with_cues(found)]


# -- where the evidence is -------------------------------------------------------------------
def _key(place: Place) -> tuple[float, float]:
    """An order of places on a page: by cell, then by line (unknown: first)."""
    return (-1 if place.position is None else place.position,
            -1 if place.line is None else place.line)


def _before(first: Place, second: Place) -> bool:
    """Whether ``first`` comes before ``second`` on the page."""
    if first.line is not None and second.line is not None and \
            (first.position is None or second.position is None):
        return first.line < second.line  # a text page: lines
    return _key(first) < _key(second)


def _section(place: Place, headings: Sequence[Place]) -> int:
    return sum(1 for heading in headings if _before(heading, place))


def timing_place(timing: Timing) -> Place:
    return Place(timing.position, timing.line)


def _in_page_order(timed: Sequence[Timing],
                   headings: Sequence[Place]) -> list[tuple[Timing, Place, int]]:
    """The timed cells in page order, each with its place and section: worked out once a
    page, not once per sentence (a lecture has dozens of each)."""
    cells = sorted(timed, key=lambda timing: _key(timing_place(timing)))
    return [(timing, place, _section(place, headings))
            for timing in cells for place in (timing_place(timing),)]


def evidence_places(sentence: Sentence, headings: Sequence[Place],
                    timed: Sequence[Timing]) -> list[Timing]:
    """The timed cells a sentence's evidence shows, in page order (see the module)."""
    return _evidence(sentence, _in_page_order(timed, headings))


def _evidence(sentence: Sentence, cells: Sequence[tuple[Timing, Place, int]]) -> list[Timing]:
    """:func:`evidence_places`, of the cells :func:`_in_page_order` gave."""
    before: list[Timing] = []
    after: list[Timing] = []  # in the sentence's section
    in_section_before = False
    for timing, place, section in cells:
        if _before(place, sentence.place):
            before.append(timing)
            in_section_before = in_section_before or section == sentence.section
        elif section == sentence.section:
            after.append(timing)
    if not in_section_before:
        return (before[-EVIDENCE_CELLS + 1:] if before else []) + after[:1]
    return before[-EVIDENCE_CELLS:]


# -- the values ---------------------------------------------------------------------------
def _same_cell(timing: Timing, other: Timing) -> bool:
    if timing.name is not None:
        return other.name == timing.name
    return other.name is None and other.cell_index == timing.cell_index


def _values(timing: Timing, page: str, builds: Sequence[Build]) -> list[EvidenceValue]:
    """The cell's value on each build that has it, one per device, this build first."""
    values: list[EvidenceValue] = []
    seen: set[tuple[str | None, str | None]] = set()
    for position, build in enumerate(builds):
        record: NotebookRecord | None = build.records.get(page)
        kind, name, _family = record_device(record)
        if record is None or (position and kind is None) or (kind, name) in seen:
            continue
        stale = page in build.stale_pages
        if timing.name is None and stale:
            continue  # an unnamed cell is known by its place, which changed
        match = next((other for other in record.timings if _same_cell(timing, other)), None)
        if match is None or match.status != TIMING_OK or match.seconds is None:
            continue
        seen.add((kind, name))
        values.append(EvidenceValue(seconds=match.seconds, source=match.source,
                                    timer=match.timer, build=build.source, device_kind=kind,
                                    device_name=name, stale=stale))
    return values


def statements_to_review(page: str, found: Iterable[Sentence], headings: Sequence[Place],
                         builds: Sequence[Build], source: str | None = None
                         ) -> list[TimingStatement]:
    """The page's sentences about speed that have no claim, with their evidence.

    ``found`` and ``headings``: :func:`.page_text.sentences` of the page (or only its
    :func:`review_candidates`); ``builds``:
    this build first (its record of ``page`` gives the timed cells), then the other
    builds (:class:`.claims.Build`).
    """
    record = builds[0].records.get(page) if builds else None
    cells = _in_page_order(record.timings if record is not None else [], headings)
    statements = []
    for sentence, cues in _with_cues(found):
        evidence = [Evidence(name=timing.name, cell_index=timing.cell_index, line=timing.line,
                             values=_values(timing, page, builds))
                    for timing in _evidence(sentence, cells)]
        statements.append(TimingStatement(page=page, sentence=sentence.text, source=source,
                                          line=sentence.place.line, cues=cues,
                                          evidence=evidence))
    return statements
