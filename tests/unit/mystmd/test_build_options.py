"""``mystmd/build_options.py``: the build options come from myst's command line."""

from __future__ import annotations

import os
from pathlib import Path


def test_the_build_options_come_from_mysts_command_line():
    from sphinx_gpu_admonition.mystmd import build_options

    myst = ["node", "/x/myst", "build", "--execute", "--execute-parallel", "3", "--strict"]
    assert build_options.strict(myst)
    assert build_options.execute_parallel(myst) == 3
    assert build_options.execute_parallel(["myst", "--execute-parallel=2"]) == 2
    assert build_options.execute_parallel(["myst", "build"]) == 1
    if Path("/proc/self/cmdline").exists():  # this process's own arguments, read back
        assert build_options.parent_arguments(os.getpid())[:1] == [
            Path("/proc/self/cmdline").read_bytes().split(b"\0")[0].decode()]
