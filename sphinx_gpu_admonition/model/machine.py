"""How fast a build's machine was, and what that means for comparing two builds.

A notebook that is 1.9x slower on a runner that is 1.9x slower overall did not
regress.  An engine's adapter times :func:`workload` while notebooks execute
(the Sphinx side: :mod:`..ext.calibration`) and keeps the medians in the
records; :func:`machine_factor` turns two builds into the factor the analysis
divides ratios by before it calls a notebook regressed.

The workload is pure Python (interpreter speed is what most notebook time on a
CPU depends on, and it needs no third-party package); bump
:data:`WORKLOAD_VERSION` whenever it changes, since times of different workloads
are not comparable.  Standard library only.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any

from .record import NotebookRecord, StatusReport

WORKLOAD_VERSION = 1
#: runs of the workload for a build whose notebooks have no calibration, and after a
#: notebook that has no sample of its own and no recent one
BUILD_RUNS = 5
NOTEBOOK_RUNS = 3
_SIZE = 50_000
#: the median notebook ratio is the machine factor only with at least this many
#: notebooks on both sides: with fewer, one regressed notebook would be its own excuse
MIN_NOTEBOOKS_FOR_MEDIAN = 3
#: notebooks a sentence names (then "and N more")
MAX_NAMED = 5



def workload() -> int:
    """A fixed mix of integer arithmetic, float arithmetic and dict / list work."""
    total = 0
    table: dict[int, float] = {}
    for i in range(_SIZE):
        total = (total * 31 + i) % 1_000_003
        table[i % 997] = table.get(i % 997, 0.0) + (i ** 0.5) / (1 + total)
    items = sorted(table.items(), key=lambda kv: kv[1])
    return total + len(items)


def measure(runs: int = BUILD_RUNS) -> dict[str, Any]:
    """``{"seconds": median time of the workload, "workload": WORKLOAD_VERSION}``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        workload()
        times.append(time.perf_counter() - start)
    return {"seconds": median_of(times), "workload": WORKLOAD_VERSION}


def build_seconds(build: dict[str, Any]) -> float | None:
    """The calibration time a status document's ``build`` states, if it is this workload's."""
    calibration = build.get("calibration")
    if not isinstance(calibration, dict) or calibration.get("workload") != WORKLOAD_VERSION:
        return None
    seconds = calibration.get("seconds")
    return seconds if isinstance(seconds, (int, float)) and seconds > 0 else None


def calibration_ratio(now: float | None, before: float | None) -> float | None:
    """How many times slower the machine of ``now`` was (None when either is unknown)."""
    if not now or not before or now <= 0 or before <= 0:
        return None
    return now / before


def median_of(values: list[float]) -> float:
    """The median of ``values`` (at least one)."""
    # imported here: ``statistics`` (with ``fractions``) is 1.6 ms of every build's
    # start, and a build that executes nothing and has no baseline never needs it
    import statistics

    return statistics.median(values)


def median_ratio(ratios: Iterable[float]) -> float | None:
    """The median of notebook ratios, None with fewer than :data:`MIN_NOTEBOOKS_FOR_MEDIAN`."""
    values = [r for r in ratios if r > 0]
    if len(values) < MIN_NOTEBOOKS_FOR_MEDIAN:
        return None
    return median_of(values)


@dataclasses.dataclass(frozen=True)
class MachineFactor:
    """How many times slower the new build's machine was than the baseline's, overall.

    From the builds' calibrations (:mod:`.calibration`) when both have one, else the
    median ratio of the notebooks executed in both on the same backend (at least
    three), else unknown (``factor`` None: ratios are judged as they are).
    """

    factor: float | None
    #: "calibration", "notebooks" or "unknown"
    source: str
    #: (machine id now, machine id in the baseline) -> the median calibration ratio of
    #: the notebooks that ran on those two machines: a merged build's notebooks are
    #: judged by their own machines, and one notebook's short samples are smoothed
    by_machines: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict,
                                                                   compare=False)

    def sentence(self, slower: int | Sequence[str], machine: str = "this runner",
                 ratio: float | None = None) -> str:
        """``"this runner was 1.9x slower overall; 1 notebook slower beyond that (1.5x or
        more): intro"``: ``slower`` is the notebooks slower beyond the machine (their
        names, or only their count), ``ratio`` the ratio they were judged by."""
        names = [] if isinstance(slower, int) else list(slower)
        count = slower if isinstance(slower, int) else len(names)
        noun = "notebook" if count == 1 else "notebooks"
        which = f" ({ratio:g}x or more)" if count and ratio is not None else ""
        if names:
            which += ": " + ", ".join(names[:MAX_NAMED])
            if count > MAX_NAMED:
                which += f" and {count - MAX_NAMED} more"
        factor = self.factor
        if factor is None:
            return (f"the speed of {machine} is unknown (no calibration, fewer than three "
                    f"notebooks in both builds); {count} {noun} slower than the "
                    f"baseline{which}")
        if abs(factor - 1) < 0.05:
            speed = f"{machine} was about as fast as the baseline's"
        elif factor > 1:
            speed = f"{machine} was {factor:.1f}x slower overall"
        else:
            speed = f"{machine} was {1 / factor:.1f}x faster overall"
        return f"{speed}; {count} {noun} slower beyond that{which}"


UNKNOWN_MACHINE = MachineFactor(None, "unknown")


def _same_machine_kind(current: NotebookRecord, baseline: NotebookRecord) -> bool:
    """Whether a difference in time is machine speed, not a change of device (CPU to GPU)."""
    return current.environment.backend == baseline.environment.backend


def _workload(report: StatusReport) -> Any:
    calibration = report.build.get("calibration")
    return calibration.get("workload") if isinstance(calibration, dict) else None


def machine_factor(report: StatusReport, baseline: StatusReport) -> MachineFactor:
    """The overall factor (see :class:`MachineFactor`): the median of the notebooks'
    calibration ratios, else the builds', else the median notebook time ratio."""
    before = baseline.by_docname()
    pairs = [(nb, before[nb.docname]) for nb in report.notebooks
             if nb.docname in before and nb.executed and before[nb.docname].executed
             and _same_machine_kind(nb, before[nb.docname])]
    by_machines: dict[tuple[str, str], list[float]] = {}
    if None in (_workload(report), _workload(baseline)) or \
            _workload(report) == _workload(baseline):
        for nb, old in pairs:
            ratio = calibration_ratio(nb.calibration_seconds, old.calibration_seconds)
            if ratio is not None:
                key = (nb.environment.machine_id, old.environment.machine_id)
                by_machines.setdefault(key, []).append(ratio)
    if by_machines:
        every = [ratio for ratios in by_machines.values() for ratio in ratios]
        return MachineFactor(median_of(every), "calibration", {
            key: median_of(ratios) for key, ratios in by_machines.items()})
    build_ratio = calibration_ratio(build_seconds(report.build), build_seconds(baseline.build))
    if build_ratio is not None:
        return MachineFactor(build_ratio, "calibration")
    median = median_ratio(nb.seconds / old.seconds for nb, old in pairs if old.seconds > 0)
    if median is not None:
        return MachineFactor(median, "notebooks")
    return UNKNOWN_MACHINE


def notebook_machine_factor(current: NotebookRecord, baseline: NotebookRecord,
                            overall: MachineFactor) -> float:
    """The factor for one notebook: that of the two machines it ran on, where known."""
    if not _same_machine_kind(current, baseline):
        return 1.0
    own = overall.by_machines.get((current.environment.machine_id,
                                   baseline.environment.machine_id))
    return own or overall.factor or 1.0
