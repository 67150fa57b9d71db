"""The ``execution-environment`` page part on mystmd: the machine(s) the notebooks ran on.

What QuantEcon's ``!nvidia-smi`` / ``jax.devices()`` cells showed, from what the
kernels reported: one two-column table per machine (``StatusReport.machines``),
with the rows of the Sphinx directive (``ext/environment_table.py``; English,
without its ``:packages:`` list).
"""

from __future__ import annotations

from ..model.formatting import format_gpu_memory
from ..model.record import Environment, NotebookRecord, StatusReport
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


def machine_rows(environment: Environment,
                 records: list[NotebookRecord]) -> list[list[mdast.Node | str]]:
    host, jax = environment.host, environment.jax
    rows: list[list[mdast.Node | str]] = [["Device", environment.device_label]]
    if host.cpu:
        rows.append(["CPU", host.cpu + (f", {host.cores} cores" if host.cores else "")])
    if host.memory_gb:
        rows.append(["Memory", f"{host.memory_gb:g} GB"])
    for gpu in environment.gpus:
        detail = ", ".join(part for part in (
            format_gpu_memory(gpu.memory_mb) if gpu.memory_mb else None,
            f"driver {gpu.driver}" if gpu.driver else None,
            f"CUDA {gpu.cuda}" if gpu.cuda else None) if part)
        rows.append(["GPU", gpu.name + (f" ({detail})" if detail else "")])
    rows.append(["JAX backend", jax.backend or "not used"])
    if jax.devices:
        rows.append(["JAX devices", jax.device_summary or ""])
    if jax.version:
        rows.append(["JAX", f"jax {jax.version}" + (f", jaxlib {jax.jaxlib_version}"
                                                     if jax.jaxlib_version else "")])
    if environment.python:
        rows.append(["Python", environment.python])
    libraries = _libraries(records)
    if libraries:
        rows.append(["Libraries", libraries])
    if host.os:
        rows.append(["OS", f"{host.os} ({host.machine})" if host.machine else host.os])
    rows.append([f"Notebooks ({len(records)})", ", ".join(r.docname for r in records)])
    return rows


def environment_nodes(report: StatusReport) -> list[mdast.Node]:
    machines = list(report.machines().values())
    if not machines:
        return [mdast.paragraph("No notebook of this build reported its machine (no "
                                "capture data).")]
    by_docname = report.by_docname()
    nodes: list[mdast.Node] = []
    for number, (environment, docnames) in enumerate(machines, 1):
        title = (f"Execution environment: {environment.device_label}" if len(machines) == 1
                 else f"Machine {number} of {len(machines)}: {environment.device_label}")
        records = [by_docname[name] for name in docnames]
        nodes += [mdast.paragraph(mdast.strong(title)),
                  mdast.table(None, machine_rows(environment, records),
                              css="gpu-environment-table")]
    return nodes


def fill_placeholders(tree: mdast.Node, report: StatusReport) -> bool:
    found = False
    for node in mdast.walk(tree):
        if node.get("type") == "div" and mdast.has_class(node, PLACEHOLDER_CLASS):
            node["class"] = ENVIRONMENT_CLASS
            node["children"] = environment_nodes(report)
            found = True
    return found
