"""The model's files: the status document, capture sidecars, atomic writes.

Reading goes through :func:`.schema.load_model` (every field checked); a bad file
is a :class:`.schema.SchemaError` naming the file.  Writing is atomic so that a
reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from .build_warnings import build_warnings
from .derivations import Kept
from .record import NotebookRecord, StatusReport
from .schema import MAX_FILE_BYTES, SchemaError

#: the folder of the capture's files: the probe's output beside the doctrees, the
#: sidecars beside the jupyter-cache
SIDECAR_FOLDER = "sphinx-gpu-admonition"


def build_time() -> str:
    """Now, or ``SOURCE_DATE_EPOCH`` for reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (datetime.fromtimestamp(int(epoch), timezone.utc) if epoch and epoch.isdigit()
              else datetime.now(timezone.utc))
    return moment.isoformat(timespec="seconds")


def status_json_text(report: StatusReport, interpreter_path: bool = True) -> str:
    """The text of ``execution-status.json`` (also of a merged one); without
    ``interpreter_path`` (``gpu_publish_interpreter_path`` off) no notebook names the
    kernel's Python (``packages.executable`` is empty).

    A line for each key of the document and one for each notebook (and each entry
    of the other lists and mappings at that level), each written compactly: as
    easy to read, diff and grep by notebook as an indented file, and written by
    the json module's C encoder, which ``indent`` turns off (about 4x slower).
    """
    # one notebook's dicts at a time: the whole report's dicts at once were thousands
    # of containers alive together, enough to start a full garbage collection
    data = dataclasses.replace(report, notebooks=[]).to_dict()
    notebooks = (_dumps(_notebook_data(notebook, interpreter_path))
                 for notebook in report.notebooks)
    return _json_by_line(data, {"notebooks": notebooks})


def _notebook_data(notebook: NotebookRecord, interpreter_path: bool) -> dict[str, Any]:
    data = notebook.to_dict()
    if not interpreter_path and isinstance(data.get("packages"), dict):
        data["packages"]["executable"] = ""
    return data


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _json_by_line(data: dict[str, Any], entries: dict[str, Iterable[str]]) -> str:
    """``data`` with a line for each key, and one for each entry of its lists and
    mappings; ``entries``: keys whose lists are given as their entries' JSON texts,
    written as they come (one notebook's dicts alive at a time)."""
    lines = []
    for key in sorted({*data, *entries}):
        if key in entries:
            texts = list(entries[key])
            text = "[\n" + ",\n".join(texts) + "\n]" if texts else "[]"
        else:
            value = data[key]
            if isinstance(value, list) and value:
                text = "[\n" + ",\n".join(map(_dumps, value)) + "\n]"
            elif isinstance(value, dict) and value:
                text = "{\n" + ",\n".join(f"{_dumps(name)}:{_dumps(item)}"
                                           for name, item in sorted(value.items())) + "\n}"
            else:
                text = _dumps(value)
        lines.append(f"{_dumps(key)}:{text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def repository_path(path: Path, book: Path | None = None) -> str:
    """``path`` relative to the repository root (``GITHUB_WORKSPACE``, else the current
    folder) when it lies inside it: how CI annotations name files.

    Outside it, a source (``book``: the book's source folder) is named relative to the
    book, so that no public file (the status JSON and page, JUnit, the annotations)
    holds the build machine's absolute path, however the build was invoked
    (``sphinx-build /abs/docs /abs/out`` from another folder); a build output (no
    ``book``: the step outputs a later step of the same job reads) stays absolute.
    """
    root = _resolved_folder(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    # the folder's links resolved once (a page's path was five ``lstat`` calls); a
    # linked file keeps its own name, the one the book's sources use
    path = _resolved_folder(os.path.dirname(os.path.abspath(path))) / path.name
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    if book is None:
        return path.as_posix()
    folder = _resolved_folder(os.path.abspath(book))
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else path.name


def shown_interpreter(executable: str, publish: bool = True) -> str:
    """The kernel's Python as the public files name it (:func:`public_path`), or ""
    where they must not (``gpu_publish_interpreter_path`` off)."""
    return public_path(executable) if publish and executable else ""


def without_interpreter(text: str, executable: str, publish: bool = True) -> str:
    """A message naming the kernel's Python (a package list that failed), with the
    path replaced by "the kernel's Python" where the public files must not name it."""
    if publish or not executable:
        return text
    return text.replace(public_path(executable), "the kernel's Python")


def public_path(path: str) -> str:
    """How a file of the build machine that is not a source (the kernel's Python, as
    ``!conda list`` names its environment) is written in public files: relative to the
    repository root inside it (a ``.venv`` of the checkout), ``~`` for the home folder
    (which names the user), else as it is (``/usr/bin/python3``,
    ``/opt/conda/envs/lectures/bin/python``: a shared place, and worth knowing)."""
    root = _resolved_folder(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    given = Path(path)
    if given.is_absolute() and given.is_relative_to(root) and given != root:
        return given.relative_to(root).as_posix()
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and given.is_relative_to(home):
        return "~/" + given.relative_to(home).as_posix()
    return path


@functools.lru_cache(maxsize=256)
def _resolved_folder(folder: str) -> Path:
    """A folder with its links resolved (once per process: a record is located per page)."""
    return Path(folder).resolve()


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` so that readers never see a half-written file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):  # never leave a temporary file behind
            temporary.unlink(missing_ok=True)
        raise


def write_or_warn(path: Path, text: str) -> str | None:
    """:func:`atomic_write`, with the folders it needs; what went wrong as a warning's
    text (None: written).  A full disk, an unwritable folder or a file where a folder
    goes costs the file, never the build: every engine warns with this text (and a
    strict build fails on the warning)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    except OSError as error:
        return f"could not write {repository_path(path)}: {error.strerror or error}"
    return None


def read_json(path: Path) -> Any:
    """The JSON in ``path``; :class:`SchemaError` naming the file for anything but JSON.

    Too large files, invalid UTF-8, syntax errors and nesting deeper than the
    parser's recursion limit are all a :class:`SchemaError` (OSError is left to
    the caller: a missing or unreadable file is not bad data).
    """
    with path.open("rb") as stream:
        # one read of the file's size (a read of the limit allocated 64 MiB for every
        # sidecar a cache hit reads); a FIFO or device has no size, and a file may
        # grow: they are read on up to the limit
        chunk = min(os.fstat(stream.fileno()).st_size, MAX_FILE_BYTES) + 1
        data = stream.read(chunk)
        if len(data) == chunk <= MAX_FILE_BYTES:
            data += stream.read(MAX_FILE_BYTES + 1 - chunk)
    if len(data) > MAX_FILE_BYTES:
        raise SchemaError(f"{path}: too large (more than {MAX_FILE_BYTES} bytes)")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise SchemaError(f"{path}: not a text file ({error.reason})") from error
    except json.JSONDecodeError as error:
        raise SchemaError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from error
    except RecursionError:
        raise SchemaError(f"{path}: not JSON this version reads (nested too deeply)") from None
    except ValueError as error:  # e.g. an integer of more than 4300 digits
        raise SchemaError(f"{path}: not JSON this version reads ({error})") from error


#: the reports' default names (``gpu_status_json``, ``gpu_status_junit``), side by side
STATUS_FILE = "execution-status.json"
JUNIT_FILE = "execution-status.junit.xml"


def find_status_file(path: str | Path) -> Path:
    """``path``, or the status file in it when it is a folder: an output folder, a build
    folder (Sphinx's ``_build/html``, mystmd's ``_build``) or a book's source folder;
    :class:`SchemaError` for a folder without one."""
    path = Path(path)
    if not path.is_dir():
        return path
    candidates = [path / STATUS_FILE, path / "html" / STATUS_FILE,
                  path / "_build" / "html" / STATUS_FILE, path / "_build" / STATUS_FILE]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise SchemaError(f"{path}: build folder without {STATUS_FILE} "
                          "(was it built with sphinx_gpu_admonition?)")
    return found


def junit_beside(status_file: Path) -> Path | None:
    """The JUnit file the build wrote beside its status file (its default name), if any."""
    junit = status_file.with_name(JUNIT_FILE)
    return junit if junit.is_file() else None


def read_status(path: str | Path) -> StatusReport:
    """Read an ``execution-status.json`` file, or find it in a build folder
    (:func:`find_status_file`).

    Raises :class:`SchemaError` (or :class:`OSError`) with a message that names
    the file and what is wrong; callers print it as one line.
    """
    path = find_status_file(path)
    if not path.exists():
        raise SchemaError(f"{path}: no such file")
    data = read_json(path)
    try:
        report = StatusReport.from_dict(data)
        build_warnings(report)  # the build's warnings are read back as every other field
        return report
    except SchemaError as error:
        raise SchemaError(f"{path}: {error}") from error


def read_other_builds(sources: list[tuple[str, Path]], option: str
                      ) -> tuple[list[tuple[str, dict[str, NotebookRecord]]], list[str]]:
    """(path, records by docname) of each readable status file of ``sources``
    ((configured value, path) pairs: ``gpu_runtime_sources``, mystmd's
    ``runtime_sources``), and a warning for each file left out (named by ``option``)."""
    builds, problems = [], []
    for configured, path in sources:
        try:
            report = read_status(path)
        except (SchemaError, OSError) as error:
            problems.append(f"{option}: {configured!r} ignored, run times of that build are "
                            f"not stated: {error}")
            continue
        builds.append((str(path), report.by_docname()))
    return builds, problems


#: the largest local module read to follow a notebook's calls into it
_MODULE_SOURCE_BYTES = 2**20


def local_module_reader(folder: Path) -> Callable[[str], str | None]:
    """``module_source`` of :func:`.enrich.enrich` for a notebook in ``folder`` (its
    kernel's working folder): the text of the module ``name`` beside it (``mylib.py`` or
    a package's ``__init__.py``), None for anything else."""

    def module_source(name: str) -> str | None:
        base = folder.joinpath(*name.split("."))
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            try:
                if path.is_file() and path.stat().st_size <= _MODULE_SOURCE_BYTES:
                    return path.read_text(encoding="utf-8", errors="replace")
            except (OSError, ValueError):  # ValueError: a name with a NUL byte
                return None
        return None

    return module_source


# -- the capture sidecar beside the jupyter-cache ---------------------------------------
#: A record saved beside a cached notebook; the version is bumped whenever the record
#: model changes, so a cache restored from another release is never misread.
SIDECAR_ID = "sphinx-gpu-admonition/capture-sidecar"
SIDECAR_VERSION = 11  # 11: cells' code lines; 10: capture partial, compiled inputs; 9: timings
#: the sidecar versions this release reads: every version after 1 only added fields,
#: whose defaults stand for what an older sidecar did not save (the cells' lines
#: and sources are looked up again by every build, and whether their errors were
#: expected on every cache hit), so an upgrade keeps the measurements of a cache
#: (before 9 a record has no ``timings``: empty)
READABLE_SIDECAR_VERSIONS = frozenset({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, SIDECAR_VERSION})


#: the sidecar's entry of what the record builder derived from the page
#: (:class:`.derivations.Kept`): read back when the page is the same
SIDECAR_PAGE_FACTS = "page_facts"


class Sidecar(NamedTuple):
    """A sidecar read back: its record, the page's facts kept with it, and its data
    (to write back with other facts)."""

    record: NotebookRecord
    kept: Kept
    data: dict[str, Any]


def sidecar_dict(record: NotebookRecord, kept: Kept | None = None) -> dict[str, Any]:
    data = {"sidecar": SIDECAR_ID, "sidecar_version": SIDECAR_VERSION,
            "record": record.to_dict()}
    if kept is not None and kept.entry is not None:
        data[SIDECAR_PAGE_FACTS] = kept.entry
    return data


def sidecar_text(data: dict[str, Any]) -> str:
    """The text of a sidecar (:func:`sidecar_dict`, or a :class:`Sidecar`'s data);
    ValueError for a NaN, which would not load again."""
    return json.dumps(data, sort_keys=True, allow_nan=False)


def kept_again(sidecar: Sidecar) -> str | None:
    """The text of ``sidecar`` with its page facts as derived in this build, when they
    were (the page, a local module or this code changed since they were kept); None
    when the kept ones were taken."""
    if not sidecar.kept.changed or sidecar.kept.entry is None:
        return None
    return sidecar_text({**sidecar.data, SIDECAR_PAGE_FACTS: sidecar.kept.entry})


def read_sidecar(path: Path) -> NotebookRecord | None:
    """The record saved in ``path``; None when another version of the extension saved it.

    Raises :class:`SchemaError` naming the file and field for bad data (and
    :class:`OSError` when the file cannot be read).
    """
    sidecar = load_sidecar(path)
    return sidecar.record if sidecar is not None else None


def load_sidecar(path: Path) -> Sidecar | None:
    """:func:`read_sidecar`, with the page facts kept beside the record (unread until
    the builder asks: :func:`.derivations.kept_or_derived`)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise SchemaError(f"{path}: not a capture sidecar (no JSON object)")
    if data.get("sidecar") != SIDECAR_ID or \
            data.get("sidecar_version") not in READABLE_SIDECAR_VERSIONS:
        return None  # an unversioned sidecar (0.1.0 and earlier) or a later release's
    try:
        record = NotebookRecord.from_dict(data.get("record"), where="record")
    except SchemaError as error:
        raise SchemaError(f"{path}: {error}") from error
    return Sidecar(record, Kept(data.get(SIDECAR_PAGE_FACTS)), data)
