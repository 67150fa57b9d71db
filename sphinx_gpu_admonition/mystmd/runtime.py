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

from ..model.record import NotebookRecord
from ..render import runtime_text
from ..render.labels import NGettext, Translate, english, english_plural
from . import mdast

RUNTIME_CLASS = "gpu-runtime"
PLACEHOLDER_CLASS = "gpu-runtime-placeholder"
PART_PREFIX = "gpu-runtime-part-"
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

    def role_text(self, part: str, found: list[runtime_text.Measurement]) -> list[mdast.Node]:
        this_build = [m for m in found if m.source is None]
        if part == "all" and found:
            nodes: list[mdast.Node] = []
            for measurement, separator in zip(
                    found, ["", *runtime_text.separators(len(found), self.translate)],
                    strict=True):
                if separator:
                    nodes.append(mdast.text(separator))
                nodes.append(self.measured(measurement, runtime_text.run_phrase(
                    measurement, self.translate, self.ngettext)))
            return nodes
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


def resolve(tree: mdast.Node, lookup: Callable[[str], NotebookRecord | None],
            others: Callable[[str], list[tuple[str, NotebookRecord | None]]],
            texts: Texts, this_page_only: bool) -> list[str]:
    """Replace the placeholders of ``tree`` (only those naming this page, when
    ``this_page_only``); returns the warnings (a target whose time is not known)."""
    warnings = []
    for node, part, target in _placeholders(tree):
        this_page = target == runtime_text.THIS_PAGE[0]
        if this_page_only != this_page:
            continue
        record = lookup(target)
        found = runtime_text.measurements(record, others(target) if part == "all" else [], None)
        if not [m for m in found if m.source is None] and not (part == "all" and found):
            name = "this page" if this_page else repr(target)
            why = ("not an executed page, or its execution data is missing"
                   if record is None else f"its status is {record.status!r}")
            warnings.append(f"{{runtime}}: no run time of {name} is known ({why}); the text "
                            "says 'an unknown time' instead")
        node["class"] = RUNTIME_CLASS
        node["children"] = texts.role_text(part, found)
    return warnings
