"""What the timers of a cell printed: the readings in its outputs' text.

A cell's own timer is the figure its author quotes in the text, so a named timing
takes it when the cell printed exactly one.  The formats are the timers' real
ones, read from their sources (and checked against real output in
``tests/integration/test_timer_outputs.py``):

* quantecon's ``qe.Timer`` (``quantecon/util/timing.py``, 0.11): ``0.0123 seconds
  elapsed``, ``12.3456 ms elapsed``, ``12.3456 μs elapsed``, after an optional
  ``message: ``; any line of the form ``<number> seconds elapsed`` reads the same;
* quantecon's ``toc()`` and ``tac()``: ``TOC: Elapsed: 0:00:1.23`` (hours,
  minutes, seconds and ``digits`` decimals, the decimals zero-padded);
* quantecon's ``qe.timeit``: one reading, its ``Average: ... seconds, Minimum: ...``
  line (the ``Run 1: ...`` lines before it are the runs it averages);
* quantecon's ``loop_timer``: one reading, its ``Average time for 10 runs: ...``;
* IPython's ``%time`` / ``%%time``: ``Wall time: 1.23 ms`` (the ``CPU times`` line
  before it is not the wall time, ``Compiler :`` and ``Parser   :`` after it are
  not the code's);
* IPython's ``%timeit`` / ``%%timeit``: the mean of ``1.2 ms ± 3.4 µs per loop
  (mean ± std. dev. of 7 runs, 100 loops each)`` (``+-`` where the output cannot
  encode ``±``; ``1 run``, ``1 loop each`` for single runs), and IPython before
  5.0's ``100 loops, best of 3: 3.4 ms per loop``.  ``%timeit -o`` as a cell's
  last line also shows its result (``<TimeitResult : ...>``): the same reading.

IPython writes durations as ``1.23 s``, ``12.3 ms``, ``4.56 μs`` (``us`` where
``μ`` cannot be encoded), ``789 ns``, ``1e+03 ms`` (3 significant digits) and
from a minute on as ``1min 5s``, ``2h 3min 4s``, ``1d 2h``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import NamedTuple

# Which timer printed a reading (``Timing.timer``).
QE_TIMER = "qe.Timer"  # and any "<number> seconds elapsed" line
QE_TOC = "toc"
QE_TAC = "tac"
QE_TIMEIT = "qe.timeit"
QE_LOOP_TIMER = "loop_timer"
IPYTHON_TIME = "%time"
IPYTHON_TIMEIT = "%timeit"
TIMERS = (QE_TIMER, QE_TOC, QE_TAC, QE_TIMEIT, QE_LOOP_TIMER, IPYTHON_TIME, IPYTHON_TIMEIT)


class TimerReading(NamedTuple):
    """One value a timer printed."""

    seconds: float
    timer: str
    #: the line as printed (stripped)
    text: str


#: seconds per unit, as the timers write units (``μ`` is the Greek letter IPython and
#: quantecon print, ``µ`` the micro sign other code prints)
UNITS = {
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3, "msec": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
    "μs": 1e-6, "µs": 1e-6, "us": 1e-6, "microsecond": 1e-6, "microseconds": 1e-6,
    "ns": 1e-9, "nanosecond": 1e-9, "nanoseconds": 1e-9,
    "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hour": 3600.0, "hours": 3600.0, "d": 86400.0,
}
_NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"
_UNIT = "|".join(sorted((re.escape(unit) for unit in UNITS), key=len, reverse=True))
#: a duration as IPython's ``_format_time`` writes it: ``1.23 ms`` or ``1min 5s``
_DURATION = (rf"(?:{_NUMBER}\s*(?:{_UNIT})(?![A-Za-z]))"
             rf"(?:\s+[0-9]+(?:d|h|min|s)(?![A-Za-z]))*")
#: quantecon's ``%d:%02d:%0d.%0*d``: hours, minutes, seconds, zero-padded decimals
_CLOCK = r"([0-9]+):([0-9]{2}):([0-9]+)(?:\.([0-9]+))?"

@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The readings' patterns, compiled when a cell's outputs are first read (not at
    import: every build imports the package)."""
    return (
        (QE_TIMER, re.compile(
            rf"(?:^|[\s:])(?P<value>{_NUMBER})\s+(?P<unit>{_UNIT})\s+elapsed$")),
        (QE_TOC, re.compile(rf"^TOC: Elapsed: {_CLOCK}$")),
        (QE_TAC, re.compile(rf"^TAC: Elapsed: {_CLOCK}$")),
        (QE_LOOP_TIMER, re.compile(rf"^Average time for [0-9]+ runs: {_CLOCK}$")),
        (QE_TIMEIT, re.compile(
            rf"^Average: (?P<duration>{_DURATION}), Minimum: .*, Maximum: ")),
        # ``%run -t`` pads its figure: "Wall time:       0.05 s."
        (IPYTHON_TIME, re.compile(rf"^Wall time:\s+(?P<duration>{_DURATION})\.?$")),
        (IPYTHON_TIMEIT, re.compile(
            rf"^(?:<TimeitResult : )?(?P<duration>{_DURATION}) (?:±|\+-) .* per loop "
            r"\(mean (?:±|\+-) std\. dev\. of [0-9]+ runs?, [0-9,]+ loops? each\)>?$")),
        (IPYTHON_TIMEIT, re.compile(
            rf"^[0-9,]+ loops?, best of [0-9]+: (?P<duration>{_DURATION}) per loop$")),
    )


_PART = rf"({_NUMBER})\s*({_UNIT})"
_DIGIT = re.compile("[0-9]")
_WORDS = ("elapsed", "Elapsed", "Average", "Wall time", "per loop")


def duration_seconds(text: str) -> float:
    """``1.23 ms`` -> 0.00123, ``1min 5s`` -> 65.0 (a duration as the timers write it)."""
    total = 0.0
    for number, unit in re.findall(_PART, text):
        total += float(number) * UNITS[unit]
    return total


def _clock_seconds(match: re.Match[str]) -> float:
    hours, minutes, seconds, decimals = match.group(1, 2, 3, 4)
    fraction = int(decimals) / 10 ** len(decimals) if decimals else 0.0
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + fraction


def read_line(line: str) -> TimerReading | None:
    """The reading ``line`` is, if it is one."""
    text = line.strip()
    # every reading has one of these words and a digit: other lines (a printed array)
    # are told by substring searches, without the patterns
    if not any(word in text for word in _WORDS) or _DIGIT.search(text) is None:
        return None
    for timer, pattern in _patterns():
        match = pattern.search(text)
        if match is None:
            continue
        groups = match.groupdict()
        if "value" in groups:
            seconds = float(groups["value"]) * UNITS[groups["unit"]]
        elif "duration" in groups:
            seconds = duration_seconds(groups["duration"])
        else:
            seconds = _clock_seconds(match)
        return TimerReading(seconds, timer, text)
    return None


def _lines(texts: list[str]) -> list[str]:
    """Every line of the outputs' texts (a carriage return ends a line too: a progress
    bar's redrawn lines)."""
    return [line for text in texts for line in re.split(r"\r\n|\r|\n", text)]


def timer_readings(outputs: str | Iterable[str]) -> list[TimerReading]:
    """Every reading the cell's timers printed, in order.

    ``outputs``: the text of the cell's stream and ``text/plain`` outputs, one
    string or one per output.  ``%timeit -o``'s result shown after its printed
    line is the same reading and counts once.
    """
    texts = [outputs] if isinstance(outputs, str) else list(outputs)
    if not any(word in text for text in texts for word in _WORDS):
        return []  # a reading has one of these words (read_line): none of its lines does
    readings: list[TimerReading] = []
    printed_by_timeit: set[str] = set()
    for line in _lines(texts):
        reading = read_line(line)
        if reading is None:
            continue
        if reading.timer == IPYTHON_TIMEIT:
            plain = reading.text.removeprefix("<TimeitResult : ").removesuffix(">")
            if reading.text.startswith("<TimeitResult : ") and plain in printed_by_timeit:
                continue
            printed_by_timeit.add(plain)
        readings.append(reading)
    return readings
