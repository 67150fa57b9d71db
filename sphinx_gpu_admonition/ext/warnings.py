"""Warnings of the extension: one type, documented subtypes, kept for the status file.

Every warning the extension emits has type ``gpu_admonition`` and one of the
subtypes of :data:`..model.build_warnings.SUBTYPES` (mystmd's warnings use the same),
so users can silence a class of warnings with
``suppress_warnings = ["gpu_admonition.slow_cell"]``.

Every warning the build shows is also kept (:func:`build_warnings`) for the status
file's ``build.warnings``, so that ``report`` repeats them.  A handler on the
extension's loggers sees each one before Sphinx turns its location into text; the
warnings of reading a document are kept on the environment, per document, so that
those of ``-j`` reader processes come back with the documents they read.
"""

from __future__ import annotations

import logging as stdlib_logging
import weakref
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.utils import get_source_line
from sphinx.util import logging

from ..model.build_warnings import SUBTYPES, WARNING_TYPE, BuildWarning, warning_entry
from ..model.files import repository_path
from ..model.formatting import safe_line
from .state import build_state, env_data

__all__ = ["SUBTYPES", "WARNING_TYPE", "build_warnings", "setup_warnings", "warn"]

#: env attribute: docname -> the warnings of reading it (plain tuples)
_READING_WARNINGS = "gpu_reading_warnings"
#: the logger every module of the package logs through (``sphinx.`` + its name)
_LOGGER = "sphinx." + __name__.split(".", 1)[0]


def warn(logger: logging.SphinxLoggerAdapter, message: str, subtype: str,
         location: Any = None) -> None:
    """Log a warning of this extension with its documented subtype.

    The message is one :func:`~..model.formatting.safe_line` (no ``::`` at its start,
    no ``##[``, no invisible characters): it often quotes a notebook, an exception or a
    file, and a CI runner reads the log's lines as commands."""
    assert subtype in SUBTYPES, subtype
    logger.warning(safe_line(message), type=WARNING_TYPE, subtype=subtype, location=location)


# -- kept for the status file -------------------------------------------------------
def _location(app: Any, location: Any) -> tuple[str | None, int | None]:
    """``location`` as Sphinx reads it (a node, ``(docname, line)`` or a docname):
    the file relative to the repository, and the line."""
    source: str | None = None
    line: int | None = None
    if isinstance(location, nodes.Node):
        source, line = get_source_line(location)
    elif isinstance(location, tuple) and len(location) == 2:
        docname, line = location
        source = str(app.env.doc2path(docname)) if docname else None
    elif isinstance(location, str) and location and ":" not in location:
        source = str(app.env.doc2path(location))
    if not source:
        return None, line if isinstance(line, int) else None
    return (repository_path(Path(source), Path(app.srcdir)),
            line if isinstance(line, int) else None)


def _reading_docname(app: Any) -> str | None:
    """The document being read, while the build reads (None otherwise)."""
    if not build_state(app).reading:
        return None
    try:
        return app.env.docname or None
    except KeyError:  # Sphinx 7.4 between documents
        return None


class _KeptWarnings(stdlib_logging.Handler):
    """Keeps each warning of the extension that the build shows."""

    def __init__(self) -> None:
        super().__init__(stdlib_logging.WARNING)
        self.app: weakref.ReferenceType[Any] | None = None

    def emit(self, record: stdlib_logging.LogRecord) -> None:
        app = self.app() if self.app is not None else None
        subtype = getattr(record, "subtype", None)
        if app is None or getattr(record, "type", None) != WARNING_TYPE or not subtype:
            return
        try:
            if logging.is_suppressed_warning(WARNING_TYPE, subtype,
                                             app.config.suppress_warnings):
                return
            file, line = _location(app, getattr(record, "location", None))
            entry = warning_entry(subtype, record.getMessage(), file, line)
            docname = _reading_docname(app)
            if docname is not None:
                env_data(app.env, _READING_WARNINGS, dict).setdefault(docname, []).append(
                    tuple(entry))
            else:
                build_state(app).warnings.append(entry)
        except Exception:  # keeping a warning must never break the build
            return


_HANDLER = _KeptWarnings()


def build_warnings(app: Any) -> list[BuildWarning]:
    """This build's warnings: those before and after reading, and in between those of
    reading each document this build read (by name)."""
    state = build_state(app)
    kept = env_data(app.env, _READING_WARNINGS, dict)
    reading = [BuildWarning(*entry) for docname in sorted(state.to_read)
               for entry in kept.get(docname, ())]
    split = state.reading_warnings_at if state.reading_warnings_at is not None \
        else len(state.warnings)
    return [*state.warnings[:split], *reading, *state.warnings[split:]]


def _start(app: Any) -> None:
    _HANDLER.app = weakref.ref(app)


def _before_reading(app: Any, env: Any, docnames: list[str]) -> None:
    state = build_state(app)
    state.reading = True
    kept = env_data(env, _READING_WARNINGS, dict)
    for docname in docnames:  # read again: its warnings are this build's
        kept.pop(docname, None)


def _after_reading(app: Any, env: Any) -> list[str]:
    state = build_state(app)
    state.reading = False
    state.reading_warnings_at = len(state.warnings)
    return []


def _merge(app: Any, env: Any, docnames: set[str], other: Any) -> None:
    kept = env_data(env, _READING_WARNINGS, dict)
    theirs = getattr(other, _READING_WARNINGS, None) or {}
    for docname in docnames:
        if docname in theirs:
            kept[docname] = theirs[docname]


def _purge(app: Any, env: Any, docname: str) -> None:
    env_data(env, _READING_WARNINGS, dict).pop(docname, None)


def _finish(app: Any, exception: Any) -> None:
    if _HANDLER.app is not None and _HANDLER.app() is app:
        _HANDLER.app = None


def setup_warnings(app: Any) -> None:
    """Keep the build's warnings from its start (the options' are the first)."""
    logger = stdlib_logging.getLogger(_LOGGER)
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
    _start(app)
    app.connect("env-before-read-docs", _before_reading, priority=100)
    app.connect("env-updated", _after_reading, priority=100)
    app.connect("env-merge-info", _merge)
    app.connect("env-purge-doc", _purge)
    app.connect("build-finished", _finish, priority=1000)
