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
A transform's warnings are shown in mystmd's normal log, kept in the status
file and fail a ``myst build --strict`` (:mod:`.warnings`, which says how: mystmd
gives a plugin no warning channel of its own). A page that ran on a GPU while
``--execute-parallel`` runs several pages at once with JAX's preallocation on is
such a warning.

Every call is a new process (mystmd runs the file once per call), so each imports
only what it answers with: the modules a call needs are imported in the function
that makes it (the figures: docs/performance.md, "the mystmd plugin's calls").
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from ..model.formatting import one_line, safe_line
from ..render.runtime_text import ROLES

if TYPE_CHECKING:
    from ..model.build_warnings import BuildWarning
    from ..model.record import NotebookRecord
    from . import settings

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
        from . import notice, settings

        return notice.directive(data, settings.load()[0])
    if name == "execution-status":
        from . import status

        return status.placeholder()
    if name == "execution-environment":
        from . import environment

        return environment.placeholder(bool((data.get("options") or {}).get("packages")))
    raise SystemExit(safe_line(f"unknown directive {one_line(repr(name))}"))


def _notice_line(tree: dict[str, Any]) -> int | None:
    from . import notice

    found = notice.notices(tree)
    line = (found[0].get("position") or {}).get("start", {}).get("line") if found else None
    return line if isinstance(line, int) else None


def backend_warning(tree: dict[str, Any], record: NotebookRecord,
                    expected: str | None) -> BuildWarning | None:
    """A page with a ``{gpu}`` notice that ran on another backend than
    ``expected_backend`` (:func:`..model.device.backend_mismatch`, Sphinx's rule)."""
    from ..model.device import backend_mismatch
    from . import notice, warnings

    if not notice.notices(tree):
        return None
    message = backend_mismatch(record, expected, "expected_backend")
    return (warnings.warning("backend", message, record.source, _notice_line(tree))
            if message else None)


def slow_cell_warnings(record: NotebookRecord, options: settings.Settings
                       ) -> list[BuildWarning]:
    """``warn_slow_cells``: a warning per flagged cell of the page (as on Sphinx), so
    that ``--strict`` fails on them."""
    from ..model.record import EXECUTED

    if not options.config.warn_slow_cells or record.provenance != EXECUTED:
        return []
    from ..model.analysis import analyse
    from ..model.findings import findings
    from ..model.record import StatusReport
    from ..render.finding_text import slow_cell_warning
    from . import warnings

    analysis = analyse(StatusReport(notebooks=[record]), options.thresholds)
    return [warnings.warning("slow_cell", slow_cell_warning(finding), record.source,
                             finding.cell.line)
            for finding in findings(analysis) if finding.cell and not finding.is_note]


def _page_warnings(subtype: str, messages: list[str], record: NotebookRecord | None
                   ) -> list[BuildWarning]:
    from . import warnings

    source = record.source if record is not None else None
    return [warnings.warning(subtype, message, source) for message in messages]


def transform(name: str, tree: dict[str, Any]) -> dict[str, Any]:
    from . import build_options, capture, runtime, settings, warnings

    arguments = build_options.parent_arguments()
    options, problems = settings.load()
    folder = capture.capture_folder()
    found = [warnings.warning("config", problem, settings.config_file())
             for problem in problems if settings.once(problem, folder)]
    texts = runtime.Texts(options.translate, options.ngettext)
    if name == "gpu-capture":
        from ..model.record import EXECUTED
        from . import notice

        record, captured = capture.page_record(tree, since=build_options.build_started())
        found += _page_warnings("capture", captured, record)
        # the roles naming this page: its record is known now, after it ran
        found += _page_warnings("runtime", runtime.resolve(
            tree, lambda _target: record, lambda _target: [], texts, this_page_only=True),
            record)
        if record is not None:
            notice.make_truthful(tree, record, options)
            parallel = build_options.preallocation_warning(
                record, build_options.execute_parallel(arguments))
            if parallel and record.provenance == EXECUTED:
                found.append(warnings.warning("preallocation", parallel, record.source))
            backend = backend_warning(tree, record, options.expected_backend)
            if backend:
                found.append(backend)
            found += slow_cell_warnings(record, options)
        warnings.emit(found, arguments, folder, tree, project_stage=False)
    elif name == "gpu-status":
        from ..render.junit import FailOn
        from ..render.labels import Labels
        from . import environment, packages, status

        # this build's kernels that no page took: pages that ran but have no record
        found += _page_warnings("capture", capture.leftover_kernels(
            folder, since=build_options.build_started())[1], None)
        report, analysis = status.build_report(
            capture.build_records(folder),
            execute_parallel=build_options.execute_parallel(arguments),
            thresholds=options.thresholds, rules=options.rules)
        found += _page_warnings("capture", environment.fill_placeholders(
            tree, report, options.translate,
            packages.problems(folder, options.config.publish_interpreter_path),
            options.config.publish_interpreter_path), None)
        found += _page_warnings("runtime", runtime.resolve(
            tree, report.by_docname().get, lambda _target: [], texts, this_page_only=False),
            None)
        # kept before the status file is written, which lists every warning so far
        warnings.keep(folder, found)
        labels = Labels.load(options.translate, options.ngettext)
        if status.fill_placeholders(tree, report, analysis, labels) or report.notebooks:
            report.build["warnings"] = [item.to_dict() for item in warnings.kept(folder)]
            # a flagged cell's case fails where its warning fails the build (as on Sphinx)
            fail_on = FailOn(slow_cells=options.config.warn_slow_cells
                             and build_options.strict(arguments))
            unwritten = _page_warnings("output", status.write_reports(
                report, analysis, folder.parent, fail_on,
                options.config.publish_interpreter_path), None)
            warnings.keep(folder, unwritten)
            found += unwritten
        warnings.emit(found, arguments, folder, tree, project_stage=True, kept=True)
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
    from . import runtime, warnings

    if args[0] == "--directive":
        json.dump(directive(args[1], data), sys.stdout)
    elif args[0] == "--transform":
        try:
            json.dump(transform(args[1], data), sys.stdout)
        except warnings.StrictFailure:
            raise SystemExit(1) from None  # the warnings are on stderr already
    elif args[1] in ROLES:
        json.dump(runtime.role(args[1], data), sys.stdout)
    else:
        raise SystemExit(safe_line(f"unknown role {one_line(repr(args[1]))}"))


if __name__ == "__main__":
    main()
