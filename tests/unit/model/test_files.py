"""Reading and writing status files and sidecars (``model/files.py``): a failed write leaves no
temporary file, a bad or huge file is one ``SchemaError``, a sidecar round-trips."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest
from status_documents import valid_document

from sphinx_gpu_admonition.model import files
from sphinx_gpu_admonition.model.files import read_sidecar, read_status, sidecar_dict
from sphinx_gpu_admonition.model.record import (
    KernelPackages,
    NotebookRecord,
    StatusReport,
)
from sphinx_gpu_admonition.model.schema import SchemaError


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    from sphinx_gpu_admonition.model.files import atomic_write

    target = tmp_path / "_static"
    target.mkdir()
    (target / "keep.css").write_text("x")
    with pytest.raises(OSError):
        atomic_write(target, "{}")  # a folder cannot be replaced by a file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_static"]


def _write(tmp_path: Path, text: str | bytes, name: str = "status.json") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 10_000 + "]" * 10_000, "nested too deeply"),
    ('{"build": ' + "[" * 10_000 + "]" * 10_000 + "}", "nested too deeply"),
    ('{"n": ' + "1" * 5000 + "}", "not JSON this version reads"),
    (b"\xff\xfe\x00", "not a text file"),
    ("{", "not JSON"),
    ('{"schema": "sphinx-gpu-admonition/execution-status", "schema_version": 1, '
     '"notebooks": [], "build": {"t": NaN}}', "build['t']: not a finite number"),
])
def test_read_status_never_raises_anything_but_schema_error(tmp_path: Path, text: str | bytes,
                                                              message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(SchemaError, match=re.escape(message)) as caught:
        read_status(path)
    assert str(caught.value).startswith(str(path))


def test_too_large_files_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, json.dumps(valid_document()))
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    with pytest.raises(SchemaError, match="too large"):
        read_status(path)


def test_files_without_a_size_are_read_to_the_limit(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO (``--baseline <(curl ...)``) has no size: it is read on, up to the limit;
    a file of exactly the limit is read whole."""
    text = json.dumps(valid_document())
    fifo = tmp_path / "status.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(text,))
    writer.start()
    try:
        assert read_status(fifo).to_dict() == read_status(_write(tmp_path, text)).to_dict()
    finally:
        writer.join()
    monkeypatch.setattr(files, "MAX_FILE_BYTES", len(text.encode()))
    assert read_status(_write(tmp_path, text)).notebooks
    os.mkfifo(tmp_path / "big.fifo")
    writer = threading.Thread(target=(tmp_path / "big.fifo").write_text, args=(text + " ",))
    writer.start()
    try:
        with pytest.raises(SchemaError, match="too large"):
            read_status(tmp_path / "big.fifo")
    finally:
        writer.join()


# -- the status file's text ----------------------------------------------------------------
def test_the_status_text_reads_back_as_the_report_with_a_line_per_notebook() -> None:
    report = StatusReport.from_dict(valid_document())
    second = StatusReport.from_dict(valid_document()).notebooks[0]
    second.docname = "second"
    report.notebooks.append(second)
    text = files.status_json_text(report)
    assert json.loads(text) == json.loads(json.dumps(report.to_dict()))
    lines = text.splitlines()
    notebook_lines = [line for line in lines if line.startswith('{"') and '"docname":' in line]
    assert [json.loads(line.rstrip(","))["docname"] for line in notebook_lines] == \
        [notebook.docname for notebook in report.notebooks]
    assert read_status_text(text).notebooks == report.notebooks


def test_without_the_interpreter_path_no_notebook_names_it_and_the_records_keep_it() -> None:
    report = StatusReport.from_dict(valid_document())
    report.notebooks[0].packages = KernelPackages(executable="/home/me/.venv/bin/python")
    data = json.loads(files.status_json_text(report, interpreter_path=False))
    assert [notebook["packages"]["executable"] for notebook in data["notebooks"]] == [""]
    assert report.notebooks[0].packages.executable == "/home/me/.venv/bin/python"


def test_an_empty_book_is_an_empty_list_of_notebooks() -> None:
    data = json.loads(files.status_json_text(StatusReport(notebooks=[])))
    assert data["notebooks"] == []


def read_status_text(text: str) -> StatusReport:
    return StatusReport.from_dict(json.loads(text))


# -- sidecars ------------------------------------------------------------------------------
def _a_record() -> NotebookRecord:
    return StatusReport.from_dict(valid_document()).notebooks[0]


def test_sidecar_round_trip_and_versions(tmp_path: Path) -> None:
    saved = _a_record()
    path = _write(tmp_path, json.dumps(sidecar_dict(saved)), "sidecar.json")
    assert read_sidecar(path) == saved
    # an unversioned sidecar (0.1.0) or another release's: not read, not an error
    _write(tmp_path, json.dumps(saved.to_dict()), "sidecar.json")
    assert read_sidecar(path) is None
    _write(tmp_path, json.dumps(sidecar_dict(saved) | {"sidecar_version": 99}), "sidecar.json")
    assert read_sidecar(path) is None


def test_sidecar_with_bad_data_names_file_and_field(tmp_path: Path) -> None:
    data = sidecar_dict(_a_record())
    data["record"]["cells"][0]["seconds"] = "1.5"
    path = _write(tmp_path, json.dumps(data), "sidecar.json")
    with pytest.raises(SchemaError, match=re.escape(
            f"{path}: record.cells[0].seconds: not a number (got a string: '1.5')")):
        read_sidecar(path)
    _write(tmp_path, "[]", "sidecar.json")
    with pytest.raises(SchemaError, match="not a capture sidecar"):
        read_sidecar(path)
