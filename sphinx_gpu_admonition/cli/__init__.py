"""The ``sphinx-gpu-admonition`` command line: ``check``, ``report``, ``compare``,
``merge``, ``merge-cache`` and ``migrate``, one module each.

Each command builds one plain-data summary (what ``--json`` prints) and renders
it as aligned text (colour only on a terminal) or, where a pull-request comment
is the reader, as GitHub Markdown, with the helpers of :mod:`.output`.  Build data
is read through :func:`..model.files.read_status` and judged once by
:func:`..model.analysis.analyse`, the same code the status page and the build summary
use; the summaries and their Markdown are :mod:`..render`'s (the build's job summary
too); ``check`` measures the machine with :mod:`.bench`.  Every printed line goes
through :func:`.output.emit`: text from a status file never starts a line with ``::``.
:mod:`.parser` declares the arguments; :func:`main` turns every error into one line and
an exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..model.formatting import safe_line
from ..render.github import job_summary as github_summary
from .check import run_check
from .compare import CompareOptions, summarise_compare, summary_sentence
from .output import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    Style,
    UsageError,
    colour_enabled,
    md_code,
    md_text,
    one_line,
    text_table,
    utf8_safe,
)
from .parser import build_parser
from .report import summarise_report


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    utf8_safe(sys.stdout)
    try:
        return args.run(args)
    except UsageError as error:
        sys.stdout.flush()
        print(safe_line(f"{PROG}: error: {one_line(error)}"), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader (``| head``) went away: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: one line, and an exit code no build state uses
        sys.stdout.flush()
        print(safe_line(f"{PROG}: internal error: {type(error).__name__}: {one_line(error)} "
                        "(please report this with the command line and input)"),
              file=sys.stderr)
        return EXIT_INTERNAL


__all__ = ["main", "build_parser", "summarise_report", "summarise_compare", "CompareOptions",
           "summary_sentence", "run_check", "github_summary", "md_code", "md_text",
           "text_table", "Style", "colour_enabled", "PROG", "EXIT_OK", "EXIT_FAILED",
           "EXIT_USAGE", "EXIT_INTERNAL", "UsageError"]
