"""``python -m sphinx_gpu_admonition.mystmd env|init``.

``env``: the shell lines that turn the capture on for the next ``myst build
--execute`` (``eval "$(python -m sphinx_gpu_admonition.mystmd env)"``).
``init [FOLDER]``: writes the plugin file ``gpu_admonition.py`` that ``myst.yml``
names (``myst.yml`` accepts only a file path, not a module).
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from ..probe import ENV_EXPLAIN_RECOMPILATIONS, ENV_USER_STARTUP
from . import settings
from .capture import DEFAULT_CAPTURE, ENV_CAPTURE
from .plugin_file import PLUGIN_FILE, PLUGIN_TEXT

KERNEL_STARTUP = Path(__file__).resolve().parent / "kernel_startup.py"


def env_lines(book: Path, environ: Mapping[str, str] = os.environ) -> list[str]:
    values = {"PYTHONSTARTUP": str(KERNEL_STARTUP),
              ENV_CAPTURE: str((book / DEFAULT_CAPTURE).absolute())}
    user_startup = environ.get("PYTHONSTARTUP")
    if user_startup and Path(user_startup) != KERNEL_STARTUP:
        values[ENV_USER_STARTUP] = user_startup  # the probe's startup chains it
    # the kernels learn it from their environment (mystmd gives the plugin no say there);
    # the build's own plugin calls report a bad value
    if settings.load(book)[0].config.explain_recompilations:
        values[ENV_EXPLAIN_RECOMPILATIONS] = "1"
    return [f"export {name}={shlex.quote(value)}" for name, value in values.items()]


def write_plugin(folder: Path) -> Path:
    path = folder / PLUGIN_FILE
    path.write_text(PLUGIN_TEXT, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("env", "init") or len(argv) > 2:
        print("usage: python -m sphinx_gpu_admonition.mystmd env [BOOK] | init [BOOK]",
              file=sys.stderr)
        return 2
    book = Path(argv[1] if len(argv) > 1 else ".")
    if not book.is_dir():
        print(f"error: {book}: no such folder", file=sys.stderr)
        return 2
    if argv[0] == "env":
        print("\n".join(env_lines(book)))
    else:
        print(f"wrote {write_plugin(book)}; add to myst.yml under project: "
              f"plugins: [{{type: executable, path: {PLUGIN_FILE}}}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
