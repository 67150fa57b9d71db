"""The kernel environment's packages on mystmd (``{execution-environment}``'s ``:packages:``).

After a page executed, its kernel's Python (named by :mod:`.kernel_startup`) lists
its distributions (:func:`..model.distributions.installed_distributions`, as on
Sphinx); the record keeps the list, and so does its sidecar, so that a cache hit
shows the list of the run that produced its outputs. Each plugin call is a process
of its own (one per page and stage): the list is read once per build and
executable and kept for the build's other pages in ``<capture>/packages/``, named
by the build (the parent ``myst`` process) and the executable.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from ..model.distributions import installed_distributions
from ..model.files import atomic_write, public_path, without_interpreter
from ..model.record import KernelPackages

PACKAGES_FOLDER = "packages"


def _build_prefix() -> str:
    return f"{os.getppid()}-"


def _listing(executable: str, folder: Path) -> dict[str, object]:
    """This build's listing of ``executable``: read by the build's first page, kept."""
    listings = folder / PACKAGES_FOLDER
    path = listings / (_build_prefix()
                       + hashlib.sha1(executable.encode("utf-8")).hexdigest()[:16] + ".json")
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("executable") == executable:
            return data
    listed = installed_distributions(executable)
    data: dict[str, object] = {"executable": executable}
    if isinstance(listed, str):
        data["error"] = listed
    else:
        data["distributions"] = [list(item) for item in listed]
    with contextlib.suppress(OSError):
        listings.mkdir(parents=True, exist_ok=True)
        for old in listings.glob("*.json"):  # earlier builds' listings
            if not old.name.startswith(_build_prefix()):
                old.unlink(missing_ok=True)
        atomic_write(path, json.dumps(data))
    return data


def kernel_packages(executable: str | None, folder: Path) -> KernelPackages | None:
    """The distributions of the kernel's environment, for its record (None: the kernel
    named no executable, or the list could not be read: :func:`problems` says why)."""
    if not executable:
        return None
    data = _listing(executable, folder)
    found = data.get("distributions")
    if not isinstance(found, list):
        return None
    return KernelPackages(executable=public_path(executable),
                          distributions={str(name): str(version) for name, version in found})


def problems(folder: Path, interpreter_path: bool = True) -> list[str]:
    """Why this build could not list a kernel environment's packages (one per
    executable); ``interpreter_path`` off: without naming the kernel's Python."""
    found = []
    for path in sorted((folder / PACKAGES_FOLDER).glob(f"{_build_prefix()}*.json")):
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("error"), str):
                found.append(without_interpreter(data["error"], str(data.get("executable")
                                                                    or ""), interpreter_path))
    return found
