"""The ``gpu`` directive: a standard admonition telling readers about GPUs.

MyST::

    ```{gpu}
    :required:
    ```

reStructuredText::

    .. gpu::
       :title: Accelerator

The directive emits a plain :class:`docutils.nodes.admonition` (so every
builder renders it) with the classes ``gpu-admonition admonition-gpu``, the
configured ``gpu_admonition_class`` (``warning`` by default), the ``:class:``
option and ``gpu-optional`` or ``gpu-required``; the node's ``gpu_kind``
attribute holds ``"optional"`` or ``"required"`` as well.  Other modules find
these nodes by the ``gpu-admonition`` class (for example to append an
"executed on" line).

Its body is, in order of preference: the directive's content, the
``gpu_admonition_body`` / ``gpu_admonition_required_body`` configuration value
(markup parsed like a body), or the translated standard notice.  With
``:runtime:`` (or ``gpu_admonition_runtime = True``; ``:runtime: off`` opts a
notice out) a sentence follows that says how long the page takes to run, and
on what (see :mod:`.runtime`).
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from .config import get_config
from .i18n import _
from .runtime import notice_paragraph
from .warnings import warn

logger = logging.getLogger(__name__)

#: Classes every gpu admonition carries, before the configured ones.
BASE_CLASSES = ("gpu-admonition", "admonition-gpu")
#: Values of the ``:runtime:`` option (no value means "on").
RUNTIME_VALUES = {"": True, "on": True, "off": False}
#: Class (and ``gpu_kind`` value) for each kind of notice.
KIND_CLASSES = {"optional": "gpu-optional", "required": "gpu-required"}

COLAB_URL = "https://colab.research.google.com/"
STATIC_DIR = Path(__file__).resolve().parent / "static"
CSS_FILE = "gpu-admonition.css"


def default_title() -> str:
    return str(_("GPU"))


def default_notice(kind: str) -> list[nodes.Element]:
    """The translated standard notice as markup-independent docutils nodes."""
    if kind == "required":
        intro = _(
            "This lecture was built using a machine with access to a GPU and needs "
            "one to run in a reasonable amount of time."
        )
    else:
        intro = _(
            "This lecture was built using a machine with access to a GPU, although "
            "it will also run without one."
        )
    # Translators: keep {colab}, it becomes a link named "Google Colab".
    colab = str(_("{colab} has a free tier with GPUs that you can access as follows:"))
    before, placeholder, after = colab.partition("{colab}")
    if not placeholder:  # a translation lost the placeholder: keep the link anyway
        before, after = "", " " + colab
    how = nodes.paragraph()
    if before:
        how += nodes.Text(before)
    how += nodes.reference("", "Google Colab", refuri=COLAB_URL)
    if after:
        how += nodes.Text(after)
    steps = nodes.enumerated_list("", enumtype="arabic", prefix="", suffix=".")
    for step in (
        _('Click on the "play" icon top right'),
        _("Select Colab"),
        _("Set the runtime environment to include a GPU"),
    ):
        steps += nodes.list_item("", nodes.paragraph("", str(step)))
    return [nodes.paragraph("", str(intro)), how, steps]


def _flag(argument: str | None) -> None:
    """Like :func:`docutils.parsers.rst.directives.flag`, also in MyST.

    MyST accepts any value for options converted by ``flag`` itself, so that
    ``:required: false`` would silently mean "required"; with this copy a value
    is an error in both markups.
    """
    if argument and argument.strip():
        raise ValueError(f'no argument is allowed; "{argument}" supplied')
    return None


class GpuDirective(SphinxDirective):
    """``{gpu}``: the GPU notice of a page, or a custom body about GPUs."""

    has_content = True
    required_arguments = 0
    # An argument is not allowed; it is accepted only to warn about it (MyST would
    # otherwise silently turn it into the first line of the body).
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {
        "class": directives.class_option,
        "name": directives.unchanged_required,
        "title": directives.unchanged_required,
        "required": _flag,
        "runtime": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        config = get_config(self.config)
        if self.arguments:
            warn(
                logger,
                f"the gpu directive takes no argument (got {self.arguments[0]!r}); "
                "it is ignored: use the :title: option to change the title",
                "directive",
                location=self.get_location(),
            )
        kind = "required" if "required" in self.options else "optional"

        title_text = self.options.get("title") or config.admonition_title or default_title()
        title_nodes, messages = self.state.inline_text(title_text, self.lineno)
        title = nodes.title(title_text, "", *title_nodes)
        self.set_source_info(title)

        if self.content:
            body = self.parse_content_to_nodes()
        else:
            configured = (
                config.admonition_required_body if kind == "required" else config.admonition_body
            )
            if configured:
                body = self.parse_text_to_nodes(configured, offset=self.content_offset)
            else:
                body = default_notice(kind)

        classes = [*BASE_CLASSES, *config.admonition_class, *self.options.get("class", []),
                   KIND_CLASSES[kind]]
        node = nodes.admonition("", title, *body, classes=list(dict.fromkeys(classes)))
        node["gpu_kind"] = kind
        requested = self._runtime_option()
        if requested if requested is not None else config.admonition_runtime:
            node += notice_paragraph(self.env.docname, requested=bool(requested))
        self.set_source_info(node)
        self.add_name(node)
        return [node, *messages]

    def _runtime_option(self) -> bool | None:
        """True/False from ``:runtime:`` / ``:runtime: off``; None: the site default."""
        if "runtime" not in self.options:
            return None
        value = (self.options["runtime"] or "").strip().lower()
        if value in RUNTIME_VALUES:
            return RUNTIME_VALUES[value]
        warn(logger, f"the gpu directive's :runtime: takes no value, 'on' or 'off' (got "
                     f"{value!r}); gpu_admonition_runtime decides instead", "directive",
             location=self.get_location())
        return None


def _label_titles(app: Sphinx, doctree: nodes.document) -> None:
    """Let ``{ref}`label``` without text use the admonition's title.

    Sphinx's std domain only gives titles to labels of sections, captions and
    the like; other labelled nodes are "anonymous" and need an explicit text.
    """
    std = app.env.domains["std"]
    docname = app.env.docname
    for node in doctree.findall(nodes.admonition):
        if "gpu-admonition" not in node["classes"] or not node["ids"]:
            continue
        title = node.next_node(nodes.title)
        text = title.astext() if title is not None else default_title()
        for name in node["names"]:
            if name not in std.labels and std.anonlabels.get(name) == (docname, node["ids"][0]):
                std.labels[name] = (docname, node["ids"][0], text)


class JupyterTitles(SphinxPostTransform):
    """sphinx-tojupyter writes every title, admonition titles too, as a Markdown
    heading; in notebooks, give the gpu admonition's title as bold text instead,
    so it does not become a section of the notebook's outline."""

    default_priority = 200
    builders = ("jupyter", "jupyterpdf")

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(nodes.admonition)):
            if "gpu-admonition" in node["classes"] and node.children \
                    and isinstance(node[0], nodes.title):
                title = node[0]
                node[0] = nodes.paragraph(
                    "", "", nodes.strong("", "", *title.children), classes=["admonition-title"]
                )


class TextParagraphs(SphinxPostTransform):
    """Sphinx's text writer runs the paragraphs of an admonition together
    ("...without one.Google Colab has..."); in text output, give every paragraph
    after the first of a gpu admonition its own block."""

    default_priority = 200
    builders = ("text",)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(nodes.admonition)):
            if "gpu-admonition" not in node["classes"]:
                continue
            paragraphs = [c for c in node.children if isinstance(c, nodes.paragraph)]
            for paragraph in paragraphs[1:]:
                paragraph.replace_self(nodes.container("", paragraph.deepcopy()))


def _add_stylesheet(app: Sphinx) -> None:
    """Ship the stylesheet with HTML builders only."""
    if app.builder.format != "html":
        return
    static = str(STATIC_DIR)
    if static not in app.config.html_static_path:
        app.config.html_static_path.append(static)
    app.add_css_file(CSS_FILE)


def setup_admonition(app: Sphinx) -> None:
    app.add_directive("gpu", GpuDirective)
    app.connect("doctree-read", _label_titles)
    app.connect("builder-inited", _add_stylesheet)
    app.add_post_transform(JupyterTitles)
    app.add_post_transform(TextParagraphs)
