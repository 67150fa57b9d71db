"""The build's one analysis on mystmd, made at the project stage, once every page ran:
this build's records (their titles and time budgets from the pages' files,
:mod:`.pages`), the thresholds and rules of ``myst.yml``, and the baseline
(``status_baseline``, read as Sphinx reads ``gpu_status_baseline``:
:func:`..model.judging.load_baseline`).

Each page's project stage is a call of its own (a process of its own with the
executable plugin), and mystmd runs them in no order the plugin can know, so each
makes the same analysis from the same files, and so the same warnings
(:func:`..render.analysis_warnings.analysis_warnings`, Sphinx's): every call keeps
all of them for the status file (the file keeps each once), and shows its own
page's, at the cell's line (a budget's at the line of the page's
``gpu_budget_seconds``).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ..model.analysis import BuildAnalysis
from ..model.build_warnings import BuildWarning
from ..model.files import STATUS_FILE
from ..model.judging import load_baseline
from ..model.record import StatusReport
from ..render.analysis_warnings import BUDGET, analysis_warnings
from . import build_options, capture, claims, pages, status
from .claims import CheckedBook, SavedPage
from .runtime import OtherBuilds
from .settings import Settings, once
from .warnings import warning


class ProjectBuild(NamedTuple):
    report: StatusReport
    analysis: BuildAnalysis
    #: the book's timing claims, checked against this build and ``runtime_sources``
    claims: CheckedBook
    #: the pages' texts and roles the claims were read from
    pages: list[SavedPage]
    #: every page's warnings of the analysis and of its front matter, by docname
    page_warnings: list[tuple[str, BuildWarning]]
    #: the build's own warnings (a bad baseline file), once per build
    warnings: list[BuildWarning]

    def of_page(self, docname: str | None) -> list[BuildWarning]:
        return [item for page, item in self.page_warnings if page == docname]


def project_build(options: Settings, folder: Path, execute_parallel: int = 1,
                  root: Path | None = None, others: OtherBuilds = ()) -> ProjectBuild:
    """The build's report and analysis from this build's records in the capture
    ``folder``, with every warning they give, and the book's timing claims checked
    against this build and ``others`` (:func:`.runtime.named_builds`)."""
    root = root or Path.cwd()
    records = capture.build_records(folder, root)
    found = [(record.docname, warning("budget", message, record.source, line))
             for record, message, line in pages.apply_front_matter(records, options, root)]
    loaded = load_baseline(options.baseline_path(root), "status_baseline",
                           folder.parent / STATUS_FILE)
    own = ([warning("baseline", loaded.problem)]
           if loaded.problem and once(loaded.problem, folder) else [])
    saved = claims.saved_pages(folder, root, build_options.build_started())
    checked = claims.check_book(saved, records, list(others), options.claim_rules, root)
    report, analysis = status.build_report(records, execute_parallel=execute_parallel,
                                           thresholds=options.thresholds, rules=options.rules,
                                           baseline=loaded, claims=checked.claims,
                                           statements=checked.statements)
    for item in analysis_warnings(analysis, options.rules):
        record = item.notebook
        line = item.cell.line if item.cell is not None else None
        if item.subtype == BUDGET:
            path = pages.source_file(record, root)
            line = pages.budget_source_line(path) if path is not None else None
        found.append((record.docname, warning(item.subtype, item.message, record.source,
                                              line)))
    return ProjectBuild(report, analysis, checked, saved, found, own)
