"""The review list: sentences of the text that speak about speed and have no claim.

Most timing statements are written before anyone marks them with a
``{timing-claim}``.  This finds them (English), and puts beside each the timed
cells just before it with their values on every build, as a maintainer checking
a lecture by hand would: it never says a sentence is wrong.

A sentence speaks about speed when it has a cue (:func:`speed_cues`): a word
about speed or time (faster, slower, quick, speed, speed-up, run time,
performance, overhead, efficient, seconds, ms ...), a comparison of amounts
(similar, comparable, the same time, 3 times, 13x, twice as, orders of
magnitude) or a modifier before better / worse / a gain (much, significantly,
barely ...).  A miss costs more than a false alarm, so the cues are generous; a
sentence with a ``{timing-claim}`` or a ``{timing-ratio}`` is not listed (the
build checks or states it).

Its evidence (:func:`evidence_places`) is the :data:`EVIDENCE_CELLS` timed cells
nearest before it on the page (named or printing a timer: :mod:`.timings`); a
sentence with none before it in its section gets the first one after it there
(text that introduces the cell it describes).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from .claims import Build, record_device
from .page_text import CLAIM_ROLE, RATIO_ROLE, Place, Sentence
from .record import NotebookRecord
from .timing_record import TIMING_OK, Evidence, EvidenceValue, Timing, TimingStatement

#: how many timed cells before a sentence its evidence shows
EVIDENCE_CELLS = 4

_COUNT = (r"(?:[0-9]+(?:\.[0-9]+)?|two|three|four|five|six|seven|eight|nine|ten|twelve|"
          r"fifteen|twenty|thirty|fifty|a hundred|hundreds of|a thousand|several)")
#: the cues, one pattern each (matched case-insensitively, as whole words)
CUES = (
    r"fast(?:er|est)?", r"slow(?:er|est|ly|s|ed|ing)?", r"slow-?downs?", r"quick(?:er|est|ly)?",
    r"speed(?:s|ed|ier|iest|ily)?", r"speed[- ]?ups?", r"(?:ac|de)celerat(?:e|es|ed|ing|ion)",
    r"run[- ]?times?", r"running times?", r"execution times?", r"wall[- ]?(?:clock[- ]?)?times?",
    r"compil(?:e|ation) times?", r"timings?", r"timed", r"elapsed", r"latency", r"throughput",
    r"overheads?", r"performance", r"performant", r"outperform\w*",
    r"(?<!memory )(?:in)?efficien(?:t|tly|cy)", r"(?:nano|micro|milli)?seconds", r"minutes?",
    r"hours?", r"[0-9]+(?:\.[0-9]+)?\s*(?:ms|µs|μs|us|ns|s|sec|min|(?:nano|micro|milli)?second)",
    r"[0-9]+(?:\.[0-9]+)?\s*[x×]",
    rf"{_COUNT}\s+times", r"twice\s+as", r"half\s+(?:the|as)", r"orders?\s+of\s+magnitude",
    r"same\s+(?:time|times|speed|performance)", r"about\s+the\s+same", r"similar(?:ly)?",
    r"comparable", r"on\s+par", r"as\s+(?:fast|slow|quick)\s+as", r"gains?",
    r"benefits?\s+from",
    r"(?:much|significantly|substantially|considerably|dramatically|noticeably|barely|"
    r"slightly|marginally|far|way|a\s+bit|little)\s+(?:\w+\s+){0,2}?"
    r"(?:better|worse|improv\w*|difference|advantage)",
)


@functools.cache
def _cue_pattern() -> re.Pattern[str]:
    """Compiled at the first page (not at import)."""
    return re.compile(r"(?<![\w-])(?:" + "|".join(CUES) + r")(?![\w-])", re.IGNORECASE)


def speed_cues(text: str) -> list[str]:
    """The words of ``text`` that speak about speed, as written, each once, in order."""
    found: list[str] = []
    for match in _cue_pattern().finditer(text):
        cue = " ".join(match.group(0).split())
        if cue.lower() not in (known.lower() for known in found):
            found.append(cue)
    return found


def is_statement(text: str) -> bool:
    """Whether a sentence states something: not a question, and not one that leads to
    the code after it ("Let's run it again to eliminate compile time:", "Here's the
    timing.")."""
    text = text.strip()
    if text.endswith(("?", ":")):
        return False
    return re.match(r"(?:now\s+)?(?:let's|let us|here's|here is)\b", text.lower()) is None


def is_checked(sentence: Sentence) -> bool:
    """Whether the sentence has a claim or states a ratio (the build checks it)."""
    return any(role.name in (CLAIM_ROLE, RATIO_ROLE) for role in sentence.roles)


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


def evidence_places(sentence: Sentence, headings: Sequence[Place],
                    timed: Sequence[Timing]) -> list[Timing]:
    """The timed cells a sentence's evidence shows, in page order (see the module)."""
    cells = sorted(timed, key=lambda timing: _key(timing_place(timing)))
    before = [timing for timing in cells if _before(timing_place(timing), sentence.place)]
    section = sentence.section
    if not any(_section(timing_place(timing), headings) == section for timing in before):
        after = [timing for timing in cells if timing not in before
                 and _section(timing_place(timing), headings) == section]
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

    ``found`` and ``headings``: :func:`.page_text.sentences` of the page; ``builds``:
    this build first (its record of ``page`` gives the timed cells), then the other
    builds (:class:`.claims.Build`).
    """
    record = builds[0].records.get(page) if builds else None
    timed = list(record.timings) if record is not None else []
    statements = []
    for sentence in found:
        if is_checked(sentence) or not is_statement(sentence.text):
            continue
        cues = speed_cues(sentence.text)
        if not cues:
            continue
        evidence = [Evidence(name=timing.name, cell_index=timing.cell_index, line=timing.line,
                             values=_values(timing, page, builds))
                    for timing in evidence_places(sentence, headings, timed)]
        statements.append(TimingStatement(page=page, sentence=sentence.text, source=source,
                                          line=sentence.place.line, cues=cues,
                                          evidence=evidence))
    return statements
