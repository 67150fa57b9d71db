"""The plugin file ``myst.yml`` names, for ``python -m sphinx_gpu_admonition.mystmd
init`` and ``sphinx-gpu-admonition migrate``: ``gpu_admonition.mjs``, the JavaScript
plugin mystmd loads into its own process (the template ``plugin.mjs`` with the
interpreter, the package's version and :data:`.plugin.PLUGIN_SPEC` written in, so
that loading it starts no Python), or, for a book that still names it, the executable
plugin ``gpu_admonition.py`` (a process for every call).

What may be done with a file of that name is decided here once, for both commands:
written when there is none; left alone when it is what the command would write;
replaced when an earlier release wrote it (a ``.mjs``: this release's template or one
of :data:`EARLIER_MJS_TEMPLATES`, for any interpreter, version and spec); otherwise (a
symbolic link, dangling or not, or a file of the user's) refused with one line, unless
the command is forced, and never written through (a link is replaced by a file, not
followed). Something that is not a file (a folder) is always refused.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
from pathlib import Path

#: the JavaScript plugin (what init writes and the docs name)
MJS_FILE = "gpu_admonition.mjs"
#: the template it is made from (package data)
MJS_TEMPLATE = Path(__file__).resolve().parent / "plugin.mjs"
#: the template's line that init fills in
MJS_CONFIG_LINE = "const CONFIG = {};"
#: the templates of earlier releases (their files are theirs to replace): a release
#: that changes plugin.mjs adds the previous text here
EARLIER_MJS_TEMPLATES: tuple[str, ...] = ()
#: the executable plugin, for books that name it
PLUGIN_FILE = "gpu_admonition.py"
PLUGIN_TEXT = '''#!/usr/bin/env python3
"""The mystmd plugin of sphinx-gpu-admonition (written by
``python -m sphinx_gpu_admonition.mystmd init``; myst.yml names this file).
init and migrate replace it only while it is this text, or with --force."""
from sphinx_gpu_admonition.mystmd.plugin import main

main()
'''
#: the line that moves a book from the executable plugin to the .mjs (migrate and init)
MOVE_NOTE = (f"myst.yml names the executable plugin {PLUGIN_FILE} (a Python process for "
             f"every call): name {MJS_FILE} instead (project: plugins: - {MJS_FILE}) "
             "and run python -m sphinx_gpu_admonition.mystmd init, one Python process "
             "serves every call of the build")
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


@functools.cache
def mjs_template() -> str:
    """This release's template (package data), read once: a command compares a book's
    file with it and writes from it."""
    return MJS_TEMPLATE.read_text(encoding="utf-8")


def mjs_text(python: str | None = None) -> str:
    """``gpu_admonition.mjs`` for the interpreter ``python`` (this one: the path as
    given, a virtual environment's link kept)."""
    from .._version import __version__
    from .plugin import PLUGIN_SPEC, spec_digest

    config = {"python": python or sys.executable, "version": __version__,
              "specDigest": spec_digest(), "spec": PLUGIN_SPEC}
    return _mjs_from(config)


def _mjs_from(config: dict[str, object], template: str | None = None) -> str:
    template = mjs_template() if template is None else template
    return template.replace(MJS_CONFIG_LINE, f"const CONFIG = {json.dumps(config)};", 1)


def mjs_config(text: str) -> dict[str, object] | None:
    """What ``text`` was written with, when it is this release's template or an earlier
    one written in (for any interpreter, version or specification); None otherwise."""
    prefix = MJS_CONFIG_LINE.removesuffix("{};")
    line = next((line for line in text.splitlines()
                 if line.startswith(prefix) and line.endswith(";")), None)
    try:
        config = json.loads(line.removeprefix(prefix).removesuffix(";")) if line else None
    except ValueError:
        return None
    if not isinstance(config, dict):
        return None
    templates = (mjs_template(), *EARLIER_MJS_TEMPLATES)
    return config if any(_mjs_from(config, template) == text for template in templates) \
        else None


def plugin_text(path: Path) -> str:
    """What the plugin file at ``path`` is to hold (by its name: the .mjs or the .py)."""
    return mjs_text() if path.name.endswith(".mjs") else PLUGIN_TEXT


def _earlier(path: Path, text: str | None) -> bool:
    if text is None:
        return False
    if path.name.endswith(".mjs"):
        return mjs_config(text) is not None
    return text in EARLIER_TEXTS


def plugin_file_state(path: Path, force: bool = False) -> str:
    """:data:`MISSING`, :data:`CURRENT` or :data:`EARLIER` (``force``: anything else
    counts as earlier: replaced); :class:`PluginFileRefused` otherwise. ``path``'s name
    says which plugin (:func:`plugin_text`): a ``.mjs`` written for another interpreter or
    release is an earlier one."""
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
    if text == plugin_text(path):
        return CURRENT
    if _earlier(path, text) or force:
        return EARLIER
    raise PluginFileRefused(
        f"{name}: a file of that name that is not the plugin file this package writes; "
        "move it away, or pass --force to replace it")


def write_plugin_file(path: Path, text: str | None = None) -> None:
    """Write the plugin file (``text``, else :func:`plugin_text`; the ``.py``
    executable) in place of whatever ``path`` is (a link is replaced, not followed): a
    temporary file beside it, then renamed over it."""
    text = plugin_text(path) if text is None else text
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644 if path.name.endswith(".mjs") else 0o755)
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def named_plugin(text: str) -> str | None:
    """The plugin file a ``myst.yml`` text's ``project: plugins:`` names (as a mapping's
    path, or a path): :data:`MJS_FILE`, else :data:`PLUGIN_FILE`, else None (also for a
    text that is not YAML)."""
    import yaml  # PyYAML comes with MyST-NB and jupyter_server

    try:
        data = yaml.safe_load(text.lstrip("\ufeff"))
    except yaml.YAMLError:
        return None
    project = data.get("project") if isinstance(data, dict) else None
    plugins = project.get("plugins") if isinstance(project, dict) else None
    names = set()
    for entry in plugins if isinstance(plugins, list) else []:
        path = entry.get("path") if isinstance(entry, dict) else entry
        if isinstance(path, str):
            names.add(Path(path).name)
    return next((name for name in (MJS_FILE, PLUGIN_FILE) if name in names), None)
