"""The executable mystmd plugin (``project.plugins: - type: executable``).

mystmd runs the plugin's file with no argument for its :data:`PLUGIN_SPEC`, then
with ``--directive NAME``, ``--role NAME`` or ``--transform NAME``, the data as JSON
on stdin and the answer as JSON on stdout. The runtime roles leave placeholders
(:mod:`.runtime`) that the transforms fill in. Transforms get the page's mdast:
- ``gpu-capture`` (document stage, after the page's execution): the page's record
  (:mod:`.capture`) and the truthful notice;
- ``gpu-status`` (project stage, after every page's document stage): the build's
  ``execution-status.json`` and JUnit file, the ``execution-status`` and
  ``execution-environment`` parts.
A warning of a transform goes to stderr, which mystmd shows with ``--debug``. In
a ``myst build --strict`` it also fails the build, as ``-W`` does on Sphinx: the
transform exits non-zero (measured with mystmd 1.8.3: a transform's non-zero exit
stops any build, strict or not, so it is done only when mystmd runs with
``--strict``, read from the parent's command line; an error in a directive fails
no build at all). A page that ran on a GPU while ``--execute-parallel`` runs
several pages at once with JAX's preallocation on is such a warning.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..model.analysis import analyse
from ..model.device import backend_family
from ..model.findings import findings
from ..model.formatting import format_seconds
from ..model.record import EXECUTED, NotebookRecord, StatusReport
from ..render.junit import FailOn
from ..render.labels import Labels
from ..render.runtime_text import ROLES
from . import build_options, capture, environment, notice, packages, runtime, settings, status

PLUGIN_SPEC: dict[str, Any] = {
    "name": "sphinx-gpu-admonition",
    "directives": [
        {"name": "gpu", "doc": "A notice about GPUs: the page was written for one.",
         "options": {"title": {"type": "string"}, "class": {"type": "string"},
                     "name": {"type": "string"}, "required": {"type": "boolean"}},
         "body": {"type": "myst"}},
        {"name": "execution-status",
         "doc": "The build's execution status: flagged cells, then every notebook."},
        {"name": "execution-environment",
         "doc": "The machine(s) the notebooks ran on, as their kernels reported them.",
         "options": {"packages": {"type": "boolean",
                                  "doc": "Also list the kernel environment's packages."}}},
    ],
    "roles": [{"name": name, "body": {"type": "string"},
               "doc": "How long a page takes to run (this page, or a page's path)"}
              for name in ROLES],
    "transforms": [
        {"name": "gpu-capture", "stage": "document",
         "doc": "The page's execution record, from the in-kernel probe."},
        {"name": "gpu-status", "stage": "project",
         "doc": "execution-status.json and the execution-status page."},
    ],
}


def directive(name: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    if name == "gpu":
        return notice.directive(data, settings.load()[0])
    if name == "execution-status":
        return status.placeholder()
    if name == "execution-environment":
        return environment.placeholder(bool((data.get("options") or {}).get("packages")))
    raise SystemExit(f"unknown directive {name!r}")


class StrictFailure(Exception):
    """Warnings of a ``--strict`` build: the transform must fail it."""


def warn(messages: list[str], arguments: list[str]) -> None:
    for message in messages:
        print(f"sphinx-gpu-admonition: {message}", file=sys.stderr)
    if messages and build_options.strict(arguments):
        raise StrictFailure(messages[0])


def backend_warning(tree: dict[str, Any], record: NotebookRecord,
                    expected: str | None) -> str | None:
    """A page with a ``{gpu}`` notice that ran on another backend than
    ``expected_backend`` (as ``gpu_admonition.backend`` on Sphinx)."""
    if not expected or not notice.notices(tree):
        return None
    actual = record.environment.backend
    if not record.measured and actual is None:
        # a check that cannot be made must not pass silently (strict builds rely on it)
        return (f"{record.docname}: cannot check expected_backend {expected!r}: the kernel's "
                f"backend is unknown ({record.capture_message or 'no capture data'})")
    if actual is not None and backend_family(actual) == backend_family(expected):
        return None
    ran = f"on the {actual!r} backend" if actual else "without initialising a JAX backend"
    return (f"{record.docname}: page with a gpu directive executed {ran}, but "
            f"expected_backend is {expected!r} ({record.environment.device_label})")


def slow_cell_warnings(record: NotebookRecord, options: settings.Settings) -> list[str]:
    """``warn_slow_cells``: a warning per flagged cell of the page (as on Sphinx), so
    that ``--strict`` fails on them."""
    if not options.config.warn_slow_cells or record.provenance != EXECUTED:
        return []
    analysis = analyse(StatusReport(notebooks=[record]), options.thresholds)
    return [f"slow {finding.name.full} ({format_seconds(finding.cell.seconds)}): "
            + "; ".join(f"{flag.rule}: {flag.text}" for flag in finding.flags)
            for finding in findings(analysis) if finding.cell and not finding.is_note]


def transform(name: str, tree: dict[str, Any]) -> dict[str, Any]:
    arguments = build_options.parent_arguments()
    options, problems = settings.load()
    folder = capture.capture_folder()
    warnings = [problem for problem in problems if settings.once(problem, folder)]
    texts = runtime.Texts(options.translate, options.ngettext)
    if name == "gpu-capture":
        record, found = capture.page_record(tree)
        warnings += found
        # the roles naming this page: its record is known now, after it ran
        warnings += runtime.resolve(tree, lambda _target: record, lambda _target: [], texts,
                                    this_page_only=True)
        if record is not None:
            notice.make_truthful(tree, record, options)
            parallel = build_options.preallocation_warning(
                record, build_options.execute_parallel(arguments))
            if parallel and record.provenance == EXECUTED:
                warnings.append(parallel)
            backend = backend_warning(tree, record, options.expected_backend)
            if backend:
                warnings.append(backend)
            warnings += slow_cell_warnings(record, options)
        warn(warnings, arguments)
    elif name == "gpu-status":
        report, analysis = status.build_report(
            capture.build_records(folder),
            execute_parallel=build_options.execute_parallel(arguments),
            thresholds=options.thresholds)
        warnings += environment.fill_placeholders(tree, report, options.translate,
                                                  packages.problems(folder))
        warnings += runtime.resolve(tree, report.by_docname().get, lambda _target: [], texts,
                                    this_page_only=False)
        labels = Labels.load(options.translate, options.ngettext)
        if status.fill_placeholders(tree, report, analysis, labels) or report.notebooks:
            status.write_status_file(report, folder.parent)
            # a flagged cell's case fails where its warning fails the build (as on Sphinx)
            fail_on = FailOn(slow_cells=options.config.warn_slow_cells
                             and build_options.strict(arguments))
            status.write_junit_file(report, analysis, folder.parent, fail_on)
        warn(warnings, arguments)
    return tree


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        json.dump(PLUGIN_SPEC, sys.stdout)
        return
    if len(args) != 2 or args[0] not in ("--directive", "--transform", "--role"):
        raise SystemExit("usage: plugin [--directive NAME | --role NAME | --transform NAME] "
                         "< data.json")
    data = json.load(sys.stdin)
    if args[0] == "--directive":
        json.dump(directive(args[1], data), sys.stdout)
    elif args[0] == "--transform":
        try:
            json.dump(transform(args[1], data), sys.stdout)
        except StrictFailure:
            raise SystemExit(1) from None  # the warnings are on stderr already
    elif args[1] in ROLES:
        json.dump(runtime.role(args[1], data), sys.stdout)
    else:
        raise SystemExit(f"unknown role {args[1]!r}")


if __name__ == "__main__":
    main()
