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

The standard notice tells readers how to run the page on a GPU in Google Colab,
with only the ways that exist on the page: the theme's launch button
(sphinx-book-theme / quantecon-book-theme with ``launch_buttons.colab_url``)
and a direct "Open this notebook in Colab" link (``gpu_colab_url``, or derived
from ``html_theme_options`` ``repository_url`` for ``.ipynb`` sources).  The
node's ``gpu_colab`` attribute says which (``"button"``, ``"link"``, ``"both"``
or ``"none"``); :mod:`.page_info` warns about notebook pages with ``"none"``
and makes the first paragraph (class ``gpu-notice-intro``) truthful once it
knows where the page ran.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ..render import notice_text
from ..render.notice_text import INTRO_CLASS
from .blocks import NOTICE_CLASS, notices
from .config import get_config
from .i18n import _, translate
from .runtime import notice_paragraph
from .state import app_of
from .warnings import warn

logger = logging.getLogger(__name__)

#: Classes every gpu admonition carries, before the configured ones.
BASE_CLASSES = (NOTICE_CLASS, "admonition-gpu")
#: Values of the ``:runtime:`` option (no value means "on").
RUNTIME_VALUES = {"": True, "on": True, "off": False}
#: Class (and ``gpu_kind`` value) for each kind of notice.
KIND_CLASSES = {"optional": "gpu-optional", "required": "gpu-required"}

COLAB_URL = "https://colab.research.google.com/"
#: Themes that show a Colab launch button with ``launch_buttons.colab_url``.
LAUNCH_BUTTON_THEMES = ("sphinx_book_theme", "quantecon_book_theme")
COLAB_LINK_CLASS = "gpu-colab-link"
_GITHUB_REPOSITORY = re.compile(r"^https?://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$")
STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
CSS_FILE = "gpu-admonition.css"


#: the notice's texts in the book's language (looked up when each is asked for)
TEXTS = notice_text.Texts(translate)


def _theme_options(config: Any) -> dict[str, Any]:
    options = config["html_theme_options"]
    return options if isinstance(options, dict) else {}


def launch_button_theme(config: Any) -> str | None:
    """The theme's name when its pages show a Colab launch button, else None."""
    theme = config["html_theme"]
    if theme not in LAUNCH_BUTTON_THEMES:
        return None
    options = _theme_options(config)
    launch = options.get("launch_buttons")
    if not isinstance(launch, dict) or not launch.get("colab_url"):
        return None
    # sphinx-book-theme builds its buttons from the GitHub repository of the
    # sources; quantecon-book-theme from the repository of the notebooks
    # (its "play" icon appears only with nb_repository_url)
    if theme == "quantecon_book_theme":
        repository = options.get("nb_repository_url")
    else:
        repository = _GITHUB_REPOSITORY.match(str(options.get("repository_url") or ""))
    return str(theme) if repository else None


def _colab_address(repository: re.Match[str], branch: Any, folder: Any, docname: str) -> str:
    """Colab's address of ``docname``'s .ipynb in a GitHub ``repository`` folder."""
    org, name = repository.groups()
    folder = str(folder or "").strip("/")
    path = f"{folder}/{docname}.ipynb" if folder else f"{docname}.ipynb"
    return (f"https://colab.research.google.com/github/{quote(org)}/{quote(name)}"
            f"/blob/{quote(str(branch or 'main'))}/{quote(path)}")


def colab_link(config: Any, template: str | None, docname: str, source: Path) -> str | None:
    """Colab's address of this page's notebook, or None when it is not known.

    ``template`` (``gpu_colab_url``) wins; then quantecon-book-theme's repository of notebooks
    (``nb_repository_url``, ``nb_branch``, ``nb_path_to_notebooks``, as its own
    launch button does); then the GitHub repository of ``html_theme_options``
    (which Jupyter Book fills from ``repository:``), but only for ``.ipynb``
    sources: Colab cannot open a MyST Markdown notebook.
    """
    if template:
        return template.replace("{path}", quote(docname))
    options = _theme_options(config)
    notebooks = _GITHUB_REPOSITORY.match(str(options.get("nb_repository_url") or ""))
    if notebooks is not None and config["html_theme"] == "quantecon_book_theme":
        return _colab_address(notebooks, options.get("nb_branch"),
                              options.get("nb_path_to_notebooks"), docname)
    match = _GITHUB_REPOSITORY.match(str(options.get("repository_url") or ""))
    if match is None:
        return None
    if source.suffix != ".ipynb" and not source.with_suffix(".ipynb").is_file():
        return None
    return _colab_address(match, options.get("repository_branch"),
                          options.get("path_to_docs"), docname)


def colab_paths(button_theme: str | None, link: str | None) -> str:
    """``"button"``, ``"link"``, ``"both"`` or ``"none"``: the ways to Colab on a page."""
    if button_theme and link:
        return "both"
    return "button" if button_theme else "link" if link else "none"


def _colab_reference(link: str) -> nodes.reference:
    return nodes.reference("", TEXTS.open_in_colab(), refuri=link,
                           classes=[COLAB_LINK_CLASS])


def default_notice(kind: str, button_theme: str | None = None,
                   link: str | None = None) -> list[nodes.Element]:
    """The translated standard notice as markup-independent docutils nodes.

    The how-to steps name the theme's launch button only when ``button_theme``
    shows one; ``link`` (this page's notebook in Colab) is a step of its own,
    or follows the steps when the button is there too.
    """
    colab = TEXTS.colab(not (button_theme is None and link is None))
    before, placeholder, after = colab.partition("{colab}")
    if not placeholder:  # a translation lost the placeholder: keep the link anyway
        before, after = "", " " + colab
    how = nodes.paragraph()
    if before:
        how += nodes.Text(before)
    how += nodes.reference("", "Google Colab", refuri=COLAB_URL)
    if after:
        how += nodes.Text(after)
    result: list[nodes.Element] = [nodes.paragraph("", TEXTS.intro(kind), classes=[INTRO_CLASS]),
                                   how]
    steps: list[nodes.Element] = []
    if button_theme == "quantecon_book_theme":
        steps += [nodes.paragraph("", str(_('Click on the "play" icon top right'))),
                  nodes.paragraph("", str(_("Select Colab")))]
    elif button_theme:
        steps += [nodes.paragraph("", str(_('Click on the "launch" icon (a rocket) top right'))),
                  nodes.paragraph("", str(_("Select Colab")))]
    elif link:
        steps.append(nodes.paragraph("", "", _colab_reference(link)))
    if steps:
        steps.append(nodes.paragraph("", str(_("Set the runtime environment to include a GPU"))))
        result.append(nodes.enumerated_list("", *(nodes.list_item("", step) for step in steps),
                                            enumtype="arabic", prefix="", suffix="."))
    if button_theme and link:
        result.append(nodes.paragraph("", "", _colab_reference(link)))
    return result


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
        config = get_config(app_of(self.env))
        if self.arguments:
            warn(
                logger,
                f"the gpu directive takes no argument (got {self.arguments[0]!r}); "
                "it is ignored: use the :title: option to change the title",
                "directive",
                location=self.get_location(),
            )
        kind = "required" if "required" in self.options else "optional"

        title_text = self.options.get("title") or config.admonition_title or TEXTS.title()
        title_nodes, messages = self.state.inline_text(title_text, self.lineno)
        title = nodes.title(title_text, "", *title_nodes)
        self.set_source_info(title)

        colab = None  # a body of the author's own: no claim about ways to Colab
        if self.content:
            body = self.parse_content_to_nodes()
        else:
            configured = (
                config.admonition_required_body if kind == "required" else config.admonition_body
            )
            if configured:
                body = self.parse_text_to_nodes(configured, offset=self.content_offset)
            else:
                button_theme = launch_button_theme(self.config)
                link = colab_link(self.config, config.colab_url, self.env.docname,
                                  Path(self.env.doc2path(self.env.docname)))
                body = default_notice(kind, button_theme, link)
                colab = colab_paths(button_theme, link)

        classes = [*BASE_CLASSES, *config.admonition_class, *self.options.get("class", []),
                   KIND_CLASSES[kind]]
        node = nodes.admonition("", title, *body, classes=list(dict.fromkeys(classes)))
        node["gpu_kind"] = kind
        if colab is not None:
            node["gpu_colab"] = colab
        requested = self._runtime_option()
        if requested if requested is not None else config.admonition_runtime:
            node += notice_paragraph(self.env, requested=bool(requested))
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
    for node in notices(doctree):
        if not node["ids"]:
            continue
        title = node.next_node(nodes.title)
        text = title.astext() if title is not None else TEXTS.title()
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
        for node in notices(self.document):
            if node.children and isinstance(node[0], nodes.title):
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
        for node in notices(self.document):
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
