"""``sphinx-gpu-admonition migrate BOOK``: move a lecture book onto this extension.

QuantEcon-style books show their GPU notice by including a shared file and
their status page with MyST-NB's table::

    ```{include} _admonition/gpu.md
    ```

    ```{nb-exec-table}
    ```

This module rewrites, in the book's MyST Markdown and reStructuredText sources:

* an include of any relative path ending in ``_admonition/gpu.md`` (MyST
  ```` ```{include} ```` or rST ``.. include::``, with any options) into a ``{gpu}``
  directive (``:required:`` when the included notice says the lecture needs a GPU);
* ``{nb-exec-table}`` into ``{execution-status}`` (its options are kept);
* on the status page (the page with ``{nb-exec-table}`` / ``{execution-status}``), its
  code cells that print the machine (``!nvidia-smi``, ``!python --version``,
  ``!conda list``, ``jax.devices()``, as QuantEcon's ``status.md`` has them) into one
  ``{execution-environment}`` (the machine the lectures' kernels reported; the page
  then needs no kernel of its own), for Jupyter Book 1 and 2 books alike; the text
  that introduced their output is named in the report, for a person to reword;
* ``_config.yml``: adds ``sphinx_gpu_admonition`` to ``sphinx: extra_extensions:``
  (a block list, at any indent, or a one-line ``[a, b]`` list) by a text edit that
  keeps comments and order; when the file's shape is not one it can edit safely
  (the edited YAML must read as the old one plus the extension), it changes
  nothing and says which line to add.

Examples stay examples: nothing inside a code fence (```` ``` ```` / ``~~~`` without
a directive, or ``{code-block}`` and its kin) or an rST literal block is rewritten.
Files keep their byte-order mark and line endings; a source that is not UTF-8 is
refused, and every file it will write is read and checked before the first is
written, so a refusal (:class:`MigrationError`) leaves the book as it was.

It never touches files outside BOOK (nor a ``_config.yml`` that links out of it),
in ``_build`` or hidden folders, or the included ``_admonition/gpu.md`` itself
(which can be deleted once nothing includes it).  With ``dry_run`` it only
describes the changes (unified diffs).
"""

from __future__ import annotations

import codecs
import copy
import dataclasses
import difflib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: What a changed line was turned into, for the report.
GPU_INCLUDE = "{include} _admonition/gpu.md -> {gpu}"
EXEC_TABLE = "{nb-exec-table} -> {execution-status}"
EXTENSION = "sphinx_gpu_admonition"
CONFIG_FILE = "_config.yml"
SOURCE_SUFFIXES = (".md", ".rst")
SKIPPED_FOLDERS = ("_build",)

_GPU_NOTICE_PATH = re.compile(r"^(?:\S*/)?_admonition/gpu\.md$")
# ```{include} path   (3+ backticks or tildes, MyST's directive fence)
_MYST_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\{(?P<name>[\w-]+)\}"
                        r"[ \t]*(?P<argument>.*?)[ \t]*$")
# .. include:: path
_RST_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+(?P<name>[\w-]+)::"
                            r"[ \t]*(?P<argument>.*?)[ \t]*$")
_FRONT_MATTER_KERNEL = re.compile(r"^---\r?\n(?:(?!---).*\n)*?(?:jupytext|kernelspec):",
                                  re.MULTILINE)
_NEEDS_GPU = re.compile(r"\bneeds?\b|\brequire", re.IGNORECASE)
# a Markdown code fence: ``` or ~~~ and an info string (a directive's starts with "{")
_CODE_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
#: directives whose body is literal text: an include or a table in them is an example
LITERAL_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "code-cell",
                                "literalinclude", "raw", "parsed-literal"})


#: What a status page's machine cells were turned into, for the report.
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


class MigrationError(ValueError):
    """A book this command refuses to change (one line; nothing was written)."""


@dataclasses.dataclass
class FileChange:
    """One rewritten file: what changed (with line numbers) and its texts."""

    path: Path
    changes: list[str]
    before: str
    after: str
    #: the file started with a UTF-8 byte-order mark (kept when it is written)
    bom: bool = False
    #: mystmd's plugin file: written executable, in place of what is there (a link is
    #: replaced, never followed: :func:`..mystmd.plugin_file.write_plugin_file`)
    executable: bool = False

    def write(self) -> None:
        if self.executable:
            from ..mystmd.plugin_file import write_plugin_file

            write_plugin_file(self.path, self.after)
            return
        self.path.write_bytes((codecs.BOM_UTF8 if self.bom else b"")
                              + self.after.encode("utf-8"))

    @property
    def writable(self) -> bool:
        """Whether the file (or, for a new one or one replaced, its folder) can be written."""
        target = self.path if self.path.exists() and not self.executable else self.path.parent
        return os.access(target, os.W_OK, effective_ids=os.access in os.supports_effective_ids)

    def diff(self, root: Path) -> str:
        name = self.path.relative_to(root).as_posix()
        return "".join(difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
            fromfile=f"a/{name}", tofile=f"b/{name}"))


@dataclasses.dataclass
class MigrationResult:
    changes: list[FileChange]
    #: things to do by hand (a config file this command cannot edit safely)
    notes: list[str]
    #: notice includes left in place (an unclosed fence): the notice is still needed
    kept_includes: int = 0
    #: the book is built by Sphinx (MyST-NB): its notes apply (not to a mystmd-only book)
    sphinx: bool = True


def read_source(path: Path, book: Path) -> tuple[str, bool]:
    """The text of ``path`` without its byte-order mark, and whether it had one;
    :class:`MigrationError` when it is not UTF-8 (a guess at the encoding could
    write the page back garbled)."""
    data = path.read_bytes()
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        return data[len(codecs.BOM_UTF8) if bom else 0:].decode("utf-8"), bom
    except UnicodeDecodeError as error:
        name = path.relative_to(book).as_posix() if _inside(path, book) else str(path)
        raise MigrationError(
            f"{name}: not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "convert it to UTF-8 and run migrate again (nothing was changed)") from None


def _newline(text: str) -> str:
    """The file's line ending, for the lines this command adds."""
    return "\r\n" if "\r\n" in text else "\n"


def _notice_kind(book: Path, source: Path, include: str) -> str:
    """``"required"`` when the included notice says the lecture needs a GPU."""
    target = (source.parent / include).resolve()
    if not _inside(target, book) or not target.is_file():
        return "optional"
    text = target.read_text(encoding="utf-8", errors="replace")
    return "required" if _NEEDS_GPU.search(text) else "optional"


def _myst_block_end(lines: list[str], start: int, fence: str) -> int:
    """Index of the closing fence of the directive opened at ``start`` (or -1)."""
    for index in range(start + 1, len(lines)):
        if _closes(lines[index], fence):
            return index
    return -1


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` is a closing fence for ``fence`` (as long or longer, nothing else)."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _rst_block_end(lines: list[str], start: int, indent: str) -> int:
    """Index after the directive at ``start``: its more-indented options and body."""
    index = start + 1
    while index < len(lines):
        line = lines[index]
        if line.strip() and not (line.startswith(indent) and len(line) - len(line.lstrip())
                                 > len(indent)):
            break
        index += 1
    # keep the blank lines that separated it from what follows
    while index > start + 1 and not lines[index - 1].strip():
        index -= 1
    return index


def _gpu_directive(indent: str, fence: str | None, kind: str, newline: str) -> list[str]:
    """The ``{gpu}`` directive replacing an include (MyST when ``fence`` is given)."""
    if fence is None:
        return [f"{indent}.. gpu::{newline}"] + (
            [f"{indent}   :required:{newline}"] if kind == "required" else [])
    required = [f"{indent}:required:{newline}"] if kind == "required" else []
    return [f"{indent}{fence}{{gpu}}{newline}", *required, f"{indent}{fence}{newline}"]


def _literal_end(lines: list[str], index: int, rst: bool) -> int:
    """When the line at ``index`` opens literal text (a code fence, a code directive, an
    rST ``::`` paragraph), the index after it; else -1.  Documented examples of the
    old markup live there and must keep meaning what they show."""
    bare = lines[index].rstrip("\r\n")
    if not rst and (fence := _CODE_FENCE.match(bare)):
        info = fence["info"].strip()
        name = re.match(r"\{([\w-]+)\}", info)
        if info.startswith("{") and not (name and name[1] in LITERAL_DIRECTIVES):
            return -1  # a directive: its body is markup (an admonition, a tab)
        end = _myst_block_end(lines, index, fence["fence"])
        return len(lines) if end < 0 else end + 1  # an unclosed fence runs to the end
    directive = _RST_DIRECTIVE.match(bare)
    if (directive and directive["name"] in LITERAL_DIRECTIVES) or (
            rst and not directive and bare.rstrip().endswith("::")
            and not bare.lstrip().startswith("..")):
        indent = bare[:len(bare) - len(bare.lstrip())]
        return _rst_block_end(lines, index, indent)
    return -1


def rewrite_source(text: str, book: Path, source: Path) -> tuple[str, list[str]]:
    """The text with the notice includes and exec tables replaced, and what changed."""
    rewritten, changes, _kept = _rewrite(text, book, source)
    return rewritten, changes


def _rewrite(text: str, book: Path, source: Path) -> tuple[str, list[str], int]:
    """:func:`rewrite_source`, and how many notice includes it had to leave."""
    lines = text.splitlines(keepends=True)
    newline = _newline(text)
    out: list[str] = []
    changes: list[str] = []
    kept = 0
    rst = source.suffix == ".rst"
    # the fences of the MyST directives open around this line: a bare fence that closes
    # one is not the start of a code block
    open_fences: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        bare = line.rstrip("\r\n")
        if not rst and open_fences and _closes(bare, open_fences[-1]):
            open_fences.pop()
            out.append(line)
            index += 1
            continue
        literal_end = _literal_end(lines, index, rst)
        if literal_end > index:
            out.extend(lines[index:literal_end])
            index = literal_end
            continue
        myst = None if rst else _MYST_OPEN.match(bare)
        match = myst or _RST_DIRECTIVE.match(bare)
        if match and match["name"] == "include" and _GPU_NOTICE_PATH.match(match["argument"]):
            if myst:
                end = _myst_block_end(lines, index, myst["fence"])
                if end < 0:  # an unclosed fence: not ours to guess
                    out.append(line)
                    kept += 1
                    index += 1
                    continue
                after = end + 1
            else:
                after = _rst_block_end(lines, index, match["indent"])
            kind = _notice_kind(book, source, match["argument"])
            out.extend(_gpu_directive(match["indent"], myst["fence"] if myst else None, kind,
                                      newline))
            changes.append(f"line {index + 1}: {GPU_INCLUDE}"
                           + (" (:required:)" if kind == "required" else ""))
            index = after
            continue
        if match and match["name"] == "nb-exec-table":
            old = "{nb-exec-table}" if myst else "nb-exec-table::"
            out.append(line.replace(old, old.replace("nb-exec-table", "execution-status"), 1))
            changes.append(f"line {index + 1}: {EXEC_TABLE}")
        else:
            out.append(line)
        if myst:
            open_fences.append(myst["fence"])
        index += 1
    if text.endswith("\n") or not out:
        return "".join(out), changes, kept
    return "".join(out).rstrip("\r\n"), changes, kept


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def source_files(book: Path, suffixes: tuple[str, ...] = SOURCE_SUFFIXES) -> Iterator[Path]:
    """Sources of the book: not in _build or hidden folders, not the notice file
    itself, and nothing a link leads out of the book."""
    for path in sorted(book.rglob("*")):
        relative = path.relative_to(book).parts
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative[:-1]):
            continue
        if path.suffix not in suffixes or not path.is_file():
            continue
        if _GPU_NOTICE_PATH.match(path.relative_to(book).as_posix()) or not _inside(path, book):
            continue
        yield path


# -- the status page -------------------------------------------------------------------
#: a machine cell that listed the kernel environment's packages (``:packages:`` does)
_PACKAGE_LISTING = re.compile(r"^[ \t]*!\s*(?:conda\s+list|pip3?\s+(?:list|freeze))",
                              re.MULTILINE)


def _machine_cells(lines: list[str]) -> list[str]:
    """The code of every code cell of the page that prints the machine."""
    found = []
    for index, line in enumerate(lines):
        cell = _CODE_CELL.match(line)
        end = _myst_block_end(lines, index, cell["fence"]) if cell else -1
        if cell and end > index and _MACHINE_CODE.search(code := "".join(lines[index + 1:end])):
            found.append(code)
    return found


def rewrite_status_page(text: str) -> tuple[str, list[str], list[int]]:
    """The page with its machine cells replaced by one ``{execution-environment}``
    (none added when it has one; with ``:packages:`` when a cell listed the packages,
    ``!conda list``), what changed, and the lines (1-based, of the
    rewritten page) of the text just before each removed cell, which introduced its
    output."""
    lines = text.splitlines(keepends=True)
    newline = _newline(text)
    has_directive = any("{execution-environment}" in line for line in lines)
    # a page that listed the packages (!conda list) keeps that list: :packages:
    packages = any(_PACKAGE_LISTING.search(code) for code in _machine_cells(lines))
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
                        *([f"{indent}:packages:{newline}"] if packages else []),
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


# -- _config.yml -------------------------------------------------------------------------
_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*):[ \t]*(?P<rest>.*)$")
# extra_extensions: [a, b]  # a comment    (one line; QuantEcon's own config)
def _flow_list(key: str) -> re.Pattern[str]:
    # key: [a, b]   (one line; mappings inside are not edited)
    return re.compile(r"^(?P<head>[ \t]*" + re.escape(key) + r":[ \t]*\[)"
                      r"(?P<items>[^\[\]#{}]*?)(?P<tail>[ \t]*\][ \t]*(?:#.*)?)(?P<end>\r?\n)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("#")


def append_to_yaml_list(text: str, top: str, key: str, item: list[str], flow_item: str,
                        new_key_first: bool = False) -> str | None:
    """``text`` (a YAML file) with ``item`` at the end of the list ``top: key:``, edited
    as text so that its comments, order, byte-order mark and CRLF line endings stay;
    None when the file's shape is not one this edit handles (``top: {...}`` on one line,
    a flow list over several lines or holding mappings, ``key: null``).

    ``item``: the item's lines as a block list writes them, unindented (``["- x"]``, or
    ``["- type: a", "  path: b"]``); ``flow_item``: the item in a one-line list. A
    missing ``key`` goes first in ``top``'s block with ``new_key_first``, else last."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(bom):]
    newline = _newline(text)

    def item_lines(pad: str) -> list[str]:
        return [f"{pad}{line}{newline}" for line in item]

    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    head = next((i for i, line in enumerate(lines)
                 if (m := _TOP_KEY.match(line)) and m["key"] == top), None)
    if head is None:
        return bom + "".join(lines) + f"{top}:{newline}  {key}:{newline}" + \
            "".join(item_lines("    "))
    if _TOP_KEY.match(lines[head])["rest"].split("#")[0].strip():
        return None  # top: {...} on one line
    end = next((i for i in range(head + 1, len(lines))
                if _is_content(lines[i]) and _indent(lines[i]) == 0), len(lines))
    block = range(head + 1, end)
    child = next((_indent(lines[i]) for i in block if _is_content(lines[i])), 2)
    found = next((i for i in block if _indent(lines[i]) == child
                  and lines[i].strip().startswith(f"{key}:")), None)
    if found is None:
        at = head if new_key_first else max(
            (i for i in block if _is_content(lines[i])), default=head)
        pad = " " * child
        lines[at + 1:at + 1] = [f"{pad}{key}:{newline}", *item_lines(pad + "  ")]
        return bom + "".join(lines)
    if lines[found].split(":", 1)[1].split("#")[0].strip():
        flow = _flow_list(key).match(lines[found])
        if flow is None:
            return None  # key: null, or a list over several lines
        items = flow["items"].rstrip().rstrip(",")
        items = f"{items}, {flow_item}" if items.strip() else flow_item
        lines[found] = f"{flow['head']}{items}{flow['tail']}{flow['end']}"
        return bom + "".join(lines)
    # the items: at the first one's indent (the key's, or deeper), with the lines of an
    # item's mapping deeper still
    last, item_indent = found, None
    for i in (i for i in range(found + 1, end) if _is_content(lines[i])):
        indent = _indent(lines[i])
        if item_indent is None:
            if not lines[i].lstrip().startswith("- ") or indent < child:
                break
            item_indent = indent
        elif indent < item_indent or (indent == item_indent
                                      and not lines[i].lstrip().startswith("- ")):
            break
        last = i
    pad = " " * (item_indent if item_indent is not None else child + 2)
    lines[last + 1:last + 1] = item_lines(pad)
    return bom + "".join(lines)


def add_extension(text: str) -> str | None:
    """``_config.yml`` with the extension in ``sphinx: extra_extensions:`` (see
    :func:`append_to_yaml_list`; tabs and anchors are not handled either)."""
    return append_to_yaml_list(text, "sphinx", "extra_extensions", [f"- {EXTENSION}"],
                               EXTENSION, new_key_first=True)


def _load_yaml(text: str) -> Any:
    import yaml  # comes with MyST-NB

    try:
        return yaml.safe_load(text.lstrip("\ufeff"))
    except yaml.YAMLError:
        return None


def _has_extension(text: str) -> bool:
    data = _load_yaml(text)
    sphinx = data.get("sphinx") if isinstance(data, dict) else None
    extensions = sphinx.get("extra_extensions") if isinstance(sphinx, dict) else None
    return isinstance(extensions, list) and EXTENSION in extensions


def _only_adds_extension(before: str, after: str) -> bool:
    """Whether ``after`` reads as ``before`` with the extension at the end of
    ``sphinx: extra_extensions`` and nothing else changed (a second ``sphinx:``
    block, which YAML would read instead of the first, is such a change)."""
    old, new = _load_yaml(before), _load_yaml(after)
    old = {} if old is None and not before.strip("\ufeff \t\r\n") else old
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    expected = copy.deepcopy(old)
    sphinx = expected.get("sphinx")
    if sphinx is None:
        sphinx = expected["sphinx"] = {}
    if not isinstance(sphinx, dict):
        return False
    sphinx["extra_extensions"] = [*(sphinx.get("extra_extensions") or []), EXTENSION]
    return expected == new


def migrate_config(book: Path) -> tuple[FileChange | None, str | None]:
    """The ``_config.yml`` change, or a note saying what to add by hand."""
    path = book / CONFIG_FILE
    by_hand = f"add {EXTENSION!r} to the list under 'sphinx: extra_extensions:'"
    if path.is_symlink() and not _inside(path, book):
        return None, (f"{CONFIG_FILE}: a link to a file outside the book, not edited: "
                      f"{by_hand}")
    if not path.is_file():
        return None, None
    text, bom = read_source(path, book)
    if _has_extension(text):
        return None, None
    edited = add_extension(text)
    if edited is None or not _only_adds_extension(text, edited):
        return None, (f"{CONFIG_FILE}: {by_hand} (this command edits block lists and "
                      "one-line [a, b] lists)")
    return FileChange(path, [f"added {EXTENSION} to sphinx: extra_extensions"], text,
                      edited, bom), None


# -- the command -------------------------------------------------------------------------
def migrate(book: Path, dry_run: bool = False) -> MigrationResult:
    """Rewrite the book's sources and config (only describe the changes with dry_run).

    Everything is read, rewritten in memory and checked before the first file is
    written: a page that is not UTF-8 or cannot be written raises
    :class:`MigrationError` with the book unchanged.
    """
    result = plan(book)
    if not dry_run:
        apply(result, book)
    return result


def plan(book: Path, config: bool = True) -> MigrationResult:
    """The changes :func:`migrate` makes, none written; ``config``: ``_config.yml`` too."""
    book = book.resolve()
    changes: list[FileChange] = []
    kept = 0
    for path in source_files(book):
        text, bom = read_source(path, book)
        rewritten, what, left = _rewrite(text, book, path)
        kept += left
        if what:
            changes.append(FileChange(path, what, text, rewritten, bom))
    notes = _rewrite_status_pages(book, changes)
    # .ipynb sources are JSON: rewriting them here would reformat the whole file
    for path in source_files(book, (".ipynb",)):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "_admonition/gpu.md" in text or "nb-exec-table" in text:
            notes.append(f"{path.relative_to(book).as_posix()}: a notebook that includes "
                         "_admonition/gpu.md or uses {nb-exec-table}: edit it in Jupyter")
            kept += "_admonition/gpu.md" in text
    edited, note = migrate_config(book) if config else (None, None)
    if edited is not None:
        changes.append(edited)
    if note:
        notes.append(note)
    return MigrationResult(changes, notes, kept)


def _rewrite_status_pages(book: Path, changes: list[FileChange]) -> list[str]:
    """The status pages' machine cells (:func:`rewrite_status_page`) in ``changes`` (a
    page already rewritten keeps its other changes); the notes on the text that
    introduced their output."""
    planned = {change.path: change for change in changes}
    notes = []
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
            changes.append(change)
        change.after = rewritten
        change.changes += what
        if prose:
            name = path.relative_to(book).as_posix()
            notes.append(f"{name}: line{'s' if len(prose) > 1 else ''} "
                         f"{', '.join(map(str, prose))}: the text before a removed machine "
                         "cell introduced its output; reword or delete it")
    return notes


def apply(result: MigrationResult, book: Path) -> None:
    """Write the changes, once every file is known to be writable (else nothing is)."""
    book = book.resolve()
    changes = result.changes
    for change in changes:
        if not change.writable:
            raise MigrationError(f"{change.path.relative_to(book).as_posix()}: not "
                                 "writable (nothing was changed)")
    for done, change in enumerate(changes):
        try:
            change.write()
        except OSError as error:  # checked above; a full disk can still fail
            raise MigrationError(
                f"{change.path.relative_to(book).as_posix()}: "
                f"{error.strerror or error} (after changing {done} of {len(changes)} "
                "files)") from error


def report_lines(result: MigrationResult, book: Path, dry_run: bool) -> list[str]:
    book = book.resolve()
    lines: list[str] = []
    if dry_run:
        lines.extend(change.diff(book) for change in result.changes)
    verb = "would change" if dry_run else "changed"
    for change in result.changes:
        name = change.path.relative_to(book).as_posix()
        lines.append(f"{verb} {name}:")
        lines.extend(f"  {what}" for what in change.changes)
    if not result.changes:
        lines.append("nothing to change")
    lines.extend(f"to do by hand: {note}" for note in result.notes)
    if (any(GPU_INCLUDE in what for c in result.changes for what in c.changes)
            and not result.kept_includes):
        lines.append("_admonition/gpu.md can be deleted once nothing else includes it.")
    elif result.kept_includes:
        lines.append(f"_admonition/gpu.md is still needed: {result.kept_includes} "
                     f"include{'s' if result.kept_includes != 1 else ''} of it left as "
                     "they are (an unclosed fence, or a notebook).")
    for change in result.changes if result.sphinx else ():
        if (any(EXEC_TABLE in what for what in change.changes)
                and _FRONT_MATTER_KERNEL.match(change.after) and "{code-cell}" not in change.after):
            name = change.path.relative_to(book).as_posix()
            lines.append(f"to do by hand: {name} has no code cells: remove its jupytext / "
                         "kernelspec front matter so that MyST-NB does not start a kernel "
                         "for it")
    return lines
