"""model/timers.py: the readings of the timers lectures print, in their exact formats.

The formats come from the timers' sources (quantecon 0.11.4 ``util/timing.py``,
IPython 9 ``core/magics/execution.py``); ``tests/integration/test_timer_outputs.py`` checks
them against the output of the real timers in a real kernel.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.magics.execution import _format_time

from sphinx_gpu_admonition.model import timers
from sphinx_gpu_admonition.model.timers import read_line, timer_readings

#: the same examples on every run (a result in CI reproduces anywhere); no deadline on a
#: busy machine
PROPERTY = settings(deadline=None, database=None, derandomize=True)


@pytest.mark.parametrize(("line", "seconds", "timer"), [
    # qe.Timer: f"{prefix}{elapsed:.{precision}f} {unit} elapsed", unit seconds/ms/μs
    ("0.0005 seconds elapsed", 0.0005, timers.QE_TIMER),
    ("0.00045678 seconds elapsed", 0.00045678, timers.QE_TIMER),
    ("Computing results: 0.000001 seconds elapsed", 0.000001, timers.QE_TIMER),
    ("12.3456 ms elapsed", 0.0123456, timers.QE_TIMER),
    ("5.1234 μs elapsed", 5.1234e-6, timers.QE_TIMER),  # Greek mu, as quantecon prints
    ("5.1234 µs elapsed", 5.1234e-6, timers.QE_TIMER),  # the micro sign
    ("1.5 seconds elapsed", 1.5, timers.QE_TIMER),  # any "<number> seconds elapsed" line
    # toc() / tac(): "%d:%02d:%0d.%0*d" % (h, m, s, digits, fraction)
    ("TOC: Elapsed: 0:00:1.23", 1.23, timers.QE_TOC),
    ("TOC: Elapsed: 0:00:0.05", 0.05, timers.QE_TOC),
    ("TOC: Elapsed: 0:00:0.0512", 0.0512, timers.QE_TOC),  # digits=4
    ("TOC: Elapsed: 1:02:3.05", 3723.05, timers.QE_TOC),
    ("TAC: Elapsed: 0:01:5.00", 65.0, timers.QE_TAC),
    ("TOC: Elapsed: 0:00:2", 2.0, timers.QE_TOC),  # digits=0
    # qe.timeit's summary line and loop_timer's average
    ("Average: 0.0100 seconds, Minimum: 0.0100 seconds, Maximum: 0.0101 seconds", 0.01,
     timers.QE_TIMEIT),
    ("Average: 10.1 ms, Minimum: 10.0 ms, Maximum: 10.1 ms", 0.0101, timers.QE_TIMEIT),
    ("Average time for 10 runs: 0:00:0.12", 0.12, timers.QE_LOOP_TIMER),
    # %time: "Wall time: {_format_time(wall_time)}"; %run -t: "Wall time: %10.2f s."
    ("Wall time: 1.23 ms", 0.00123, timers.IPYTHON_TIME),
    ("Wall time: 4.56 μs", 4.56e-6, timers.IPYTHON_TIME),
    ("Wall time: 4.56 us", 4.56e-6, timers.IPYTHON_TIME),  # no μ in the output's encoding
    ("Wall time: 789 ns", 789e-9, timers.IPYTHON_TIME),
    ("Wall time: 2.5 s", 2.5, timers.IPYTHON_TIME),
    ("Wall time: 1min 5s", 65.0, timers.IPYTHON_TIME),
    ("Wall time: 1h 2min 3s", 3723.0, timers.IPYTHON_TIME),
    ("Wall time: 1d 2h", 93600.0, timers.IPYTHON_TIME),
    ("Wall time:       0.05 s.", 0.05, timers.IPYTHON_TIME),
    # %timeit: "{mean} {pm} {std} per loop (mean {pm} std. dev. of {runs} run{s},
    # {loops:,} loop{s} each)"
    ("1.2 ms ± 3.4 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)", 0.0012,
     timers.IPYTHON_TIMEIT),
    ("8.26 ns ± 0.12 ns per loop (mean ± std. dev. of 7 runs, 100,000,000 loops each)",
     8.26e-9, timers.IPYTHON_TIMEIT),
    ("29.9 μs +- 643 ns per loop (mean +- std. dev. of 7 runs, 10,000 loops each)", 29.9e-6,
     timers.IPYTHON_TIMEIT),
    ("1.5 s ± 0 ns per loop (mean ± std. dev. of 1 run, 1 loop each)", 1.5,
     timers.IPYTHON_TIMEIT),
    ("1e+03 ms ± 2.1 ms per loop (mean ± std. dev. of 7 runs, 1 loop each)", 1.0,
     timers.IPYTHON_TIMEIT),  # "%.3g" of 999.9 ms
    ("1min 2s ± 1.3 s per loop (mean ± std. dev. of 2 runs, 1 loop each)", 62.0,
     timers.IPYTHON_TIMEIT),
    ("<TimeitResult : 1.2 ms ± 3.4 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)>",
     0.0012, timers.IPYTHON_TIMEIT),
    ("100 loops, best of 3: 3.4 ms per loop", 0.0034, timers.IPYTHON_TIMEIT),  # IPython < 5
])
def test_each_timer_format_is_read(line, seconds, timer):
    reading = read_line(line)
    assert reading is not None, line
    assert reading.timer == timer
    assert math.isclose(reading.seconds, seconds, rel_tol=1e-9)
    assert reading.text == line.strip()


@pytest.mark.parametrize("line", [
    "CPU times: user 1.2 ms, sys: 0 ns, total: 1.2 ms",  # not the wall time
    "CPU times: total: 1.2 ms",  # Windows
    "Compiler : 780 ms",  # %time's compile time: not the code's
    "Parser   : 120 ms",
    "Compiler time: 0.12 s",  # %timeit's
    "The slowest run took 5.23 times longer than the fastest. This could mean that an "
    "intermediate result is being cached.",
    "Run 1: 0.0100 seconds",  # qe.timeit's runs: its Average line is the reading
    "Total run time: 0:00:1.20",  # loop_timer's total
    "Average of 3 best times: 0:00:0.11",
    "Method took 0.000123 seconds",  # a print of the user's own: no "elapsed"
    "NumPy result: 0.999998",
    "elapsed",
    "",
])
def test_other_lines_are_not_readings(line):
    assert read_line(line) is None


def test_readings_are_collected_in_order_across_outputs():
    outputs = ["Numba result: 0.999998\n0.1234 seconds elapsed\n",
               "CPU times: user 2 ms, sys: 1 ms, total: 3 ms\nWall time: 2.87 ms\n"]
    readings = timer_readings(outputs)
    assert [r.timer for r in readings] == [timers.QE_TIMER, timers.IPYTHON_TIME]
    assert [r.seconds for r in readings] == pytest.approx([0.1234, 0.00287])
    assert timer_readings("\n".join(outputs)) == readings  # one string reads the same


def test_a_timeit_result_shown_after_its_line_is_the_same_reading():
    line = "1.2 ms ± 3.4 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)"
    readings = timer_readings([line + "\n", f"<TimeitResult : {line}>"])
    assert len(readings) == 1
    # two %timeit lines (two statements timed) are two readings, even when equal
    assert len(timer_readings([f"{line}\n{line}\n"])) == 2


def test_a_loop_of_timers_gives_a_reading_each():
    outputs = "".join(f"{0.01 * i:.4f} seconds elapsed\n" for i in range(1, 4))
    assert [r.seconds for r in timer_readings(outputs)] == pytest.approx([0.01, 0.02, 0.03])


def test_carriage_returns_end_lines():
    assert len(timer_readings("progress 10%\r0.5000 seconds elapsed\r\n")) == 1


# -- property: the qe.Timer, toc and %timeit formats written by their own code ----------
def _qe_timer_line(elapsed: float, precision: int, unit: str, message: str) -> str:
    """quantecon 0.11.4 Timer._print_elapsed, as written there."""
    if unit == "milliseconds":
        elapsed_display, unit_str = elapsed * 1000, "ms"
    elif unit == "microseconds":
        elapsed_display, unit_str = elapsed * 1000000, "μs"
    else:
        elapsed_display, unit_str = elapsed, "seconds"
    prefix = f"{message}: " if message else ""
    return f"{prefix}{elapsed_display:.{precision}f} {unit_str} elapsed"


def _qe_toc_line(elapsed: float, digits: int) -> str:
    """quantecon 0.11.4 __Timer__.toc, as written there."""
    m, s = divmod(elapsed, 60)
    h, m = divmod(m, 60)
    return "TOC: Elapsed: %d:%02d:%0d.%0*d" % (h, m, s, digits, (s % 1) * (10**digits))  # noqa: UP031


@PROPERTY
@given(st.floats(min_value=1e-6, max_value=1e4), st.integers(min_value=2, max_value=8),
       st.sampled_from(["seconds", "milliseconds", "microseconds"]),
       st.sampled_from(["", "Computing results", "vmap: v2"]))
def test_every_qe_timer_line_reads_back_its_printed_value(elapsed, precision, unit, message):
    line = _qe_timer_line(elapsed, precision, unit, message)
    reading = read_line(line)
    assert reading is not None and reading.timer == timers.QE_TIMER, line
    printed = float(line.removeprefix(f"{message}: " if message else "").split()[0])
    scale = {"seconds": 1, "milliseconds": 1e-3, "microseconds": 1e-6}[unit]
    assert math.isclose(reading.seconds, printed * scale, rel_tol=1e-12)


@PROPERTY
@given(st.floats(min_value=0, max_value=1e5), st.integers(min_value=1, max_value=6))
def test_every_toc_line_reads_back_to_its_digits(elapsed, digits):
    reading = read_line(_qe_toc_line(elapsed, digits))
    assert reading is not None and reading.timer == timers.QE_TOC
    # the line truncates the seconds to ``digits`` decimals
    assert elapsed - 10 ** -digits - 1e-6 <= reading.seconds <= elapsed + 1e-6


@PROPERTY
@given(st.floats(min_value=1e-9, max_value=1e4))
def test_every_timeit_mean_reads_back_within_its_three_digits(mean):
    line = (f"{_format_time(mean)} ± {_format_time(mean / 10)} per loop "
            "(mean ± std. dev. of 7 runs, 1,000 loops each)")
    reading = read_line(line)
    assert reading is not None and reading.timer == timers.IPYTHON_TIMEIT, line
    # three significant digits; from a minute on, whole units ("1min 5s")
    tolerance = 1.0 if mean >= 60 else 5e-3 * mean
    assert abs(reading.seconds - mean) <= tolerance + 1e-15, line
