"""Warnings of the extension: one type, documented subtypes.

Every warning the extension emits has type ``gpu_admonition`` and one of the
subtypes below, so users can silence a class of warnings with
``suppress_warnings = ["gpu_admonition.slow_cell"]``.
"""

from __future__ import annotations

from typing import Any

from sphinx.util import logging

from ..model.formatting import safe_line

WARNING_TYPE = "gpu_admonition"

#: subtype -> what it reports; docs/warnings.md describes each (kept by hand, and
#: tests/test_docs.py fails when a subtype is missing there).
SUBTYPES = {
    "config": "a gpu_* configuration value is invalid; the default is used",
    "directive": "a gpu, execution-status or execution-environment directive has bad input",
    "capture": "the in-kernel capture failed or its data could not be read, "
    "a measured value was dropped, or the user's PYTHONSTARTUP file raised",
    "backend": "a page with a gpu directive did not execute on gpu_expected_backend "
    "(a GPU unless set otherwise), or its backend is unknown",
    "colab": "a notebook page's gpu notice has no way to Colab: the theme shows no Colab "
    "launch button and neither gpu_colab_url nor an .ipynb source on GitHub gives a link",
    "baseline": "the status baseline file is missing, unreadable or incompatible",
    "slow_cell": "a cell was flagged slow (only with gpu_warn_slow_cells = True)",
    "regression": "a notebook or cell regressed against the baseline "
    "(only with gpu_warn_regressions = True)",
    "budget": "a notebook took longer than its time budget (gpu_notebook_budget_seconds "
    "or the page's gpu_budget_seconds), or a page's gpu_budget_seconds is not a number",
    "output": "a status file (JSON, JUnit, the status page's per-cell data, the GitHub "
    "Actions job summary or step outputs) could not be written",
    "preallocation": "with -j N, notebooks would execute N at once on one GPU with JAX's "
    "memory preallocation on (XLA_PYTHON_CLIENT_PREALLOCATE not false): warned at the "
    "build's start",
    "runtime": "a page's run time cannot be stated (not executed yet, no such page, no "
    "capture data), or a gpu_runtime_sources file is missing or unreadable",
}


def warn(logger: logging.SphinxLoggerAdapter, message: str, subtype: str,
         location: Any = None) -> None:
    """Log a warning of this extension with its documented subtype.

    The message is one :func:`~..model.formatting.safe_line` (no ``::`` at its start,
    no ``##[``, no invisible characters): it often quotes a notebook, an exception or a
    file, and a CI runner reads the log's lines as commands."""
    assert subtype in SUBTYPES, subtype
    logger.warning(safe_line(message), type=WARNING_TYPE, subtype=subtype, location=location)
