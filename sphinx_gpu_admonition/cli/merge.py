"""``merge`` and ``merge-cache``: one status file, or one jupyter-cache, made of those
of several jobs (a sharded build).  Status files are merged by :mod:`..model.merge`;
jupyter-caches here, through jupyter-cache's public API."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sqlite3
import sys
from pathlib import Path

from ..model.files import SIDECAR_FOLDER
from .output import EXIT_OK, PROG, UsageError, one_line, plural, read_report, say


def cmd_merge(args: argparse.Namespace) -> int:
    from ..model.merge import judging_differs, merge_reports, write_report

    output = Path(args.output)
    # checked before the inputs are read: ``merge . status.json`` (the arguments swapped)
    # must name the mistake, not fail inside the write
    if output.is_dir() or not output.name:
        raise UsageError(f"{args.output}: a folder; OUT_JSON is the merged file to write "
                         "(sphinx-gpu-admonition merge OUT_JSON IN [IN ...])")
    inputs = [(source_label(path), read_report(path)) for path in args.inputs]
    merged, conflicts = merge_reports(inputs)
    for conflict in conflicts:
        say(f"{PROG}: conflict: {one_line(conflict.message())}", sys.stderr)
    differing = judging_differs(inputs)
    if differing:  # the same book's jobs should judge alike: say which one counts
        say(f"{PROG}: note: the inputs differ in build {', '.join(differing)}; the merged "
            f"file keeps those of {inputs[0][0]}", sys.stderr)
    try:
        write_report(output, merged)
    except (OSError, ValueError) as error:
        raise UsageError(f"{args.output}: {getattr(error, 'strerror', None) or error}") from error
    sources = merged.build["merged_from"]
    # a path given on the command line is a label: it never starts the line raw
    say(f"{args.output}: {plural(len(merged.notebooks), 'notebook')} from "
        + ", ".join(f"{s['source']} ({len(s['notebooks'])})" for s in sources)
        + (f"; {plural(len(conflicts), 'conflict')}" if conflicts else ""))
    return EXIT_OK


def source_label(path: str) -> str:
    """How an input is named in the merged file (``build.merged_from[].source``), a public
    file: relative to the working folder, never the machine's absolute path (CI setups pass
    ``$GITHUB_WORKSPACE/...``); an absolute path outside it keeps its last three parts."""
    given = Path(path)
    if not given.is_absolute():
        return given.as_posix()
    try:
        return given.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return Path(*given.parts[-3:]).as_posix()


def cmd_merge_cache(args: argparse.Namespace) -> int:
    try:
        result = merge_caches(Path(args.output), [Path(p) for p in args.inputs])
    except CacheError as error:
        raise UsageError(str(error)) from error
    for note in result.notes:
        say(f"{PROG}: note: {one_line(note)}", sys.stderr)
    say(f"{args.output}: {plural(len(result.copied), 'notebook')} copied from "
        f"{plural(len(args.inputs), 'cache')}"
        + (f"; capture data completed for {plural(len(result.completed), 'notebook')}"
           if result.completed else ""))
    return EXIT_OK


# -- jupyter-caches ---------------------------------------------------------------------------
class CacheError(ValueError):
    """A folder that is not a jupyter-cache, or a target that cannot become one."""


@dataclasses.dataclass
class CacheMerge:
    #: sources (``uri``) of the notebooks the target did not hold
    copied: list[str] = dataclasses.field(default_factory=list)
    #: sources of notebooks the target held without their capture data, now with it
    completed: list[str] = dataclasses.field(default_factory=list)
    #: what was left out, and why (symbolic links)
    notes: list[str] = dataclasses.field(default_factory=list)


#: the columns of jupyter-cache's ``nbcache`` table this command reads (0.5 to 1.x)
_NBCACHE_COLUMNS = frozenset({"pk", "hashkey", "uri", "data"})


def _check_database(folder: Path) -> None:
    """CacheError unless ``folder/global.db`` is an intact jupyter-cache database;
    opened read-only, so a bad source or target is refused before anything is written."""
    database = folder / "global.db"
    if database.is_symlink() or not database.is_file():
        raise CacheError(f"{folder}: not a jupyter-cache (no global.db)")
    try:
        connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise CacheError(f"{database}: cannot be opened ({error})") from error
    try:
        check = connection.execute("PRAGMA quick_check").fetchone()
        columns = {row[1] for row in connection.execute("PRAGMA table_info(nbcache)")}
    except sqlite3.Error as error:
        raise CacheError(f"{database}: not a jupyter-cache database ({error})") from error
    finally:
        connection.close()
    if not check or check[0] != "ok":
        raise CacheError(f"{database}: a damaged database ({check[0] if check else 'empty'})")
    if not columns >= _NBCACHE_COLUMNS:
        raise CacheError(f"{database}: not a database of jupyter-cache 0.5 or later "
                         "(no nbcache table with hashkey, uri and data)")


def _check_target(target: Path) -> None:
    """CacheError when ``target`` cannot take the notebooks: checked before any write."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise CacheError(f"{target}: not a folder (OUT_CACHE is the jupyter-cache to write)")
    if target.exists():
        if (target / "global.db").exists() or (target / "global.db").is_symlink():
            _check_database(target)
        capture = target / SIDECAR_FOLDER
        if capture.is_symlink() or (capture.exists() and not capture.is_dir()):
            raise CacheError(f"{capture}: not a folder (the capture data of the cache's "
                             "notebooks goes there)")
    existing = next(p for p in (target, *target.absolute().parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CacheError(f"{existing}: not writable")


def _sidecar(source: Path, hashkey: str, notes: list[str]) -> Path | None:
    """The capture data saved beside ``source``'s notebook ``hashkey``: a regular file
    inside the cache, never a symbolic link (which could copy any file into the cache)."""
    folder = source / SIDECAR_FOLDER
    if folder.is_symlink():
        note = f"{folder}: a symbolic link, not followed (its capture data is not copied)"
        if note not in notes:
            notes.append(note)
        return None
    path = folder / f"{hashkey}.json"
    if path.is_symlink():
        notes.append(f"{path}: a symbolic link, not copied")
        return None
    return path if path.is_file() else None


def merge_caches(target: Path, sources: list[Path]) -> CacheMerge:
    """Copy every notebook cached in ``sources`` into the jupyter-cache ``target``
    (created when missing), with the capture data saved beside it.

    Goes through jupyter-cache's API (``get_cache_bundle`` / ``cache_notebook_bundle``),
    which keeps each notebook's hash, outputs, artifacts and ``execution_seconds``:
    a build on ``target`` then hits for all of them.  A notebook already in
    ``target`` (same hash, so the same code) is kept, unless the target lacks its
    capture data (a cache restored without it) and a source has it: then the
    source's execution replaces it, so that outputs and capture data stay of one
    run.  Every input is checked, and every bundle read, before anything is written.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    for source in sources:
        if not source.is_dir():
            raise CacheError(f"{source}: not a jupyter-cache (not a folder)")
        _check_database(source)
    _check_target(target)
    present: dict[str, bool] = {}  # hash -> has its capture data
    if (target / "global.db").is_file():
        try:
            for record in get_cache(str(target)).list_cache_records():
                present[record.hashkey] = (target / SIDECAR_FOLDER
                                           / f"{record.hashkey}.json").is_file()
        except Exception as error:  # jupyter-cache wraps SQL errors in RuntimeError
            raise CacheError(f"{target}: {error}") from error
    result = CacheMerge()
    plan = []  # (bundle, record, sidecar or None, completes) read before any write
    for source in sources:
        if source.resolve() == target.resolve():
            continue
        try:
            cache = get_cache(str(source))
            for record in cache.list_cache_records():
                has_capture = present.get(record.hashkey)
                if has_capture:
                    continue
                sidecar = _sidecar(source, record.hashkey, result.notes)
                if has_capture is False and sidecar is None:
                    continue  # held already, and this source has nothing to add
                plan.append((cache.get_cache_bundle(record.pk), record, sidecar,
                             has_capture is False))
                present[record.hashkey] = sidecar is not None
        except CacheError:
            raise
        except Exception as error:  # a record without its notebook, an unreadable file
            raise CacheError(f"{source}: {type(error).__name__}: {error}") from error
    out = get_cache(str(target))
    for bundle, record, sidecar, completes in plan:
        out.cache_notebook_bundle(
            CacheBundleIn(bundle.nb, record.uri, artifacts=bundle.artifacts,
                          data=dict(record.data or {})),
            check_validity=False, overwrite=completes)
        (result.completed if completes else result.copied).append(record.uri)
        if sidecar is not None:
            (target / SIDECAR_FOLDER).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(sidecar, target / SIDECAR_FOLDER / sidecar.name,
                            follow_symlinks=False)
    return result
