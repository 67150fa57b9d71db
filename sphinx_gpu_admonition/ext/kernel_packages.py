"""The installed distributions of a kernel's environment: what ``!conda list`` printed.

Read by one ``importlib.metadata`` call in a subprocess of the kernel's Python
executable (:mod:`..model.distributions`, which the mystmd plugin uses too; the
executable is resolved here from the notebook's kernelspec as jupyter_client
does), once per build and executable, never inside the notebooks' kernels.  The capture keeps
the list in the record after a cache miss (:mod:`.capture`), the
``{execution-environment}`` directive shows it (:mod:`.environment_table`); both
import it from here, which imports neither.
"""

from __future__ import annotations

import functools
import os
import sys

from sphinx.environment import BuildEnvironment

from ..model import distributions
from ..model.distributions import Packages, installed_distributions
from ..model.files import public_path
from ..model.record import KernelPackages

__all__ = ["Packages", "forget_packages", "installed_distributions", "kernel_executable",
           "kernel_name", "kernel_packages"]

#: ``argv[0]`` values that jupyter_client replaces by its own interpreter
_NATIVE_PYTHON = {"python", f"python{sys.version_info[0]}",
                  f"python{sys.version_info[0]}.{sys.version_info[1]}"}


@functools.lru_cache(maxsize=16)
def kernel_executable(kernel_name: str) -> str | None:
    """The Python executable jupyter_client starts for ``kernel_name`` (None: unknown,
    or not a Python kernel)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        argv = KernelSpecManager().get_kernel_spec(kernel_name).argv
    except (NoSuchKernel, OSError, ValueError):
        return None
    if not argv:
        return None
    if argv[0] in _NATIVE_PYTHON:
        return sys.executable
    return argv[0] if "python" in os.path.basename(argv[0]).lower() else None


def kernel_name(env: BuildEnvironment, docname: str) -> str:
    kernelspec = env.metadata.get(docname, {}).get("kernelspec")
    name = kernelspec.get("name") if isinstance(kernelspec, dict) else None
    return name if isinstance(name, str) and name else "python3"


def kernel_packages(env: BuildEnvironment, docname: str) -> KernelPackages | None:
    """The installed distributions of ``docname``'s kernel, for its record (None: not a
    Python kernel this build can start, or the list could not be read)."""
    executable = kernel_executable(kernel_name(env, docname))
    if executable is None:
        return None
    packages = installed_distributions(executable)
    if isinstance(packages, str):
        return None  # the table's page says why (and warns)
    return KernelPackages(executable=public_path(executable), distributions=dict(packages))


def forget_packages() -> None:
    """Each build reads the installed packages again (a long-lived process such as
    sphinx-autobuild may see them change)."""
    kernel_executable.cache_clear()
    distributions.forget()
