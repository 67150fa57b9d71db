"""The ``execution-environment`` page part on mystmd: the machine(s) the notebooks ran on.

What QuantEcon's ``!nvidia-smi`` / ``jax.devices()`` cells showed, from what the
kernels reported: one two-column table per machine (``StatusReport.machines``),
with the rows of the Sphinx directive (``ext/environment_table.py``), in the
book's language (the same catalog). With ``:packages:``, each table is followed by
every distribution installed in the kernel's environment (what ``!conda list``
printed), collapsed: the list the records kept (:mod:`.packages`), so that a cache
hit shows the list of the run that produced its outputs.
"""

from __future__ import annotations

from ..model.distributions import sorted_packages
from ..model.formatting import format_gpu_memory
from ..model.record import CACHE, EXECUTED, Environment, NotebookRecord, StatusReport
from ..render.labels import Translate, english
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
                   translate: Translate = english) -> list[mdast.Node]:
    """The list, collapsed (a standard ``details`` node, as ``{dropdown}`` makes), or
    why there is none."""
    if isinstance(listed, str):
        return [mdast.paragraph(listed, css=PACKAGES_MISSING_CLASS)]
    executable, packages = listed
    summary = translate("Installed packages in the kernel's environment (%d)") % len(packages)
    return [{"type": "details", "class": PACKAGES_CLASS, "children": [
        {"type": "summary", "children": [mdast.text(f"{summary}: {executable}")]},
        mdast.paragraph(", ".join(f"{name} {version}" for name, version in packages))]}]


def _libraries(records: list[NotebookRecord]) -> str:
    """Every library the machine's notebooks imported (a library seen at several
    versions shows each, as on Sphinx)."""
    versions: dict[str, set[str]] = {}
    for record in records:
        for name, version in record.environment.libraries.items():
            versions.setdefault(name, set()).add(version)
    return ", ".join(f"{name} {' / '.join(sorted(found))}"
                     for name, found in sorted(versions.items()))


def machine_rows(environment: Environment, records: list[NotebookRecord],
                 translate: Translate = english) -> list[list[mdast.Node | str]]:
    host, jax = environment.host, environment.jax
    rows: list[list[mdast.Node | str]] = [[translate("Device"), environment.device_label]]
    if host.cpu:
        rows.append([translate("CPU"), host.cpu + (f", {host.cores} " + translate("cores")
                                                   if host.cores else "")])
    if host.memory_gb:
        rows.append([translate("Memory"), f"{host.memory_gb:g} GB"])
    for gpu in environment.gpus:
        detail = ", ".join(part for part in (
            format_gpu_memory(gpu.memory_mb) if gpu.memory_mb else None,
            f"driver {gpu.driver}" if gpu.driver else None,
            f"CUDA {gpu.cuda}" if gpu.cuda else None) if part)
        rows.append([translate("GPU"), gpu.name + (f" ({detail})" if detail else "")])
    rows.append([translate("JAX backend"), jax.backend or translate("not used")])
    if jax.devices:
        rows.append([translate("JAX devices"), jax.device_summary or ""])
    if jax.version:
        rows.append([translate("JAX"), f"jax {jax.version}" + (f", jaxlib {jax.jaxlib_version}"
                                                     if jax.jaxlib_version else "")])
    if environment.python:
        rows.append([translate("Python"), environment.python])
    libraries = _libraries(records)
    if libraries:
        rows.append([translate("Libraries"), libraries])
    if host.os:
        rows.append([translate("OS"),
                     f"{host.os} ({host.machine})" if host.machine else host.os])
    rows.append([translate("Notebooks (%d)") % len(records),
                 ", ".join(r.docname for r in records)])
    return rows


def environment_nodes(report: StatusReport, translate: Translate = english,
                      problems: list[str] | None = None) -> list[mdast.Node]:
    """One table per machine; ``problems``: with ``:packages:``, each machine's list
    follows its table (``problems``: why this build could not list one)."""
    machines = list(report.machines().values())
    if not machines:
        # the Sphinx directive's sentence
        return [mdast.paragraph(translate(
            "No execution environment recorded yet: no notebook was executed with the "
            "in-kernel capture."))]
    by_docname = report.by_docname()
    nodes: list[mdast.Node] = []
    for number, (environment, docnames) in enumerate(machines, 1):
        title = (translate("Execution environment: %s") % environment.device_label
                 if len(machines) == 1 else
                 translate("Machine %(number)d of %(count)d: %(label)s") % {
                     "number": number, "count": len(machines),
                     "label": environment.device_label})
        records = [by_docname[name] for name in docnames]
        nodes += [mdast.paragraph(mdast.strong(title)),
                  mdast.table(None, machine_rows(environment, records, translate),
                              css="gpu-environment-table")]
        if problems is not None:
            nodes += packages_nodes(machine_packages(records, problems, translate), translate)
    return nodes


def fill_placeholders(tree: mdast.Node, report: StatusReport,
                      translate: Translate = english,
                      problems: list[str] | None = None) -> list[str]:
    """Replace every placeholder in ``tree``; the warnings (a ``:packages:`` list
    this build could not read; ``problems``: why)."""
    warnings: list[str] = []
    for node in mdast.walk(tree):
        if node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS):
            with_packages = mdast.has_class(node, PACKAGES_OPTION_CLASS)
            node["class"] = ENVIRONMENT_CLASS
            node["children"] = environment_nodes(report, translate,
                                                 (problems or []) if with_packages else None)
            if with_packages and problems:
                warnings += [f"cannot list the packages of the kernel's environment: {problem}"
                             for problem in problems]
    return warnings
