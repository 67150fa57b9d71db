"""The one place that reads MyST-NB's and jupyter-cache's internals.

MyST-NB has no public API for a document's execution result or its resolved
configuration, so everything that depends on their shape lives here, with
defensive fallbacks, and ``tests/integration/test_mystnb_compat.py`` pins the behaviour.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from docutils import nodes
from sphinx.environment import BuildEnvironment

from ..model.cell_lines import code_start_line, fence_at_or_above, fence_lines
from .blocks import block_nodes


class ExecutionResult(NamedTuple):
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
    """True for documents MyST-NB treated as notebooks: it executed them, or rendered
    code-cell containers.  A page with only ``kernelspec`` front matter is not one
    (MyST-NB neither executes it nor renders its ``code-cell`` directives)."""
    if execution_result(env, docname) is not None:
        return True
    return next(_cell_containers(doctree), None) is not None


def _is_code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def _cell_containers(doctree: nodes.document) -> Iterator[nodes.Element]:
    """MyST-NB's code cell containers (``nb_element`` ``cell_code``), in document
    order, as ``doctree.findall(nodes.container)`` would find them, without walking
    into them (a code cell holds no other: its source and outputs are most of a
    notebook page's nodes) or into the page's text (:func:`.blocks.block_nodes`)."""
    return block_nodes(doctree, _is_code_cell, enter_matches=False)


def code_cell_nodes(doctree: nodes.document) -> Iterator[tuple[nodes.Element, int]]:
    """(node, cell index) of the code cells rendered on the page: MyST-NB's
    ``nb_element`` and ``cell_index`` node attributes, read here only."""
    for node in _cell_containers(doctree):
        yield node, node["cell_index"]


def cell_source(node: nodes.Element) -> str:
    """The source of a code cell's node (its first literal block)."""
    block = next(iter(node.findall(nodes.literal_block)), None)
    return block.astext() if block is not None else ""


class RenderedCell(NamedTuple):
    """A code cell rendered on the page, as MyST-NB's nodes give it."""

    index: int
    execution_count: int | None
    source: str
    tags: tuple[str, ...]
    #: the text the cell printed and returned (its ``stream`` and ``text/plain``
    #: outputs as MyST-NB rendered them, joined by newlines)
    outputs: str
    #: the node's line: MyST-NB gives a cell's last line (its closing fence)
    end_line: int | None


#: the classes of MyST-NB's literal blocks of a cell's standard output and
#: ``text/plain`` results (``render_stdout``, ``render_text_plain``)
_TEXT_OUTPUT_CLASSES = ("stream", "text_plain")


def rendered_cells(doctree: nodes.document) -> list[RenderedCell]:
    """The code cells rendered on the page, in order, read in one walk of the doctree
    (each walk of a page's doctree costs about as much as the rest of a cache hit's
    record): MyST-NB's ``nb_element``, ``cell_index``, ``exec_count`` and
    ``cell_metadata`` node attributes, its cell's literal blocks (the first is the
    source), read here only."""
    cells = []
    for node in _cell_containers(doctree):
        blocks = list(node.findall(nodes.literal_block))
        metadata = node.get("cell_metadata") or {}
        found = metadata.get("tags") if isinstance(metadata, dict) else None
        outputs = [block.astext() for block in blocks
                   if "output" in block["classes"]
                   and any(name in block["classes"] for name in _TEXT_OUTPUT_CLASSES)]
        cells.append(RenderedCell(
            node["cell_index"], node.get("exec_count"),
            blocks[0].astext() if blocks else "",
            tuple(tag for tag in found or () if isinstance(tag, str)),
            "\n".join(outputs), node.line))
    return cells


def code_cells(doctree: nodes.document) -> list[tuple[int, int | None, str]]:
    """(cell index, execution count, source) of the code cells rendered on the page."""
    return [(cell.index, cell.execution_count, cell.source) for cell in rendered_cells(doctree)]


def cell_start_lines(cells: list[RenderedCell], source_path: Path
                     ) -> dict[int, tuple[int, int | None]]:
    """Cell index -> (the line of the source file where the code cell starts, the line
    of its code's first line), for a text notebook (a line of an ``.ipynb`` file's
    JSON would mean nothing to a reader).

    MyST-NB gives a cell's last line (its closing fence); the cell starts at the
    nearest ``{code-cell}`` fence above it, its code after the options
    (:mod:`..model.cell_lines`).
    """
    if source_path.suffix == ".ipynb":
        return {}
    lines: dict[int, tuple[int, int | None]] = {}
    source: list[str] | None = None
    fences: list[int] = []
    for cell in cells:
        if cell.end_line is not None:
            if source is None:
                try:
                    source = source_path.read_text(encoding="utf-8").splitlines()
                except (OSError, UnicodeDecodeError):
                    source = []
                fences = fence_lines(source)
            fence = fence_at_or_above(fences, cell.end_line)
            lines[cell.index] = fence, code_start_line(source, fence, cell.source)
    return lines


def executed_code_cell_count(env: BuildEnvironment, docname: str) -> int | None:
    """How many code cells with code the notebook MyST-NB wrote to its output folder
    (``jupyter_execute/<docname>.ipynb``, written as the page was read) has, counting
    the ``remove-cell`` ones the page does not show; None when it cannot be read."""
    config = getattr(env, "mystnb_config", None)
    folder = getattr(config, "output_folder", None)
    if not folder:
        return None
    *parents, name = docname.split("/")
    path = Path(folder).joinpath(*parents, f"{name}.ipynb")
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells") or []
        return sum(1 for cell in cells if cell.get("cell_type") == "code"
                   and "".join(cell.get("source") or "").strip())
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def allows_errors(env: BuildEnvironment) -> bool:
    """Whether the book lets every cell raise (``nb_execution_allow_errors``)."""
    return bool(getattr(env.config, "nb_execution_allow_errors", False))


def _created_key(timestamp: float) -> int:
    """A record's creation time in whole microseconds (what the database keeps)."""
    return round(timestamp * 1_000_000)


class _CacheDatabase:
    """One jupyter-cache's database, opened once per process; one SQL query per lookup.

    Listing every record for every notebook made a book's cost grow with the
    square of its size (and with ``-j N`` each reading process is a new one):
    here the build reads every record's creation time once (:func:`index_cache_hits`),
    a hit missing from that index is one query on the records' creation time, and a
    fresh execution one query on the notebook's source path.
    """

    def __init__(self, cache_path: Path):
        from jupyter_cache import get_cache
        from jupyter_cache.cache.db import NbCacheRecord
        from sqlalchemy import bindparam, select

        self.cache = get_cache(str(cache_path))
        # built once: a statement built per lookup cost more than running it
        columns = select(NbCacheRecord.hashkey, NbCacheRecord.created)
        self._created_between = columns.where(
            NbCacheRecord.created.between(bindparam("low"), bindparam("high")))
        self._of_uri = columns.where(NbCacheRecord.uri == bindparam("uri"))

    def _query(self, statement: Any, **values: Any) -> list[Any]:
        """(hashkey, created) of the records ``statement`` selects (one SQL query)."""
        with self.cache.db.connect() as connection:
            return list(connection.execute(statement, values))

    def key_created_at(self, timestamp: float) -> str | None:
        # the database keeps the naive datetime that ``timestamp`` was made from;
        # a window around it, then the exact match, whatever the rounding
        moment = datetime.fromtimestamp(timestamp)
        window = timedelta(seconds=1)
        wanted = _created_key(timestamp)
        candidates = self._query(self._created_between, low=moment - window,
                                 high=moment + window)
        return next((hashkey for hashkey, created in candidates
                     if _created_key(created.timestamp()) == wanted), None)

    def newest_key_of(self, uri: str) -> str | None:
        mine = self._query(self._of_uri, uri=uri)
        return max(mine, key=lambda row: row[1])[0] if mine else None


#: (cache folder, process id) -> index; a forked process opens its own database
_CACHE_DATABASES: dict[tuple[str, int], _CacheDatabase] = {}


#: cache folder as given -> resolved (resolving it took five ``lstat`` per lookup)
_RESOLVED_FOLDERS: dict[str, str] = {}


def _resolved(cache_path: Path) -> str:
    given = str(cache_path)
    folder = _RESOLVED_FOLDERS.get(given)
    if folder is None:
        folder = _RESOLVED_FOLDERS[given] = str(Path(cache_path).resolve())
    return folder


def _cache_database(cache_path: Path) -> _CacheDatabase:
    key = (_resolved(cache_path), os.getpid())
    database = _CACHE_DATABASES.get(key)
    if database is None:
        database = _CACHE_DATABASES[key] = _CacheDatabase(Path(cache_path))
    return database


#: resolved cache folder -> its records' hashes by creation time (µs), read once per
#: build in the main process: ``-j`` workers are forked after it and inherit it
_HIT_INDEXES: dict[str, dict[int, str]] = {}


def index_cache_hits(cache_path: Path) -> None:
    """Read the creation time of every record of the cache, once for the build.

    One read per build instead of a query per notebook (a query through
    jupyter-cache costs about as much as reading a few hundred records' times).
    A record this build adds, or a time read in another time zone, is not in the
    index and takes one query of its own.
    """
    database = cache_path / "global.db"
    _HIT_INDEXES.pop(_resolved(cache_path), None)  # an earlier build's, in this process
    if not database.is_file():
        return  # no cache yet (and no hit)
    # an unreadable cache: no index, every lookup queries (and finds nothing)
    with contextlib.suppress(Exception):
        _HIT_INDEXES[_resolved(cache_path)] = _creation_index(database)


def _creation_index(database: Path) -> dict[int, str]:
    """Every record's hash by its creation time in microseconds.

    Read with sqlite3, read-only: opening the database through jupyter-cache (an
    SQLAlchemy engine that checks the tables) cost 15 ms a build, the query itself
    1 ms.  The table (``nbcache``) and the text SQLAlchemy stores a ``DateTime`` as
    (``2026-11-30 15:32:03.744895``, the naive time jupyter-cache gave it) are
    pinned by ``tests/integration/test_mystnb_compat.py``.
    """
    import sqlite3  # here: 2.8 ms of every build's start, needed by cache mode only

    connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT hashkey, created FROM nbcache").fetchall()
    finally:
        connection.close()
    return {_created_key(datetime.fromisoformat(created).timestamp()): hashkey
            for hashkey, created in rows}


def hit_record_key(cache_path: Path, mtime: float | None) -> str | None:
    """The jupyter-cache hash of the record a cache hit used, else None.

    On a hit MyST-NB reports the record's ``created`` time as ``mtime``; after a
    fresh execution ``mtime`` is the current time, which no record carries.
    """
    if mtime is None:
        return None
    indexed = _HIT_INDEXES.get(_resolved(cache_path), {}).get(_created_key(mtime))
    if indexed is not None:
        return indexed
    try:
        return _cache_database(cache_path).key_created_at(mtime)
    except Exception:  # an unreadable cache: report the notebook as executed
        return None


def newest_record_key(cache_path: Path, source_path: str) -> str | None:
    """The jupyter-cache hash of the notebook just executed and cached from this source."""
    try:
        return _cache_database(cache_path).newest_key_of(str(source_path))
    except Exception:
        return None


def timestamp_to_iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")



# -- why a notebook missed the cache -------------------------------------------------
class CacheMissReason(NamedTuple):
    """What differs between the cached copy of a notebook and the one that executed."""

    #: one of :data:`..model.record.CACHE_MISS_REASONS`
    reason: str
    #: the first differing code cell, counted among the code cells that run (1 = the
    #: first non-empty one, as :class:`..model.record.CellName` counts); None: none
    number: int | None = None


def cache_miss_reason(cache_path: Path, source_path: str, relative_path: str,
                      new_key: str | None) -> CacheMissReason | None:
    """Why the notebook cached as ``new_key`` from ``source_path`` missed the cache
    (``new_key`` None: it failed, and MyST-NB cached nothing; the notebook is then read
    as jupyter-cache's project record of it reads it).

    jupyter-cache hashes a notebook's code cells (source and all their metadata) and
    its ``kernelspec``, and keeps the code cells and metadata of each notebook it
    caches.  The cached copy compared is the newest other record of the same source
    path (or of the same path relative to the book, for a cache restored from a
    checkout elsewhere); none: a new notebook.  None when the cache cannot be read
    or nothing differs (the caller then records no reason).
    """
    try:
        cache = _cache_database(cache_path).cache
        records = cache.list_cache_records()
        if new_key is None:
            current = cache.create_hashed_notebook(
                cache.get_project_notebook(str(source_path)).nb)[0]
        else:
            new = next((r for r in records if r.hashkey == new_key), None)
            if new is None:
                return None
            current = cache.get_cache_bundle(new.pk).nb
        others = [r for r in records if r.hashkey != new_key and r.uri == str(source_path)]
        if not others:
            tail = "/" + relative_path.lstrip("/")
            others = [r for r in records if r.hashkey != new_key
                      and Path(r.uri).as_posix().endswith(tail)]
        if not others:
            return CacheMissReason("new_notebook")
        previous = max(others, key=lambda r: r.created)
        return _difference(cache.get_cache_bundle(previous.pk).nb, current)
    except Exception:  # an unreadable cache: no reason rather than a failed page
        return None


def _difference(cached: Any, current: Any) -> CacheMissReason | None:
    """The first difference jupyter-cache's hash sees, in the order a reader fixes it."""
    if cached.metadata.get("kernelspec") != current.metadata.get("kernelspec"):
        return CacheMissReason("kernel_changed")
    old_cells = [c for c in cached.cells if c.get("cell_type") == "code"]
    new_cells = [c for c in current.cells if c.get("cell_type") == "code"]
    number = 0
    for position in range(max(len(old_cells), len(new_cells))):
        old = old_cells[position] if position < len(old_cells) else None
        new = new_cells[position] if position < len(new_cells) else None
        if new is not None and str(new.get("source", "")).strip():
            number += 1  # nbclient skips empty cells: they get no number
        if old is None or new is None or old.get("source") != new.get("source"):
            # a removed cell at the end has no number in the notebook that ran
            return CacheMissReason("cell_changed", number if new is not None else None)
        if dict(old.get("metadata") or {}) != dict(new.get("metadata") or {}):
            return CacheMissReason("metadata_changed", number)
    return None
