"""The command line's arguments: one subparser per command, each calling its module's
``cmd_*`` function; usage errors are one line and exit code 2."""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable
from typing import Any

from .._version import __version__
from ..model.formatting import one_line, safe_line
from .check import cmd_check
from .compare import cmd_compare
from .merge import cmd_merge, cmd_merge_cache
from .migrate import cmd_migrate
from .output import DEFAULT_THRESHOLDS, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, PROG
from .report import cmd_report

EXIT_CODES = f"""\
exit codes:
  {EXIT_OK}  ok
  {EXIT_FAILED}  check: JAX is installed but cannot run (import fails, no usable backend),
     a required backend is not usable, or the test computation failed;
     report: the build has failed notebooks (error, timeout, dead kernel) or
     stopped before it finished;
     compare: --fail-above is given and a notebook or cell regressed past it
     (beyond the machine factor)
  {EXIT_USAGE}  bad input or usage: missing file, not JSON, unsupported schema version,
     a field of the wrong type or out of range, build folder without
     execution-status.json, unknown option
  {EXIT_INTERNAL}  a bug in this program (one line on stderr; please report it)
"""


class _Parser(argparse.ArgumentParser):
    """argparse, with ``sphinx-gpu-admonition: error:`` usage errors and exit code 2."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.print_usage(sys.stderr)
        # the offending value is echoed: one line, never a workflow command
        self.exit(EXIT_USAGE, safe_line(f"{PROG}: error: {one_line(message)}") + "\n")


def _number_at_least(cast: Callable[[str], Any], minimum: float) -> Callable[[str], Any]:
    """An argparse type: ``cast(text)``, refused below ``minimum``."""
    kind = "an integer" if cast is int else "a number"

    def parse(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not value >= minimum:
            raise argparse.ArgumentTypeError(f"must be {kind} >= {minimum:g}: {text!r}")
        return value

    return parse


_positive_int = _number_at_least(int, 1)
_non_negative_int = _number_at_least(int, 0)
_non_negative_float = _number_at_least(float, 0)


def _between(low: float, high: float | None, low_included: bool = False
             ) -> Callable[[str], float]:
    """An argparse type: a number above ``low`` (or at it) and at most ``high``."""
    at_least = _non_negative_float

    def parse(text: str) -> float:
        value = at_least(text)
        if not (value >= low if low_included else value > low) or (
                high is not None and value > high):
            span = f"> {low:g}" + (f" and <= {high:g}" if high is not None else "")
            raise argparse.ArgumentTypeError(f"must be a number {span}: {text!r}")
        return value

    return parse


_share = _between(0, 1)
_ratio = _between(1, None)

#: every threshold of :class:`..model.analysis.Thresholds` as an option of ``report`` and
#: ``compare``: (flag, Thresholds field, type, metavar, what it does)
THRESHOLD_OPTIONS = (
    ("--slow-cell-seconds", "slow_cell_seconds", _non_negative_float, "SECONDS",
     "flag cells at least this slow"),
    ("--slow-cell-share", "slow_cell_share", _share, "SHARE",
     "flag cells taking at least this share of their notebook's cell time"),
    ("--min-seconds", "slow_cell_min_seconds", _non_negative_float, "SECONDS",
     "never flag cells faster than this by share, regression or compilation"),
    ("--compile-share", "compile_share", _share, "SHARE",
     "a flagged cell with at least this share of JAX compilation gets a compile hint"),
    ("--recompile-threshold", "recompile_threshold", _positive_int, "N",
     "a function compiled at least N times in one cell gets a recompile hint"),
    ("--regression-ratio", "regression_ratio", _ratio, "RATIO",
     "with a baseline, a cell or notebook this many times slower beyond the machine "
     "factor is a regression"),
    ("--cache-compile-share", "cache_compile_share", _share, "SHARE",
     "a CI build compiling at least this share of its cells' time without a persistent "
     "compilation cache gets the compilation_cache finding"),
    ("--cache-compile-seconds", "cache_compile_seconds", _non_negative_float, "SECONDS",
     "... and at least this long"),
)


def add_threshold_options(command: argparse.ArgumentParser,
                          skip: tuple[str, ...] = ()) -> None:
    """The thresholds: each one's default is the value the build's status file stores
    (how the build judged it), else the build's default."""
    group = command.add_argument_group(
        "thresholds", "Each defaults to the value the status file stores (the build's own, "
        "so that the command flags what the build flagged), else to the option's default.")
    for flag, field, kind, metavar, what in THRESHOLD_OPTIONS:
        if field in skip:
            continue
        default = getattr(DEFAULT_THRESHOLDS, field)
        group.add_argument(flag, dest=field, type=kind, metavar=metavar, default=None,
                           help=f"{what} (build default {default:g})")


def _wrap(text: str) -> str:
    return textwrap.fill(" ".join(text.split()), width=79)


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog=PROG, formatter_class=formatter,
        description=_wrap(
            "Check a machine for JAX notebooks, and read the execution-status.json "
            "that sphinx-gpu-admonition writes into a build's output folder."),
        epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    common = _Parser(add_help=False)
    common.add_argument("--no-color", action="store_true",
                        help="no ANSI colour (colour is only used on a terminal, and never "
                             "when NO_COLOR is set)")

    check = commands.add_parser(
        "check", parents=[common], formatter_class=formatter, epilog=EXIT_CODES,
        help="report Python, JAX, backends and devices, and test-run a jitted computation",
        description=_wrap(
            "Report Python, JAX / jaxlib and plugin versions, the default backend and "
            "all devices, the NVIDIA driver and GPUs, then compile and run a small "
            "jitted computation on every device (compile and run time measured "
            "separately, with block_until_ready).  Works without JAX installed."))
    require = check.add_mutually_exclusive_group()
    require.add_argument("--require-backend", choices=("cpu", "gpu", "tpu"),
                         help="exit 1, with the reasons that can be detected, unless this "
                              "backend is usable")
    require.add_argument("--require-gpu", action="store_true",
                         help="same as --require-backend gpu")
    check.add_argument("--bench", action="store_true",
                       help="add a short benchmark comparable between runners: pure-Python "
                            "loop, NumPy and JAX matmul and element-wise work (JAX first "
                            "call and compiled call reported separately); ~10 s on a laptop")
    check.add_argument("--bench-size", choices=("small", "normal"), default="normal",
                       help="problem size of --bench (small: ~1 s, for tests; default "
                            "%(default)s)")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(run=cmd_check)

    report = commands.add_parser(
        "report", parents=[common], formatter_class=formatter, epilog=EXIT_CODES,
        help="summarise a build's execution status",
        description=_wrap(
            "Summarise one build: totals, slowest notebooks and cells, flagged cells "
            "with reasons, failures and the machines used.  Exits 1 when the build "
            "has failed notebooks (unless --exit-zero)."))
    report.add_argument("build", metavar="BUILD_DIR_OR_JSON",
                        help="execution-status.json, or a build output folder holding it")
    report.add_argument("--top", type=_positive_int, default=5, metavar="N",
                        help="rows of the slowest notebooks and cells (default %(default)s)")
    report.add_argument("--baseline", metavar="BASELINE_JSON",
                        help="also flag cells slower than in this earlier build's status "
                             "file beyond the machine factor (as gpu_status_baseline does; "
                             "default: the baseline the build compared with, where that "
                             "file still is, unchanged)")
    report.add_argument("--no-baseline", action="store_true",
                        help="compare with no baseline, not even the build's")
    report.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when the build has failed notebooks")
    output = report.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--markdown", action="store_true",
                        help="print GitHub Markdown (for a pull-request comment or "
                             "$GITHUB_STEP_SUMMARY)")
    add_github_options(report)
    add_threshold_options(report)
    report.set_defaults(run=cmd_report)

    compare = commands.add_parser(
        "compare", parents=[common], formatter_class=formatter, epilog=EXIT_CODES,
        help="compare two builds (A: baseline, B: new) per notebook and cell",
        description=_wrap(
            "Compare two builds per notebook and per cell (A time, B time, B/A, "
            "backend / device of each), largest change first; list new and gone "
            "notebooks; show both builds' machines side by side."))
    compare.add_argument("baseline", metavar="A",
                         help="the baseline: execution-status.json or a build folder")
    compare.add_argument("new", metavar="B",
                         help="the new build: execution-status.json or a build folder")
    compare.add_argument("--fail-above", type=_non_negative_float, metavar="RATIO",
                         help="exit 1 when a notebook or cell of B took at least RATIO times "
                              "its time in A (and at least --min-seconds); the regression "
                              "ratio of the findings too")
    compare.add_argument("--top", type=_non_negative_int, default=15, metavar="N",
                         help="rows of the cell table (0: all; default %(default)s)")
    compare.add_argument("--label-a", metavar="TEXT",
                         help="name of A in the summary (default: from its backend, e.g. "
                              "'CPU build')")
    compare.add_argument("--label-b", metavar="TEXT", help="name of B in the summary")
    output = compare.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--markdown", action="store_true",
                        help="print GitHub Markdown (for a pull-request comment)")
    add_github_options(compare)
    add_threshold_options(compare)
    compare.set_defaults(run=cmd_compare)

    merge = commands.add_parser(
        "merge", formatter_class=formatter, epilog=EXIT_CODES,
        help="combine the status files of several jobs (a sharded build) into one",
        description=_wrap(
            "Write one execution-status.json made of several: each notebook from the "
            "job that executed it (executed, then cache, then an earlier build, then not "
            "executed).  A notebook executed by two jobs is a conflict, reported on "
            "stderr: a failure wins, then the latest execution, then the earlier input.  "
            "The result fails when any input failed; each notebook keeps its machine."))
    merge.add_argument("output", metavar="OUT_JSON", help="the merged file to write")
    merge.add_argument("inputs", metavar="IN", nargs="+",
                       help="execution-status.json files or build folders holding one")
    merge.set_defaults(run=cmd_merge)

    merge_cache = commands.add_parser(
        "merge-cache", formatter_class=formatter, epilog=EXIT_CODES,
        help="copy the notebooks of several jupyter-caches into one",
        description=_wrap(
            "Copy every notebook of the IN jupyter-caches (with the capture data saved "
            "beside them) into the jupyter-cache OUT, created when missing, so that one "
            "build renders the notebooks all shards executed from the cache."))
    merge_cache.add_argument("output", metavar="OUT_CACHE", help="the jupyter-cache folder")
    merge_cache.add_argument("inputs", metavar="IN_CACHE", nargs="+",
                             help="jupyter-cache folders (nb_execution_cache_path)")
    merge_cache.set_defaults(run=cmd_merge_cache)

    migrate = commands.add_parser(
        "migrate", formatter_class=formatter, epilog=EXIT_CODES,
        help="rewrite a Jupyter Book's GPU notice includes and {nb-exec-table} for this "
             "extension",
        description=_wrap(
            "Rewrite {include} _admonition/gpu.md (MyST or rST) to a {gpu} directive and "
            "{nb-exec-table} to {execution-status} in BOOK's sources, and add "
            "sphinx_gpu_admonition to _config.yml's sphinx: extra_extensions.  A mystmd "
            "(Jupyter Book 2) book, with myst.yml: the plugin added to project: plugins "
            "(its file gpu_admonition.mjs written) and the status page's machine cells "
            "(!nvidia-smi, jax.devices()) replaced by {execution-environment}.  Reports "
            "what changed per file; never touches files outside BOOK or in _build."))
    migrate.add_argument("book", metavar="BOOK",
                         help="the book's folder (with _config.yml or myst.yml)")
    migrate.add_argument("--dry-run", action="store_true",
                         help="print unified diffs of the changes and change nothing")
    migrate.add_argument("--force", action="store_true",
                         help="mystmd books: replace a gpu_admonition.mjs that is not the "
                              "plugin file this package writes (a link or a file of your "
                              "own; refused otherwise)")
    migrate.set_defaults(run=cmd_migrate)
    return parser


def add_github_options(command: argparse.ArgumentParser) -> None:
    group = command.add_mutually_exclusive_group()
    group.add_argument("--github", action="store_true",
                       help="GitHub Actions output: annotations on stderr, a job summary in "
                            "$GITHUB_STEP_SUMMARY, step outputs in $GITHUB_OUTPUT (default "
                            "when GITHUB_ACTIONS is 'true')")
    group.add_argument("--no-github", action="store_true",
                       help="no GitHub Actions output, even when GITHUB_ACTIONS is 'true'")
