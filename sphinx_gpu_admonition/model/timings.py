"""Named timings: the ``time:NAME`` tag, references to a timing, and a timing's value.

A code cell is named for the text with the tag ``time:NAME`` (``:tags:
[time:vmap-v2]`` in MyST, the same tag in an ``.ipynb`` cell's metadata).  NAME
is letters, digits, ``-`` and ``_`` (ASCII), case-sensitive, and unique on its
page; a cell may have several names.  Text refers to a timing as ``NAME`` on its
own page and as ``page/path:NAME`` on another, where the path is written like a
``{doc}`` target: relative to the referring page's folder, or from the source
folder with a leading ``/``, a file suffix allowed (:func:`resolve_page`).

A named timing's value (:func:`page_timings`) is, in this order, the time the
cell's own timer printed when it printed exactly one (:mod:`.timers`), else the
cell's run time without JAX compilation (:func:`.analysis.run_time`); the record
says which (``timer`` or ``cell``).  Cells that print a timer's reading but have
no name are timed cells too (the review list shows them).

The engines pass each code cell as an object with the attributes of
:class:`PageCell`; nothing here knows an engine.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from .analysis import run_time
from .record import CellRecord, NotebookRecord
from .timers import TimerReading, timer_readings
from .timing_record import (
    CELL,
    CELL_FAILED,
    NOT_EXECUTED,
    NOT_MEASURED,
    NOT_RUN,
    NOT_UNIQUE,
    PAGE_NOT_EXECUTED,
    TIMER,
    TIMER_VALUES,
    TIMING_OK,
    UNKNOWN_NAME,
    UNKNOWN_PAGE,
    Timing,
)

#: the tag that names a cell's timing: ``time:vmap-v2``
TAG_PREFIX = "time:"
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]+")
#: the file suffixes a page reference may keep (both engines' page files)
PAGE_SUFFIXES = (".md", ".ipynb", ".rst", ".myst", ".txt")


class PageCell(Protocol):
    """What an engine knows of a code cell of the page (``model.enrich.PageCell``)."""

    #: its place among all cells of the page (Markdown cells count)
    position: int
    #: its index as ``CellRecord.index`` numbers cells
    index: int | None
    source: str
    tags: Sequence[str]
    #: its line in the source file (None for ``.ipynb``)
    line: int | None
    #: the text of its stream and ``text/plain`` outputs: one string or one per output
    outputs: str | Sequence[str]


# -- tags ------------------------------------------------------------------------------
class TagProblem(NamedTuple):
    """A ``time:`` tag that names nothing (a warning at the cell's line)."""

    #: ``bad_name`` (not letters, digits, - and _) or ``not_unique``
    problem: str
    tag: str
    cell_index: int | None
    line: int | None


BAD_NAME = "bad_name"


def is_name(text: str) -> bool:
    return NAME_PATTERN.fullmatch(text) is not None


def tag_names(tags: Iterable[str]) -> tuple[list[str], list[str]]:
    """(names, bad tags) of a cell's ``time:`` tags, in order, each name once."""
    names: list[str] = []
    bad: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.startswith(TAG_PREFIX):
            continue
        name = tag[len(TAG_PREFIX):]
        if not is_name(name):
            bad.append(tag)
        elif name not in names:
            names.append(name)
    return names, bad


# -- references ------------------------------------------------------------------------
class Reference(NamedTuple):
    """A timing as text names it: ``vmap-v2`` or ``lectures/jax:vmap-v2``."""

    name: str
    #: the page as written (None: the referring page)
    page: str | None = None

    def __str__(self) -> str:
        return self.name if self.page is None else f"{self.page}:{self.name}"


def parse_reference(text: str) -> Reference | None:
    """``NAME`` or ``page/path:NAME``; None when ``text`` is neither."""
    text = text.strip()
    page, colon, name = text.rpartition(":")
    if not is_name(name):
        return None
    if not colon:
        return Reference(name)
    page = page.strip()
    if not page or any(ch.isspace() or ch in ":`{}<>" for ch in page):
        return None
    return Reference(name, page)


def resolve_page(page: str | None, referring: str) -> str:
    """The docname ``page`` (as a reference writes it) means on page ``referring``.

    As ``{doc}`` resolves a target: a leading ``/`` starts at the source folder,
    anything else is relative to the referring page's folder (``..`` goes up; a
    path cannot leave the source folder); a page file suffix may be left on.
    """
    if page is None:
        return referring
    for suffix in PAGE_SUFFIXES:
        if page.endswith(suffix) and len(page) > len(suffix):
            page = page[: -len(suffix)]
            break
    joined = page if page.startswith("/") else posixpath.join("/" + referring, "..", page)
    return posixpath.normpath(joined).lstrip("/")


# -- a page's timed cells ------------------------------------------------------------------
def _record_cells(record: NotebookRecord) -> dict[int, CellRecord]:
    return {cell.index: cell for cell in record.cells if cell.index is not None}


def _timed(cell: PageCell, name: str | None, record: NotebookRecord,
           measured: CellRecord | None, readings: list[TimerReading], unique: bool) -> Timing:
    timing = Timing(name=name, cell_index=cell.index, position=cell.position,
                    line=cell.line if cell.line and cell.line > 0 else None,
                    printed=[reading.seconds for reading in readings])
    if not unique:
        timing.status = NOT_UNIQUE
    elif not record.executed:
        timing.status = NOT_EXECUTED
    elif measured is None and record.capture == "ok":
        timing.status = NOT_RUN  # the probe sees every cell that runs
    elif measured is not None and measured.error:
        timing.status = CELL_FAILED
    elif len(readings) > 1:
        timing.status = TIMER_VALUES
    elif readings:
        timing.seconds, timing.source, timing.timer = (readings[0].seconds, TIMER,
                                                       readings[0].timer)
    elif measured is not None:
        timing.seconds, timing.source = run_time(measured), CELL
    else:
        timing.status = NOT_MEASURED  # no timer, and the capture is off or failed
    return timing


def tag_problems(cells: Iterable[PageCell]) -> list[TagProblem]:
    """The ``time:`` tags of a page that name nothing (a warning each, at the cell's
    line): a bad name, and a name on more than one cell (once, at its first cell)."""
    named = [(cell, *tag_names(cell.tags)) for cell in cells if cell.tags]
    counts = Counter(name for _cell, names, _bad in named for name in names)
    problems: list[TagProblem] = []
    reported: set[str] = set()
    for cell, names, bad in named:
        problems += [TagProblem(BAD_NAME, tag, cell.index, cell.line) for tag in bad]
        for name in names:
            if counts[name] > 1 and name not in reported:
                reported.add(name)
                problems.append(TagProblem(NOT_UNIQUE, TAG_PREFIX + name, cell.index,
                                           cell.line))
    return problems


def page_timings(cells: Iterable[PageCell], record: NotebookRecord) -> list[Timing]:
    """The timed cells of a page (``NotebookRecord.timings``); its tags' problems are
    :func:`tag_problems`' (each engine warns them at the cells' lines).

    Every named cell gives one :class:`Timing` per name, in page order; a cell that
    printed a timer's reading and has no name gives one without a name.  A name
    on more than one cell is ``not_unique`` on each (and one problem).
    """
    cells = list(cells)
    named = [(cell, tag_names(cell.tags)[0]) for cell in cells]
    counts = Counter(name for _cell, names in named for name in names)
    measured = _record_cells(record)
    timings: list[Timing] = []
    for cell, names in named:
        record_cell = measured.get(cell.index) if cell.index is not None else None
        readings = timer_readings(cell.outputs)
        if not names:
            if readings:
                timings.append(_timed(cell, None, record, record_cell, readings, unique=True))
            continue
        for name in names:
            timings.append(_timed(cell, name, record, record_cell, readings,
                                  unique=counts[name] == 1))
    return timings


# -- looking a timing up ------------------------------------------------------------------
class Unavailable(NamedTuple):
    """Why a reference has no value in a build (``ClaimCheck.reason`` and its values)."""

    reason: str
    subject: str
    detail: str | None = None


def nearest_name(name: str, names: Iterable[str]) -> str | None:
    """The name ``name`` was probably meant to be (a typo, another case)."""
    import difflib  # only for a claim with a name that is not on its page

    names = sorted(set(names))
    same_case = [other for other in names if other.lower() == name.lower()]
    if same_case:
        return same_case[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return close[0] if close else None


def find_timing(records: Mapping[str, NotebookRecord], page: str,
                name: str) -> Timing | Unavailable:
    """The timing ``name`` of ``page`` in a build's records (by docname), or why not."""
    record = records.get(page)
    if record is None:
        return Unavailable(UNKNOWN_PAGE, page)
    named = [timing for timing in record.timings if timing.name == name]
    if not named:
        if not record.executed:
            return Unavailable(PAGE_NOT_EXECUTED, page, record.status)
        known = [timing.name for timing in record.timings if timing.name]
        return Unavailable(UNKNOWN_NAME, name, nearest_name(name, known))
    timing = named[0]
    if len(named) > 1:  # a hand-written file: the builder marks them not unique itself
        return Unavailable(NOT_UNIQUE, name)
    if timing.status == NOT_EXECUTED:
        return Unavailable(PAGE_NOT_EXECUTED, page, record.status)
    if timing.status != TIMING_OK or timing.seconds is None:
        detail = str(len(timing.printed)) if timing.status == TIMER_VALUES else None
        return Unavailable(timing.status if timing.status != TIMING_OK else NOT_MEASURED,
                           name, detail)
    return timing
