"""``migrate``: rewrite a Jupyter Book's GPU notice includes and ``{nb-exec-table}``
for this extension; the work is done by :mod:`.migrate_rules`, and for a mystmd
(Jupyter Book 2) book, with ``myst.yml``, by :mod:`.migrate_mystmd`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .output import EXIT_OK, UsageError, emit


def cmd_migrate(args: argparse.Namespace) -> int:
    from . import migrate_mystmd
    from .migrate_rules import MigrationError, migrate, report_lines

    book = Path(args.book)
    if not book.is_dir():
        raise UsageError(f"{book}: not a folder")
    # a mystmd (Jupyter Book 2) book: its myst.yml, plugin file and status page too
    try:
        if migrate_mystmd.is_mystmd_book(book):
            result = migrate_mystmd.migrate(book, dry_run=args.dry_run, force=args.force)
        else:
            result = migrate(book, dry_run=args.dry_run)
    except MigrationError as error:
        raise UsageError(str(error)) from error
    except OSError as error:  # a page that cannot be read: named, nothing written yet
        raise UsageError(f"{error.filename or book}: {error.strerror or error} "
                         "(nothing was changed)") from error
    # a diff holds the book's own lines: each is printed as a line of its own, so
    # each is checked (one of them may start with ``::``)
    emit([line for text in report_lines(result, book, args.dry_run)
          for line in text.rstrip("\n").split("\n")])
    return EXIT_OK
