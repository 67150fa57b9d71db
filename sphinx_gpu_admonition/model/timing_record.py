"""The record's fields of named timings, timing claims and the review list.

The data only (dataclasses of the record model, loaded and dumped by
:mod:`.schema` like every other part of it); :mod:`.record` holds them:

* :class:`Timing`: a code cell timed for the text, kept per notebook in
  ``NotebookRecord.timings``.  It is a measurement of the execution that made
  the notebook's outputs, so a cache hit (the capture sidecar keeps the record)
  and a merge keep the values of that run.
* :class:`Claim`: a ``{timing-claim}`` of the text with one :class:`ClaimCheck`
  per build it was checked against, kept per build in ``StatusReport.claims``
  (a claim may name timings of several pages, and lie on a page that is no
  notebook).
* :class:`TimingStatement`: a sentence about speed without a claim, with the
  timed cells before it (:class:`Evidence`), in ``StatusReport.timing_statements``.

The rules that fill them are elsewhere: :mod:`.timings` (tags, values,
references), :mod:`.claims` (grammar, verdicts), :mod:`.speed_statements`
(the review list); their words are :mod:`..render.claims_text`'s.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from .schema import Loadable, choices, model_class

# -- named timings -----------------------------------------------------------------------
#: where a timing's value comes from: what the cell's own timer printed, or the probe's
#: time of the cell less its JAX compilation (:func:`.analysis.run_time`)
TIMER, CELL = "timer", "cell"
TIMING_SOURCES = (TIMER, CELL)

# What became of a timed cell (``Timing.status``); only ``ok`` has a value.
TIMING_OK = "ok"
NOT_UNIQUE = "not_unique"  # another cell of the page has the same name
NOT_EXECUTED = "not_executed"  # the notebook was not executed (execution off, excluded ...)
NOT_RUN = "not_run"  # the notebook was executed but this cell did not run
CELL_FAILED = "cell_failed"  # the cell raised
TIMER_VALUES = "timer_values"  # the cell's timers printed two values or more
NOT_MEASURED = "not_measured"  # no timer and no probe data (the capture is off or failed)
TIMING_STATUSES = (TIMING_OK, NOT_UNIQUE, NOT_EXECUTED, NOT_RUN, CELL_FAILED, TIMER_VALUES,
                   NOT_MEASURED)


@model_class
class Timing(Loadable):
    """A code cell timed for the text: named with a ``time:NAME`` tag, or one whose
    outputs hold a timer's reading (the review list shows those too)."""

    #: the name of its ``time:NAME`` tag; None: a cell that printed a timer, unnamed
    name: str | None = None
    status: str = choices(TIMING_STATUSES, default=TIMING_OK)
    #: the value (None unless ``status`` is ``ok``); may be 0 (a timer printed 0.0000)
    seconds: float | None = None
    source: str = choices(TIMING_SOURCES, default=CELL)
    #: which timer printed it (``%timeit``, ``qe.Timer``, ...: :mod:`.timers`)
    timer: str | None = None
    #: every value the cell's timers printed, in order (two or more: ``timer_values``)
    printed: list[float] = dataclasses.field(default_factory=list)
    #: the cell's index, as ``CellRecord.index`` numbers cells (its anchor on the page)
    cell_index: int | None = None
    #: the cell's place among all cells of the page (Markdown cells count), for what
    #: comes before a sentence
    position: int | None = None
    #: the cell's line in the source file (text notebooks; None for ``.ipynb``)
    line: int | None = dataclasses.field(default=None, metadata={"minimum": 1})


# -- claims --------------------------------------------------------------------------------
class ClaimRules(NamedTuple):
    """The claims' thresholds (``gpu_claim_*``), the one place of their defaults; here,
    beside the checks that record them (``bound``, ``margin``), so that the options
    (:mod:`.settings`) need not import the rules (:mod:`.claims`) at every build's start."""

    much_factor: float = 4.0
    similar_factor: float = 2.0
    margin: float = 0.1

    @classmethod
    def from_config(cls, config: Any) -> ClaimRules:
        """From a :class:`.settings.GpuConfig` (any object with its claim fields)."""
        return cls(config.claim_much_factor, config.claim_similar_factor, config.claim_margin)


HOLDS, FAILS, TOO_CLOSE, NOT_CHECKED = "holds", "fails", "too_close", "not_checked"
#: the verdicts, worst first: a claim's verdict is the worst of its checks'
VERDICTS = (FAILS, TOO_CLOSE, HOLDS, NOT_CHECKED)

# Why a claim was not checked on a build (``ClaimCheck.reason``); ``subject`` names what
# the reason is about, ``detail`` is the reason's own value.
PARSE = "parse"  # the expression does not parse; detail: the problem's code (.claims)
UNKNOWN_PAGE = "unknown_page"  # subject: the page; no execution record of it
PAGE_NOT_EXECUTED = "page_not_executed"  # subject: the page; detail: its status
UNKNOWN_NAME = "unknown_name"  # subject: the name; detail: the nearest name, if any
# ... and the timing statuses above: subject: the name (timer_values: detail: the count)
ZERO_TIME = "zero_time"  # subject: the name whose time is 0
OTHER_DEVICE = "other_device"  # a claim ``on gpu`` on a build that ran on another device
NO_DEVICE = "no_device"  # a claim with a scope on a build that does not know its device
MIXED_DEVICES = "mixed_devices"  # the two timings ran on different devices; detail:
#: the right-hand one's device kind and name ("GPU|Tesla T4")
REASONS = ("", PARSE, UNKNOWN_PAGE, PAGE_NOT_EXECUTED, UNKNOWN_NAME, NOT_UNIQUE, NOT_EXECUTED,
           NOT_RUN, CELL_FAILED, TIMER_VALUES, NOT_MEASURED, ZERO_TIME, OTHER_DEVICE,
           NO_DEVICE, MIXED_DEVICES)


@model_class
class TimedValue(Loadable):
    """A named timing's value on one build, as a check compared it."""

    seconds: float
    source: str = choices(TIMING_SOURCES, default=CELL)
    timer: str | None = None


@model_class
class ClaimCheck(Loadable):
    """A claim checked against one build (this build, or one of ``gpu_runtime_sources``)."""

    verdict: str = choices(VERDICTS, default=NOT_CHECKED)
    #: the other build's status file as configured; None: the build that wrote the file
    build: str | None = None
    #: the device the left-hand timing ran on: ``GPU`` and ``Tesla T4``
    #: (:mod:`.device`); None: not known (no capture data)
    device_kind: str | None = None
    device_name: str | None = None
    #: the other build measured an earlier version of the page
    stale: bool = False
    left: TimedValue | None = None
    right: TimedValue | None = None
    #: left / right: below 1 the left-hand code is faster
    ratio: float | None = None
    #: the ratio the claim compares with (``A < B / 3``: 1/3; ``A ~ B``: the similar
    #: factor, both ways); None when the expression does not parse
    bound: float | None = None
    #: ``gpu_claim_margin`` when checked: a ratio this close to the bound is too close
    margin: float | None = None
    reason: str = choices(REASONS, default="")
    subject: str | None = None
    detail: str | None = None


@model_class
class Claim(Loadable):
    """A ``{timing-claim}`` of the text and its verdicts."""

    #: the page (docname) it is on
    page: str
    #: the expression as written (``vmap-v2 ~ vmap-v1 on gpu``)
    expression: str
    #: its source file, as ``NotebookRecord.source`` names files (for CI annotations)
    source: str | None = None
    line: int | None = dataclasses.field(default=None, metadata={"minimum": 1})
    #: the sentence it marks, plain text on one line
    sentence: str = ""
    #: the worst verdict of its checks (``not_checked`` when none was checked)
    verdict: str = choices(VERDICTS, default=NOT_CHECKED)
    #: one per build, this build first
    checks: list[ClaimCheck] = dataclasses.field(default_factory=list)


# -- the review list --------------------------------------------------------------------------
@model_class
class EvidenceValue(Loadable):
    """A timed cell's value on one build."""

    seconds: float
    source: str = choices(TIMING_SOURCES, default=CELL)
    timer: str | None = None
    build: str | None = None
    device_kind: str | None = None
    device_name: str | None = None
    stale: bool = False


@model_class
class Evidence(Loadable):
    """A timed cell before a sentence about speed, with its value on each build."""

    #: its timing name; None: a cell that printed a timer, unnamed
    name: str | None = None
    cell_index: int | None = None
    line: int | None = dataclasses.field(default=None, metadata={"minimum": 1})
    #: this build first, then one per other device (empty: no build measured it)
    values: list[EvidenceValue] = dataclasses.field(default_factory=list)


@model_class
class TimingStatement(Loadable):
    """A sentence of the text that speaks about speed and has no claim: never judged,
    listed with the figures beside it."""

    page: str
    sentence: str
    source: str | None = None
    line: int | None = dataclasses.field(default=None, metadata={"minimum": 1})
    #: the words that made it one ("faster", "3 times", ...), as written
    cues: list[str] = dataclasses.field(default_factory=list)
    #: the timed cells just before it, nearest last
    evidence: list[Evidence] = dataclasses.field(default_factory=list)
