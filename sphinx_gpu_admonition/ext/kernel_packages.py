"""The installed distributions of a kernel's environment: what ``!conda list`` printed.

Read by one ``importlib.metadata`` call in a subprocess of the kernel's Python
executable (resolved from the notebook's kernelspec as jupyter_client does), once
per build and executable, never inside the notebooks' kernels.  The capture keeps
the list in the record after a cache miss (:mod:`.capture`), the
``{execution-environment}`` directive shows it (:mod:`.environment_table`); both
import it from here, which imports neither.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

from sphinx.environment import BuildEnvironment

from ..model.files import public_path
from ..model.record import KernelPackages

_DISTRIBUTIONS_SCRIPT = (
    "import importlib.metadata as m, json\n"
    "seen = {}\n"
    "for d in m.distributions():\n"
    "    name = d.metadata['Name']\n"
    "    if name and name not in seen:\n"
    "        seen[name] = d.version\n"
    "print(json.dumps(sorted(seen.items(), key=lambda item: item[0].lower())))\n"
)
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


@functools.lru_cache(maxsize=16)
def installed_distributions(executable: str) -> tuple[tuple[str, str], ...] | str:
    """(name, version) of every distribution ``executable`` sees, or why not."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    try:
        done = subprocess.run([executable, "-c", _DISTRIBUTIONS_SCRIPT], capture_output=True,
                              text=True, timeout=120, env=environment, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        return f"{public_path(executable)}: {error}"
    if done.returncode != 0:
        return f"{public_path(executable)} exited with {done.returncode}"
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return f"{public_path(executable)} printed no package list"
    if not isinstance(data, list) or not all(
            isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item)
            for item in data):
        return f"{public_path(executable)} printed no package list"
    return tuple((name, version) for name, version in data)


Packages = tuple[tuple[str, str], ...]


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
    installed_distributions.cache_clear()
