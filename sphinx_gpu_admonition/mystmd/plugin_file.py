"""The plugin file ``myst.yml`` names (``gpu_admonition.py``), for ``python -m
sphinx_gpu_admonition.mystmd init`` and ``sphinx-gpu-admonition migrate``.

What may be done with a file of that name is decided here once, for both commands:
written when there is none; left alone when it is this release's; replaced when an
earlier release wrote it; otherwise (a symbolic link, dangling or not, or a file of the
user's) refused with one line, unless the command is forced, and never written through
(a link is replaced by a file, not followed).  Something that is not a file (a folder)
is always refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PLUGIN_FILE = "gpu_admonition.py"
PLUGIN_TEXT = '''#!/usr/bin/env python3
"""The mystmd plugin of sphinx-gpu-admonition (written by
``python -m sphinx_gpu_admonition.mystmd init``; myst.yml names this file).
init and migrate replace it only while it is this text, or with --force."""
from sphinx_gpu_admonition.mystmd.plugin import main

main()
'''
#: what earlier releases wrote: theirs to replace
EARLIER_TEXTS = ('''#!/usr/bin/env python3
"""The mystmd plugin of sphinx-gpu-admonition (written by
``python -m sphinx_gpu_admonition.mystmd init``; myst.yml names this file)."""
from sphinx_gpu_admonition.mystmd.plugin import main

main()
''',)

#: the file is missing, this release's, an earlier release's (to write, keep, replace)
MISSING, CURRENT, EARLIER = "missing", "current", "earlier"


class PluginFileRefused(Exception):
    """A file of the plugin's name that is not ours to replace: the one-line reason."""


def _text_of(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError):
        return None


def plugin_file_state(path: Path, force: bool = False) -> str:
    """:data:`MISSING`, :data:`CURRENT` or :data:`EARLIER` (``force``: anything else
    counts as earlier: replaced); :class:`PluginFileRefused` otherwise."""
    name = path.name
    try:
        info = path.lstat()
    except FileNotFoundError:
        return MISSING
    if stat.S_ISLNK(info.st_mode):
        if force:
            return EARLIER
        raise PluginFileRefused(
            f"{name}: a symbolic link (to {os.readlink(path)}); not written through: "
            "remove it, or pass --force to replace the link with the plugin file")
    if not stat.S_ISREG(info.st_mode):
        raise PluginFileRefused(f"{name}: not a file; move it away, then run this again")
    text = _text_of(path)
    if text == PLUGIN_TEXT:
        return CURRENT
    if text in EARLIER_TEXTS or force:
        return EARLIER
    raise PluginFileRefused(
        f"{name}: a file of that name that is not the plugin file this package writes; "
        "move it away, or pass --force to replace it")


def write_plugin_file(path: Path) -> None:
    """Write the plugin file, executable, in place of whatever ``path`` is (a link is
    replaced, not followed): a temporary file beside it, then renamed over it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o755)
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(PLUGIN_TEXT)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
