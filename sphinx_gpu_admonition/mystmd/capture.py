"""The mystmd side of the capture: the probe's lines become a page's record.

mystmd gives every kernel the build's environment; ``python -m
sphinx_gpu_admonition.mystmd env`` sets ``PYTHONSTARTUP`` to :mod:`.kernel_startup`
and :data:`ENV_CAPTURE` to the capture folder. Each kernel writes one file in
``<capture>/kernels/`` (its first line names the page, ``JPY_SESSION_NAME``).

The plugin's document-stage transform runs after the page's execution but is
given only the page's mdast, not its path: it finds its kernel's file by the
pages' code (the first line of every code cell, as the probe records them). The
record is then saved twice: ``records/`` (this build's pages, read by the status
page) and ``sidecars/<key>.json``, keyed like mystmd's execution cache
(``_build/execute/<md5>.json``), so a cache hit, which starts no kernel, reports
the measurements of the execution that produced its outputs. The kernel's file
is removed once read: a file left there is always this build's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from ..model.files import atomic_write, read_json, read_sidecar, repository_path, sidecar_dict
from ..model.formatting import error_message
from ..model.probe_output import ProbeOutput, device_peak, probe_lines, recorded_text
from ..model.record import (
    CACHE,
    ERROR,
    EXECUTED,
    OK,
    ErrorInfo,
    NotebookRecord,
)
from ..model.schema import SchemaError
from ..probe.protocol import first_line
from . import packages
from .mdast import walk

#: the capture folder, set for the build (and so for its kernels and the plugin)
ENV_CAPTURE = "SPHINX_GPU_ADMONITION_MYSTMD_CAPTURE"
#: the default capture folder, relative to the book (where ``myst`` runs)
DEFAULT_CAPTURE = Path("_build") / "sphinx-gpu-admonition"
KERNELS_FOLDER = "kernels"
RECORDS_FOLDER = "records"
SIDECARS_FOLDER = "sidecars"
#: the first line :mod:`.kernel_startup` writes: the page the kernel runs
KIND_PAGE = "mystmd_page"
#: the kernel name assumed for the cache key (mystmd's default kernel)
DEFAULT_KERNEL = "python3"
#: mystmd's tag for a cell that may raise
RAISES_EXCEPTION = "raises-exception"
#: the notebook cell kind of a code block in mystmd's mdast
CODE_BLOCK = "notebook-code"


#: the opening fence of a code cell in a MyST Markdown page (as ext/_mystnb.py reads it)
CODE_CELL_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{code-cell\}")


def capture_folder() -> Path:
    return Path(os.environ.get(ENV_CAPTURE) or DEFAULT_CAPTURE).absolute()


def page_file_name(page: str) -> str:
    """The kernel's file for ``page`` (kernel_startup.py repeats this)."""
    return hashlib.sha1(os.path.abspath(page).encode("utf-8")).hexdigest()[:16] + ".jsonl"


# -- the page's code, from its mdast ---------------------------------------------------
class CodeCell(NamedTuple):
    #: the block's index among the page's top-level blocks (the cell's anchor)
    index: int
    code: str
    raises: bool
    #: the code cells before it, skipped ones included (to find its fence in the source)
    position: int = 0
    #: the traceback of the error output mystmd gave the cell, if any
    traceback: str | None = None


def code_cells(tree: dict[str, Any]) -> list[CodeCell]:
    """The page's executable code cells, in order (as mystmd executes them)."""
    cells = []
    blocks = [n for n in tree.get("children") or [] if isinstance(n, dict)]
    position = 0
    for index, block in enumerate(blocks):
        if block.get("type") != "block" or block.get("kind") != CODE_BLOCK:
            continue
        position += 1
        tags = (block.get("data") or {}).get("tags") or []
        if "skip-execution" in tags:
            continue
        code = next((n.get("value", "") for n in walk(block) if n.get("type") == "code"), "")
        cells.append(CodeCell(index, code, RAISES_EXCEPTION in tags, position - 1,
                              _traceback(block)))
    return cells


def _traceback(block: dict[str, Any]) -> str | None:
    for node in walk(block):
        data = node.get("jupyter_data") if node.get("type") == "output" else None
        if isinstance(data, dict) and data.get("output_type") == "error":
            traceback = data.get("traceback")
            text = "\n".join(traceback) if isinstance(traceback, list) else str(traceback or "")
            return text or f"{data.get('ename')}: {data.get('evalue')}"
    return None


def fence_lines(page: Path) -> list[int]:
    """The line of every ``{code-cell}`` fence of a MyST Markdown page, in order (none
    for a ``.ipynb`` page: a line of its JSON means nothing to a reader)."""
    if page.suffix == ".ipynb":
        return []
    try:
        source = page.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [number for number, line in enumerate(source, 1) if CODE_CELL_FENCE.match(line)]


def cache_key(cells: list[CodeCell], kernel: str = DEFAULT_KERNEL) -> str:
    """mystmd's execution-cache key of a page (myst-execute ``buildCacheKey``) for
    pages without inline expressions or ``depends_on_env``; the sidecar's name."""
    items = [{"kind": "block", "content": c.code, "raisesException": c.raises} for c in cells]
    text = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    return hashlib.md5(kernel.encode("utf-8") + text.encode("utf-8")).hexdigest()


# -- the probe's lines ------------------------------------------------------------------
class KernelOutput(ProbeOutput):
    """What one kernel wrote, read as every engine reads it
    (:class:`..model.probe_output.ProbeOutput`), and the page that mystmd's kernel
    start-up named in a line of its own."""

    def __init__(self, path: Path):
        super().__init__(probe_lines(path))
        self.path = path
        named = self.other.get(KIND_PAGE, {})
        page, executable = named.get("page"), named.get("executable")
        self.page: str | None = None if page is None else str(page)
        #: the kernel's Python executable (whose packages the build lists)
        self.executable: str | None = executable if isinstance(executable, str) else None

    def matches(self, cells: list[CodeCell]) -> bool:
        """The kernel ran these cells, in order (all, or the first ones: an error or a
        dead kernel stops a page), each recorded cell at its place among them (a cell
        whose line the probe could not write leaves a gap)."""
        places = self.positions()
        return bool(self.cells) and all(
            place is not None and place < len(cells)
            and cell.first_line == recorded_text(first_line(cells[place].code))
            for cell, place in zip(self.cells, places, strict=True))


def find_kernel_output(folder: Path, cells: list[CodeCell]) -> KernelOutput | None:
    """This build's kernel of the page with ``cells``; a complete run wins over a
    partial one."""
    found = [output for path in sorted((folder / KERNELS_FOLDER).glob("*.jsonl"))
             if (output := KernelOutput(path)).matches(cells)]
    found.sort(key=lambda output: -len(output.cells))
    return found[0] if found else None


# -- the record -------------------------------------------------------------------------
def docname_of(page: str, root: Path) -> str:
    path = Path(page)
    with contextlib.suppress(ValueError):
        path = path.resolve().relative_to(root.resolve())
    return path.with_suffix("").as_posix()


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")


def _title(tree: dict[str, Any]) -> str:
    for node in walk(tree):
        if node.get("type") == "heading" and node.get("depth") == 1:
            return "".join(n.get("value", "") for n in walk(node) if n.get("type") == "text")
    return ""


def record_from_kernel(output: KernelOutput, cells: list[CodeCell], root: Path,
                       title: str) -> NotebookRecord:
    page = output.page or ""
    record = NotebookRecord(docname=docname_of(page, root), status=OK, title=title,
                            provenance=EXECUTED, method="mystmd",
                            executed_at=_iso(output.started),
                            source=repository_path(Path(page)) if page else None)
    # from the kernel's own counts: the page does not say which of its cells ran
    record.capture, record.capture_message = output.capture_state()
    record.environment = output.load_environment()  # one bad value loses that value
    fences = fence_lines(Path(page)) if page else []
    # a page stopped by an error ran fewer cells than it has; matches() placed them all
    for cell, place in zip(output.cells, output.positions(), strict=True):
        if place is None or place >= len(cells):
            continue
        code = cells[place]
        cell.index = code.index
        cell.line = fences[code.position] if code.position < len(fences) else None
        cell.error_expected = cell.error is not None and code.raises
    record.cells = output.cells
    peaks = [c.peak_memory_mb for c in record.cells if c.peak_memory_mb is not None]
    record.peak_memory_mb = max(peaks, default=None)
    record.device_peak_memory_mb = device_peak(record.cells)
    failing = next((c for c in record.cells if c.error and not c.error_expected), None)
    if failing is not None:
        record.status = ERROR
        traceback = next((c.traceback for c in cells if c.index == failing.index), None)
        record.error = ErrorInfo(type=failing.error or "Error",
                                 message=error_message(traceback),
                                 cell_index=failing.index,
                                 execution_count=failing.execution_count)
    return record


def page_record(tree: dict[str, Any], folder: Path | None = None,
                root: Path | None = None) -> tuple[NotebookRecord | None, list[str]]:
    """The record of the page ``tree`` (None: a page without code) and warnings.

    After an execution the record is saved as the sidecar of the page's cache key
    and the kernel's file removed; without a kernel's file (a cache hit) the
    sidecar's record is this build's, with provenance ``cache``.
    """
    folder = folder or capture_folder()
    root = root or Path.cwd()
    cells = code_cells(tree)
    if not cells:
        return None, []
    sidecar = folder / SIDECARS_FOLDER / f"{cache_key(cells)}.json"
    output = find_kernel_output(folder, cells)
    warnings: list[str] = []
    if output is not None:
        record = record_from_kernel(output, cells, root, _title(tree))
        # kept in the sidecar too: a cache hit lists the packages of the run it reuses
        record.packages = packages.kernel_packages(output.executable, folder)
        warnings += [f"in-kernel capture: {message}" for message in output.warnings]
        if output.errors:
            warnings.append(f"the in-kernel capture failed: {output.errors[0]} "
                            "(the notebook ran normally)")
        if record.status == OK:  # mystmd caches only pages that ran without error
            _save(sidecar, json.dumps(sidecar_dict(record), sort_keys=True, allow_nan=False))
        output.path.unlink(missing_ok=True)
    else:
        record, problem = _from_sidecar(sidecar)
        if problem:
            warnings.append(problem)
        if record is None:
            return None, warnings  # no data: not executed with capture on (or code only)
        record.title = _title(tree) or record.title
    _save(folder / RECORDS_FOLDER / f"{_digest(record.docname)}.json",
          json.dumps(record.to_dict(), sort_keys=True, allow_nan=False))
    return record, warnings


def _from_sidecar(path: Path) -> tuple[NotebookRecord | None, str | None]:
    if not path.is_file():
        return None, None
    try:
        saved = read_sidecar(path)
    except (OSError, SchemaError) as error:
        return None, f"unreadable capture data for the cached page, ignored: {error}"
    if saved is None:
        return None, None
    saved.provenance = CACHE
    return saved, None


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _save(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


def build_records(folder: Path | None = None, root: Path | None = None) -> list[NotebookRecord]:
    """Every page's record of this build (pages whose source is gone are left out)."""
    folder = folder or capture_folder()
    root = root or Path.cwd()
    records = []
    for path in sorted((folder / RECORDS_FOLDER).glob("*.json")):
        try:
            record = NotebookRecord.from_dict(read_json(path))
        except (OSError, SchemaError):
            continue
        if record.source and not (root / record.source).exists() \
                and not Path(record.source).exists():
            continue
        records.append(record)
    return sorted(records, key=lambda r: r.docname)

