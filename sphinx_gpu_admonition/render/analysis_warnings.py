"""The warnings a build's analysis gives, for both engines: a notebook over its time
budget (always: the budget is the book's opt-in), each regression
(``warn_regressions``) and each flagged cell (``warn_slow_cells``; a ``slow-ok`` or
import cell is shown, never warned), from the build's one analysis.

The order is every other view's: the notebooks over their budget (furthest over
first), the regressed notebooks (slowest first), then the flagged cells slowest first
(:func:`..model.findings.findings`), each cell's slow-cell warning before its
regression; so with ``-W`` / ``--strict`` the first warning, the one a build that stops
at it shows, is the same on both engines.  Where a warning points (a cell's line, the
line of the page's budget) is each engine's own way to warn.
"""

from __future__ import annotations

from typing import NamedTuple

from ..model.analysis import BuildAnalysis, Rule
from ..model.findings import budget_findings, findings
from ..model.judging import Rules
from ..model.record import CellRecord, NotebookRecord
from ..model.settings import PAGE_BUDGET_KEY
from .finding_text import (
    budget_warning,
    cell_regression_warning,
    notebook_regression_warning,
    slow_cell_warning,
)

BUDGET = "budget"
REGRESSION = "regression"
SLOW_CELL = "slow_cell"


class AnalysisWarning(NamedTuple):
    """One warning of the analysis: its subtype, its words, its notebook and cell."""

    subtype: str
    message: str
    notebook: NotebookRecord
    #: the cell it is about (None: the notebook as a whole)
    cell: CellRecord | None = None


def analysis_warnings(analysis: BuildAnalysis, rules: Rules) -> list[AnalysisWarning]:
    """The build's budget warnings, and its regression and flagged-cell warnings as
    ``rules`` switch them on, in the order of :data:`__doc__`."""
    found = [AnalysisWarning(BUDGET, budget_warning(row.seconds, row.budget_seconds,
                                                    PAGE_BUDGET_KEY), row.notebook)
             for row in budget_findings(analysis)]
    if not (rules.warn_slow_cells or rules.warn_regressions):
        return found
    if rules.warn_regressions:
        for result in sorted(analysis.regressed, key=lambda r: (-r.notebook.seconds,
                                                                r.notebook.docname)):
            record, comparison = result.notebook, result.comparison
            assert comparison is not None and comparison.ratio is not None
            found.append(AnalysisWarning(REGRESSION, notebook_regression_warning(
                record.seconds, comparison.ratio, comparison.baseline_seconds), record))
    for finding in findings(analysis):
        record, cell = finding.notebook, finding.cell
        assert cell is not None
        if rules.warn_slow_cells and not finding.is_note:
            found.append(AnalysisWarning(SLOW_CELL, slow_cell_warning(finding), record, cell))
        if rules.warn_regressions:
            found += [AnalysisWarning(REGRESSION, cell_regression_warning(finding, flag),
                                      record, cell)
                      for flag in finding.flags if flag.rule == Rule.REGRESSION]
    return found
