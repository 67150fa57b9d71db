"""Which records changed in this build: the status page and the environment table
rewrite their pages only then (at ``env-updated``)."""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from .capture import stored_records
from .state import build_state


def _reset_changes(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                   removed: set[str]) -> list[str]:
    build_state(app).purged_records = False
    return []


def _note_purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    # a re-read or removed document that had a record: the tables change
    if docname in stored_records(env):
        build_state(app).purged_records = True


def records_changed(app: Sphinx, env: BuildEnvironment) -> bool:
    """True when a record was added, changed or removed in this build (at ``env-updated``)."""
    state = build_state(app)
    if state.purged_records:
        return True
    records = stored_records(env)
    return any(docname in records for docname in state.to_read)


def setup_changes(app: Sphinx) -> None:
    app.connect("env-get-outdated", _reset_changes)
    # before the collectors (priority 500) forget the document's record
    app.connect("env-purge-doc", _note_purge, priority=100)
