"""``merge`` and ``merge-cache``: one status file, or one jupyter-cache, made of those
of several jobs (a sharded build).  Status files are merged by :mod:`..model.merge`;
jupyter-caches here, through jupyter-cache's public API."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from ..model.files import SIDECAR_FOLDER
from .output import EXIT_OK, PROG, UsageError, one_line, plural, read_report, say


def cmd_merge(args: argparse.Namespace) -> int:
    from ..model.merge import merge_reports, write_report

    inputs = [(path, read_report(path)) for path in args.inputs]
    merged, conflicts = merge_reports(inputs)
    for conflict in conflicts:
        say(f"{PROG}: conflict: {one_line(conflict.message())}", sys.stderr)
    try:
        write_report(Path(args.output), merged)
    except OSError as error:
        raise UsageError(f"{args.output}: {error.strerror or error}") from error
    sources = merged.build["merged_from"]
    # a path given on the command line is a label: it never starts the line raw
    say(f"{args.output}: {plural(len(merged.notebooks), 'notebook')} from "
        + ", ".join(f"{s['source']} ({len(s['notebooks'])})" for s in sources)
        + (f"; {plural(len(conflicts), 'conflict')}" if conflicts else ""))
    return EXIT_OK


def cmd_merge_cache(args: argparse.Namespace) -> int:
    try:
        copied = merge_caches(Path(args.output), [Path(p) for p in args.inputs])
    except CacheError as error:
        raise UsageError(str(error)) from error
    say(f"{args.output}: {plural(len(copied), 'notebook')} copied from "
        f"{plural(len(args.inputs), 'cache')}")
    return EXIT_OK


# -- jupyter-caches ---------------------------------------------------------------------------
class CacheError(ValueError):
    """A folder that is not a jupyter-cache."""


def merge_caches(target: Path, sources: list[Path]) -> list[str]:
    """Copy every notebook cached in ``sources`` into the jupyter-cache ``target``
    (created when missing), with the capture data saved beside it.

    Goes through jupyter-cache's API (``get_cache_bundle`` / ``cache_notebook_bundle``),
    which keeps each notebook's hash, outputs, artifacts and ``execution_seconds``:
    a build on ``target`` then hits for all of them.  A notebook already in
    ``target`` (same hash, so the same code) is kept.  Returns the sources of the
    notebooks copied (``uri`` as the cache recorded it).
    """
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    for source in sources:
        if not (source / "global.db").is_file():
            raise CacheError(f"{source}: not a jupyter-cache (no global.db)")
    out = get_cache(str(target))
    present = {record.hashkey for record in out.list_cache_records()}
    copied: list[str] = []
    for source in sources:
        cache = get_cache(str(source))
        for record in cache.list_cache_records():
            if record.hashkey in present:
                continue
            bundle = cache.get_cache_bundle(record.pk)
            out.cache_notebook_bundle(
                CacheBundleIn(bundle.nb, record.uri, artifacts=bundle.artifacts,
                              data=dict(record.data or {})),
                check_validity=False)
            present.add(record.hashkey)
            copied.append(record.uri)
            sidecar = source / SIDECAR_FOLDER / f"{record.hashkey}.json"
            if sidecar.is_file():
                (target / SIDECAR_FOLDER).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(sidecar, target / SIDECAR_FOLDER / sidecar.name)
    return copied
