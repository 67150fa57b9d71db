"""The one place that reads MyST-NB's and jupyter-cache's internals.

MyST-NB has no public API for a document's execution result or its resolved
configuration, so everything that depends on their shape lives here, with
defensive fallbacks, and ``tests/test_mystnb_compat.py`` pins the behaviour.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from docutils import nodes
from sphinx.environment import BuildEnvironment


@dataclasses.dataclass(frozen=True)
class ExecutionResult:
    """MyST-NB's ``exec_data`` of one document."""

    mtime: float | None
    runtime: float | None
    method: str | None
    succeeded: bool
    error: str | None
    traceback: str | None


def execution_result(env: BuildEnvironment, docname: str) -> ExecutionResult | None:
    """What MyST-NB recorded for ``docname`` (None when it did not execute it)."""
    metadata = getattr(env, "nb_metadata", None) or {}
    data = (metadata.get(docname) or {}).get("exec_data")
    if not data:
        return None
    return ExecutionResult(
        mtime=data.get("mtime"), runtime=data.get("runtime"), method=data.get("method"),
        succeeded=bool(data.get("succeeded")), error=data.get("error"),
        traceback=data.get("traceback"),
    )


def execution_mode(env: BuildEnvironment) -> str:
    config = getattr(env, "mystnb_config", None)
    return getattr(config, "execution_mode", None) or env.config["nb_execution_mode"]


def execution_cache_path(env: BuildEnvironment) -> Path | None:
    config = getattr(env, "mystnb_config", None)
    path = getattr(config, "execution_cache_path", None)
    return Path(path) if path else None


def is_excluded(env: BuildEnvironment, docname: str) -> bool:
    """Mirror of MyST-NB's ``nb_execution_excludepatterns`` test."""
    config = getattr(env, "mystnb_config", None)
    patterns = getattr(config, "execution_excludepatterns", None) or ()
    posix = PurePosixPath(Path(env.doc2path(docname)).as_posix())
    return any(posix.match(pattern) for pattern in patterns)


def is_notebook(env: BuildEnvironment, docname: str, doctree: nodes.document) -> bool:
    """True for documents MyST-NB rendered as notebooks: they have the kernelspec
    MyST-NB stores in the page metadata, or code-cell containers."""
    if "kernelspec" in env.metadata.get(docname, {}):
        return True
    return any(node.get("nb_element") == "cell_code" for node in doctree.findall(nodes.container))


def code_cells(doctree: nodes.document) -> list[tuple[int, int | None, str]]:
    """(cell index, execution count, source) of the code cells rendered on the page."""
    cells = []
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") != "cell_code":
            continue
        source = ""
        for child in node.findall(nodes.literal_block):
            source = child.astext()
            break
        cells.append((node["cell_index"], node.get("exec_count"), source))
    return cells


def _cache_records(cache_path: Path) -> list[Any]:
    try:
        from jupyter_cache import get_cache

        return list(get_cache(str(cache_path)).list_cache_records())
    except Exception:
        return []


def hit_record_key(cache_path: Path, mtime: float | None) -> str | None:
    """The jupyter-cache hash of the record a cache hit used, else None.

    On a hit MyST-NB reports the record's ``created`` time as ``mtime``; after a
    fresh execution ``mtime`` is the current time, which no record carries.
    """
    if mtime is None:
        return None
    for record in _cache_records(cache_path):
        if abs(record.created.timestamp() - mtime) < 1e-6:
            return record.hashkey
    return None


def newest_record_key(cache_path: Path, source_path: str) -> str | None:
    """The jupyter-cache hash of the notebook just executed and cached from this source."""
    mine = [r for r in _cache_records(cache_path) if r.uri == str(source_path)]
    return max(mine, key=lambda r: r.created).hashkey if mine else None


def timestamp_to_iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")

