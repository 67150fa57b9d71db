"""How fast a build's machine was, and what that means for comparing two builds.

A notebook that is 1.9x slower on a runner that is 1.9x slower overall did not
regress.  :func:`machine_factor` estimates how much slower (or faster) the new build's
machine was from the notebooks themselves: the median of the ratios of the notebooks
executed in both builds on the same kind of device that worked for at least
:data:`MIN_SECONDS_FOR_FACTOR` (a notebook of start-up and sleeps does not scale with the
machine), the lower middle one of an even count, so that regressions do not excuse each
other; their spread and count say how sure it is.  A calibration, a fixed pure-Python
:func:`workload` an engine's adapter times in the builder process while notebooks
execute (the Sphinx side: :mod:`..ext.calibration`), is the check beside it, and the
factor when fewer than :data:`MIN_NOTEBOOKS_FOR_MEDIAN` such notebooks are in both
builds: the builder process is
not where the notebooks run (their NumPy threads, kernels competing for cores), and a
calibration that moved 2.5x while the notebooks moved 1.35-2.7x made faster notebooks
look slower.  The check works the other way too: where the notebooks moved
:data:`CHECK_RATIO` times as much as the calibration or more, they as a whole got
slower (a dependency that slows every notebook), and the calibration is the factor.
Across a change of device kind (CPU to GPU) no factor applies: that is
hardware, not noise.

Bump :data:`WORKLOAD_VERSION` whenever the workload changes, since times of different
workloads are not comparable.  Standard library only.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import Any

from .device import device_kind
from .formatting import format_ratio
from .record import EXECUTED, NotebookRecord, StatusReport

WORKLOAD_VERSION = 1
#: runs of the workload for a build whose notebooks have no calibration, and after a
#: notebook that has no sample of its own and no recent one
BUILD_RUNS = 5
NOTEBOOK_RUNS = 3
_SIZE = 50_000
#: the median notebook ratio is the machine factor only with at least this many
#: notebooks on both sides: with fewer, one regressed notebook would be its own excuse
MIN_NOTEBOOKS_FOR_MEDIAN = 3
#: a notebook that worked less than this in either build (its cells' time where they were
#: recorded, kernel start-up left out) is mostly start-up, imports and waiting, which do
#: not scale with the machine's speed: it makes no factor (it is still judged by it)
MIN_SECONDS_FOR_FACTOR = 1.0
#: notebooks a sentence names (then "and N more")
MAX_NAMED = 5
#: the check: when the notebooks' median is this many times the calibration's factor or
#: more, the notebooks as a whole got slower than the machine (a dependency that slows
#: every notebook): the calibration is the factor, so the median cannot excuse them.
#: Above the spread seen between the two on shared runners (QuantEcon's lectures: the
#: calibration moved 2.5x, the notebooks 1.35x to 2.7x), so that noise never triggers it
CHECK_RATIO = 2.0



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
    """The middle notebook ratio (the lower middle one of an even count: a half that
    regressed cannot lift the factor that would excuse it), None with fewer than
    :data:`MIN_NOTEBOOKS_FOR_MEDIAN`."""
    import statistics

    values = [r for r in ratios if r > 0]
    if len(values) < MIN_NOTEBOOKS_FOR_MEDIAN:
        return None
    return statistics.median_low(values)


def is_slower(ratio: float | None, factor: float, limit: float) -> bool:
    """Whether a notebook or cell that took ``ratio`` times its baseline time is slower
    beyond the machine (``factor``) by ``limit`` or more: only one that took longer than
    in the baseline; a faster one is never called slower, however much faster the
    machine was."""
    return ratio is not None and ratio > 1 and ratio / factor >= limit


def _speed(factor: float) -> str:
    """``1.9x slower``, ``2.5x faster``, ``about as fast``."""
    if abs(factor - 1) < 0.05:
        return "about as fast"
    return f"{factor:.1f}x slower" if factor > 1 else f"{1 / factor:.1f}x faster"


@dataclasses.dataclass(frozen=True)
class MachineFactor:
    """How many times slower the new build's machine was than the baseline's, overall.

    The median ratio of the notebooks executed in both builds on the same kind of
    device (at least three), unless it is :data:`CHECK_RATIO` times the calibration's
    or more; else the builds' calibrations; else unknown (``factor`` None: ratios are
    judged as they are).
    """

    factor: float | None
    #: "notebooks", "calibration", "unknown", or "device": every notebook in both builds
    #: ran on another kind of device (no factor can apply)
    source: str
    #: (machine id now, machine id in the baseline) -> the factor of the notebooks that
    #: ran on those two machines (a merged build's notebooks are judged by their own
    #: runners): their median ratio, where at least three ran there
    by_machines: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict,
                                                                   compare=False)
    #: the notebooks the factor is the median of (0: it is not a median)
    count: int = 0
    #: their lowest and highest ratio: how much the notebooks agree
    spread: tuple[float, float] | None = None
    #: what the calibration said (None: no calibration in one of the builds): the check
    calibration: float | None = None
    #: notebooks in both builds that ran on another kind of device (CPU to GPU): no
    #: factor applies to them
    device_changes: int = 0
    #: the notebooks' median ratio (also where the calibration overruled it)
    median: float | None = None

    def certainty(self) -> str:
        """``"the median of 4 notebooks, 0.37x to 0.74x; the calibration said 2.5x
        faster"``: where the factor comes from and how sure it is."""
        if self.source == "calibration" and self.median is not None and self.spread:
            low, high = self.spread
            return (f"from the calibration: the median of {self.count} notebooks' ratios, "
                    f"{format_ratio(self.median)} ({format_ratio(low)} to "
                    f"{format_ratio(high)}), is {self.median / (self.factor or 1):.1f}x "
                    "beyond it, so the notebooks as a whole got slower")
        if self.source == "calibration":
            return "from the calibration: fewer than three notebooks to take it from"
        if self.source != "notebooks" or self.spread is None or self.factor is None:
            return ""
        low, high = self.spread
        text = (f"the median of {self.count} notebooks' ratios, {format_ratio(low)} to "
                f"{format_ratio(high)}")
        calibration = self.calibration
        if calibration is None:
            return text
        if abs(calibration / self.factor - 1) < 0.1:  # within what runs of one code differ by
            return text + "; the calibration agrees"
        return text + f"; the calibration said {_speed(calibration)}"

    def sentence(self, slower: int | Sequence[str], machine: str = "this runner",
                 ratio: float | None = None) -> str:
        """``"this runner was 1.9x slower overall (the median of 3 notebooks' ratios,
        1.80x to 2.05x); 1 notebook slower beyond that (1.5x or more): intro"``: ``slower``
        is the notebooks slower beyond the machine (their names, or only their count),
        ``ratio`` the ratio they were judged by."""
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
                    f"notebooks in both builds on the same kind of device); {count} {noun} "
                    f"slower than the baseline{which}")
        speed = _speed(factor)
        speed = (f"{machine} was about as fast as the baseline's" if speed == "about as fast"
                 else f"{machine} was {speed} overall")
        how = self.certainty()
        return f"{speed}{f' ({how})' if how else ''}; {count} {noun} slower beyond that{which}"


UNKNOWN_MACHINE = MachineFactor(None, "unknown")


def same_device_kind(current: NotebookRecord, baseline: NotebookRecord) -> bool:
    """Whether a difference in time can be the machine's speed: both ran on the same
    kind of device (CPU, GPU, TPU), not one on a CPU and the other on a GPU."""
    return device_kind(current.environment) == device_kind(baseline.environment)


def _workload(report: StatusReport) -> Any:
    calibration = report.build.get("calibration")
    return calibration.get("workload") if isinstance(calibration, dict) else None


def _work_seconds(notebook: NotebookRecord) -> float:
    """What a notebook's own work took: its cells' time where they were recorded, else
    its run time."""
    return notebook.cells_seconds if notebook.cells else notebook.seconds


def _measured_now(current: NotebookRecord, baseline: NotebookRecord) -> bool:
    """Both executed by their own build: a cache hit keeps the time of the build that
    executed it, which says nothing about this machine."""
    return current.provenance == EXECUTED and baseline.provenance == EXECUTED


def _calibration(report: StatusReport, baseline: StatusReport,
                 pairs: list[tuple[NotebookRecord, NotebookRecord]]
                 ) -> tuple[float | None, dict[tuple[str, str], float]]:
    """The calibrations' factor (the median of the notebooks' calibration ratios, else the
    builds'), and per pair of machines."""
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
        return median_of(every), {key: median_of(ratios)
                                  for key, ratios in by_machines.items()}
    return calibration_ratio(build_seconds(report.build), build_seconds(baseline.build)), {}


def _pair_factor(ratios: list[float], calibration: float | None) -> float | None:
    """The factor of one pair of machines (a merged build's runners each have theirs): the
    rule of :func:`machine_factor` applied to the notebooks that ran on them, so a pair with
    fewer than three such notebooks takes its own calibration, not the other runners'."""
    median = median_ratio(ratios)
    if median is None or (calibration is not None and median / calibration >= CHECK_RATIO):
        return calibration
    return median


def machine_factor(report: StatusReport, baseline: StatusReport) -> MachineFactor:
    """The overall factor (see :class:`MachineFactor`): the median of the ratios of the
    notebooks executed in both builds on the same kind of device, the calibration beside
    it as a check (it is the factor when the median is :data:`CHECK_RATIO` times it or
    more); the calibration alone with fewer than three such notebooks."""
    before = baseline.by_docname()
    common = [(nb, before[nb.docname]) for nb in report.notebooks
              if nb.docname in before and nb.executed and before[nb.docname].executed]
    pairs = [(nb, old) for nb, old in common if same_device_kind(nb, old)]
    changed = len(common) - len(pairs)
    if common and not pairs:  # every notebook in both ran on another kind of device
        return MachineFactor(None, "device", device_changes=changed)
    calibration, calibrated_machines = _calibration(report, baseline, pairs)
    ratios: dict[tuple[str, str], list[float]] = {}
    for nb, old in pairs:
        if (_measured_now(nb, old) and old.seconds > 0 and nb.seconds > 0
                and min(_work_seconds(nb), _work_seconds(old)) >= MIN_SECONDS_FOR_FACTOR):
            key = (nb.environment.machine_id, old.environment.machine_id)
            ratios.setdefault(key, []).append(nb.seconds / old.seconds)
    every = [ratio for values in ratios.values() for ratio in values]
    median = median_ratio(every)
    spread = (min(every), max(every)) if every else None
    if median is not None and calibration is not None and median / calibration >= CHECK_RATIO:
        return MachineFactor(calibration, "calibration", calibrated_machines, len(every),
                             spread, calibration, changed, median)
    if median is not None:
        by_machines = {key: factor for key in {*ratios, *calibrated_machines}
                       if (factor := _pair_factor(ratios.get(key, []),
                                                  calibrated_machines.get(key))) is not None}
        return MachineFactor(median, "notebooks", by_machines, len(every), spread,
                             calibration, changed, median)
    if calibration is not None:
        return MachineFactor(calibration, "calibration", calibrated_machines,
                             calibration=calibration, device_changes=changed)
    return MachineFactor(None, "unknown", device_changes=changed)


def notebook_machine_factor(current: NotebookRecord, baseline: NotebookRecord,
                            overall: MachineFactor) -> float:
    """The factor for one notebook: that of the two machines it ran on, where known; 1
    across a change of device kind, and where either time is not its build's own (a
    cache hit)."""
    if not same_device_kind(current, baseline) or not _measured_now(current, baseline):
        return 1.0
    own = overall.by_machines.get((current.environment.machine_id,
                                   baseline.environment.machine_id))
    return own or overall.factor or 1.0
