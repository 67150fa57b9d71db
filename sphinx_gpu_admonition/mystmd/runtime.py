"""The runtime roles on mystmd: ``{runtime}`this page```, ``{runtime-time}```,
``{runtime-device}``` and ``{runtime-all}```, as on Sphinx (``docs/runtime.md``).

The role leaves a placeholder (a ``span`` naming its part and target); the
transforms replace it once the data is known: the page's own (``this page`` or
``.``) in the document stage, after the page ran, any other page's in the
project stage, once every page ran. The text is
:mod:`..render.runtime_text`'s (the Sphinx roles' own), an ``abbreviation`` whose
title holds the exact figures (a tooltip in every mystmd theme). A target is the
page's path from the book's folder, without its suffix (``lectures/jax_intro``):
a transform is not told which page it runs on, so a path relative to the page
cannot be resolved.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..model.files import read_other_builds
from ..model.record import NotebookRecord
from ..render import runtime_text
from ..render.labels import NGettext, Translate, english, english_plural
from . import mdast, pages
from .settings import Settings, once

RUNTIME_CLASS = "gpu-runtime"
PLACEHOLDER_CLASS = "gpu-runtime-placeholder"
PART_PREFIX = "gpu-runtime-part-"
#: the notice's sentence: its paragraph, its part, asked for by the notice, left out
NOTICE_CLASS = "gpu-runtime-notice"
NOTICE = "notice"
REQUESTED_CLASS = "gpu-runtime-requested"
EMPTY_CLASS = "gpu-runtime-empty"
#: the suffixes a target may keep (mystmd's page files)
SUFFIXES = (".md", ".ipynb", ".myst.md")


def role(name: str, data: dict[str, object]) -> list[mdast.Node]:
    part = runtime_text.ROLES[name]
    target = str(data.get("body") or "").strip()
    return [{"type": "span", "class": f"{RUNTIME_CLASS} {PLACEHOLDER_CLASS} {PART_PREFIX}{part}",
             "children": [mdast.text(target)]}]


def normalized(target: str) -> str:
    """``./lectures/jax_intro.md`` -> ``lectures/jax_intro``; ``this page`` stays."""
    if target.lower() in runtime_text.THIS_PAGE:
        return runtime_text.THIS_PAGE[0]
    target = target.strip().lstrip("/").removeprefix("./")
    for suffix in SUFFIXES:
        target = target.removesuffix(suffix)
    return target


def _placeholders(tree: mdast.Node) -> list[tuple[mdast.Node, str, str]]:
    found = []
    for node in mdast.walk(tree):
        if node.get("type") == "span" and mdast.has_class(node, PLACEHOLDER_CLASS):
            part = next(name.removeprefix(PART_PREFIX) for name in str(node["class"]).split()
                        if name.startswith(PART_PREFIX))
            target = "".join(str(child.get("value", "")) for child in node.get("children", []))
            found.append((node, part, normalized(target)))
    return found


class Texts:
    """The translator the texts are written with (English without one)."""

    def __init__(self, translate: Translate = english, ngettext: NGettext = english_plural):
        self.translate, self.ngettext = translate, ngettext

    def measured(self, measurement: runtime_text.Measurement, text: str) -> mdast.Node:
        return {"type": "abbreviation", "title": runtime_text.exact_figures(measurement),
                "children": [mdast.text(text)]}

    def pieces(self, pieces: list[runtime_text.RunPiece]) -> list[mdast.Node]:
        return [mdast.text(piece) if isinstance(piece, str) else self.measured(*piece)
                for piece in pieces]

    def role_text(self, part: str, found: list[runtime_text.Measurement]) -> list[mdast.Node]:
        this_build = [m for m in found if m.source is None]
        if part == NOTICE:
            return self.pieces(runtime_text.notice_sentence(found, self.translate,
                                                            self.ngettext))
        if part == "all" and found:
            return self.pieces(runtime_text.runs(found, self.translate, self.ngettext))
        if not this_build:
            return [mdast.text(runtime_text.unknown_device(self.translate) if part == "device"
                               else runtime_text.unknown_time(self.translate))]
        measurement = this_build[0]
        if part == "device" and not measurement.device_known:
            return [mdast.text(runtime_text.unknown_device(self.translate))]
        if part == "time":
            text = runtime_text.reader_time(measurement.record.seconds, self.translate,
                                            self.ngettext)
        elif part == "device":
            text = runtime_text.device_phrase(measurement.record, self.translate)
        else:
            text = runtime_text.run_phrase(measurement, self.translate, self.ngettext)
        return [self.measured(measurement, text)]


def notice_paragraph(requested: bool) -> mdast.Node:
    """The ``{gpu}`` notice's run-time sentence (``:runtime:``, or ``admonition_runtime``),
    filled in once the page ran; ``requested``: by the notice (a page without data warns),
    else by the book's default (left out silently)."""
    classes = f"{RUNTIME_CLASS} {PLACEHOLDER_CLASS} {PART_PREFIX}{NOTICE}"
    if requested:
        classes += f" {REQUESTED_CLASS}"
    return mdast.paragraph({"type": "span", "class": classes,
                            "children": [mdast.text(runtime_text.THIS_PAGE[0])]},
                           css=NOTICE_CLASS)


def _source_mtime(record: NotebookRecord | None) -> float | None:
    path = pages.source_file(record, Path.cwd()) if record is not None else None
    try:
        return path.stat().st_mtime if path is not None else None
    except OSError:
        return None


def _drop_empty_notices(tree: mdast.Node) -> None:
    for node in mdast.walk(tree):
        children = node.get("children")
        if isinstance(children, list):
            children[:] = [child for child in children if not (
                mdast.has_class(child, NOTICE_CLASS) and any(
                    mdast.has_class(part, EMPTY_CLASS) for part in mdast.walk(child)))]


def resolve(tree: mdast.Node, lookup: Callable[[str], NotebookRecord | None],
            others: Callable[[str], list[tuple[str, NotebookRecord | None]]],
            texts: Texts, this_page_only: bool) -> list[str]:
    """Replace the placeholders of ``tree`` (only those naming this page, when
    ``this_page_only``); ``others(target)``: the other builds' records of the target
    (``runtime_sources``), for ``{runtime-all}`` and the notice; returns the warnings (a
    target whose time is not known)."""
    warnings = []
    for node, part, target in _placeholders(tree):
        this_page = target == runtime_text.THIS_PAGE[0]
        if this_page_only != this_page:
            continue
        record = lookup(target)
        other = others(target) if part in ("all", NOTICE) else []
        found = runtime_text.measurements(record, other,
                                          _source_mtime(record) if other else None)
        why = ("not an executed page, or its execution data is missing"
               if record is None else f"its status is {record.status!r}")
        if part == NOTICE:
            if not found:
                if mdast.has_class(node, REQUESTED_CLASS):
                    warnings.append(f"the gpu notice cannot state the run time: {why}; the "
                                    "sentence is left out")
                node["class"] = EMPTY_CLASS
                continue
        elif not [m for m in found if m.source is None] and not (part == "all" and found):
            name = "this page" if this_page else repr(target)
            warnings.append(f"{{runtime}}: no run time of {name} is known ({why}); the text "
                            "says 'an unknown time' instead")
        node["class"] = RUNTIME_CLASS
        node["children"] = texts.role_text(part, found)
    _drop_empty_notices(tree)
    return warnings


#: the other builds' records: (status file, records by docname), ``runtime_sources``
OtherBuilds = list[tuple[str, dict[str, NotebookRecord]]]


def other_builds(settings: Settings, folder: Path) -> tuple[OtherBuilds, list[str]]:
    """The status files of ``runtime_sources`` (relative to the book's folder) that can be
    read, and a warning for each that cannot (once per build: every plugin call reads
    them, as Sphinx does once per build: :func:`..model.files.read_other_builds`)."""
    builds, problems = read_other_builds(settings.runtime_sources(), "runtime_sources")
    return builds, [problem for problem in problems if once(problem, folder)]


def named_builds(settings: Settings, builds: OtherBuilds) -> OtherBuilds:
    """``builds`` named as ``runtime_sources`` gives them (the status file and the claims'
    verdicts keep the configured name, not this machine's path), as on Sphinx."""
    names = {str(path): configured for configured, path in settings.runtime_sources()}
    return [(names.get(path, Path(path).name), records) for path, records in builds]


def others(builds: OtherBuilds, docname: str) -> list[tuple[str, NotebookRecord | None]]:
    """The other builds' records of ``docname`` (None where a build has none)."""
    return [(path, records.get(normalized(docname))) for path, records in builds]
