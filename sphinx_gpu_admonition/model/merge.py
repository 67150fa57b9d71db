"""Combine the status files of several CI jobs into one.

A book that outgrows one runner executes a share of its notebooks in each job of
a matrix (``nb_execution_excludepatterns`` per shard), each into its own
jupyter-cache.  :func:`merge_reports` makes one ``execution-status.json`` of the
jobs' files, and ``merge-cache`` (:mod:`..cli.merge`) one jupyter-cache of their caches, so that a
final build renders every notebook from the cache with the capture data (and
machine) of the job that executed it.  Timing claims and the review list are kept per
page from the job whose record of the page counts; a claim's check on the build is made
again against the merged records (it may name a page another job executed).
"""

from __future__ import annotations

import statistics
from datetime import datetime
from pathlib import Path
from typing import Any

from .._version import __version__
from .claims import recheck
from .files import atomic_write, build_time, status_json_text
from .machine import WORKLOAD_VERSION, build_seconds
from .record import (
    BUILD_FAILED,
    BUILD_SUCCEEDED,
    CACHE,
    EARLIER_BUILD,
    EXECUTED,
    NOT_EXECUTED,
    NotebookRecord,
    StatusReport,
)
from .schema import ModelObject, model_class

#: the ``build`` entries that say how a job judged its notebooks (and on which engine)
JUDGING_KEYS = ("engine", "thresholds", "rules", "baseline")


def judging_differs(inputs: list[tuple[str, StatusReport]]) -> list[str]:
    """The judging entries in which the inputs disagree (the merge keeps the first's)."""
    return [key for key in JUDGING_KEYS
            if len({repr(report.build.get(key)) for _, report in inputs
                    if key in report.build}) > 1]


#: which job's record of a notebook counts: the one that executed it, then one that
#: reused the cache, then an earlier build's, then one that did not execute it
PROVENANCE_RANK = {EXECUTED: 3, CACHE: 2, EARLIER_BUILD: 1, NOT_EXECUTED: 0}


@model_class
class Conflict(ModelObject):
    """A notebook executed by more than one job."""

    docname: str
    #: the inputs that executed it, in the order given
    sources: list[str]
    chosen: str

    def message(self) -> str:
        return (f"{self.docname} was executed in {len(self.sources)} jobs "
                f"({', '.join(self.sources)}); using {self.chosen}")


def _executed_time(record: NotebookRecord) -> float:
    try:
        return datetime.fromisoformat(record.executed_at or "").timestamp()
    except ValueError:
        return float("-inf")


def _pick(candidates: list[tuple[int, str, NotebookRecord]]) -> tuple[int, str, NotebookRecord]:
    """The record that counts among (input position, source, record) of one notebook.

    The best provenance wins.  Among executions (a conflict) a failure wins, so that
    a merge never hides one, then the latest execution, then the earlier input; the
    result does not depend on the order of the inputs beyond that last tie.
    """
    return min(candidates, key=lambda item: (
        -PROVENANCE_RANK[item[2].provenance], not item[2].failed,
        -_executed_time(item[2]), item[0]))


def merge_reports(inputs: list[tuple[str, StatusReport]]) -> tuple[StatusReport, list[Conflict]]:
    """One report of ``(source name, report)`` pairs, and the conflicts resolved."""
    candidates: dict[str, list[tuple[int, str, NotebookRecord]]] = {}
    for position, (source, report) in enumerate(inputs):
        for record in report.notebooks:
            candidates.setdefault(record.docname, []).append((position, source, record))
    chosen: dict[str, tuple[int, str, NotebookRecord]] = {}
    conflicts: list[Conflict] = []
    for docname in sorted(candidates):
        position, source, record = chosen[docname] = _pick(candidates[docname])
        executed = [s for _, s, r in candidates[docname] if r.provenance == EXECUTED]
        if len(executed) > 1:
            conflicts.append(Conflict(docname, executed, source))
    analysis: dict[str, Any] = {}
    for docname, (position, _, _) in chosen.items():
        entry = inputs[position][1].analysis.get(docname)
        if entry is not None:
            analysis[docname] = entry
    notebooks = [chosen[name][2] for name in sorted(chosen)]
    records = {record.docname: record for record in notebooks}
    merged = StatusReport(
        notebooks=notebooks, build=_merged_build(inputs, chosen), analysis=analysis,
        # a claim of one job may name a timing another job executed: checked again
        claims=[recheck(claim, records) for claim in _text_of(inputs, chosen, "claims")],
        timing_statements=_text_of(inputs, chosen, "timing_statements"))
    return merged, conflicts


def _text_of(inputs: list[tuple[str, StatusReport]],
             chosen: dict[str, tuple[int, str, NotebookRecord]], field: str) -> list[Any]:
    """The claims or review statements (``field``) of each page, from the job whose record
    of the page counts (a page that is no notebook: the first job that has it)."""
    found: list[Any] = []
    first: dict[str, int] = {}
    for position, (_source, report) in enumerate(inputs):
        for item in getattr(report, field):
            owner = chosen[item.page][0] if item.page in chosen else \
                first.setdefault(item.page, position)
            if owner == position:
                found.append(item)
    return sorted(found, key=lambda item: (item.page, item.line or 0))


def _merged_build(inputs: list[tuple[str, StatusReport]],
                  chosen: dict[str, tuple[int, str, NotebookRecord]]) -> dict[str, Any]:
    builds = [report.build for _, report in inputs]
    first = builds[0] if builds else {}
    failures = [f"{source}: {report.build.get('failure') or 'the build stopped'}"
                for source, report in inputs if report.build.get("outcome") == BUILD_FAILED]
    build: dict[str, Any] = {
        "created": build_time(),
        "project": first.get("project"),
        "builder": first.get("builder", ""),
        "execution_mode": first.get("execution_mode"),
        "sphinx": first.get("sphinx", ""),
        "generator": f"sphinx-gpu-admonition {__version__} (merge)",
        "outcome": BUILD_FAILED if failures else BUILD_SUCCEEDED,
        "failure": "; ".join(failures) or None,
        "merged_from": [{
            "source": source, "created": report.build.get("created"),
            "outcome": report.build.get("outcome"),
            "notebooks": sorted(name for name, (position, _, _) in chosen.items()
                                if position == index),
        } for index, (source, report) in enumerate(inputs)],
    }
    # how the jobs judged their notebooks (the same book's settings in every job): the
    # first job's that says, so that report and compare on the merge start from them
    for key in JUDGING_KEYS:
        stated = next((b[key] for b in builds if key in b), None)
        if stated is not None or any(key in b for b in builds):
            build[key] = stated
    # one speed for the whole: the median of the jobs' calibrations (each notebook
    # keeps its own job's in calibration_seconds, which comparisons prefer)
    seconds = [s for s in (build_seconds(b) for b in builds) if s is not None]
    if seconds:
        build["calibration"] = {"seconds": statistics.median(seconds),
                                "workload": WORKLOAD_VERSION}
    return build


def write_report(path: Path, report: StatusReport) -> None:
    atomic_write(path, status_json_text(report))
