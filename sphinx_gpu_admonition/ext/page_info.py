"""Show on each executed page what it ran on: a line, the environment one click away.

At ``doctree-read`` (the record of the page is complete then) a builder-neutral
placeholder holding the box's line and rows is inserted at the configured
position, and the ``gpu`` admonitions
of the page get an "executed on" sentence.  A notice is written for a GPU: when
the kernel ran without one, its standard first sentence ("built using a machine
with access to a GPU") is replaced by one that is true of this copy, the
sentence says "without a GPU", and the build warns unless
``gpu_expected_backend`` says that this is expected.  A notebook page whose
notice offers no way to Colab warns (``gpu_admonition.colab``).  Post-transforms
make the placeholder a ``<details>`` element for HTML, a line and a field list
for other builders, and nothing in download notebooks, whose notice tells the
reader how to get a GPU instead of where the build ran.  ``html-page-context``
adds ``<meta>`` tags with the same facts.
"""

from __future__ import annotations

import html
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from ..model.device import backend_mismatch
from ..model.formatting import format_date, format_mib, format_seconds
from ..model.record import CACHE, NotebookRecord
from ..render import notice_text
from ..render.machine_rows import machine_rows
from ..render.notice_text import INTRO_CLASS
from ..render.templates import render as render_template
from ._mystnb import is_notebook
from .blocks import blocks_of, notices
from .capture import get_record
from .config import get_config
from .i18n import _, translate
from .support import NOTEBOOK_BUILDERS, NonHtmlPostTransform, in_download_notebook
from .warnings import warn

logger = logging.getLogger(__name__)
#: the notice's texts in the book's language (looked up when each is asked for)
TEXTS = notice_text.Texts(translate)

INFO_CLASS = "gpu-execution-info"
DETAILS_CLASS = "gpu-execution-details"
EXECUTED_ON_CLASS = "gpu-executed-on"
#: the download notebook's sentence instead of :data:`EXECUTED_ON_CLASS`'s
READER_CLASS = "gpu-reader-gpu"

def summary_line(record: NotebookRecord) -> str:
    parts = [_("Executed on %s") % notice_text.device_sentence(record)]
    when = format_date(record.executed_at)
    if when:
        parts.append(when)
    parts.append(format_seconds(record.seconds))
    if record.provenance == CACHE:
        parts.append(_("outputs from the execution cache"))
    if record.failed and record.error:
        parts.append(_("failed: %s") % record.error.type)
    return " · ".join(parts)


def environment_fields(record: NotebookRecord) -> list[tuple[str, str]]:
    """(label, value) rows describing where the notebook ran, and what it cost there."""
    rows = machine_rows(record.environment, translate=translate)
    compile_seconds = record.compile_seconds
    if compile_seconds:
        rows.append((_("JAX compile time"), format_seconds(compile_seconds)))
    if record.peak_memory_mb:
        rows.append((_("Peak kernel memory"), format_mib(record.peak_memory_mb)))
    if record.device_peak_memory_mb:  # where JAX reports it (a GPU)
        rows.append((_("Peak GPU memory"), format_mib(record.device_peak_memory_mb)))
    return rows


class execution_info_placeholder(nodes.container):  # noqa: N801 - docutils node style
    """The "executed on" box as data (its line and its rows): the builder's
    post-transform makes it markup (HTML) or a line and a field list (the others),
    so HTML pages neither build nor walk nodes they would only turn into markup."""


def info_node(record: NotebookRecord) -> execution_info_placeholder:
    node = execution_info_placeholder(classes=[INFO_CLASS, f"gpu-status-{record.status}"])
    node["gpu_summary"] = summary_line(record)
    node["gpu_rows"] = environment_fields(record)
    return node


def info_nodes(placeholder: nodes.Element) -> nodes.container:
    """The box for builders other than HTML: its line, then a field list of its rows."""
    container = nodes.container(classes=placeholder["classes"])
    container += nodes.paragraph(text=placeholder["gpu_summary"])
    fields = nodes.field_list(classes=[DETAILS_CLASS])
    for label, value in placeholder["gpu_rows"]:
        field = nodes.field()
        field += nodes.field_name(text=label)
        body = nodes.field_body()
        body += nodes.paragraph(text=value)
        field += body
        fields += field
    container += fields
    return container


def _insert(doctree: nodes.document, node: nodes.Node, position: str) -> None:
    section = next(iter(doctree.findall(nodes.section)), None)
    if position == "top" and section is not None:
        title_index = next((i for i, child in enumerate(section.children)
                            if isinstance(child, nodes.title)), -1)
        section.insert(title_index + 1, node)
    elif position == "top":
        doctree.insert(0, node)
    else:
        (section if section is not None and section.parent is doctree else doctree).append(node)


def _check_backend(app: Sphinx, record: NotebookRecord,
                   admonitions: list[nodes.Element]) -> None:
    if not admonitions:
        return
    message = backend_mismatch(record, get_config(app).expected_backend)
    if message:
        warn(logger, message, "backend", location=admonitions[0])


def _make_notices_truthful(record: NotebookRecord, admonitions: list[nodes.Element]) -> None:
    """A standard notice must not claim a GPU for a copy that ran without one, or whose
    kernel ran but could not be measured (:func:`notice_text.claims_gpu_machine`)."""
    if notice_text.claims_gpu_machine(record):
        return
    for admonition in admonitions:
        for paragraph in list(admonition.findall(nodes.paragraph)):
            if INTRO_CLASS in paragraph["classes"]:
                paragraph.replace_self(nodes.paragraph(
                    "", TEXTS.written_for_gpu(admonition.get("gpu_kind", "optional")),
                    classes=paragraph["classes"]))


def _check_colab(app: Sphinx, docname: str, doctree: nodes.document,
                 admonitions: list[nodes.Element]) -> None:
    without = [a for a in admonitions if a.get("gpu_colab") == "none"]
    if not without or not is_notebook(app.env, docname, doctree):
        return
    warn(logger, "the gpu notice of this notebook page offers no way to open it in Colab: "
                 "the theme shows no Colab launch button (html_theme_options launch_buttons "
                 "colab_url with sphinx-book-theme or quantecon-book-theme) and there is no "
                 "link to its notebook (set gpu_colab_url, e.g. 'https://colab.research."
                 "google.com/github/ORG/REPO/blob/main/{path}.ipynb')",
         "colab", location=without[0])


def add_page_info(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    admonitions = notices(doctree)
    _check_colab(app, docname, doctree, admonitions)
    record = get_record(app.env, docname)
    if record is None or not record.executed:
        return
    _check_backend(app, record, admonitions)
    _make_notices_truthful(record, admonitions)
    position = get_config(app).execution_info
    if position == "off" or not record.measured:
        return
    sentence = TEXTS.executed_on(record)
    for admonition in admonitions:
        admonition += nodes.paragraph(text=sentence, classes=[EXECUTED_ON_CLASS])
    if position == "admonition":
        for admonition in admonitions[:1]:
            admonition += info_node(record)
    else:
        _insert(doctree, info_node(record), position)


class execution_info_markup(nodes.General, nodes.Element):  # noqa: N801 - docutils style
    """The HTML of the "executed on" box, written as it is.

    Not a ``raw`` node: Sphinx indexes the text of raw HTML for search, and this
    box's words (the device, the date) are on every notebook page, so searching
    for "CPU" would list them all.  An element without text is not indexed (the
    ``no-search`` class says so to Sphinx 7.3 and later too).
    """


def _visit_execution_info_markup(translator: Any, node: execution_info_markup) -> None:
    translator.body.append(node["markup"])
    raise nodes.SkipNode


class ExecutionInfoToHtml(SphinxPostTransform):
    """HTML: the environment rows go one click away, in a ``<details>`` element."""

    default_priority = 400
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        for placeholder in blocks_of(self.document, execution_info_placeholder):
            # parent.replace, not replace_self: that would copy the placeholder's
            # classes onto the new node
            placeholder.parent.replace(placeholder, execution_info_markup(
                "", markup=details_markup(placeholder), classes=["no-search"]))


def details_markup(placeholder: nodes.Element) -> str:
    """``<details>`` markup of an :func:`info_node` (a template: every text is escaped)."""
    return render_template("page_info.html", classes=placeholder["classes"],
                           summary=placeholder["gpu_summary"], rows=placeholder["gpu_rows"])


class ExecutionInfoToNodes(NonHtmlPostTransform):
    """Every other builder: the line and a field list (none in download notebooks)."""

    default_priority = 401

    def run(self, **kwargs: Any) -> None:
        placeholders = blocks_of(self.document, execution_info_placeholder)
        if not placeholders:
            return
        in_notebook = in_download_notebook(self.env)
        for placeholder in placeholders:
            if in_notebook:
                placeholder.parent.remove(placeholder)
            else:
                placeholder.parent.replace(placeholder, info_nodes(placeholder))


def reader_sentence() -> str:
    """What a download notebook's notice says instead of where the build ran: the
    notebook is the student's copy, to run on their own machine or in Colab."""
    return _("To run this notebook on a GPU in Google Colab, choose Runtime > Change "
             "runtime type and select a GPU.")


class ReaderNoticeInNotebooks(SphinxPostTransform):
    """Download notebooks (sphinx-tojupyter): the notice's "This page was executed on
    CPU: ..." is the build machine's, not the reader's; it becomes the sentence on how
    to get a GPU."""

    default_priority = 402
    builders = NOTEBOOK_BUILDERS

    def run(self, **kwargs: Any) -> None:
        for admonition in notices(self.document):
            for paragraph in list(admonition.findall(nodes.paragraph)):
                if EXECUTED_ON_CLASS in paragraph["classes"]:
                    paragraph.parent.replace(paragraph, nodes.paragraph(
                        "", reader_sentence(), classes=[READER_CLASS]))


def _meta_tags(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
               doctree: Any) -> None:
    record = get_record(app.env, pagename)
    if record is None or not record.executed or not record.measured:
        return
    facts = {
        "gpu-execution:backend": record.environment.backend or "none",
        "gpu-execution:device": record.environment.device_label,
        "gpu-execution:status": record.status,
        "gpu-execution:seconds": f"{record.seconds:.3f}",
        "gpu-execution:time": record.executed_at or "",
        "gpu-execution:provenance": record.provenance,
    }
    tags = "".join(f'<meta name="{html.escape(name)}" content="{html.escape(value)}" />\n'
                   for name, value in facts.items())
    context["metatags"] = context.get("metatags", "") + tags


def setup_page_info(app: Sphinx) -> None:
    # after the collector (priority 500) has stored the page's record
    app.connect("doctree-read", add_page_info, priority=600)
    app.add_node(execution_info_markup, html=(_visit_execution_info_markup, None))
    app.add_post_transform(ExecutionInfoToHtml)
    app.add_post_transform(ExecutionInfoToNodes)
    app.add_post_transform(ReaderNoticeInNotebooks)
    app.connect("html-page-context", _meta_tags)
