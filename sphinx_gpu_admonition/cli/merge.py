"""``merge`` and ``merge-cache``: one status file, or one jupyter-cache, made of those
of several jobs (a sharded build); the work is done by :mod:`..merge`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .output import EXIT_OK, PROG, UsageError, one_line, plural, read_report


def cmd_merge(args: argparse.Namespace) -> int:
    from ..merge import merge_reports, write_report

    inputs = [(path, read_report(path)) for path in args.inputs]
    merged, conflicts = merge_reports(inputs)
    for conflict in conflicts:
        print(f"{PROG}: conflict: {one_line(conflict.message())}", file=sys.stderr)
    try:
        write_report(Path(args.output), merged)
    except OSError as error:
        raise UsageError(f"{args.output}: {error.strerror or error}") from error
    sources = merged.build["merged_from"]
    print(f"{args.output}: {plural(len(merged.notebooks), 'notebook')} from "
          + ", ".join(f"{s['source']} ({len(s['notebooks'])})" for s in sources)
          + (f"; {plural(len(conflicts), 'conflict')}" if conflicts else ""))
    return EXIT_OK


def cmd_merge_cache(args: argparse.Namespace) -> int:
    from ..merge import CacheError, merge_caches

    try:
        copied = merge_caches(Path(args.output), [Path(p) for p in args.inputs])
    except CacheError as error:
        raise UsageError(str(error)) from error
    print(f"{args.output}: {plural(len(copied), 'notebook')} copied from "
          f"{plural(len(args.inputs), 'cache')}")
    return EXIT_OK
