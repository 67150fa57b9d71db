"""How fast the build's machine is: a small fixed workload, timed during the build.

CI runners of one type differ in speed from run to run (a noisy neighbour, a
throttled CPU).  A notebook that is 1.9x slower on a runner that is 1.9x slower
overall did not regress.  A build that executes notebooks times :func:`workload`
while each notebook executes (:class:`_Sampler`) and keeps the median in the
notebook's ``calibration_seconds``: the load of a runner changes within seconds
(samples only around a notebook missed what it met), and a merged build needs
the speed of each notebook's machine.  The median of those is the build's
``build.calibration``.  The samples take at most 1 % of one core
(:data:`MAX_CPU_SHARE`): every core they take is one the notebook could not
use.  A notebook over before its first sample gets the machine's most recent
sample (:data:`RECENT_SECONDS`), else one sample right after it.
:func:`.analysis.machine_factor` turns two builds into the factor that
:mod:`.analysis` divides ratios by before it calls a notebook regressed.

Times are the median of a few runs: a sustained load (what slows a notebook) is
measured, a single preemption is not.

The workload is pure Python (interpreter speed is what most notebook time on a
CPU depends on, and it needs no third-party package); bump
:data:`WORKLOAD_VERSION` whenever it changes, since times of different workloads
are not comparable.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from ..model.machine import NOTEBOOK_RUNS, WORKLOAD_VERSION, measure, median_of, workload
from .state import build_state

#: runs of the workload per sample (about 25 ms), and the share of one core the
#: samples may take: the next sample is due when the last one's time is that share
#: of the time since, and never sooner than SAMPLE_INTERVAL seconds
SAMPLE_RUNS = 3
MAX_CPU_SHARE = 0.01
SAMPLE_INTERVAL = 2.0
#: a notebook over before its first sample takes the process's last sample if it
#: is at most this many seconds old (a book of short notebooks pays for one sample
#: every RECENT_SECONDS, not one per notebook)
RECENT_SECONDS = 30.0
class _Reading:
    """The samples of one page being read (and perhaps executed)."""

    def __init__(self, kernel_file: str | None = None) -> None:
        #: the file the page's kernel creates when it starts (the capture's output):
        #: no sample before it exists, so that a cache hit, a page that executes
        #: nothing however long MyST-NB takes to read it, is never sampled
        self.kernel_file = kernel_file
        self.due = time.monotonic() + SAMPLE_INTERVAL
        self.times: list[float] = []
        #: a sample that counts for this page is being taken
        self.sampling = False


class _Sampler(threading.Thread):
    """Times the workload while a notebook runs, at most :data:`MAX_CPU_SHARE` of a core.

    The load of a runner changes within seconds (another job's build starts or
    ends), so samples only before and after a notebook can miss what it met.  One
    thread per process (a ``-j`` worker has its own), started with the first page
    that may be a notebook, serves every page: it sleeps until a page being read
    is due for a sample, so a page read faster than one interval costs a dictionary
    entry, not a thread.  With the capture on, a page is sampled only once its
    kernel started: a cache hit executes nothing and is never sampled, however long
    MyST-NB takes to read it (samples of pure-Python work would slow that reading,
    and a hit keeps the calibration of the build that executed it).  A sample takes
    the GIL and a core from a builder and a kernel that are working, so samples are
    spaced to take at most :data:`MAX_CPU_SHARE` of one core (one every 2.5 s here).
    """

    def __init__(self) -> None:
        super().__init__(name="gpu-admonition-calibration", daemon=True)
        self.pid = os.getpid()
        self.condition = threading.Condition()
        # no sample before the page is read: most reads of a rebuild are cache hits,
        # which execute nothing and must cost nothing
        self.reading: dict[str, _Reading] = {}
        self.closed = False
        #: when the thread wakes up next: a page due later needs no wake-up call (a
        #: call per page read, a cache hit's too, cost a thread switch each)
        self.wakes_at = 0.0
        #: (time.monotonic(), seconds) of the last sample, for a notebook too short
        #: to get one of its own
        self.latest: tuple[float, float] | None = None

    def run(self) -> None:
        with self.condition:
            while not self.closed:
                now = time.monotonic()
                due = [r for r in self.reading.values() if r.due <= now]
                for reading in due:
                    if reading.kernel_file is not None and not os.path.exists(
                            reading.kernel_file):
                        reading.due = now + SAMPLE_INTERVAL  # no kernel (yet)
                due = [r for r in due if r.due <= now]
                if not due:
                    # idle, it looks again every interval (a page is due one interval
                    # after it starts, so it is sampled at most one interval late)
                    wait = min((r.due - now for r in self.reading.values()),
                               default=SAMPLE_INTERVAL)
                    self.wakes_at = now + wait
                    self.condition.wait(wait)
                    continue
                for reading in due:
                    reading.sampling = True
                self.condition.release()
                try:
                    # several runs in a row: a thread that wakes up is favoured by the
                    # scheduler for a few milliseconds, which would hide a sustained load
                    start = time.perf_counter()
                    for _ in range(SAMPLE_RUNS):
                        workload()
                    took = time.perf_counter() - start
                finally:
                    self.condition.acquire()
                seconds = took / SAMPLE_RUNS
                now = time.monotonic()
                self.latest = (now, seconds)
                for reading in due:
                    reading.times.append(seconds)
                    reading.sampling = False
                    reading.due = now + max(SAMPLE_INTERVAL, took / MAX_CPU_SHARE)
                self.condition.notify_all()

    def begin(self, docname: str, kernel_file: str | None = None) -> None:
        with self.condition:
            reading = self.reading[docname] = _Reading(kernel_file)  # read again: anew
            if reading.due < self.wakes_at:
                self.condition.notify_all()

    def stop(self, docname: str) -> _Reading | None:
        """Stop sampling for ``docname``, after a sample in progress for it."""
        with self.condition:
            reading = self.reading.pop(docname, None)
            while reading is not None and reading.sampling:
                self.condition.wait()
            return reading

    def recent(self) -> float | None:
        """The last sample's time, if it is at most :data:`RECENT_SECONDS` old."""
        with self.condition:
            if self.latest is None or time.monotonic() - self.latest[0] > RECENT_SECONDS:
                return None
            return self.latest[1]

    def remember(self, seconds: float) -> None:
        """A sample taken outside the thread (right after a short notebook)."""
        with self.condition:
            self.latest = (time.monotonic(), seconds)

    def close(self) -> None:
        with self.condition:
            self.closed = True
            self.reading.clear()
            self.condition.notify_all()


def before_notebook(app: Sphinx, docname: str, source: list[str],
                    kernel_file: str | None) -> None:
    """Start sampling before MyST-NB reads (and so executes) a page that may be a
    notebook, in the process that reads it (a -j worker too), like build_record.

    Called by the capture's ``source-read`` listener, which knows ``kernel_file``,
    the file the page's kernel creates when it starts (None with the capture off:
    then the page is sampled from one interval after it starts being read)."""
    head = source[0][:2000] if source else ""
    if Path(app.env.doc2path(docname)).suffix == ".ipynb" or "kernelspec" in head \
            or "jupytext" in head:
        _sampler(app).begin(docname, kernel_file)


def _sampler(app: Sphinx, start: bool = True) -> _Sampler | None:
    """This process's sampler (a forked ``-j`` worker starts its own)."""
    state = build_state(app)
    sampler: _Sampler | None = state.sampler
    if (sampler is None or sampler.pid != os.getpid()) and start:
        sampler = state.sampler = _Sampler()
        sampler.start()
    return sampler if sampler is not None and sampler.pid == os.getpid() else None


def around_notebook(app: Sphinx, docname: str) -> float:
    """The machine's speed while a notebook ran (its ``calibration_seconds``): the
    median of the samples taken while it ran; for a notebook over before its first
    sample, the process's recent sample, else one taken right after it."""
    sampler = _sampler(app, start=False)
    if sampler is None:
        return measure(NOTEBOOK_RUNS)["seconds"]
    reading = sampler.stop(docname)
    if reading is not None and reading.times:
        return median_of(reading.times)
    recent = sampler.recent()
    if recent is None:
        recent = measure(NOTEBOOK_RUNS)["seconds"]
        sampler.remember(recent)
    return recent


def _stop_samplers(app: Sphinx, *args: object) -> None:
    """Reading is over: the thread ends (before Sphinx forks the processes that write
    pages in parallel, and at the end of a build that stopped while reading)."""
    sampler = _sampler(app, start=False)
    if sampler is not None:
        sampler.close()
    build_state(app).sampler = None


def of_build(app: Sphinx, executed: Iterable[float | None]) -> dict[str, Any]:
    """This build's calibration, made the first time it is asked for (a build that
    executes nothing, an all-cache-hit rebuild, never asks): the median of the
    calibrations of the notebooks it executed (``executed``: samples taken while
    they ran, which cost nothing more), else the workload timed now."""
    state = build_state(app)
    if state.calibration is None:
        seconds = [value for value in executed if value]
        state.calibration = ({"seconds": median_of(seconds), "workload": WORKLOAD_VERSION}
                             if seconds else measure())
    return state.calibration


def _forget(app: Sphinx) -> None:
    build_state(app).calibration = None


def setup_calibration(app: Sphinx) -> None:
    app.connect("builder-inited", _forget)
    app.connect("doctree-read", _stop_idle_sampler, priority=900)  # after capture
    app.connect("env-updated", _stop_samplers)
    app.connect("build-finished", _stop_samplers)


def _stop_idle_sampler(app: Sphinx, doctree: Any) -> None:
    """After capture's ``build_record`` took its sampler (an executed notebook), stop
    the sampler of a page that did not execute."""
    sampler = _sampler(app, start=False)
    if sampler is not None:
        sampler.stop(app.env.docname)
