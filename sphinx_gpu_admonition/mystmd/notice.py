"""The ``gpu`` notice on mystmd: the Sphinx directive's options and texts.

The texts repeat ``ext/admonition.py`` and ``ext/page_info.py`` (English: mystmd
gives a plugin no language; the catalogue in ``locale/`` is Sphinx's). The
document-stage transform makes the notice truthful once the page has run: a
page executed without a GPU says so, and every notice names the device.
"""

from __future__ import annotations

from typing import Any

from ..model.device import device_with_jax, is_gpu
from ..model.record import NotebookRecord
from . import mdast

BASE_CLASSES = ("gpu-admonition", "admonition-gpu")
KIND_CLASSES = {"optional": "gpu-optional", "required": "gpu-required"}
INTRO_CLASS = "gpu-notice-intro"
EXECUTED_ON_CLASS = "gpu-executed-on"
COLAB_URL = "https://colab.research.google.com/"
DEFAULT_TITLE = "GPU"
DEFAULT_ADMONITION_KIND = "warning"


def intro_text(kind: str) -> str:
    if kind == "required":
        return ("This lecture was built using a machine with access to a GPU and needs "
                "one to run in a reasonable amount of time.")
    return ("This lecture was built using a machine with access to a GPU, although "
            "it will also run without one.")


def written_for_gpu_text(kind: str) -> str:
    if kind == "required":
        return ("This lecture was written for a GPU and needs one to run in a "
                "reasonable amount of time.")
    return "This lecture was written for a GPU, although it will also run without one."


def directive(data: dict[str, Any]) -> list[mdast.Node]:
    """``{gpu}``: options ``title``, ``class``, ``name``, ``required`` (a flag)."""
    options = data.get("options") or {}
    kind = "required" if options.get("required") else "optional"
    body = data.get("body")
    if isinstance(body, list) and body:
        children = body  # the author's own body, parsed by mystmd
    else:
        children = [
            mdast.paragraph(intro_text(kind), css=INTRO_CLASS),
            mdast.paragraph(mdast.link(COLAB_URL, "Google Colab"),
                            " has a free tier with GPUs."),
        ]
    classes = [*BASE_CLASSES, *str(options.get("class") or "").split(), KIND_CLASSES[kind]]
    node = mdast.admonition(str(options.get("title") or DEFAULT_TITLE), children,
                            " ".join(dict.fromkeys(classes)), DEFAULT_ADMONITION_KIND)
    if options.get("name"):
        node["label"] = node["identifier"] = str(options["name"])
    return [node]


def device_sentence(record: NotebookRecord) -> str:
    return device_with_jax(record.environment)


def ran_on_gpu(record: NotebookRecord) -> bool:
    return is_gpu(record.environment.backend)


def executed_on_sentence(record: NotebookRecord) -> str:
    if ran_on_gpu(record):
        return f"This page was executed on {device_sentence(record)}."
    return f"This page was executed on {device_sentence(record)}, not on a GPU."


def make_truthful(tree: mdast.Node, record: NotebookRecord) -> None:
    """The page's notices, once its record is known: the intro of a page that ran
    without a GPU claims none, and a last line names the device."""
    if record.capture != "ok":
        return
    for node in mdast.walk(tree):
        if node.get("type") != "admonition" or not mdast.has_class(node, "gpu-admonition"):
            continue
        kind = "required" if mdast.has_class(node, KIND_CLASSES["required"]) else "optional"
        children = node.setdefault("children", [])
        for index, child in enumerate(children):
            if mdast.has_class(child, INTRO_CLASS) and not ran_on_gpu(record):
                children[index] = mdast.paragraph(written_for_gpu_text(kind), css=INTRO_CLASS)
        children[:] = [c for c in children if not mdast.has_class(c, EXECUTED_ON_CLASS)]
        children.append(mdast.paragraph(executed_on_sentence(record), css=EXECUTED_ON_CLASS))
