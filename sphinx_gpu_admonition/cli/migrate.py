"""``migrate``: rewrite a Jupyter Book's GPU notice includes and ``{nb-exec-table}``
for this extension; the work is done by :mod:`..migrate`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .output import EXIT_OK, UsageError, emit


def cmd_migrate(args: argparse.Namespace) -> int:
    from .migrate_rules import migrate, report_lines

    book = Path(args.book)
    if not book.is_dir():
        raise UsageError(f"{book}: not a folder")
    emit(report_lines(migrate(book, dry_run=args.dry_run), book, args.dry_run))
    return EXIT_OK
