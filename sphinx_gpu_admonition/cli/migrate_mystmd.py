"""``migrate`` for a mystmd (Jupyter Book 2) book: the folder holds ``myst.yml``.

What :mod:`.migrate_rules` does for every book (the ``_admonition/gpu.md`` includes,
``{nb-exec-table}``; and ``_config.yml`` when the book still has one), and for
mystmd:

* the status page (the page with ``{nb-exec-table}`` / ``{execution-status}``):
  its code cells that print the machine (``!nvidia-smi``, ``!python --version``,
  ``!conda list``, ``jax.devices()``, as QuantEcon's ``status.md`` has them) become
  one ``{execution-environment}`` (the machine the lectures' kernels reported; the
  page then needs no kernel); the text that introduced their output is named in
  the report, for a person to reword;
* ``myst.yml``: the plugin in ``project: plugins:`` (a block list, a one-line
  ``[a, b]`` list or a new key), by a text edit that keeps comments and order and
  must read as the old YAML plus the plugin; otherwise a note says what to add;
* the plugin file ``myst.yml`` names (``gpu_admonition.py``, what ``python -m
  sphinx_gpu_admonition.mystmd init`` writes), when the book has none.

The safeguards are :mod:`.migrate_rules`' own (UTF-8 only, byte-order marks and
line endings kept, every file read and checked before the first is written).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from ..mystmd.plugin_file import PLUGIN_FILE, PLUGIN_TEXT
from .migrate_rules import (
    _MYST_OPEN,
    CONFIG_FILE,
    FileChange,
    MigrationError,
    MigrationResult,
    _closes,
    _inside,
    _literal_end,
    _load_yaml,
    _myst_block_end,
    _newline,
    append_to_yaml_list,
    apply,
    plan,
    read_source,
    source_files,
)

MYST_CONFIG = "myst.yml"
#: the entry ``project: plugins:`` gets (what docs/mystmd.md tells users to write)
PLUGIN_ENTRY = {"type": "executable", "path": PLUGIN_FILE}
ENVIRONMENT_CELLS = "machine cells -> {execution-environment}"
#: the directives that make a page the status page
STATUS_DIRECTIVES = ("{nb-exec-table}", "{execution-status}")

# a code cell's opening fence (MyST: ```{code-cell} ipython3)
_CODE_CELL = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\{code-cell\}")
# what a status page's cells ran to show the machine
_MACHINE_CODE = re.compile(
    r"^[ \t]*!\s*(?:nvidia-smi|python3?\s+--version|conda\s+list|pip3?\s+(?:list|freeze)"
    r"|nvcc\b|lscpu|free\b)|\bjax\.(?:devices|default_backend|print_environment_info)\(",
    re.MULTILINE)


def is_mystmd_book(book: Path) -> bool:
    return (book / MYST_CONFIG).is_file()


# -- the status page -------------------------------------------------------------------
def rewrite_status_page(text: str) -> tuple[str, list[str], list[int]]:
    """The page with its machine cells replaced by one ``{execution-environment}``
    (none added when it has one), what changed, and the lines (1-based, of the
    rewritten page) of the text just before each removed cell, which introduced its
    output."""
    lines = text.splitlines(keepends=True)
    newline = _newline(text)
    has_directive = any("{execution-environment}" in line for line in lines)
    out: list[str] = []
    changes: list[str] = []
    prose: list[int] = []
    # the fences of the directives open around this line (as migrate_rules tracks them)
    open_fences: list[str] = []
    index = 0
    while index < len(lines):
        cell = _CODE_CELL.match(lines[index])
        end = _myst_block_end(lines, index, cell["fence"]) if cell else -1
        if cell and end > index and _MACHINE_CODE.search("".join(lines[index + 1:end])):
            before = next((number for number in range(len(out) - 1, -1, -1)
                           if out[number].strip()), None)
            if before is not None and not out[before].lstrip().startswith(
                    (cell["fence"][0] * 3, "(", "#", "---")):
                prose.append(before + 1)  # its line in the rewritten page
            if not has_directive:
                indent, fence = cell["indent"], cell["fence"]
                out += [f"{indent}{fence}{{execution-environment}}{newline}",
                        f"{indent}{fence}{newline}"]
                has_directive = True
            changes.append(f"line {index + 1}: {ENVIRONMENT_CELLS}")
            index = end + 1
            if index < len(lines) and not lines[index].strip() and (
                    not out or not out[-1].strip()):
                index += 1  # no doubled blank line where a cell was removed
            continue
        bare = lines[index].rstrip("\r\n")
        if open_fences and _closes(bare, open_fences[-1]):
            open_fences.pop()  # the end of a directive, not the start of a code block
            out.append(lines[index])
            index += 1
            continue
        literal = _literal_end(lines, index, rst=False)
        if literal > index:  # a code block or cell (an example: kept as it is)
            out.extend(lines[index:literal])
            index = literal
            continue
        if directive := _MYST_OPEN.match(bare):
            open_fences.append(directive["fence"])
        out.append(lines[index])
        index += 1
    rewritten = "".join(out)
    if rewritten.endswith(newline * 2) and not text.endswith(newline * 2):
        rewritten = rewritten[:-len(newline)]  # the removed cell was the page's last
    return rewritten, changes, prose


# -- myst.yml ---------------------------------------------------------------------------
def add_plugin(text: str) -> str | None:
    """``myst.yml`` with the plugin at the end of ``project: plugins:`` (see
    :func:`.migrate_rules.append_to_yaml_list`)."""
    return append_to_yaml_list(
        text, "project", "plugins",
        [f"- type: {PLUGIN_ENTRY['type']}", f"  path: {PLUGIN_ENTRY['path']}"],
        f"{{type: {PLUGIN_ENTRY['type']}, path: {PLUGIN_ENTRY['path']}}}")


def _plugins(data: Any) -> list[Any] | None:
    project = data.get("project") if isinstance(data, dict) else None
    plugins = project.get("plugins") if isinstance(project, dict) else None
    return plugins if isinstance(plugins, list) else None


def has_plugin(text: str) -> bool:
    """``project: plugins:`` names the plugin file (as a mapping's path, or a path)."""
    for entry in _plugins(_load_yaml(text)) or []:
        path = entry.get("path") if isinstance(entry, dict) else entry
        if isinstance(path, str) and Path(path).name == PLUGIN_FILE:
            return True
    return False


def _only_adds_plugin(before: str, after: str) -> bool:
    old, new = _load_yaml(before), _load_yaml(after)
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    expected = copy.deepcopy(old)
    project = expected.setdefault("project", {})
    if not isinstance(project, dict):
        return False
    project["plugins"] = [*(project.get("plugins") or []), dict(PLUGIN_ENTRY)]
    return expected == new


def migrate_myst_config(book: Path) -> tuple[FileChange | None, str | None]:
    path = book / MYST_CONFIG
    by_hand = (f"add '- type: executable' / 'path: {PLUGIN_FILE}' under "
               "'project: plugins:'")
    if path.is_symlink() and not _inside(path, book):
        return None, f"{MYST_CONFIG}: a link to a file outside the book, not edited: {by_hand}"
    text, bom = read_source(path, book)
    if has_plugin(text):
        return None, None
    edited = add_plugin(text)
    if edited is None or not _only_adds_plugin(text, edited):
        return None, (f"{MYST_CONFIG}: {by_hand} (this command edits block lists and "
                      "one-line [a, b] lists)")
    return FileChange(path, [f"added the plugin {PLUGIN_FILE} to project: plugins"], text,
                      edited, bom), None


def plugin_file_change(book: Path) -> tuple[FileChange | None, str | None]:
    """The plugin file, when the book has none; a note when a file of that name is not
    the plugin's (it is left alone, and so is myst.yml)."""
    path = book / PLUGIN_FILE
    if not path.exists():
        return FileChange(path, ["new file: the plugin mystmd runs (myst.yml names it)"],
                          "", PLUGIN_TEXT, executable=True), None
    text, _bom = read_source(path, book)
    if "sphinx_gpu_admonition.mystmd.plugin" in text:
        return None, None
    return None, (f"{PLUGIN_FILE}: a file of that name that is not the plugin's; move it, "
                  "then run migrate again (myst.yml was not edited)")


# -- the command -------------------------------------------------------------------------
def migrate(book: Path, dry_run: bool = False) -> MigrationResult:
    """:func:`.migrate_rules.migrate` for a mystmd book (see the module's docstring)."""
    book = book.resolve()
    sphinx = (book / CONFIG_FILE).exists()
    result = plan(book, config=sphinx)  # a book built by both engines keeps _config.yml
    result.sphinx = sphinx
    planned = {change.path: change for change in result.changes}
    for path in source_files(book, (".md",)):
        change = planned.get(path)
        text, bom = (change.after, change.bom) if change else read_source(path, book)
        if not any(directive in text for directive in STATUS_DIRECTIVES):
            continue
        rewritten, what, prose = rewrite_status_page(text)
        if not what:
            continue
        if change is None:
            change = FileChange(path, [], text, rewritten, bom)
            result.changes.append(change)
        change.after = rewritten
        change.changes += what
        if prose:
            name = path.relative_to(book).as_posix()
            result.notes.append(
                f"{name}: line{'s' if len(prose) > 1 else ''} "
                f"{', '.join(map(str, prose))}: the text before a removed machine cell "
                "introduced its output; reword or delete it")
    plugin_file, note = plugin_file_change(book)
    if note:
        result.notes.append(note)
    else:
        config, config_note = migrate_myst_config(book)
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


__all__ = ["MYST_CONFIG", "MigrationError", "add_plugin", "has_plugin", "is_mystmd_book",
           "migrate", "rewrite_status_page"]
