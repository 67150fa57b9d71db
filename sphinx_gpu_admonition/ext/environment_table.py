"""The ``{execution-environment}`` directive: the machine(s) the notebooks ran on.

It replaces the hand-written ``!nvidia-smi``, ``!conda list`` and
``jax.devices()`` cells of a status page with what the kernels reported
(:class:`~.record.Environment`): host CPU, cores and memory, GPU name, memory
and driver, the JAX backend and devices, Python and library versions.

The rows of a machine are :func:`..render.machine_rows.machine_rows` (mystmd's
tables and each page's "executed on" box have the same): its "Libraries" row is
the union of the libraries every notebook that ran there imported (the
``!conda list`` cell it replaces listed them all).

With the ``:packages:`` flag, each machine's table is followed by every
distribution installed in the kernel's environment (what ``!conda list``
printed), collapsed in HTML: read by one ``importlib.metadata`` call in a
subprocess of the kernel's executable (once per build and executable), never
inside the notebooks' kernels.  After a cache miss the list is kept in the
record (and so in the sidecar beside the jupyter-cache), so that builds whose
outputs all come from the cache show the list of the run that produced them;
for a notebook this build executed otherwise it is read when the page is
written.  Where no list can be had, the page says why.

When the notebooks ran on different machines (for example outputs reused from
a cache built on a GPU runner, next to notebooks executed on a laptop), there is
one table per machine (:meth:`~.record.StatusReport.machines`), each listing
the notebooks it ran.

Same pattern as ``{execution-status}``: a placeholder at read time, the pages
returned by ``env-updated`` when any record changed, and post-transforms that
fill it: escaped HTML tables for HTML builders (so that no theme's table
translator is involved), plain docutils tables for every other builder.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, NamedTuple

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ..model.distributions import sorted_packages
from ..model.files import shown_interpreter, without_interpreter
from ..model.record import (
    CACHE,
    EXECUTED,
    NotebookRecord,
    StatusReport,
)
from ..render.machine_rows import machine_rows, machine_title, machines, notebooks_label
from ..render.templates import render as render_template
from .blocks import blocks_of
from .capture import all_records
from .changes import records_changed
from .config import get_config
from .i18n import translate
from .kernel_packages import (  # noqa: F401 - installed_distributions: also read from here
    Packages,
    forget_packages,
    installed_distributions,
    kernel_executable,
    kernel_name,
)
from .state import app_of, env_data
from .support import (
    NonHtmlPostTransform,
    add_assets,
    html_tree_may_hold,
    in_download_notebook,
    notebook_table_text,
)
from .warnings import warn

ENVIRONMENT_PAGES = "gpu_environment_pages"
PACKAGES_CLASS = "gpu-environment-packages"
PACKAGES_MISSING_CLASS = "gpu-environment-packages-missing"

logger = logging.getLogger(__name__)


class execution_environment_placeholder(nodes.container):  # noqa: N801 - docutils style
    """Where the environment tables go; replaced by a post-transform for every builder."""


def environment_pages(env: BuildEnvironment) -> set[str]:
    return env_data(env, ENVIRONMENT_PAGES, set)


class ExecutionEnvironmentDirective(SphinxDirective):
    """``{execution-environment}``: tables of the machines that executed the notebooks."""

    has_content = False
    option_spec = {
        "class": directives.class_option,
        "name": directives.unchanged,
        "packages": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        environment_pages(self.env).add(self.env.docname)
        node = execution_environment_placeholder(
            classes=["gpu-execution-environment", *self.options.get("class", [])])
        node["packages"] = "packages" in self.options
        self.set_source_info(node)
        self.add_name(node)
        return [node]


class EnvironmentPagesCollector(EnvironmentCollector):
    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        environment_pages(env).discard(docname)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: set[str],
                    other: BuildEnvironment) -> None:
        environment_pages(env).update(environment_pages(other) & docnames)

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        pass


def _env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    if not records_changed(app, env):
        return []
    return sorted(environment_pages(env) & env.found_docs)


def _records_of(report: StatusReport, docnames: list[str]) -> list[NotebookRecord]:
    records = report.by_docname()
    return [records[docname] for docname in docnames if docname in records]


# -- the kernel's installed distributions (the `!conda list` replacement) ------------------
#: the package list of a machine, or why the page shows none
MachinePackages = tuple[str, Packages] | str


def build_machine_packages(env: BuildEnvironment, report: StatusReport,
                           location: nodes.Node) -> dict[str, MachinePackages]:
    """Machine id -> (kernel executable, its distributions), or the sentence saying why
    there is no list.

    A record keeps the list read after its cache miss (so a cache hit shows the list
    of the run that produced its outputs); for a notebook this build executed
    without one (``force``, ``auto``) the list is read now, once per executable
    (its kernel's environment is this machine's).
    """
    result: dict[str, MachinePackages] = {}
    kept: dict[str, MachinePackages] = {}
    publish = get_config(app_of(env)).publish_interpreter_path
    for record in report.notebooks:
        if record.measured and record.packages is not None:
            kept.setdefault(record.environment.machine_id, (
                shown_interpreter(record.packages.executable, publish),
                sorted_packages(record.packages.distributions)))
    for record in report.notebooks:
        if not record.measured:
            continue
        machine = record.environment.machine_id
        if machine in kept:
            result[machine] = kept[machine]
            continue
        if isinstance(result.get(machine), tuple):
            continue
        if record.provenance != EXECUTED:
            result.setdefault(machine, _not_kept_text(record.provenance))
            continue
        kernel = kernel_name(env, record.docname)
        executable = kernel_executable(kernel)
        if executable is None:
            result[machine] = translate(
                "No package list: the kernel %s is not a Python kernel this build can "
                "start.") % kernel
            continue
        packages = installed_distributions(executable)
        if isinstance(packages, str):
            warn(logger, f"cannot list the packages of the kernel's environment: {packages}",
                 "capture", location=location)
            result[machine] = translate("No package list: %s.") % without_interpreter(
                packages, executable, publish)
            continue
        result[machine] = (shown_interpreter(executable, publish), packages)
    return result


def _not_kept_text(provenance: str) -> str:
    if provenance == CACHE:
        return translate("No package list: these outputs come from the jupyter-cache, "
                         "saved without it (by an earlier version of sphinx-gpu-admonition); "
                         "the next execution of a notebook keeps it.")
    return translate("No package list: these notebooks were executed by an earlier build "
                     "that did not keep it; a fresh build lists it again.")


def packages_summary(count: int) -> str:
    return translate("Installed packages in the kernel's environment (%d)") % count


def packages_node(executable: str, packages: tuple[tuple[str, str], ...]) -> nodes.Node:
    container = nodes.container(classes=[PACKAGES_CLASS])
    summary = packages_summary(len(packages))
    container += nodes.paragraph(text=f"{summary}: {executable}" if executable else summary)
    container += nodes.paragraph(text=", ".join(f"{n} {v}" for n, v in packages))
    return container


def _doc_reference(fromdoc: str, docname: str, text: str,
                   known_docs: set[str]) -> nodes.Node:
    if docname not in known_docs:
        return nodes.Text(text)
    link = addnodes.pending_xref("", refdoc=fromdoc, reftarget="/" + docname, reftype="doc",
                                 refdomain="std", refexplicit=True, refwarn=False)
    link += nodes.inline(text=text)
    return link


def _row(label: str, *value: nodes.Node) -> nodes.row:
    row = nodes.row()
    name = nodes.entry("", nodes.paragraph(text=label))
    row += name
    row += nodes.entry("", nodes.paragraph("", "", *value))
    return row


def _empty_text() -> str:
    return translate("No execution environment recorded yet: no notebook was executed "
                     "with the in-kernel capture.")


def table_id(placeholder: int, machine: int) -> str:
    """The HTML id of a machine's table: unique when a page has several directives
    (the first keeps the short form, ``gpu-environment-1``, for links)."""
    prefix = "gpu-environment" if placeholder == 0 else f"gpu-environment-{placeholder + 1}"
    return f"{prefix}-{machine}"


class MachineTable(NamedTuple):
    """The rows of one machine's table: every builder renders these."""

    ident: str
    title: str
    rows: list[tuple[str, str]]
    #: (docname, title) of the notebooks it ran, when the build used several machines
    notebooks: list[tuple[str, str]]
    notebooks_label: str
    #: (kernel executable, (name, version) ...) of the build machine, with :packages:
    packages: tuple[str, tuple[tuple[str, str], ...]] | None
    packages_summary: str
    #: with :packages: and no list: why not
    packages_note: str = ""


def machine_tables(report: StatusReport, placeholder: int = 0,
                   packages: dict[str, Any] | None = None) -> list[MachineTable]:
    listed = machines(report)
    titles = report.by_docname()
    tables = []
    for number, (environment, docnames) in enumerate(listed, start=1):
        notebooks = []
        if len(listed) > 1:
            for docname in sorted(docnames):
                record = titles.get(docname)
                notebooks.append((docname, record.title if record is not None and record.title
                                  else docname))
        installed = (packages or {}).get(environment.machine_id)
        note = ""
        if isinstance(installed, str):
            installed, note = None, installed
        elif installed is None and packages is not None:
            note = translate("No package list: no notebook of this machine was executed "
                             "with the in-kernel capture by this build.")
        tables.append(MachineTable(
            ident=table_id(placeholder, number),
            title=machine_title(environment, number, len(listed), translate),
            rows=machine_rows(environment, _records_of(report, docnames), translate),
            notebooks=notebooks, notebooks_label=notebooks_label(len(docnames), translate),
            packages=installed,
            packages_summary=packages_summary(len(installed[1])) if installed else "",
            packages_note=note))
    return tables


def environment_table_nodes(report: StatusReport, fromdoc: str, known_docs: set[str],
                            placeholder: int = 0, packages: dict[str, Any] | None = None,
                            notebook: bool = False) -> list[nodes.Node]:
    """One two-column table per machine; the notebooks each ran when there are several.

    ``notebook``: for sphinx-tojupyter, which writes a table as a Markdown pipe table
    (valid only with a header: the first row is it) and a link inside a table before
    the table (the notebooks are text there).
    """
    tables = machine_tables(report, placeholder, packages)
    text = notebook_table_text if notebook else str
    if not tables:
        return [nodes.paragraph(text=_empty_text(), classes=["gpu-environment-empty"])]
    result: list[nodes.Node] = []
    for machine in tables:
        table = nodes.table(classes=["gpu-environment-table", "colwidths-auto"],
                            ids=[machine.ident])
        table += nodes.title(text=machine.title)
        group = nodes.tgroup(cols=2)
        table += group
        # relative widths (the text builder takes them as characters)
        group += nodes.colspec(colwidth=20, stub=1)
        group += nodes.colspec(colwidth=60)
        rows = [_row(text(label), nodes.Text(text(value))) for label, value in machine.rows]
        if machine.notebooks:
            links: list[nodes.Node] = []
            for docname, title in machine.notebooks:
                if links:
                    links.append(nodes.Text(", "))
                links.append(nodes.Text(text(title)) if notebook
                             else _doc_reference(fromdoc, docname, title, known_docs))
            rows.append(_row(text(machine.notebooks_label), *links))
        if notebook and rows:
            group += nodes.thead("", rows.pop(0))
        group += nodes.tbody("", *rows)
        result.append(table)
        if notebook:  # a Markdown table ends at a blank line, else it takes the next line
            result.append(nodes.paragraph())
        if machine.packages:
            result.append(packages_node(*machine.packages))
        elif machine.packages_note:
            result.append(nodes.paragraph(text=machine.packages_note,
                                          classes=[PACKAGES_MISSING_CLASS]))
    return result


def environment_html(report: StatusReport, page_uri: Callable[[str], str | None],
                     placeholder: int = 0, packages: dict[str, Any] | None = None) -> str:
    """The same tables as HTML (a template: everything escaped; ``<th scope="row">``)."""
    return render_template("environment.html", tables=machine_tables(report, placeholder,
                                                                       packages),
                           empty=_empty_text(), page_uri=page_uri)


class EnvironmentTableToHtml(SphinxPostTransform):
    """HTML builders: escaped markup, independent of the theme's table translator."""

    default_priority = 7
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        if not html_tree_may_hold(self.env, self.env.docname, environment_pages(self.env)):
            return
        placeholders = blocks_of(self.document, execution_environment_placeholder)
        if not placeholders:
            return
        report = StatusReport(all_records(self.env))
        builder = app_of(self.env).builder
        fromdoc = self.env.docname
        known = self.env.all_docs

        def page_uri(docname: str) -> str | None:
            return builder.get_relative_uri(fromdoc, docname) if docname in known else None

        for position, node in enumerate(placeholders):
            packages = (build_machine_packages(self.env, report, node)
                        if node.get("packages") else None)
            markup = environment_html(report, page_uri, position, packages)
            classes = " ".join(html.escape(c) for c in ["docutils", "container",
                                                          *node["classes"]])
            ident = f' id="{html.escape(node["ids"][0])}"' if node["ids"] else ""
            node.replace_self(nodes.raw("", f'<div class="{classes}"{ident}>{markup}</div>',
                                        format="html"))
        add_assets(self.document, "css")


class EnvironmentTableToNodes(NonHtmlPostTransform):
    """Other builders: docutils tables (links resolved at priority 10)."""

    default_priority = 8

    def run(self, **kwargs: Any) -> None:
        placeholders = blocks_of(self.document, execution_environment_placeholder)
        if not placeholders:
            return
        report = StatusReport(all_records(self.env))
        known = set(self.env.all_docs)
        notebook = in_download_notebook(self.env)
        for position, node in enumerate(placeholders):
            container = nodes.container(classes=node["classes"], ids=node["ids"])
            packages = (build_machine_packages(self.env, report, node)
                        if node.get("packages") else None)
            container.extend(environment_table_nodes(report, self.env.docname, known,
                                                     position, packages, notebook))
            node.replace_self(container)
        add_assets(self.document, "css")


def _forget_packages(app: Sphinx) -> None:
    forget_packages()


def setup_environment_table(app: Sphinx) -> None:
    app.connect("builder-inited", _forget_packages)
    app.add_directive("execution-environment", ExecutionEnvironmentDirective)
    app.add_env_collector(EnvironmentPagesCollector)
    app.connect("env-updated", _env_updated)
    app.add_post_transform(EnvironmentTableToHtml)
    app.add_post_transform(EnvironmentTableToNodes)
