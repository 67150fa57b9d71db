"""The mystmd side of the capture: the probe's lines become a page's record.

mystmd gives every kernel the build's environment; ``python -m
sphinx_gpu_admonition.mystmd env`` sets ``PYTHONSTARTUP`` to :mod:`.kernel_startup`
and :data:`ENV_CAPTURE` to the capture folder. Each kernel writes one file in
``<capture>/kernels/`` (its first line names the page, ``JPY_SESSION_NAME``).

The plugin's document-stage transform runs after the page's execution but is
given only the page's mdast, not its path: it finds its kernel's file by the
page's code (the first line of every code cell it executed, :mod:`.cells`, as the
probe records them), and :func:`..model.enrich.enrich` sets what the page says about
them. The record is then saved twice: ``records/`` (this build's pages, read by the
status page) and ``sidecars/<key>.json``, keyed like mystmd's execution cache
(``_build/execute/<md5>.json``), so a cache hit, which starts no kernel, reports
the measurements of the execution that produced its outputs. The kernel's file
is removed once read; the project stage reports this build's kernels no page took
(:func:`leftover_kernels`) and removes every file left.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..model.derivations import Kept
from ..model.enrich import PageCell, enrich
from ..model.files import (
    Sidecar,
    kept_again,
    load_sidecar,
    local_module_reader,
    read_json,
    repository_path,
    sidecar_dict,
    sidecar_text,
    write_or_warn,
)
from ..model.probe_output import ProbeOutput, device_peak, probe_lines, recorded_text
from ..model.record import (
    CACHE,
    CELL_LABEL,
    EXECUTED,
    OK,
    NotebookRecord,
)
from ..model.schema import SchemaError
from ..probe.protocol import CRASH_SUFFIX
from ..probe.protocol import first_line as probe_first_line
from .cells import cache_key, executable_nodes, page_cells
from .mdast import walk
from .pages import source_file

#: the capture folder, set for the build (and so for its kernels and the plugin)
ENV_CAPTURE = "SPHINX_GPU_ADMONITION_MYSTMD_CAPTURE"
#: the default capture folder, relative to the book (where ``myst`` runs)
DEFAULT_CAPTURE = Path("_build") / "sphinx-gpu-admonition"
KERNELS_FOLDER = "kernels"
RECORDS_FOLDER = "records"
SIDECARS_FOLDER = "sidecars"
#: the first line :mod:`.kernel_startup` writes: the page the kernel runs
KIND_PAGE = "mystmd_page"


def capture_folder() -> Path:
    return Path(os.environ.get(ENV_CAPTURE) or DEFAULT_CAPTURE).absolute()


def page_file_name(page: str) -> str:
    """The kernel's file for ``page`` (kernel_startup.py repeats this)."""
    return hashlib.sha1(os.path.abspath(page).encode("utf-8")).hexdigest()[:16] + ".jsonl"


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

    def mismatch(self, cells: list[PageCell]) -> str | None:
        """Why this kernel did not run these cells (None: it ran all of them, or the
        first ones: an error or a dead kernel stops a page), in their order."""
        if not self.cells:
            return "the kernel recorded no cell"
        expected = {cell.position: cell for cell in cells if cell.position is not None}
        for cell in self.cells:  # placed by the reader (ProbeOutput.positions)
            position = cell.position
            page = expected.get(position) if position is not None else None
            if page is None:
                return (f"the kernel ran {len(self.cells)} code cells, the page has "
                        f"{len(expected)}")
            line = first_line(page.source)
            if cell.first_line != line:
                return (f"{CELL_LABEL.format(number=position + 1)} ran "
                        f"{cell.first_line[:40]!r}, the page's starts with {line[:40]!r}")
        return None

    def remove(self) -> None:
        """Read once: the kernel's file goes, with faulthandler's file beside it."""
        for path in (self.path, self.path.with_name(self.path.name + CRASH_SUFFIX)):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def first_line(code: str) -> str:
    """A cell's first line as the probe records it, then as the record keeps it."""
    return recorded_text(probe_first_line(code))


def kernel_outputs(folder: Path) -> list[KernelOutput]:
    return [KernelOutput(path) for path in sorted((folder / KERNELS_FOLDER).glob("*.jsonl"))]


def find_kernel_output(folder: Path, cells: list[PageCell],
                       since: float | None = None) -> KernelOutput | None:
    """This build's kernel (started at ``since`` or later) of the page with ``cells``; a
    complete run wins over a partial one."""
    found = [output for output in kernel_outputs(folder)
             if this_builds(output, since) and output.mismatch(cells) is None]
    found.sort(key=lambda output: -len(output.cells))
    return found[0] if found else None


def _holds(page: Path, cells: list[PageCell]) -> bool:
    """The source file ``page`` (a kernel's page) holds the code of every one of
    ``cells``: that kernel ran this page, though not the cells as the tree shows them."""
    try:
        text = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if page.suffix == ".ipynb":
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            text = "\n".join("".join(cell.get("source") or "")
                             for cell in json.loads(text).get("cells") or [])
    codes = [cell.source.strip() for cell in cells if cell.source.strip()]
    return bool(codes) and all(code in text for code in codes)


def own_unmatched_kernel(folder: Path, cells: list[PageCell],
                         since: float | None) -> tuple[KernelOutput, str] | None:
    """The kernel this build started for the page with ``cells`` when what it ran is not
    these cells (found by the page's source, which holds their code), and why."""
    for output in kernel_outputs(folder):
        reason = output.mismatch(cells)
        if (reason is not None and output.page and this_builds(output, since)
                and _holds(Path(output.page), cells)):
            return output, reason
    return None


def this_builds(output: KernelOutput, since: float | None) -> bool:
    """The kernel started in the running build (``since``: its start; None: unknown)."""
    return since is None or output.started is None or output.started >= since


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


def _executed(output: KernelOutput, root: Path, title: str) -> NotebookRecord:
    page = output.page or ""
    record = NotebookRecord(docname=docname_of(page, root), status=OK, title=title,
                            provenance=EXECUTED, method="mystmd",
                            executed_at=_iso(output.started),
                            source=repository_path(Path(page)) if page else None)
    record.environment = output.load_environment()  # one bad value loses that value
    return record


def record_from_kernel(output: KernelOutput, root: Path, title: str) -> NotebookRecord:
    """The page's record as its kernel measured it (the page's cells enrich it)."""
    record = _executed(output, root, title)
    # from the kernel's own counts: the page does not say which of its cells ran
    record.capture, record.capture_message = output.capture_state()
    record.cells = output.cells
    peaks = [c.peak_memory_mb for c in record.cells if c.peak_memory_mb is not None]
    record.peak_memory_mb = max(peaks, default=None)
    record.device_peak_memory_mb = device_peak(record.cells)
    return record


def failed_record(output: KernelOutput, root: Path, title: str, reason: str) -> NotebookRecord:
    """The record of a page whose kernel ran but whose cells could not be matched with
    what it ran: no cell is named (none can be told apart), nothing is claimed."""
    record = _executed(output, root, title)
    record.capture = "failed"
    record.capture_message = f"the page's code cells are not what its kernel ran: {reason}"
    return record


def unmatched_warning(record: NotebookRecord) -> str:
    return (f"{record.docname}: capture failed: {record.capture_message} (the page ran; "
            "its record has no cells)")


def page_record(tree: dict[str, Any], folder: Path | None = None, root: Path | None = None,
                since: float | None = None) -> tuple[NotebookRecord | None, list[str]]:
    """The record of the page ``tree`` (None: a page without code) and warnings.

    After an execution the record is saved as the sidecar of the page's cache key
    and the kernel's file removed; without a kernel's file (a cache hit) the
    sidecar's record is this build's, with provenance ``cache``. A kernel this build
    (started at ``since``) ran for the page with other cells gives a record with
    ``capture: failed``, and a warning.
    """
    folder = folder or capture_folder()
    root = root or Path.cwd()
    executable = executable_nodes(tree)
    found = page_cells(tree)
    if not any(node.kind == "block" for node in executable):
        return None, []
    sidecar = folder / SIDECARS_FOLDER / f"{cache_key(executable)}.json"
    output = find_kernel_output(folder, found, since)
    warnings: list[str] = []
    if output is not None:
        record = record_from_kernel(output, root, _title(tree))
        page = Path(output.page) if output.page else None
        kept = Kept()
        warnings += _enrich(record, tree, page, kept)
        # kept in the sidecar too: a cache hit lists the packages of the run it reuses
        from . import packages  # executed pages only: a cache hit's plugin call skips it

        record.packages = packages.kernel_packages(output.executable, folder)
        warnings += [f"in-kernel capture: {message}" for message in output.warnings]
        if output.errors:
            warnings.append(f"the in-kernel capture failed: {output.errors[0]} "
                            "(the notebook ran normally)")
        if record.status == OK:  # mystmd caches only pages that ran without error
            warnings += _save(sidecar, sidecar_text(sidecar_dict(record, kept)))
        output.remove()
    elif (unmatched := own_unmatched_kernel(folder, found, since)) is not None:
        output, reason = unmatched
        record = failed_record(output, root, _title(tree), reason)
        warnings.append(unmatched_warning(record))
        output.remove()
    else:
        hit, problem = _from_sidecar(sidecar)
        if problem:
            warnings.append(problem)
        if hit is None:
            return None, warnings  # no data: not executed with capture on (or code only)
        record = hit.record
        record.title = _title(tree) or record.title
        warnings += _enrich(record, tree, source_file(record, root), hit.kept)
        # facts derived again (the page's lines, a local module or this release changed)
        # are kept for the next build; a sidecar that cannot be written loses nothing
        if (text := kept_again(hit)) is not None:
            write_or_warn(sidecar, text)
    warnings += _save_record(folder, record)
    return record, warnings


def _enrich(record: NotebookRecord, tree: dict[str, Any], page: Path | None,
            kept: Kept) -> list[str]:
    """What this build's page says about the record's cells (for a cache hit too: the
    page's tags are no part of mystmd's cache key, its lines may have moved), with the
    page facts ``kept`` in its sidecar when the page is the same."""
    reader = local_module_reader(page.parent) if page is not None else None
    return enrich(record, page_cells(tree, page), reader, kept=kept)


def _save_record(folder: Path, record: NotebookRecord) -> list[str]:
    return _save(folder / RECORDS_FOLDER / f"{_digest(record.docname)}.json",
                 json.dumps(record.to_dict(), sort_keys=True, allow_nan=False))


def leftover_kernels(folder: Path | None = None, root: Path | None = None,
                     since: float | None = None) -> tuple[list[NotebookRecord], list[str]]:
    """After every page's document stage: the kernels no page's record took. Those of
    this build (started at ``since``, None: unknown) are pages whose code mystmd ran but
    whose cells could not be found in the tree the plugin got: a record with ``capture:
    failed`` each (unless the page has one of this build), and a warning. Every file
    left in the kernels' folder is removed: an earlier build's, silently."""
    folder = folder or capture_folder()
    root = root or Path.cwd()
    records, warnings = [], []
    for output in kernel_outputs(folder):
        if output.page and this_builds(output, since):
            record = failed_record(output, root, "", "no page of the build matched the "
                                   f"{len(output.cells)} code cells its kernel ran")
            saved = folder / RECORDS_FOLDER / f"{_digest(record.docname)}.json"
            if not (since is not None and saved.is_file() and saved.stat().st_mtime >= since):
                warnings += _save_record(folder, record)
                records.append(record)
                warnings.append(unmatched_warning(record))
        output.remove()
    for crash in (folder / KERNELS_FOLDER).glob(f"*{CRASH_SUFFIX}"):
        if not crash.with_name(crash.name.removesuffix(CRASH_SUFFIX)).exists():
            crash.unlink(missing_ok=True)  # a kernel's faulthandler file, its kernel read
    return records, warnings


def _from_sidecar(path: Path) -> tuple[Sidecar | None, str | None]:
    if not path.is_file():
        return None, None
    try:
        saved = load_sidecar(path)
    except (OSError, SchemaError) as error:
        return None, f"unreadable capture data for the cached page, ignored: {error}"
    if saved is None:
        return None, None
    saved.record.provenance = CACHE
    return saved, None


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _save(path: Path, text: str) -> list[str]:
    """A warning when the file cannot be written (the page keeps its record)."""
    problem = write_or_warn(path, text)
    return [problem] if problem else []


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



# -- which page a tree is, for its project stage -----------------------------------------
#: the comment node the document stage leaves on a page with a record: its docname
PAGE_CLASS = "gpu-admonition-page"


def mark_page(tree: dict[str, Any], record: NotebookRecord) -> None:
    """Document stage: name the page's record in its tree (mystmd tells a project-stage
    transform neither the page's file nor its name), in a comment node no renderer
    shows."""
    tree.setdefault("children", []).append({"type": "comment", "value": "",
                                            "class": PAGE_CLASS,
                                            "data": {"docname": record.docname}})


def marked_page(tree: dict[str, Any]) -> str | None:
    """Project stage: the docname :func:`mark_page` left on the page (None: a page
    without a record)."""
    for node in walk(tree):
        if node.get("type") == "comment" and PAGE_CLASS in str(node.get("class") or "").split():
            docname = (node.get("data") or {}).get("docname")
            if isinstance(docname, str):
                return docname
    return None
