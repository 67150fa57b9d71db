"""The ``execution-environment`` page part on mystmd: the machine(s) the notebooks ran on.

What QuantEcon's ``!nvidia-smi`` / ``jax.devices()`` cells showed, from what the
kernels reported: one two-column table per machine (``StatusReport.machines``),
with the rows of the Sphinx directive (``ext/environment_table.py``), in the
book's language (the same catalog).
"""

from __future__ import annotations

from ..model.formatting import format_gpu_memory
from ..model.record import Environment, NotebookRecord, StatusReport
from ..render.labels import Translate, english
from . import mdast

ENVIRONMENT_CLASS = "gpu-execution-environment"
PLACEHOLDER_CLASS = "gpu-execution-environment-placeholder"


def placeholder() -> list[mdast.Node]:
    return [{"type": "div", "class": f"{ENVIRONMENT_CLASS} {PLACEHOLDER_CLASS}",
             "children": []}]


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


def environment_nodes(report: StatusReport,
                      translate: Translate = english) -> list[mdast.Node]:
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
    return nodes


def fill_placeholders(tree: mdast.Node, report: StatusReport,
                      translate: Translate = english) -> bool:
    found = False
    for node in mdast.walk(tree):
        if node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS):
            node["class"] = ENVIRONMENT_CLASS
            node["children"] = environment_nodes(report, translate)
            found = True
    return found
