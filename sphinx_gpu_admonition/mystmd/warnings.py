"""How the plugin warns on mystmd: where a normal ``myst build`` shows it, in the
build's status file, and as the failure of a ``--strict`` build.

mystmd 1.8.3 gives an executable plugin no warning channel (measured, see
docs/mystmd.md "Warnings"): what it writes to stderr is logged at debug level (shown
with ``--debug`` only), and a non-zero exit stops the build.  What mystmd does warn
about is its own checks of the page it is building; the one that runs after a
project-stage transform and takes a text of ours is the check of cross references
without text.  So a warning becomes a ``crossReference`` node without text, named by
the warning (its ``urlSource``) and placed at the warning's line, inside a comment
node (which no renderer shows): mystmd then warns
``⚠️  page.md:12 Cross reference text is empty for <sphinx-gpu-admonition [capture]:
...>`` in the normal log and lists it in ``--strict``'s summary.  A document-stage
transform's warnings are kept on its page (a comment node of their own) until the
page's project-stage transform shows them: a cross reference seen by mystmd's
reference resolution, which runs between the two stages, warns a second time.

Every warning is also kept for the build's status file (``build.warnings``, one
file of lines per build in the capture folder: the executable plugin's calls are a
process each), and written to stderr; with ``--strict`` the transform exits non-zero
(or, in the ``.mjs`` plugin's server, answers an error that the transform throws), so
that the build fails on it as ``-W`` fails a Sphinx build (mystmd's ``--strict``
stops only on errors; a non-zero exit stops any build, so it is done only when
``myst`` runs with ``--strict``, read from its command line).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from ..model.build_warnings import BuildWarning, warning_entry
from ..model.formatting import one_line, safe_line
from . import build_options, mdast

#: the program a warning names (mystmd's log does not say where it came from)
NAME = "sphinx-gpu-admonition"
#: the comment node that holds a page's warnings (shown at its project stage)
HOLDER_CLASS = "gpu-admonition-warnings"
#: the warnings of this build, one JSON object a line (capture folder)
FOLDER = "warnings"


class StrictFailure(Exception):
    """Warnings of a ``--strict`` build: the transform must fail it."""


def warning(subtype: str, message: str, file: str | None = None,
            line: int | None = None) -> BuildWarning:
    return warning_entry(subtype, message, file, line)


def text(item: BuildWarning) -> str:
    """``sphinx-gpu-admonition [capture]: jax_page.md:12: ...``: a warning on one line."""
    where = f"{item.where}: " if item.where else ""
    # the rule of every printed line: mystmd prints it in the build's log
    return safe_line(one_line(f"{NAME} [{item.subtype}]: {where}{item.message}"))


# -- kept for the status file -----------------------------------------------------------
def _build_file(folder: Path) -> Path:
    # the build is the parent ``myst`` process: every plugin call of a build is its child
    return folder / FOLDER / f"{os.getppid()}.jsonl"


def keep(folder: Path, warnings: list[BuildWarning]) -> None:
    """Add ``warnings`` to this build's (one append each: calls run in parallel)."""
    if not warnings:
        return
    path = _build_file(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as stream:
            stream.write("".join(json.dumps(item.to_dict(), ensure_ascii=False) + "\n"
                                 for item in warnings))
    except OSError as error:
        print(f"{NAME}: could not keep the build's warnings: {error}", file=sys.stderr)


def kept(folder: Path) -> list[BuildWarning]:
    """This build's warnings, in the order they were given, each once; the files of
    earlier builds are removed (a later build keeps its own)."""
    path = _build_file(folder)
    for other in (folder / FOLDER).glob("*.jsonl"):
        if other != path:
            other.unlink(missing_ok=True)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    found: dict[BuildWarning, None] = {}
    for line in lines:
        try:
            data = json.loads(line)
            item = warning(str(data["subtype"]), str(data["message"]), data.get("file"),
                           data.get("line") if isinstance(data.get("line"), int) else None)
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by a full disk: the rest still counts
        found.setdefault(item, None)
    return list(found)


# -- shown by mystmd ----------------------------------------------------------------------
def _reference(item: BuildWarning) -> mdast.Node:
    node: mdast.Node = {"type": "crossReference", "children": [], "urlSource": safe_line(
        one_line(f"{NAME} [{item.subtype}]: {item.message}"))}
    if item.line:
        node["position"] = {"start": {"line": item.line, "column": 1},
                            "end": {"line": item.line, "column": 1}}
    return node


def _holders(tree: mdast.Node) -> list[mdast.Node]:
    return [node for node in mdast.walk(tree) if node.get("type") == "comment"
            and mdast.has_class(node, HOLDER_CLASS)]


def hold_nodes(warnings: list[BuildWarning], directive: bool = False) -> list[mdast.Node]:
    """The node that holds ``warnings`` on a page until its project stage shows them
    (none without warnings); ``directive``: a directive's, which the page's document
    stage adopts (:func:`adopt`)."""
    if not warnings:
        return []
    data: dict[str, Any] = {"warnings": [item.to_dict() for item in warnings]}
    if directive:
        data["directive"] = True
    return [{"type": "comment", "value": "", "class": HOLDER_CLASS, "data": data}]


def hold(tree: mdast.Node, warnings: list[BuildWarning]) -> None:
    """Document stage: keep ``warnings`` on the page for its project stage."""
    tree.setdefault("children", []).extend(hold_nodes(warnings))


def adopt(tree: mdast.Node, file: str | None, folder: Path) -> list[BuildWarning]:
    """Document stage: the warnings the page's directives held (a directive is told
    neither the page nor the build), with the page's file where they name none, kept
    for the status file; they stay held for the project stage to show."""
    adopted = []
    for holder in _holders(tree):
        data = holder.get("data") or {}
        if not data.pop("directive", False):
            continue
        items = [warning(entry["subtype"], entry["message"], entry.get("file") or file,
                         entry.get("line")) for entry in data.get("warnings", [])]
        data["warnings"] = [item.to_dict() for item in items]
        adopted += items
    keep(folder, adopted)
    return adopted


def show(tree: mdast.Node, warnings: list[BuildWarning]) -> None:
    """Project stage: the page's held warnings and ``warnings`` as the nodes mystmd
    warns about (:data:`__doc__`)."""
    for holder in _holders(tree):
        if "data" not in holder:
            continue  # shown already
        held = (holder.pop("data") or {}).get("warnings", [])
        holder["children"] = [_reference(warning(data["subtype"], data["message"],
                                                 data.get("file"), data.get("line")))
                              for data in held]
    if warnings:
        tree.setdefault("children", []).append({
            "type": "comment", "value": "", "class": HOLDER_CLASS,
            "children": [_reference(item) for item in warnings]})


def emit(warnings: list[BuildWarning], arguments: list[str], folder: Path,
         tree: dict[str, Any], project_stage: bool, kept: bool = False,
         held: list[BuildWarning] | None = None) -> None:
    """Warn: on stderr (``--debug``), in the page for mystmd's log, in this build's
    list for the status file (unless ``kept`` already); raise :class:`StrictFailure`
    in a ``--strict`` build, also for ``held`` (warnings held and kept already)."""
    for item in [*(held or []), *warnings]:
        print(text(item), file=sys.stderr)
    if not kept:
        keep(folder, warnings)
    if project_stage:
        show(tree, warnings)
    else:
        hold(tree, warnings)
    failing = [*(held or []), *warnings]
    if failing and build_options.strict(arguments):
        raise StrictFailure(text(failing[0]))
