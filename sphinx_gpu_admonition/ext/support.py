"""Sphinx plumbing shared by the extension's features (no feature of its own).

- the application behind an environment (post-transforms and collectors get an
  environment; Sphinx 9 deprecates ``SphinxTransform.app``), and the base of the
  post-transforms that stand in for an HTML one on other builders;
- download notebooks (sphinx-tojupyter): whether this build writes them, and a
  table cell's text there;
- the pages with a status table, and the one the cell badges link to;
- the stylesheet and script of the status page and the environment table:
  ``static/`` is shipped with HTML builders only, and a page gets the files its
  doctree asks for (:func:`add_assets`);
- the compiled templates, kept in the doctree folder between builds.

:func:`setup_support` connects it all, once per application, whichever feature
asks first.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms.post_transforms import SphinxPostTransform

from ..render.templates import keep_compiled_templates
from .state import app_of, env_data, remember_app

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
JS_FILE = "gpu-status.js"
CSS_FILE = "gpu-status.css"

#: doctree attribute: the assets ("css", "js") the page needs
ASSETS_ATTRIBUTE = "gpu_status_assets"


class NonHtmlPostTransform(SphinxPostTransform):
    """The fallback of one of the extension's HTML post-transforms, for every other
    builder.  On an HTML page the HTML transform (an earlier priority) has already
    replaced every placeholder, so walking the page again would find none: three
    such walks cost 0.07 ms a page, for nothing."""

    def is_supported(self) -> bool:
        return app_of(self.env).builder.format != "html" and super().is_supported()


def html_tree_may_hold(env: BuildEnvironment, docname: str, pages: Collection[str]) -> bool:
    """Whether the HTML doctree of ``docname`` may hold nodes that documents in ``pages``
    got when they were read (a directive or role notes its page in the environment).

    The tree of an HTML page is its document's; a single-page HTML build assembles
    the root document's tree with every document its toctrees include, directly or
    below.  A post-transform looking for such nodes need not walk a page that holds
    none: each walk costs as much as the page has nodes, and most pages have none.
    Only for builders of the "html" format: LaTeX, Texinfo and man pages also add
    documents no toctree includes (appendices).
    """
    if not pages:
        return False
    if docname in pages:
        return True
    seen = {docname}
    below = list(env.toctree_includes.get(docname, ()))
    while below:
        included = below.pop()
        if included in pages:
            return True
        if included not in seen:
            seen.add(included)
            below.extend(env.toctree_includes.get(included, ()))
    return False


# -- download notebooks (sphinx-tojupyter) ------------------------------------------
#: builders of download notebooks (sphinx-tojupyter): they are the lecture, not a
#: build report, so they keep the admonition's sentence but not the environment box
NOTEBOOK_BUILDERS = ("jupyter", "jupyterpdf")


def in_download_notebook(env: BuildEnvironment) -> bool:
    """Whether this build writes download notebooks (sphinx-tojupyter)."""
    return app_of(env).builder.name in NOTEBOOK_BUILDERS


def notebook_table_text(text: str) -> str:
    """A table cell's text for sphinx-tojupyter, which writes tables as Markdown pipe
    tables as they are: a ``|`` in a value would split its cell."""
    return text.replace("|", "\\|")


# -- the status pages, one of which the badges link to --------------------------------
#: env attribute (plain data, pickled with the environment): the pages with a table
#: of this build, and whether each lists every notebook (see link_target)
STATUS_PAGES = "gpu_status_pages"


def status_pages(env: BuildEnvironment) -> dict[str, bool]:
    """docname -> whether every table of this build on it lists all notebooks (no
    ``:min-seconds:``), for the pages with such a table (noted by the directive)."""
    return env_data(env, STATUS_PAGES, dict)


def link_target(env: BuildEnvironment) -> str | None:
    """The status page that badges link to: the first by name whose tables list every
    notebook with its cells (no ``:min-seconds:``, ``:cells: no``), preferring pages
    that are not orphans."""
    pages = status_pages(env)
    if not pages:
        return None
    return min(pages, key=lambda docname: (not pages[docname],
                                           bool(env.metadata.get(docname, {}).get("orphan")),
                                           docname))


# -- assets --------------------------------------------------------------------------
def add_assets(document: nodes.document, *assets: str) -> None:
    """Ask for the status stylesheet ("css") and script ("js") on this page."""
    current = list(document.get(ASSETS_ATTRIBUTE, []))
    document[ASSETS_ATTRIBUTE] = current + [a for a in assets if a not in current]


def add_static_path(app: Sphinx) -> None:
    """Ship ``static/`` with HTML builders only (idempotent)."""
    remember_app(app)
    if app.builder.format != "html":
        return
    static = str(STATIC_DIR)
    if static not in app.config.html_static_path:
        app.config.html_static_path.append(static)


#: beside the capture folder, not in it: that folder exists only when capture is on
COMPILED_TEMPLATES_FOLDER = "sphinx-gpu-admonition-templates"


def _keep_compiled_templates(app: Sphinx) -> None:
    keep_compiled_templates(Path(app.doctreedir) / COMPILED_TEMPLATES_FOLDER)


def _page_assets(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                 doctree: nodes.document | None) -> None:
    if doctree is None:
        return
    assets = doctree.get(ASSETS_ATTRIBUTE) or []
    if "css" in assets:
        app.add_css_file(CSS_FILE)
    if "js" in assets:
        app.add_js_file(JS_FILE, defer="defer")


def setup_support(app: Sphinx) -> None:
    """Connect the plumbing (once per application)."""
    app.connect("builder-inited", add_static_path)
    app.connect("builder-inited", _keep_compiled_templates)
    app.connect("html-page-context", _page_assets)
