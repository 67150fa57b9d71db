"""The build's one analysis, and what it is made of: the records, the thresholds
and the baseline (``gpu_status_baseline``).

:func:`build_analysis` analyses the records once per build (at ``env-updated``, in
the main process, where post-transforms run even with ``-j N``); the warnings, every
status table, the badges and the reports read that one analysis.  The opt-in
``slow_cell`` / ``regression`` warnings are emitted from it once per build.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import NamedTuple

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from ..model.analysis import (
    BuildAnalysis,
    NotebookAnalysis,
    Thresholds,
    analyse,
    is_ci,
)
from ..model.device import is_gpu, parallel_preallocation_warning
from ..model.files import read_status
from ..model.judging import LoadedBaseline, Rules, build_fields, judged_by, load_baseline
from ..model.record import CellRecord, StatusReport
from ..model.schema import SchemaError
from ..model.settings import budget_line
from ..render.analysis_warnings import BUDGET, analysis_warnings
from ..render.junit import FailOn, fail_on
from . import _mystnb
from ._sphinx import fails_on_warnings, user_set
from .capture import all_records
from .config import get_config
from .state import build_state
from .warnings import warn

logger = logging.getLogger(__name__)


# -- at the build's start: several kernels on one GPU ---------------------------------
def _gpu_expected(app: Sphinx) -> str | None:
    """Why the kernels of this build would run on a GPU (the start of the warning),
    from what is known before any notebook runs; None: nothing says so."""
    if shutil.which("nvidia-smi"):
        return "a GPU driver is on this machine (nvidia-smi)"
    previous = next((record for record in all_records(app.env)
                     if is_gpu(record.environment.backend)), None)
    if previous is not None:
        return (f"{previous.docname} ran on {previous.device_label or 'a GPU'} in the "
                "previous build")
    # set by the book, not the default ("gpu", which every book has unless it says)
    name = "gpu_expected_backend"
    if user_set(app.config, name):
        backend = get_config(app).expected_backend
        if is_gpu(backend):
            return f"{name} is {backend!r}"
    return None


def warn_parallel_preallocation(app: Sphinx) -> None:
    """With ``-j N`` MyST-NB executes notebooks in N reader processes at once: on one
    GPU with JAX's preallocation on, the second kernel runs out of memory. Warned
    here, before any kernel starts (:func:`..model.device.parallel_preallocation_warning`:
    the rule mystmd's build warns by too)."""
    parallel = app.parallel or 1
    if parallel < 2 or _mystnb.execution_mode(app.env) == "off":
        return
    gpu = _gpu_expected(app)
    message = gpu and parallel_preallocation_warning(
        parallel, gpu, f"Sphinx reads {parallel} notebooks at once (-j {parallel})",
        "-j 1", os.environ)
    if message:
        warn(logger, message, "preallocation")


# -- the baseline ----------------------------------------------------------------------
def baseline_path(app: Sphinx) -> Path | None:
    configured = get_config(app).status_baseline
    if not configured:
        return None
    return (Path(app.srcdir) / configured).resolve()


def baseline_digest(app: Sphinx) -> str | None:
    """The baseline file's path and content digest (None without one): the status
    pages are written again when it changes."""
    path = baseline_path(app)
    if path is None:
        return None
    try:
        return f"{path}:{hashlib.sha1(path.read_bytes()).hexdigest()}"
    except OSError:
        return f"{path}:unreadable"


def _own_output(app: Sphinx) -> Path | None:
    status_json = get_config(app).status_json
    return Path(app.outdir).resolve() / status_json if status_json is not None else None


def _loaded_baseline(app: Sphinx) -> LoadedBaseline:
    """The baseline as this build read it, once (a bad file warns once)."""
    loaded = build_state(app).baseline
    if loaded is False:
        path = baseline_path(app)
        # the output folder names its status file: this build's own output too
        own = path if path == Path(app.outdir).resolve() else _own_output(app)
        loaded = load_baseline(path, "gpu_status_baseline", own)
        if loaded.problem:
            warn(logger, loaded.problem, "baseline")
        build_state(app).baseline = loaded
    return loaded


def get_baseline(app: Sphinx) -> StatusReport | None:
    """The baseline report, or None (a missing or bad file warns once and is ignored:
    :func:`..model.judging.load_baseline`, the rule of both engines)."""
    return _loaded_baseline(app).report


def thresholds(app: Sphinx) -> Thresholds:
    return Thresholds.from_config(get_config(app))


def judging_fields(app: Sphinx) -> dict[str, object]:
    """How this build judges its records, for its status file's ``build``: the
    thresholds, the rule settings and the baseline (path, digest, created) it read."""
    used = _loaded_baseline(app).used
    return build_fields(thresholds(app), rules(app), used)


# -- the analysis ---------------------------------------------------------------------
class _AnalysedBuild(NamedTuple):
    """This build's analysis, and each notebook's by name (made once per build)."""

    analysis: BuildAnalysis
    by_docname: dict[str, NotebookAnalysis]


def _analysed_build(app: Sphinx) -> _AnalysedBuild:
    state = build_state(app)
    memo = state.analysis
    if memo is None:
        # build.ci as the status file will say it: the compilation-cache rule needs it;
        # the claims as ext.claims checked them (at env-updated, before this analysis)
        claims = state.claims
        report = StatusReport(all_records(app.env), build={"ci": is_ci(os.environ)},
                              claims=claims.claims if claims is not None else [],
                              timing_statements=claims.statements if claims is not None
                              else [])
        analysis = analyse(report, thresholds(app), get_baseline(app))
        memo = _AnalysedBuild(analysis, {a.notebook.docname: a for a in analysis.notebooks})
        state.analysis = memo
    return memo


def build_analysis(app: Sphinx) -> BuildAnalysis:
    """The analysis of this build's records, made once per build (at ``env-updated``,
    in the main process, where post-transforms run even with ``-j N``) and shared by
    the warnings, every status table, the badges and the reports."""
    return _analysed_build(app).analysis


def notebook_analysis(app: Sphinx, docname: str) -> NotebookAnalysis | None:
    return _analysed_build(app).by_docname.get(docname)


def file_analysis(app: Sphinx, node: nodes.Element) -> BuildAnalysis | None:
    """The analysis of a table's ``:status-file:`` (and ``:baseline-file:``), with the
    thresholds that file's build stored (this book's for a file that stores none);
    None, with a warning at the directive, when a file cannot be read."""
    try:
        report = read_status(node["gpu_status_file"])
        baseline = (read_status(node["gpu_baseline_file"]) if "gpu_baseline_file" in node
                    else None)
        judging = judged_by(report.build)
    except (OSError, SchemaError) as error:
        warn(logger, f"execution-status: cannot read the status file: {error}", "directive",
             location=node)
        return None
    # judged as its build judged it (as report judges it), else with this book's limits
    return analyse(report, judging.thresholds if judging.stored else thresholds(app),
                   baseline)


def forget_analysis(app: Sphinx) -> None:
    """The records are about to change (``env-get-outdated``), or are final
    (``env-updated``): the next :func:`build_analysis` analyses them again."""
    build_state(app).analysis = None


# -- opt-in warnings -----------------------------------------------------------------
def _cell_location(docname: str, cell: CellRecord) -> tuple[str, int] | str:
    return (docname, cell.line) if cell.line is not None else docname


def _budget_line(app: Sphinx, docname: str) -> int | None:
    """The line of a text notebook's ``gpu_budget_seconds`` (else 1:
    :func:`..model.settings.budget_line`); None for an ``.ipynb`` (a line of its JSON
    means nothing to a reader)."""
    path = Path(app.env.doc2path(docname))
    if path.suffix == ".ipynb":
        return None
    try:
        return budget_line(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return 1


def rules(app: Sphinx) -> Rules:
    """The rule settings of this build (kept in its status file)."""
    config = get_config(app)
    return Rules(warn_slow_cells=config.warn_slow_cells,
                 warn_regressions=config.warn_regressions,
                 expected_backend=config.expected_backend)


def emit_warnings(app: Sphinx) -> None:
    """The warnings of the build's analysis, once per build, in the order of every
    other view (:func:`..render.analysis_warnings.analysis_warnings`, the rule of both
    engines): the budget warnings, and with ``gpu_warn_regressions`` /
    ``gpu_warn_slow_cells`` one per regressed notebook and per flagged cell; a cell's
    warning at its line, a budget's at the line of the page's ``gpu_budget_seconds``."""
    for item in analysis_warnings(build_analysis(app), rules(app)):
        docname = item.notebook.docname
        location: tuple[str, int] | str = docname
        if item.cell is not None:
            location = _cell_location(docname, item.cell)
        elif item.subtype == BUDGET:
            line = _budget_line(app, docname)
            location = (docname, line) if line is not None else docname
        warn(logger, item.message, item.subtype, location=location)


def junit_fail_on(app: Sphinx) -> FailOn:
    """Which findings JUnit reports as failures: those whose warning fails the build
    (``gpu_warn_slow_cells`` / ``gpu_warn_regressions`` / a time budget, with ``-W``:
    :func:`..render.junit.fail_on`, mystmd's rule too), so that a CI dashboard is red
    exactly when the build is; else every finding is a passing case."""
    config = get_config(app)
    return fail_on(config.warn_slow_cells, config.warn_regressions, fails_on_warnings(app))
