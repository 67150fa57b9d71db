"""``python -m sphinx_gpu_admonition.mystmd env|init``.

``env``: the shell lines that turn the capture on for the next ``myst build
--execute`` (``eval "$(python -m sphinx_gpu_admonition.mystmd env)"``).
``init [FOLDER] [--force]``: writes the plugin file ``gpu_admonition.mjs`` that
``myst.yml`` names (``myst.yml`` accepts only a file path, not a module), with the
interpreter that runs ``init`` written in; a file of that name that is not ours is
refused (:mod:`.plugin_file`).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from ..model.formatting import one_line, safe_line
from ..probe import ENV_EXPLAIN_RECOMPILATIONS, ENV_USER_STARTUP
from . import settings
from .capture import DEFAULT_CAPTURE, ENV_CAPTURE
from .plugin_file import (
    CURRENT,
    MISSING,
    MJS_FILE,
    MOVE_NOTE,
    PLUGIN_FILE,
    PluginFileRefused,
    named_plugin,
    plugin_file_state,
    write_plugin_file,
)

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


def write_plugin(folder: Path, force: bool = False) -> tuple[Path, str]:
    """The plugin file in ``folder`` and what was done with it ("wrote", "replaced",
    "kept"); :class:`.plugin_file.PluginFileRefused` for a file that is not ours."""
    path = folder / MJS_FILE
    state = plugin_file_state(path, force)
    if state == CURRENT:
        return path, "kept"
    write_plugin_file(path)
    return path, "wrote" if state == MISSING else "replaced"


USAGE = "usage: python -m sphinx_gpu_admonition.mystmd env [BOOK] | init [BOOK] [--force]"


def main(argv: list[str]) -> int:
    if any(arg in ("-h", "--help") for arg in argv):  # asked for: not a folder's name
        print(USAGE)
        return 0
    force = argv[1:].count("--force") == 1 and argv[:1] == ["init"]
    argv = [arg for arg in argv if arg != "--force"] if force else argv
    if not argv or argv[0] not in ("env", "init") or len(argv) > 2:
        print(USAGE, file=sys.stderr)
        return 2
    book = Path(argv[1] if len(argv) > 1 else ".")
    if not book.is_dir():
        print(safe_line(f"error: {one_line(book)}: no such folder"), file=sys.stderr)
        return 2
    if argv[0] == "env":
        print("\n".join(env_lines(book)))
        return 0
    try:
        path, done = write_plugin(book, force)
    except PluginFileRefused as refused:
        print(safe_line(f"error: {one_line(refused)} (nothing was written)"), file=sys.stderr)
        return 2
    except OSError as error:
        print(safe_line(f"error: {MJS_FILE}: {one_line(error.strerror or error)}"),
              file=sys.stderr)
        return 2
    what = "up to date" if done == "kept" else done
    print(safe_line(f"{one_line(path)}: {what}; myst.yml names it under project: plugins: "
                    f"[{MJS_FILE}] (run init again with another interpreter, or after an "
                    "upgrade)"))
    if _names_executable_plugin(book):  # the new file would go unused
        print(safe_line(f"note: {MOVE_NOTE}"))
    return 0


def _names_executable_plugin(book: Path) -> bool:
    try:
        text = (book / settings.CONFIG_FILE).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False  # no myst.yml yet, or one mystmd will complain about itself
    return named_plugin(text) == PLUGIN_FILE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
