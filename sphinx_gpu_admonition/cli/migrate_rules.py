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
* ``_config.yml``: adds ``sphinx_gpu_admonition`` to ``sphinx: extra_extensions:``
  by a text edit that keeps comments and order; when the file's shape is not one
  it can edit safely, it changes nothing and says which line to add.

It never touches files outside BOOK, in ``_build`` or hidden folders, or the
included ``_admonition/gpu.md`` itself (which can be deleted once nothing
includes it).  With ``dry_run`` it only describes the changes (unified diffs).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterator
from pathlib import Path

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


@dataclasses.dataclass
class FileChange:
    """One rewritten file: what changed (with line numbers) and its texts."""

    path: Path
    changes: list[str]
    before: str
    after: str

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
        stripped = lines[index].strip()
        if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
            return index
    return -1


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


def _gpu_directive(indent: str, fence: str | None, kind: str) -> list[str]:
    """The ``{gpu}`` directive replacing an include (MyST when ``fence`` is given)."""
    if fence is None:
        return [f"{indent}.. gpu::\n"] + ([f"{indent}   :required:\n"] if kind == "required"
                                         else [])
    required = [f"{indent}:required:\n"] if kind == "required" else []
    return [f"{indent}{fence}{{gpu}}\n", *required, f"{indent}{fence}\n"]


def rewrite_source(text: str, book: Path, source: Path) -> tuple[str, list[str]]:
    """The text with the notice includes and exec tables replaced, and what changed."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    changes: list[str] = []
    rst = source.suffix == ".rst"
    index = 0
    while index < len(lines):
        line = lines[index]
        bare = line.rstrip("\r\n")
        myst = None if rst else _MYST_OPEN.match(bare)
        match = myst or _RST_DIRECTIVE.match(bare)
        if match and match["name"] == "include" and _GPU_NOTICE_PATH.match(match["argument"]):
            if myst:
                end = _myst_block_end(lines, index, myst["fence"])
                if end < 0:  # an unclosed fence: not ours to guess
                    out.append(line)
                    index += 1
                    continue
                after = end + 1
            else:
                after = _rst_block_end(lines, index, match["indent"])
            kind = _notice_kind(book, source, match["argument"])
            out.extend(_gpu_directive(match["indent"], myst["fence"] if myst else None, kind))
            changes.append(f"line {index + 1}: {GPU_INCLUDE}"
                           + (" (:required:)" if kind == "required" else ""))
            index = after
            continue
        if match and match["name"] == "nb-exec-table":
            old = "{nb-exec-table}" if myst else "nb-exec-table::"
            out.append(line.replace(old, old.replace("nb-exec-table", "execution-status"), 1))
            changes.append(f"line {index + 1}: {EXEC_TABLE}")
            index += 1
            continue
        out.append(line)
        index += 1
    if text.endswith("\n") or not out:
        return "".join(out), changes
    return "".join(out).rstrip("\n"), changes


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


# -- _config.yml -------------------------------------------------------------------------
_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*):[ \t]*(?P<rest>.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def add_extension(text: str) -> str | None:
    """``_config.yml`` with the extension in ``sphinx: extra_extensions:``; None when
    the file's shape is not one this text edit handles (flow lists, tabs, anchors)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    sphinx = next((i for i, line in enumerate(lines)
                   if (m := _TOP_KEY.match(line)) and m["key"] == "sphinx"), None)
    if sphinx is None:
        return "".join(lines) + f"sphinx:\n  extra_extensions:\n    - {EXTENSION}\n"
    if _TOP_KEY.match(lines[sphinx])["rest"].split("#")[0].strip():
        return None  # sphinx: {...} on one line
    end = next((i for i in range(sphinx + 1, len(lines))
                if lines[i].strip() and not lines[i].lstrip().startswith("#")
                and _indent(lines[i]) == 0), len(lines))
    block = range(sphinx + 1, end)
    child = next((_indent(lines[i]) for i in block if lines[i].strip()
                  and not lines[i].lstrip().startswith("#")), 2)
    extra = next((i for i in block if _indent(lines[i]) == child
                  and lines[i].strip().startswith("extra_extensions:")), None)
    if extra is None:
        pad = " " * child
        lines[sphinx + 1:sphinx + 1] = [f"{pad}extra_extensions:\n", f"{pad}  - {EXTENSION}\n"]
        return "".join(lines)
    if lines[extra].split(":", 1)[1].split("#")[0].strip():
        return None  # extra_extensions: [a, b]
    items = [i for i in range(extra + 1, end) if lines[i].strip()
             and not lines[i].lstrip().startswith("#")]
    last = extra
    for i in items:
        if _indent(lines[i]) <= child or not lines[i].lstrip().startswith("- "):
            break
        last = i
    pad = " " * (_indent(lines[last]) if last != extra else child + 2)
    lines.insert(last + 1, f"{pad}- {EXTENSION}\n")
    return "".join(lines)


def _has_extension(text: str) -> bool:
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with MyST-NB
        return EXTENSION in text
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return False
    sphinx = data.get("sphinx") if isinstance(data, dict) else None
    extensions = sphinx.get("extra_extensions") if isinstance(sphinx, dict) else None
    return isinstance(extensions, list) and EXTENSION in extensions


def migrate_config(book: Path) -> tuple[FileChange | None, str | None]:
    """The ``_config.yml`` change, or a note saying what to add by hand."""
    path = book / CONFIG_FILE
    if not path.is_file():
        return None, None
    text = path.read_text(encoding="utf-8")
    if _has_extension(text):
        return None, None
    edited = add_extension(text)
    if edited is None or not _has_extension(edited):
        return None, (f"{CONFIG_FILE}: add {EXTENSION!r} to the list under "
                      f"'sphinx: extra_extensions:' (this command edits only block lists)")
    return FileChange(path, [f"added {EXTENSION} to sphinx: extra_extensions"], text,
                      edited), None


# -- the command -------------------------------------------------------------------------
def migrate(book: Path, dry_run: bool = False) -> MigrationResult:
    """Rewrite the book's sources and config (only describe the changes with dry_run)."""
    book = book.resolve()
    changes: list[FileChange] = []
    for path in source_files(book):
        text = path.read_text(encoding="utf-8")
        rewritten, what = rewrite_source(text, book, path)
        if what:
            changes.append(FileChange(path, what, text, rewritten))
    notes = []
    # .ipynb sources are JSON: rewriting them here would reformat the whole file
    for path in source_files(book, (".ipynb",)):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "_admonition/gpu.md" in text or "nb-exec-table" in text:
            notes.append(f"{path.relative_to(book).as_posix()}: a notebook that includes "
                         "_admonition/gpu.md or uses {nb-exec-table}: edit it in Jupyter")
    config, note = migrate_config(book)
    if config is not None:
        changes.append(config)
    if note:
        notes.append(note)
    if not dry_run:
        for change in changes:
            change.path.write_text(change.after, encoding="utf-8")
    return MigrationResult(changes, notes)


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
    if any(GPU_INCLUDE in what for c in result.changes for what in c.changes):
        lines.append("_admonition/gpu.md can be deleted once nothing else includes it.")
    for change in result.changes:
        if (any(EXEC_TABLE in what for what in change.changes)
                and _FRONT_MATTER_KERNEL.match(change.after) and "{code-cell}" not in change.after):
            name = change.path.relative_to(book).as_posix()
            lines.append(f"to do by hand: {name} has no code cells: remove its jupytext / "
                         "kernelspec front matter so that MyST-NB does not start a kernel "
                         "for it")
    return lines
