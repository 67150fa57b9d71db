"""What the running ``myst build`` was asked for, read from its command line.

mystmd gives an executable plugin no options: the plugin's parent process is
``myst`` itself, whose arguments say ``--strict`` and ``--execute-parallel N``
(Linux: ``/proc``; elsewhere nothing is known and the defaults apply).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..model.device import is_gpu, parallel_preallocation_warning
from ..model.record import NotebookRecord


def parent_arguments(pid: int | None = None) -> list[str]:
    try:
        with open(f"/proc/{pid or os.getppid()}/cmdline", "rb") as stream:
            return [part.decode("utf-8", "replace") for part in stream.read().split(b"\0")]
    except OSError:
        return []


def strict(arguments: list[str]) -> bool:
    return "--strict" in arguments


def execute_parallel(arguments: list[str]) -> int:
    """``--execute-parallel N`` (``=N`` too); 1, mystmd 1.8.3's default, otherwise."""
    for number, argument in enumerate(arguments):
        value = None
        if argument.startswith("--execute-parallel="):
            value = argument.partition("=")[2]
        elif argument == "--execute-parallel" and number + 1 < len(arguments):
            value = arguments[number + 1]
        if value is not None:
            return int(value) if value.isdigit() and int(value) > 0 else 1
    return 1


def preallocation_warning(record: NotebookRecord, parallel: int,
                          environ: Mapping[str, str] = os.environ) -> str | None:
    """A page that ran on a GPU while several pages run at once, each kernel with JAX's
    default preallocation (75 % of the GPU's memory): the next kernel on that GPU
    runs out of memory (QuantEcon's first failure on mystmd, three JAX notebooks
    on one T4): :func:`..model.device.parallel_preallocation_warning`, the rule the
    Sphinx build warns by at its start."""
    if not is_gpu(record.environment.backend):
        return None
    gpu = record.environment.jax.device_summary or "the GPU"
    return parallel_preallocation_warning(
        parallel, f"{record.docname} ran on {gpu}", f"mystmd executes {parallel} pages at once",
        "--execute-parallel 1", environ)


#: how much earlier than the ``myst`` process's start a kernel of its build may seem
#: to start (the start time is known to the clock tick, the boot time to the second)
_CLOCK_SLACK_SECONDS = 2.0


def build_started(pid: int | None = None) -> float | None:
    """When the running ``myst`` process (the plugin's parent) started, as a Unix time;
    None where ``/proc`` does not say. A kernel file older than that is an earlier
    build's."""
    try:
        with open(f"/proc/{pid or os.getppid()}/stat", encoding="ascii") as stream:
            ticks = int(stream.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as stream:
            boot = next(int(line.split()[1]) for line in stream if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK") - _CLOCK_SLACK_SECONDS
    except (OSError, ValueError, IndexError, StopIteration):
        return None
