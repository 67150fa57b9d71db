"""The rows of a machine's table, decided once for every engine: the Sphinx page's
"executed on" box and ``{execution-environment}`` tables (HTML, the other builders,
sphinx-tojupyter's ``status.ipynb``) and mystmd's ``execution-environment`` tables
render these (label, value) pairs; only how they wrap them differs.

The rows: CPU and cores, memory (GiB, as the records measure it), each GPU with
its memory, driver and CUDA (``none`` when the machine had none: a reader comparing
two machines sees it), the JAX backend, its devices (``1x gpu:Tesla T4``), the JAX
versions with its plugins, Python, the libraries the notebooks imported (the union
over the machine's notebooks, a library seen at several versions with each, oldest
first; JAX itself is in its own row) and the OS.  The machine's device label is the
table's title (:func:`machine_title`), not a row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..model.device import is_gpu
from ..model.formatting import format_gib, format_gpu_memory
from ..model.record import Environment, NotebookRecord, StatusReport
from .labels import Translate, english

#: libraries with a row of their own (``JAX``)
_OWN_ROW = ("jax", "jaxlib")


def _version_key(version: str) -> list[tuple[int, int | str]]:
    """``2.10.0`` after ``2.2.0``: numbers compared as numbers, the rest as text."""
    return [(0, int(part)) if part.isdigit() else (1, part)
            for part in re.findall(r"\d+|[^\d.]+", version)]


def imported_libraries(records: Iterable[NotebookRecord]) -> dict[str, str]:
    """Every library the notebooks imported, with each version seen (oldest first)."""
    versions: dict[str, set[str]] = {}
    for record in records:
        for name, version in record.environment.libraries.items():
            versions.setdefault(name, set()).add(version)
    return {name: " / ".join(sorted(seen, key=_version_key))
            for name, seen in sorted(versions.items())}


def machine_rows(environment: Environment, records: Iterable[NotebookRecord] = (),
                 translate: Translate = english) -> list[tuple[str, str]]:
    """(label, value) rows of one machine; with the machine's ``records``, the
    libraries are those of all of them (else the environment's own)."""
    records = list(records)
    rows: list[tuple[str, str]] = []
    host, jax = environment.host, environment.jax
    if host.cpu:
        rows.append((translate("CPU"), host.cpu + (f", {host.cores} " + translate("cores")
                                                   if host.cores else "")))
    if host.memory_gb:
        rows.append((translate("Memory"), format_gib(host.memory_gb)))
    for gpu in environment.gpus:
        detail = ", ".join(part for part in (
            format_gpu_memory(gpu.memory_mb),
            f"driver {gpu.driver}" if gpu.driver else "",
            f"CUDA {gpu.cuda}" if gpu.cuda else "") if part)
        rows.append((translate("GPU"), gpu.name + (f" ({detail})" if detail else "")))
    if not environment.gpus and not is_gpu(environment.backend):
        rows.append((translate("GPU"), translate("none")))
    rows.append((translate("JAX backend"), jax.backend or translate("not used")))
    if jax.devices:
        rows.append((translate("JAX devices"), ", ".join(
            f"{d.count}x {d.platform}:{d.kind}" for d in jax.devices)))
    if jax.version:
        versions = f"jax {jax.version}"
        if jax.jaxlib_version:
            versions += f", jaxlib {jax.jaxlib_version}"
        versions += "".join(f", {name} {version}" for name, version in sorted(jax.plugins.items()))
        rows.append((translate("JAX"), versions))
    if environment.python:
        rows.append((translate("Python"), environment.python))
    libraries = imported_libraries(records) if records else dict(sorted(
        environment.libraries.items()))
    listed = ", ".join(f"{name} {version}" for name, version in libraries.items()
                       if name not in _OWN_ROW)
    if listed:
        rows.append((translate("Libraries"), listed))
    if host.os:
        rows.append((translate("OS"), f"{host.os} ({host.machine})" if host.machine
                     else host.os))
    return rows


def machines(report: StatusReport) -> list[tuple[Environment, list[str]]]:
    """The machines the notebooks ran on, with their docnames: the one with the most
    notebooks first."""
    return sorted(report.machines().values(), key=lambda item: (-len(item[1]), item[1]))


def machine_title(environment: Environment, number: int, count: int,
                  translate: Translate = english) -> str:
    """``Execution environment: GPU: Tesla T4`` (one machine), else ``Machine 1 of 2:
    ...``."""
    label = environment.device_label
    if count == 1:
        return translate("Execution environment: %s") % label
    return translate("Machine %(number)d of %(count)d: %(label)s") % {
        "number": number, "count": count, "label": label}


def notebooks_label(count: int, translate: Translate = english) -> str:
    """The label of the row that lists a machine's notebooks (with several machines)."""
    return translate("Notebooks (%d)") % count
