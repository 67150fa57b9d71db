"""``migrate`` for a mystmd (Jupyter Book 2) book: the folder holds ``myst.yml``.

What :mod:`.migrate_rules` does for every book (the ``_admonition/gpu.md`` includes,
``{nb-exec-table}``, the status page's machine cells; and ``_config.yml`` when the book
still has one), and for mystmd:

* ``myst.yml``: the plugin ``gpu_admonition.mjs`` in ``project: plugins:`` (a block
  list, a one-line ``[a, b]`` list or a new key), by a text edit that keeps comments
  and order and must read as the old YAML plus the plugin; otherwise a note says what
  to add. A book that names the executable plugin ``gpu_admonition.py`` keeps it (a
  note says how to move to the ``.mjs``);
* the plugin file ``myst.yml`` names (what ``python -m sphinx_gpu_admonition.mystmd
  init`` writes), when the book has none or an earlier release's (a ``.mjs`` for
  another interpreter too); a link or a file of the user's of that name is refused
  (``force`` replaces it), never written through (:mod:`..mystmd.plugin_file`).

The safeguards are :mod:`.migrate_rules`' own (UTF-8 only, byte-order marks and
line endings kept, every file read and checked before the first is written).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

from ..mystmd.plugin_file import (
    CURRENT,
    MISSING,
    MJS_FILE,
    MOVE_NOTE,
    PLUGIN_FILE,
    PluginFileRefused,
    named_plugin,
    plugin_file_state,
    plugin_text,
)
from .migrate_rules import (
    CONFIG_FILE,
    FileChange,
    MigrationError,
    MigrationResult,
    _inside,
    _load_yaml,
    append_to_yaml_list,
    apply,
    plan,
    read_source,
)

MYST_CONFIG = "myst.yml"
#: the entry ``project: plugins:`` gets (what docs/mystmd.md tells users to write)
PLUGIN_ENTRY = MJS_FILE



def is_mystmd_book(book: Path) -> bool:
    return (book / MYST_CONFIG).is_file()


# -- myst.yml ---------------------------------------------------------------------------
def add_plugin(text: str) -> str | None:
    """``myst.yml`` with the plugin at the end of ``project: plugins:`` (see
    :func:`.migrate_rules.append_to_yaml_list`)."""
    return append_to_yaml_list(text, "project", "plugins", [f"- {PLUGIN_ENTRY}"],
                               PLUGIN_ENTRY)


def _only_adds_plugin(before: str, after: str) -> bool:
    old, new = _load_yaml(before), _load_yaml(after)
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    expected = copy.deepcopy(old)
    project = expected.setdefault("project", {})
    if not isinstance(project, dict):
        return False
    project["plugins"] = [*(project.get("plugins") or []), PLUGIN_ENTRY]
    return expected == new


def migrate_myst_config(book: Path) -> tuple[FileChange | None, str | None, str]:
    """The edit of ``myst.yml`` (None: none), a note, and the plugin file it names."""
    path = book / MYST_CONFIG
    by_hand = f"add '- {MJS_FILE}' under 'project: plugins:'"
    if path.is_symlink() and not _inside(path, book):
        return (None, f"{MYST_CONFIG}: a link to a file outside the book, not edited: "
                f"{by_hand}", MJS_FILE)
    text, bom = read_source(path, book)
    named = named_plugin(text)
    if named is not None:
        return None, (MOVE_NOTE if named == PLUGIN_FILE else None), named
    edited = add_plugin(text)
    if edited is None or not _only_adds_plugin(text, edited):
        return None, (f"{MYST_CONFIG}: {by_hand} (this command edits block lists and "
                      "one-line [a, b] lists)"), MJS_FILE
    return FileChange(path, [f"added the plugin {MJS_FILE} to project: plugins"], text,
                      edited, bom), None, MJS_FILE


def plugin_file_change(book: Path, force: bool = False,
                       name: str = MJS_FILE) -> FileChange | None:
    """The plugin file ``name``, when the book has none or an earlier release's; None
    when it is this release's; :class:`MigrationError` for a link or a file of the
    user's (unless ``force``): nothing is written through a link or over a file that is
    not ours."""
    path = book / name
    try:
        state = plugin_file_state(path, force)
    except PluginFileRefused as refused:
        raise MigrationError(f"{refused} (nothing was changed)") from None
    if state == CURRENT:
        return None
    before = "" if state == MISSING else (_text_of_plugin(path))
    what = ("new file: the plugin mystmd runs (myst.yml names it)" if state == MISSING
            else "replaced: the plugin mystmd runs, this release's")
    return FileChange(path, [what], before, plugin_text(path), executable=True)


def _text_of_plugin(path: Path) -> str:
    """What a file (or link) being replaced held, for the diff (a link: its target)."""
    if path.is_symlink():
        return f"(a symbolic link to {os.readlink(path)})\n"
    return path.read_bytes().decode("utf-8", errors="replace")


# -- the command -------------------------------------------------------------------------
def migrate(book: Path, dry_run: bool = False, force: bool = False) -> MigrationResult:
    """:func:`.migrate_rules.migrate` for a mystmd book (see the module's docstring)."""
    book = book.resolve()
    sphinx = (book / CONFIG_FILE).exists()
    result = plan(book, config=sphinx)  # a book built by both engines keeps _config.yml
    result.sphinx = sphinx
    config, config_note, named = migrate_myst_config(book)
    plugin_file = plugin_file_change(book, force, named)
    result.changes += [change for change in (config, plugin_file) if change is not None]
    if config_note:
        result.notes.append(config_note)
    if config is not None:
        result.notes.append(
            "turn the capture on where the book is built (CI too): "
            'eval "$(python -m sphinx_gpu_admonition.mystmd env)" before '
            "myst build --execute")
    if not dry_run:
        apply(result, book)
    return result


__all__ = ["MYST_CONFIG", "MigrationError", "add_plugin", "is_mystmd_book", "named_plugin",
           "migrate"]
