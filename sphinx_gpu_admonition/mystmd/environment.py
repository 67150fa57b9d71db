"""The ``execution-environment`` page part on mystmd: the machine(s) the notebooks ran on.

What QuantEcon's ``!nvidia-smi`` / ``jax.devices()`` cells showed, from what the
kernels reported: one two-column table per machine, the most notebooks first, with
the rows of the Sphinx directive (:func:`..render.machine_rows.machine_rows`), in
the book's language (the same catalog); which notebooks ran where when there were
several machines. With ``:packages:``, each table is followed by
every distribution installed in the kernel's environment (what ``!conda list``
printed), collapsed: the list the records kept (:mod:`.packages`), so that a cache
hit shows the list of the run that produced its outputs.
"""

from __future__ import annotations

from ..model.distributions import sorted_packages
from ..model.files import shown_interpreter
from ..model.record import CACHE, EXECUTED, NotebookRecord, StatusReport
from ..render.labels import Translate, english
from ..render.machine_rows import machine_rows, machine_title, machines, notebooks_label
from . import mdast

ENVIRONMENT_CLASS = "gpu-execution-environment"
PLACEHOLDER_CLASS = "gpu-execution-environment-placeholder"


#: the placeholder of a directive with ``:packages:``
PACKAGES_OPTION_CLASS = "gpu-execution-environment-with-packages"
PACKAGES_CLASS = "gpu-environment-packages"
PACKAGES_MISSING_CLASS = "gpu-environment-packages-missing"


def placeholder(packages: bool = False) -> list[mdast.Node]:
    css = f"{ENVIRONMENT_CLASS} {PLACEHOLDER_CLASS}"
    return [{"type": "div", "class": css + (f" {PACKAGES_OPTION_CLASS}" if packages else ""),
             "children": []}]


def machine_packages(records: list[NotebookRecord], problems: list[str],
                     translate: Translate = english) -> tuple[str, list[tuple[str, str]]] | str:
    """(kernel executable, (name, version) ...) of one machine's kernels, or the
    sentence saying why there is no list."""
    for record in records:
        if record.measured and record.packages is not None:
            return (record.packages.executable,
                    list(sorted_packages(record.packages.distributions)))
    if any(record.provenance == EXECUTED for record in records):
        return translate("No package list: %s.") % (
            problems[0] if problems else translate("the kernel did not name its Python"))
    if any(record.provenance == CACHE for record in records):
        return translate("No package list: these outputs come from mystmd's execution cache, "
                         "saved without it (by an earlier version of sphinx-gpu-admonition); "
                         "the next execution of a page keeps it.")
    return translate("No package list: no notebook of this machine was executed with the "
                     "in-kernel capture by this build.")


def packages_nodes(listed: tuple[str, list[tuple[str, str]]] | str,
                   translate: Translate = english,
                   interpreter_path: bool = True) -> list[mdast.Node]:
    """The list, collapsed (a standard ``details`` node, as ``{dropdown}`` makes), or
    why there is none."""
    if isinstance(listed, str):
        return [mdast.paragraph(listed, css=PACKAGES_MISSING_CLASS)]
    executable, packages = listed
    executable = shown_interpreter(executable, interpreter_path)
    summary = translate("Installed packages in the kernel's environment (%d)") % len(packages)
    return [{"type": "details", "class": PACKAGES_CLASS, "children": [
        {"type": "summary", "children": [mdast.text(
            f"{summary}: {executable}" if executable else summary)]},
        mdast.paragraph(", ".join(f"{name} {version}" for name, version in packages))]}]


def environment_nodes(report: StatusReport, translate: Translate = english,
                      problems: list[str] | None = None,
                      interpreter_path: bool = True) -> list[mdast.Node]:
    """One table per machine; ``problems``: with ``:packages:``, each machine's list
    follows its table (``problems``: why this build could not list one)."""
    listed = machines(report)
    if not listed:
        # the Sphinx directive's sentence
        return [mdast.paragraph(translate(
            "No execution environment recorded yet: no notebook was executed with the "
            "in-kernel capture."))]
    by_docname = report.by_docname()
    nodes: list[mdast.Node] = []
    for number, (environment, docnames) in enumerate(listed, 1):
        records = [by_docname[name] for name in docnames]
        rows: list[list[mdast.Node | str]] = [
            [label, value] for label, value in machine_rows(environment, records, translate)]
        if len(listed) > 1:  # which notebooks ran where (as on Sphinx, without links)
            rows.append([notebooks_label(len(records), translate), ", ".join(
                record.title or record.docname
                for record in sorted(records, key=lambda record: record.docname))])
        nodes += [mdast.paragraph(mdast.strong(machine_title(environment, number, len(listed),
                                                             translate))),
                  mdast.table(None, rows, css="gpu-environment-table")]
        if problems is not None:
            nodes += packages_nodes(machine_packages(records, problems, translate), translate,
                                    interpreter_path)
    return nodes


def fill_placeholders(tree: mdast.Node, report: StatusReport,
                      translate: Translate = english,
                      problems: list[str] | None = None,
                      interpreter_path: bool = True) -> list[str]:
    """Replace every placeholder in ``tree``; the warnings (a ``:packages:`` list
    this build could not read; ``problems``: why). ``interpreter_path``:
    ``publish_interpreter_path`` (off: the package lists do not name the kernel's
    Python)."""
    warnings: list[str] = []
    for node in mdast.walk(tree):
        if node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS):
            with_packages = mdast.has_class(node, PACKAGES_OPTION_CLASS)
            node["class"] = ENVIRONMENT_CLASS
            node["children"] = environment_nodes(report, translate,
                                                 (problems or []) if with_packages else None,
                                                 interpreter_path)
            if with_packages and problems:
                warnings += [f"cannot list the packages of the kernel's environment: {problem}"
                             for problem in problems]
    return warnings
