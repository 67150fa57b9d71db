"""The ``gpu`` notice on mystmd: the Sphinx directive's options and texts.

The texts are :mod:`..render.notice_text`'s (the Sphinx notice's own), in the
book's ``language`` (:mod:`.settings`). The document-stage transform makes the
notice truthful once the page has run: a page executed without a GPU says so,
every notice names the device, and with ``colab_url`` the Colab link opens the
page's notebook.
"""

from __future__ import annotations

from typing import Any

from ..model.record import NotebookRecord
from ..render import notice_text
from ..render.labels import Translate
from ..render.notice_text import INTRO_CLASS
from . import mdast, runtime, warnings
from .settings import DEFAULTS, Settings

BASE_CLASSES = ("gpu-admonition", "admonition-gpu")
KIND_CLASSES = {"optional": "gpu-optional", "required": "gpu-required"}
EXECUTED_ON_CLASS = "gpu-executed-on"
COLAB_URL = "https://colab.research.google.com/"
COLAB_CLASS = "gpu-colab"
DEFAULT_ADMONITION_KIND = "warning"


def _colab_paragraph(translate: Translate) -> mdast.Node:
    sentence = notice_text.colab_sentence(False, translate)
    before, placeholder, after = sentence.partition("{colab}")
    if not placeholder:  # a translation lost the placeholder: keep the link anyway
        before, after = "", " " + sentence
    parts: list[mdast.Node | str] = [before] if before else []
    parts.append(mdast.link(COLAB_URL, "Google Colab"))
    if after:
        parts.append(after)
    return mdast.paragraph(*parts, css=COLAB_CLASS)


#: the values of ``:runtime:`` (no value: on), as on Sphinx
RUNTIME_VALUES = {"": True, "on": True, "off": False}


def runtime_option(data: dict[str, Any], settings: Settings) -> tuple[bool, bool, str | None]:
    """(the notice states the run time, the notice asked for it, a warning) from the
    ``:runtime:`` option and the book's ``admonition_runtime``; a value other than none,
    ``on`` or ``off`` warns and the book's default decides."""
    options = data.get("options") or {}
    default = settings.config.admonition_runtime
    if "runtime" not in options:
        return default, False, None
    value = str(options["runtime"]).strip().lower()
    if value not in RUNTIME_VALUES:
        return default, False, (f"gpu: invalid :runtime: {options['runtime']!r} (no value, on "
                                f"or off); using admonition_runtime ({default!r})")
    return RUNTIME_VALUES[value], RUNTIME_VALUES[value], None


def directive(data: dict[str, Any], settings: Settings = DEFAULTS) -> list[mdast.Node]:
    """``{gpu}``: options ``title``, ``class``, ``name``, ``required`` (a flag) and
    ``runtime`` (none, ``on``, ``off``: :func:`runtime_option`); a bad option's warning is
    held in a node of its own after the notice (:func:`.warnings.hold_nodes`)."""
    options = data.get("options") or {}
    translate = settings.translate
    kind = "required" if options.get("required") else "optional"
    body = data.get("body")
    if isinstance(body, list) and body:
        children = body  # the author's own body, parsed by mystmd
    else:
        children = [mdast.paragraph(notice_text.intro_text(kind, translate), css=INTRO_CLASS),
                    _colab_paragraph(translate)]
    classes = [*BASE_CLASSES, *str(options.get("class") or "").split(), KIND_CLASSES[kind]]
    node = mdast.admonition(str(options.get("title") or notice_text.default_title(translate)),
                            children, " ".join(dict.fromkeys(classes)),
                            DEFAULT_ADMONITION_KIND)
    if options.get("name"):
        node["label"] = node["identifier"] = str(options["name"])
    states, requested, problem = runtime_option(data, settings)
    if states:
        node["children"].append(runtime.notice_paragraph(requested))
    line = ((data.get("node") or {}).get("position") or {}).get("start", {}).get("line")
    found = [warnings.warning("directive", problem, None, line)] if problem else []
    return [node, *warnings.hold_nodes(found, directive=True)]


def notices(tree: mdast.Node) -> list[mdast.Node]:
    return [node for node in mdast.walk(tree) if node.get("type") == "admonition"
            and mdast.has_class(node, "gpu-admonition")]


def make_truthful(tree: mdast.Node, record: NotebookRecord,
                  settings: Settings = DEFAULTS) -> None:
    """The page's notices, once its record is known: the intro of a page that ran
    without a GPU, or could not be measured, claims none
    (:func:`..render.notice_text.claims_gpu_machine`), a last line names the device
    where it is known, and with ``colab_url`` the Colab link opens this page's
    notebook."""
    translate = settings.translate
    if settings.colab_url:
        link = settings.colab_url.replace("{path}", record.docname)
        for node in notices(tree):
            for paragraph in [c for c in node.get("children", [])
                              if mdast.has_class(c, COLAB_CLASS)]:
                for child in mdast.walk(paragraph):
                    if child.get("type") == "link" and child.get("url") == COLAB_URL:
                        child["url"] = link
    claims = notice_text.claims_gpu_machine(record)
    if not record.measured and claims:
        return
    for node in mdast.walk(tree):
        if node.get("type") != "admonition" or not mdast.has_class(node, "gpu-admonition"):
            continue
        kind = "required" if mdast.has_class(node, KIND_CLASSES["required"]) else "optional"
        children = node.setdefault("children", [])
        for index, child in enumerate(children):
            if mdast.has_class(child, INTRO_CLASS) and not claims:
                children[index] = mdast.paragraph(
                    notice_text.written_for_gpu_text(kind, translate), css=INTRO_CLASS)
        children[:] = [c for c in children if not mdast.has_class(c, EXECUTED_ON_CLASS)]
        if record.measured:  # the device is known: the last line names it
            children.append(mdast.paragraph(
                notice_text.executed_on_sentence(record, translate), css=EXECUTED_ON_CLASS))
