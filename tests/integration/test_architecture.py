"""The package's shape, in fresh interpreters: every module imports on its own, in any
order, and the command line loads no Sphinx (the rest, read with :mod:`ast` in-process, is
in tests/unit/test_architecture.py).
"""

from __future__ import annotations

import subprocess
import sys

from conftest import PROJECT
from unit.test_architecture import MODULES, NAME


def test_the_command_line_loads_no_sphinx():
    """``report`` starts fast: nothing of Sphinx or docutils is loaded (measured)."""
    script = ("import sys, sphinx_gpu_admonition.cli\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('sphinx', 'docutils')))")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True,
                               text=True, cwd=PROJECT, timeout=60, check=True)
    assert completed.stdout.strip() == "[]"


def test_every_module_imports_on_its_own():
    """In one fresh interpreter, each module is imported with none of the package's
    modules loaded before it (an import that only works after another would fail)."""
    script = (
        "import importlib, sys\n"
        f"for name in {sorted(MODULES)!r}:\n"
        f"    for loaded in [m for m in sys.modules if m == {NAME!r} or "
        f"m.startswith({NAME + '.'!r})]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as error:\n"
        "        print(f'{name}: {type(error).__name__}: {error}')\n")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                               cwd=PROJECT, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""


