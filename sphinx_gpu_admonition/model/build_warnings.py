"""The build's warnings as data: what each engine warned about, kept in the status
file (``build.warnings``) so that ``report`` repeats them (text, ``--json``,
``--github`` annotations) after the build's log is gone.

One vocabulary for both engines: every warning has type ``gpu_admonition`` and one
of the documented :data:`SUBTYPES` (``docs/warnings.md``; Sphinx's
``suppress_warnings = ["gpu_admonition.slow_cell"]`` silences a subtype), a message
of one line, and where it points (a file relative to the repository, and a line).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .formatting import safe_line
from .record import StatusReport
from .schema import SchemaError

WARNING_TYPE = "gpu_admonition"

#: subtype -> what it reports; docs/warnings.md describes each (kept by hand, and
#: tests/unit/ext/test_warnings.py fails when a subtype is missing there).
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
    "claim": "a timing claim fails on this build or another build's device, or cannot be "
    "checked because of the text or the book (an unknown or repeated name, a cell that "
    "did not run, failed or printed two timer values, a time of 0, an expression that "
    "does not parse, a page not executed), or a time:NAME tag names nothing",
}
#: the warnings that repeat a finding of the analysis (a flagged cell, a regression, a
#: notebook over its budget, a claim that fails or is not checked): the views that show
#: the findings (and the claims, with their verdicts and reasons) need not repeat them
FINDING_SUBTYPES = ("slow_cell", "regression", "budget", "claim")


class BuildWarning(NamedTuple):
    """One warning of a build."""

    subtype: str
    message: str
    #: the file it points at, relative to the repository root (None: the build)
    file: str | None = None
    line: int | None = None

    @property
    def name(self) -> str:
        """``gpu_admonition.backend``: how Sphinx names the warning's class."""
        return f"{WARNING_TYPE}.{self.subtype}"

    @property
    def where(self) -> str:
        """``lectures/jax.md:12``, ``lectures/jax.md`` or ``""``."""
        if not self.file:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file

    @property
    def repeats_finding(self) -> bool:
        return self.subtype in FINDING_SUBTYPES

    def to_dict(self) -> dict[str, Any]:
        return {"type": WARNING_TYPE, "subtype": self.subtype, "message": self.message,
                "file": self.file, "line": self.line}


def warning_entry(subtype: str, message: str, file: str | None = None,
                  line: int | None = None) -> BuildWarning:
    """A warning as the status file keeps it: one line that cannot become a workflow
    command (the message quotes notebooks, exceptions and files)."""
    return BuildWarning(subtype, safe_line(message), file or None,
                        line if isinstance(line, int) and line > 0 else None)


def _field(entry: dict[str, Any], name: str, kind: type, where: str,
           optional: bool = True) -> Any:
    value = entry.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SchemaError(f"{where}.{name}: not a {kind.__name__} (got {type(value).__name__})")
    return value


def build_warnings(report: StatusReport) -> list[BuildWarning]:
    """The warnings the build that wrote ``report`` kept (``build.warnings``; none in a
    file of an earlier version); a malformed entry raises :class:`SchemaError` naming
    it, as every other field of the file does."""
    entries = report.build.get("warnings")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise SchemaError(f"build.warnings: not an array (got {type(entries).__name__})")
    found = []
    for number, entry in enumerate(entries):
        where = f"build.warnings[{number}]"
        if not isinstance(entry, dict):
            raise SchemaError(f"{where}: not an object (got {type(entry).__name__})")
        subtype = _field(entry, "subtype", str, where, optional=False)
        found.append(BuildWarning(subtype, safe_line(_field(entry, "message", str, where,
                                                            optional=False)),
                                  _field(entry, "file", str, where),
                                  _field(entry, "line", int, where)))
    return found
