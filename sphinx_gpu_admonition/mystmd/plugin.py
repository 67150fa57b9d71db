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
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..model.analysis import analyse
from ..model.build_warnings import BuildWarning
from ..model.device import backend_mismatch
from ..model.findings import findings
from ..model.formatting import one_line, safe_line
from ..model.record import EXECUTED, NotebookRecord, StatusReport
from ..render.finding_text import slow_cell_warning
from ..render.junit import FailOn
from ..render.labels import Labels
from ..render.runtime_text import ROLES
from . import (
    build_options,
    capture,
    claims,
    environment,
    notice,
    packages,
    runtime,
    settings,
    status,
    warnings,
)
from .cells import executable_nodes

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
    "roles": [*({"name": name, "body": {"type": "string"},
                 "doc": "How long a page takes to run (this page, or a page's path)"}
                for name in ROLES),
              *({"name": name, "body": {"type": "string"},
                 "doc": "A named timing, the ratio of two, or a timing claim"}
                for name in claims.ROLES)],
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
    raise SystemExit(safe_line(f"unknown directive {one_line(repr(name))}"))


def _notice_line(tree: dict[str, Any]) -> int | None:
    found = notice.notices(tree)
    line = (found[0].get("position") or {}).get("start", {}).get("line") if found else None
    return line if isinstance(line, int) else None


def backend_warning(tree: dict[str, Any], record: NotebookRecord,
                    expected: str | None) -> BuildWarning | None:
    """A page with a ``{gpu}`` notice that ran on another backend than
    ``expected_backend`` (:func:`..model.device.backend_mismatch`, Sphinx's rule)."""
    if not notice.notices(tree):
        return None
    message = backend_mismatch(record, expected, "expected_backend")
    return (warnings.warning("backend", message, record.source, _notice_line(tree))
            if message else None)


def slow_cell_warnings(record: NotebookRecord, options: settings.Settings
                       ) -> list[BuildWarning]:
    """``warn_slow_cells``: a warning per flagged cell of the page (as on Sphinx), so
    that ``--strict`` fails on them."""
    if not options.config.warn_slow_cells or record.provenance != EXECUTED:
        return []
    analysis = analyse(StatusReport(notebooks=[record]), options.thresholds)
    return [warnings.warning("slow_cell", slow_cell_warning(finding), record.source,
                             finding.cell.line)
            for finding in findings(analysis) if finding.cell and not finding.is_note]


def _page_warnings(subtype: str, messages: list[str], record: NotebookRecord | None
                   ) -> list[BuildWarning]:
    source = record.source if record is not None else None
    return [warnings.warning(subtype, message, source) for message in messages]


def transform(name: str, tree: dict[str, Any]) -> dict[str, Any]:
    arguments = build_options.parent_arguments()
    options, problems = settings.load()
    folder = capture.capture_folder()
    found = [warnings.warning("config", problem, settings.config_file())
             for problem in problems if settings.once(problem, folder)]
    texts = runtime.Texts(options.translate, options.ngettext)
    if name == "gpu-capture":
        record, captured = capture.page_record(tree, since=build_options.build_started())
        found += _page_warnings("capture", captured, record)
        # the roles naming this page: its record is known now, after it ran
        found += _page_warnings("runtime", runtime.resolve(
            tree, lambda _target: record, lambda _target: [], texts, this_page_only=True),
            record)
        # the page's timing roles and text for the claims (its docname into its roles)
        found += _page_warnings("output", claims.read_page(
            tree, record, any(node.kind == "block" for node in executable_nodes(tree)),
            folder, Path.cwd()), record)
        found += claims.tag_warnings(tree, record, Path.cwd())
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
        # this build's kernels that no page took: pages that ran but have no record
        found += _page_warnings("capture", capture.leftover_kernels(
            folder, since=build_options.build_started())[1], None)
        records = capture.build_records(folder)
        pages = claims.saved_pages(folder, Path.cwd(), build_options.build_started())
        others, unread = claims.other_builds(options.config.runtime_sources, Path.cwd())
        found += [warnings.warning("runtime", problem, settings.config_file())
                  for problem in unread if settings.once(problem, folder)]
        checked = claims.check_book(pages, records, others, options.claim_rules, Path.cwd())
        found += claims.resolve(tree, checked, pages, options.translate)
        report, analysis = status.build_report(
            records, execute_parallel=build_options.execute_parallel(arguments),
            thresholds=options.thresholds, rules=options.rules, claims=checked.claims,
            statements=checked.statements)
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
    if args[0] == "--directive":
        json.dump(directive(args[1], data), sys.stdout)
    elif args[0] == "--transform":
        try:
            json.dump(transform(args[1], data), sys.stdout)
        except warnings.StrictFailure:
            raise SystemExit(1) from None  # the warnings are on stderr already
    elif args[1] in ROLES:
        json.dump(runtime.role(args[1], data), sys.stdout)
    elif args[1] in claims.ROLES:
        json.dump(claims.role(args[1], data), sys.stdout)
    else:
        raise SystemExit(safe_line(f"unknown role {one_line(repr(args[1]))}"))


if __name__ == "__main__":
    main()
