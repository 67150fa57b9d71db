"""The executable mystmd plugin (``project.plugins: - type: executable``).

mystmd runs the plugin's file with no argument for its :data:`PLUGIN_SPEC`, then
with ``--directive NAME``, ``--role NAME`` or ``--transform NAME``, the data as JSON
on stdin and the answer as JSON on stdout. Transforms get the page's mdast:
- ``gpu-capture`` (document stage, after the page's execution): the page's record
  (:mod:`.capture`) and the truthful notice;
- ``gpu-status`` (project stage, after every page's document stage): the build's
  ``execution-status.json`` and the ``execution-status`` page.
A warning goes to stderr (mystmd shows it with ``--debug``); a problem that must
fail ``--strict`` exits non-zero from a transform (an error in a directive does not).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from . import capture, notice, status

PLUGIN_SPEC: dict[str, Any] = {
    "name": "sphinx-gpu-admonition",
    "directives": [
        {"name": "gpu", "doc": "A notice about GPUs: the page was written for one.",
         "options": {"title": {"type": "string"}, "class": {"type": "string"},
                     "name": {"type": "string"}, "required": {"type": "boolean"}},
         "body": {"type": "myst"}},
        {"name": "execution-status",
         "doc": "The build's execution status: flagged cells, then every notebook."},
    ],
    "transforms": [
        {"name": "gpu-capture", "stage": "document",
         "doc": "The page's execution record, from the in-kernel probe."},
        {"name": "gpu-status", "stage": "project",
         "doc": "execution-status.json and the execution-status page."},
    ],
}


def directive(name: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    if name == "gpu":
        return notice.directive(data)
    if name == "execution-status":
        return status.placeholder()
    raise SystemExit(f"unknown directive {name!r}")


def transform(name: str, tree: dict[str, Any]) -> dict[str, Any]:
    if name == "gpu-capture":
        record, warnings = capture.page_record(tree)
        for message in warnings:
            print(f"sphinx-gpu-admonition: {message}", file=sys.stderr)
        if record is not None:
            notice.make_truthful(tree, record)
    elif name == "gpu-status":
        folder = capture.capture_folder()
        report, analysis = status.build_report(capture.build_records(folder))
        if status.fill_placeholders(tree, report, analysis) or report.notebooks:
            status.write_status_file(report, folder.parent)
    return tree


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        json.dump(PLUGIN_SPEC, sys.stdout)
        return
    if len(args) != 2 or args[0] not in ("--directive", "--transform", "--role"):
        raise SystemExit("usage: plugin [--directive NAME | --transform NAME] < data.json")
    data = json.load(sys.stdin)
    if args[0] == "--directive":
        json.dump(directive(args[1], data), sys.stdout)
    elif args[0] == "--transform":
        json.dump(transform(args[1], data), sys.stdout)
    else:
        raise SystemExit(f"unknown role {args[1]!r}")


if __name__ == "__main__":
    main()
