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

How mystmd reaches it: ``gpu_admonition.mjs`` (:mod:`.plugin_file`, from the
template ``plugin.mjs``), a JavaScript plugin mystmd imports into its own process,
sends every call, directives and roles too, to one process kept for the build
(:func:`serve`, ``--serve``; mystmd wants a directive's or a role's answer at once, so
the file waits on a worker thread that talks to the process); a directive or a role
runs as a process of its own (:func:`main` with ``--directive NAME`` / ``--role
NAME``) only when that process is gone. The executable plugin
``gpu_admonition.py`` (a process for every call, also for the transforms) still works
for a book that names it. Both ways answer with :func:`call`. A process may be a
single call's, so each imports only what it answers with: the modules a call needs
are imported in the function that makes it (the figures: docs/performance.md, "the
mystmd plugin's calls").
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from ..model.formatting import one_line, safe_line
from ..model.page_text import CLAIM_ROLES
from ..render.runtime_text import ROLES

if TYPE_CHECKING:
    from ..model.build_warnings import BuildWarning
    from ..model.record import NotebookRecord

PLUGIN_SPEC: dict[str, Any] = {
    "name": "sphinx-gpu-admonition",
    "directives": [
        {"name": "gpu", "doc": "A notice about GPUs: the page was written for one.",
         "options": {"title": {"type": "string"}, "class": {"type": "string"},
                     "name": {"type": "string"}, "required": {"type": "boolean"},
                     "runtime": {"type": "string",
                                 "doc": "Say how long the page runs (no value, on or off)."}},
         "body": {"type": "myst"}},
        {"name": "execution-status",
         "doc": "The build's execution status: flagged cells, then every notebook.",
         "options": {
             "sort": {"type": "string", "doc": "The notebooks' order: time or name."},
             "min-seconds": {"type": "string",
                             "doc": "Leave out notebooks faster than this (seconds)."},
             "cells": {"type": "string", "doc": "Each notebook's cells (yes or no)."},
             "columns": {"type": "string", "doc": "The table's columns, in order."}}},
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
                for name in CLAIM_ROLES)],
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

        return status.placeholder(data)
    if name == "execution-environment":
        from . import environment

        return environment.placeholder(bool((data.get("options") or {}).get("packages")))
    raise CallFailed(safe_line(f"unknown directive {one_line(repr(name))}"))


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


def _page_warnings(subtype: str, messages: list[str], record: NotebookRecord | None
                   ) -> list[BuildWarning]:
    from . import warnings

    source = record.source if record is not None else None
    return [warnings.warning(subtype, message, source) for message in messages]


def transform(name: str, tree: dict[str, Any]) -> dict[str, Any]:
    from pathlib import Path

    from . import build_options, capture, page_links, runtime, settings, warnings

    arguments = build_options.parent_arguments()
    options, problems = settings.load()
    folder = capture.capture_folder()
    found = [warnings.warning("config", problem, settings.config_file())
             for problem in problems if settings.once(problem, folder)]
    texts = runtime.Texts(options.translate, options.ngettext)
    # other builds' status files (runtime_sources), for {runtime-all} and the notice
    builds, unread = runtime.other_builds(options, folder)
    found += _page_warnings("runtime", unread, None)
    if name == "gpu-capture":
        from ..model.record import EXECUTED
        from . import badges, claims, notice, status
        from .cells import executable_nodes

        record, captured = capture.page_record(tree, since=build_options.build_started())
        found += _page_warnings("capture", captured, record)
        held = warnings.adopt(tree, record.source if record is not None else None, folder)
        # the roles naming this page: its record is known now, after it ran
        found += _page_warnings("runtime", runtime.resolve(
            tree, lambda _target: record,
            lambda _target: runtime.others(builds, record.docname) if record else [],
            texts, this_page_only=True), record)
        # the page's timing roles and text for the claims (its docname into its roles)
        found += _page_warnings("output", claims.read_page(
            tree, record, any(node.kind == "block" for node in executable_nodes(tree)),
            folder, Path.cwd()), record)
        found += claims.tag_warnings(tree, record, Path.cwd())
        if status.has_placeholder(tree):
            page_links.hold(tree)  # for mystmd to resolve: the status page's links
        if record is not None:
            capture.mark_page(tree, record)
            badges.anchor_cells(tree, record)
            target = page_links.status_page(folder) if options.config.cell_badges else None
            if target is not None:
                page_links.hold(tree, [target])  # where the page's badges link to
            notice.make_truthful(tree, record, options)
            parallel = build_options.preallocation_warning(
                record, build_options.execute_parallel(arguments))
            if parallel and record.provenance == EXECUTED:
                found.append(warnings.warning("preallocation", parallel, record.source))
            backend = backend_warning(tree, record, options.expected_backend)
            if backend:
                found.append(backend)
        warnings.emit(found, arguments, folder, tree, project_stage=False, held=held)
    elif name == "gpu-status":
        from ..render.junit import fail_on
        from ..render.labels import Labels
        from . import badges, claims, environment, packages, project, status

        # this build's kernels that no page took: pages that ran but have no record
        found += _page_warnings("capture", capture.leftover_kernels(
            folder, since=build_options.build_started())[1], None)
        build = project.project_build(options, folder,
                                      build_options.execute_parallel(arguments),
                                      others=runtime.named_builds(options, builds))
        report, analysis = build.report, build.analysis
        found += claims.resolve(tree, build.claims, build.pages, options.translate)
        # the analysis's warnings of every page for the status file, this page's shown
        page = capture.marked_page(tree)
        found += build.warnings + build.of_page(page)
        labels = Labels.load(options.translate, options.ngettext)
        links = page_links.take(tree)  # the pages mystmd linked for this page
        result = next((r for r in analysis.notebooks if r.notebook.docname == page), None)
        if options.config.cell_badges and result is not None:
            target = page_links.status_page(folder)
            badges.add_badges(tree, result, labels,
                              links.get(page_links.docname(target)) if target else None)
        found += _page_warnings("capture", environment.fill_placeholders(
            tree, report, options.translate,
            packages.problems(folder, options.config.publish_interpreter_path),
            options.config.publish_interpreter_path), None)
        found += _page_warnings("runtime", runtime.resolve(
            tree, report.by_docname().get, lambda target: runtime.others(builds, target),
            texts, this_page_only=False), None)
        # kept before the status file is written, which lists every warning so far
        warnings.keep(folder, found + [item for _page, item in build.page_warnings])
        if status.fill_placeholders(tree, report, analysis, labels, links) or report.notebooks:
            report.build["warnings"] = [item.to_dict() for item in warnings.kept(folder)]
            # a flagged cell's case fails where its warning fails the build (as on Sphinx)
            failing = fail_on(options.config.warn_slow_cells, options.config.warn_regressions,
                              build_options.strict(arguments))
            unwritten = _page_warnings("output", status.write_reports(
                report, analysis, folder.parent, failing,
                options.config.publish_interpreter_path), None)
            warnings.keep(folder, unwritten)
            found += unwritten
        warnings.emit(found, arguments, folder, tree, project_stage=True, kept=True)
    return tree


#: what the server says first (:func:`serve`): the protocol's name and version
SERVER_PROTOCOL = "sphinx-gpu-admonition-plugin/1"
KINDS = ("directive", "role", "transform")


def spec_digest(spec: dict[str, Any] | None = None) -> str:
    """A digest of :data:`PLUGIN_SPEC`: ``gpu_admonition.mjs`` keeps the one it was written
    with, and warns when the server's differs (``init`` was not run again)."""
    import hashlib

    text = json.dumps(PLUGIN_SPEC if spec is None else spec, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class CallFailed(Exception):
    """A call that must fail the build (its reason: one line)."""


def call(kind: str, name: str, data: Any) -> Any:
    """What a call answers (the one implementation of both ways the plugin is run):
    :class:`.warnings.StrictFailure` for a ``--strict`` build's warnings,
    :class:`CallFailed` for a call that cannot be made."""
    if kind == "directive":
        return directive(name, data)
    if kind == "transform":
        return transform(name, data)
    if kind == "role" and name in ROLES:
        from . import runtime

        return runtime.role(name, data)
    if kind == "role" and name in CLAIM_ROLES:
        from . import claims

        return claims.role(name, data)
    raise CallFailed(safe_line(f"unknown {one_line(kind)} {one_line(repr(name))}"))


def _answer(line: bytes | str, strict_failure: type[Exception]) -> str:
    """The reply to one request line (:func:`serve`), as a line of JSON."""
    import contextlib
    import io
    import traceback

    ident = None
    captured = io.StringIO()
    try:
        request = json.loads(line)
        ident = request.get("id") if isinstance(request, dict) else None
        if not isinstance(request, dict) or request.get("kind") not in KINDS \
                or not isinstance(request.get("name"), str):
            raise CallFailed("not a request: {id, kind, name, data} expected")
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            result = call(request["kind"], request["name"], request.get("data"))
        return json.dumps({"id": ident, "result": result, "stderr": captured.getvalue()})
    except strict_failure as failure:
        reply = {"id": ident, "error": one_line(str(failure)), "strict": True}
    except (CallFailed, SystemExit, ValueError) as failure:  # ValueError: not JSON
        reply = {"id": ident, "error": one_line(str(failure) or type(failure).__name__)}
    except Exception as failure:  # noqa: BLE001 - the build fails with it, told why
        captured.write(traceback.format_exc())
        reply = {"id": ident, "error": safe_line(one_line(
            f"{type(failure).__name__}: {failure}"))}
    reply["stderr"] = captured.getvalue()
    return json.dumps(reply)


def serve(requests: Any = None, replies: Any = None) -> int:
    """Answer calls until ``requests`` ends, one at a time: a request is a line of JSON
    ``{"id", "kind", "name", "data"}``, its reply a line ``{"id", "result"}`` or
    ``{"id", "error", "strict"}`` (``strict``: the warnings of a ``--strict`` build),
    each with the call's ``stderr`` (what the one-shot call writes to its stderr). The
    first line says :data:`SERVER_PROTOCOL`, the package's version and
    :func:`spec_digest`. Nothing else reaches the replies' stream: the calls' standard
    output and error are the call's ``stderr`` (a call's ``print``) or, below Python,
    the process's standard error."""
    import os
    import signal

    from .._version import __version__
    from . import warnings

    if replies is None:  # the replies keep fd 1; fd 1 becomes the process's stderr
        replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="ascii")
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        # Ctrl-C stops myst and this process with it, without a traceback
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    if requests is None:
        requests = sys.stdin.buffer
    try:
        replies.write(json.dumps({"hello": SERVER_PROTOCOL, "version": __version__,
                                  "spec": spec_digest(), "pid": os.getpid()}) + "\n")
        replies.flush()
        for line in requests:
            if line.strip():
                replies.write(_answer(line, warnings.StrictFailure) + "\n")  # ASCII JSON
                replies.flush()
    except BrokenPipeError:  # mystmd is gone: nobody reads the replies
        return 1
    return 0


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        json.dump(PLUGIN_SPEC, sys.stdout)
        return
    if args == ["--serve"]:
        raise SystemExit(serve())
    if len(args) != 2 or args[0] not in ("--directive", "--transform", "--role"):
        raise SystemExit("usage: plugin [--directive NAME | --role NAME | --transform NAME "
                         "| --serve] < data.json")
    data = json.load(sys.stdin)
    from . import warnings

    try:
        json.dump(call(args[0].removeprefix("--"), args[1], data), sys.stdout)
    except warnings.StrictFailure:
        raise SystemExit(1) from None  # the warnings are on stderr already
    except CallFailed as failed:
        raise SystemExit(str(failed)) from None


if __name__ == "__main__":
    main()
