"""The installed distributions of a Python environment: what ``!conda list`` printed.

Read by one ``importlib.metadata`` call in a subprocess of the environment's Python
executable (a kernel's), never inside a notebook's kernel. Both engines list a
kernel's packages with it: the Sphinx adapter (``ext/kernel_packages.py``, which
finds the executable from the kernelspec) and the mystmd plugin
(``mystmd/packages.py``, which is told it by the kernel's start-up).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess

from .files import public_path

#: (name, version) of every distribution, sorted by name (case-insensitive)
Packages = tuple[tuple[str, str], ...]

_DISTRIBUTIONS_SCRIPT = (
    "import importlib.metadata as m, json\n"
    "seen = {}\n"
    "for d in m.distributions():\n"
    "    name = d.metadata['Name']\n"
    "    if name and name not in seen:\n"
    "        seen[name] = d.version\n"
    "print(json.dumps(sorted(seen.items(), key=lambda item: item[0].lower())))\n"
)


@functools.lru_cache(maxsize=16)
def installed_distributions(executable: str) -> Packages | str:
    """(name, version) of every distribution ``executable`` sees, or why not (once per
    process and executable: :func:`forget` reads them again)."""
    # the user's PYTHONSTARTUP (the capture's, in a build) is for kernels, not for this
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


def sorted_packages(distributions: dict[str, str]) -> Packages:
    """A record's ``{name: version}`` as the tables list it (by name, case-insensitive)."""
    return tuple(sorted(distributions.items(), key=lambda item: item[0].lower()))


def forget() -> None:
    installed_distributions.cache_clear()
