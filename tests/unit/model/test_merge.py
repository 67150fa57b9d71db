"""``merge`` and ``merge-cache``: several jobs' work combined into one.

The rules run in-process on small reports; the real sharded build (two shards,
their caches merged, a site built from the merged cache) is tests/integration/test_workflow.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.files import SIDECAR_FOLDER, read_status
from sphinx_gpu_admonition.model.merge import merge_reports
from sphinx_gpu_admonition.model.record import (
    Environment,
    Host,
    NotebookRecord,
    StatusReport,
)


def _record(docname: str, provenance: str, status: str = "ok", cpu: str = "cpu A",
            executed_at: str | None = None, calibration: float | None = None
            ) -> NotebookRecord:
    return NotebookRecord(
        docname=docname, status=status, provenance=provenance, runtime_seconds=1.0,
        executed_at=executed_at, capture="ok" if provenance != "none" else "missing",
        environment=Environment(host=Host(cpu=cpu)), calibration_seconds=calibration)


def _report(*records: NotebookRecord, outcome: str = "succeeded",
            calibration: float | None = None) -> StatusReport:
    build = {"created": "2026-11-30T10:00:00+00:00", "outcome": outcome, "builder": "html",
             "sphinx": "9.0"}
    if calibration is not None:
        build["calibration"] = {"seconds": calibration, "workload": 1}
    return StatusReport(list(records), build)


def test_each_notebook_comes_from_the_job_that_executed_it() -> None:
    shard_1 = _report(_record("a", "executed", cpu="cpu 1", calibration=0.02),
                      _record("b", "none", status="excluded"), calibration=0.02)
    shard_2 = _report(_record("a", "none", status="excluded"),
                      _record("b", "executed", cpu="cpu 2", calibration=0.04),
                      _record("c", "cache", cpu="cpu 0"), calibration=0.04)
    merged, conflicts = merge_reports([("one.json", shard_1), ("two.json", shard_2)])
    assert conflicts == []
    by_name = merged.by_docname()
    assert [nb.docname for nb in merged.notebooks] == ["a", "b", "c"]
    assert by_name["a"].environment.host.cpu == "cpu 1"  # machines kept per notebook
    assert by_name["b"].environment.host.cpu == "cpu 2"
    assert by_name["b"].calibration_seconds == 0.04
    assert by_name["c"].provenance == "cache"
    assert len(merged.machines()) == 3
    assert merged.build["outcome"] == "succeeded"
    assert merged.build["calibration"] == {"seconds": pytest.approx(0.03), "workload": 1}
    assert [(m["source"], m["notebooks"]) for m in merged.build["merged_from"]] == [
        ("one.json", ["a"]), ("two.json", ["b", "c"])]


def test_provenance_order_executed_cache_earlier_build_none() -> None:
    for better, worse in [("executed", "cache"), ("cache", "earlier_build"),
                          ("earlier_build", "none")]:
        for order in ((better, worse), (worse, better)):
            inputs = [(p, _report(_record("a", p, status="ok" if p != "none"
                                          else "excluded"))) for p in order]
            merged, _ = merge_reports(inputs)
            assert merged.notebooks[0].provenance == better


def test_a_notebook_executed_twice_is_a_conflict_resolved_the_same_way() -> None:
    early = _record("a", "executed", cpu="early", executed_at="2026-11-30T10:00:00+00:00")
    late = _record("a", "executed", cpu="late", executed_at="2026-11-30T11:00:00+00:00")
    failed = _record("a", "executed", status="error", cpu="failed",
                     executed_at="2026-11-30T09:00:00+00:00")
    for inputs in ([early, late], [late, early]):
        merged, conflicts = merge_reports([(f"job{i}", _report(r))
                                           for i, r in enumerate(inputs)])
        assert merged.notebooks[0].environment.host.cpu == "late"  # the latest execution
        assert len(conflicts) == 1 and conflicts[0].sources == ["job0", "job1"]
    merged, conflicts = merge_reports([("x", _report(late)), ("y", _report(failed))])
    assert merged.notebooks[0].status == "error"  # a failure is never hidden
    assert conflicts[0].message() == "a was executed in 2 jobs (x, y); using y"


def test_the_merge_fails_when_any_job_failed() -> None:
    merged, _ = merge_reports([("ok.json", _report(_record("a", "executed"))),
                               ("stopped.json", _report(_record("b", "executed"),
                                                        outcome="failed"))])
    assert merged.build["outcome"] == "failed"
    assert merged.build["failure"] == "stopped.json: the build stopped"


def _write(path: Path, report: StatusReport) -> str:
    path.write_text(json.dumps(report.to_dict()), encoding="utf-8")
    return str(path)


def test_the_merged_file_is_read_everywhere_a_status_file_is(tmp_path, capsys) -> None:
    one = _write(tmp_path / "one.json",
                 _report(_record("a", "executed", executed_at="2026-11-30T10:00:00+00:00")))
    two = _write(tmp_path / "two.json",
                 _report(_record("a", "executed", executed_at="2026-11-30T11:00:00+00:00"),
                         _record("b", "executed")))
    out = tmp_path / "merged.json"
    assert cli.main(["merge", str(out), one, two]) == 0
    captured = capsys.readouterr()
    # absolute paths outside the working folder are named by their last three parts: the
    # merged file is public and must not print the build machine's folders
    one_label, two_label = (Path(*Path(p).parts[-3:]).as_posix() for p in (one, two))
    assert captured.err == ("sphinx-gpu-admonition: conflict: a was executed in 2 jobs "
                            f"({one_label}, {two_label}); using {two_label}\n")
    assert captured.out.startswith(f"{out}: 2 notebooks from ")
    assert str(tmp_path.parent) not in out.read_text(encoding="utf-8")
    merged = read_status(out)  # the validated loader of report, compare and the baseline
    assert [nb.docname for nb in merged.notebooks] == ["a", "b"]
    assert cli.main(["report", str(out), "--no-github"]) == 0
    assert cli.main(["compare", one, str(out), "--no-github"]) == 0


def test_inputs_inside_the_working_folder_are_named_relative_to_it(tmp_path, capsys,
                                                                    monkeypatch) -> None:
    shard = tmp_path / "shard-1"
    shard.mkdir()
    one = _write(shard / "execution-status.json", _report(_record("a", "executed")))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["merge", "merged.json", one]) == 0
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    assert [m["source"] for m in merged["build"]["merged_from"]] == [
        "shard-1/execution-status.json"]


def test_bad_inputs_are_one_error_line(tmp_path, capsys) -> None:
    (tmp_path / "not-json.json").write_text("{")
    assert cli.main(["merge", str(tmp_path / "out.json"), str(tmp_path / "not-json.json")]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
    assert cli.main(["merge-cache", str(tmp_path / "cache"), str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"sphinx-gpu-admonition: error: {tmp_path}: not a "
                                       "jupyter-cache (no global.db)\n")


def test_each_notebook_is_judged_by_the_speed_of_its_own_machines() -> None:
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse

    def job(cpu: str, calibration: float, seconds: float, *docnames: str) -> StatusReport:
        records = [_record(name, "executed", cpu=cpu, calibration=calibration)
                   for name in docnames]
        for record in records:
            record.runtime_seconds = seconds
        return _report(*records)

    baseline, _ = merge_reports([("1", job("runner 1", 0.01, 10.0, "a1", "a2")),
                                 ("2", job("runner 2", 0.01, 10.0, "b1", "b2"))])
    # now runner 1 is busy (2x slower as a whole), runner 2 is not: same times on both
    new, _ = merge_reports([("1", job("runner 1", 0.02, 20.0, "a1", "a2")),
                            ("2", job("runner 2", 0.01, 20.0, "b1", "b2"))])
    analysis = analyse(new, Thresholds(), baseline)
    assert [a.notebook.docname for a in analysis.regressed] == ["b1", "b2"]


# -- merge: bad arguments ------------------------------------------------------------------
def test_a_folder_as_the_merged_file_is_one_error_line(tmp_path, capsys, monkeypatch) -> None:
    status = _write(tmp_path / "status.json", _report(_record("a", "executed")))
    monkeypatch.chdir(tmp_path)
    for output in (".", str(tmp_path)):  # ``merge . status.json``: the arguments swapped
        assert cli.main(["merge", output, status]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line == (f"sphinx-gpu-admonition: error: {output}: a folder; OUT_JSON is the "
                        "merged file to write (sphinx-gpu-admonition merge OUT_JSON IN [IN ...])")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["status.json"]


# -- merge-cache ---------------------------------------------------------------------------
# Real jupyter-caches, filled through jupyter-cache's API with tiny executed notebooks.
def _cache(folder: Path, *codes: str, capture: bool = True) -> dict[str, str]:
    """A jupyter-cache holding one executed notebook per code (with its capture data
    beside it unless ``capture`` is false); returns {code: hashkey}."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(folder))
    hashes = {}
    for code in codes:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        record = cache.cache_notebook_bundle(
            CacheBundleIn(notebook, f"/book/{code}.md", data={"execution_seconds": 1.0}),
            check_validity=False)
        hashes[code] = record.hashkey
        if capture:
            (folder / SIDECAR_FOLDER).mkdir(exist_ok=True)
            (folder / SIDECAR_FOLDER / f"{record.hashkey}.json").write_text(
                json.dumps({"from": str(folder), "code": code}), encoding="utf-8")
    return hashes


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def test_merge_cache_completes_capture_data_the_target_lacks(tmp_path, capsys) -> None:
    from jupyter_cache import get_cache

    # the target: restored by an old actions/cache step without the capture folder
    old = _cache(tmp_path / "target", "a = 1", "b = 2", capture=False)
    shard = _cache(tmp_path / "shard", "a = 1", "c = 3")
    assert old["a = 1"] == shard["a = 1"]
    assert cli.main(["merge-cache", str(tmp_path / "target"), str(tmp_path / "shard")]) == 0
    assert capsys.readouterr().out == (f"{tmp_path / 'target'}: 1 notebook copied from 1 cache;"
                                       " capture data completed for 1 notebook\n")
    capture = tmp_path / "target" / SIDECAR_FOLDER
    assert sorted(p.name for p in capture.iterdir()) == sorted(
        f"{h}.json" for h in (shard["a = 1"], shard["c = 3"]))
    assert json.loads((capture / f"{shard['a = 1']}.json").read_text())["code"] == "a = 1"
    records = {r.hashkey for r in get_cache(str(tmp_path / "target")).list_cache_records()}
    assert records == set(old.values()) | set(shard.values())
    # a second merge has nothing left to do
    assert cli.main(["merge-cache", str(tmp_path / "target"), str(tmp_path / "shard")]) == 0
    assert capsys.readouterr().out.endswith(": 0 notebooks copied from 1 cache\n")


def test_merge_cache_never_follows_symbolic_links(tmp_path, capsys) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("private key")
    hashes = _cache(tmp_path / "shard", "a = 1", "b = 2", capture=False)
    (tmp_path / "shard" / SIDECAR_FOLDER).mkdir()
    linked = tmp_path / "shard" / SIDECAR_FOLDER / f"{hashes['a = 1']}.json"
    linked.symlink_to(secret)
    assert cli.main(["merge-cache", str(tmp_path / "out"), str(tmp_path / "shard")]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"sphinx-gpu-admonition: note: {linked}: a symbolic link, not copied\n"
    assert captured.out.endswith(": 2 notebooks copied from 1 cache\n")
    assert not (tmp_path / "out" / SIDECAR_FOLDER).exists()
    assert all(b"private key" not in data for data in _files(tmp_path / "out").values())
    # a capture folder that is itself a link is not followed either
    other = tmp_path / "other"
    _cache(other, "c = 3")
    (tmp_path / "shard2").mkdir()
    _cache(tmp_path / "shard2", "d = 4", capture=False)
    (tmp_path / "shard2" / SIDECAR_FOLDER).symlink_to(other / SIDECAR_FOLDER)
    assert cli.main(["merge-cache", str(tmp_path / "out2"), str(tmp_path / "shard2")]) == 0
    assert "a symbolic link, not followed" in capsys.readouterr().err
    assert not (tmp_path / "out2" / SIDECAR_FOLDER).exists()


def _corrupt(folder: Path) -> None:
    _cache(folder, "a = 1")
    (folder / "global.db").write_bytes(b"not a database, a text file" * 100)


def _other_schema(folder: Path) -> None:
    import sqlite3

    folder.mkdir()
    with sqlite3.connect(folder / "global.db") as connection:  # jupyter-cache 0.4's table
        connection.execute("CREATE TABLE nbstage (pk INTEGER PRIMARY KEY, uri TEXT)")


@pytest.mark.parametrize(("make", "expected"), [
    (_corrupt, "global.db: not a jupyter-cache database (file is not a database)"),
    (_other_schema, "global.db: not a database of jupyter-cache 0.5 or later (no nbcache "
                    "table with hashkey, uri and data)"),
])
def test_merge_cache_refuses_a_bad_database_before_writing(tmp_path, capsys, make,
                                                           expected) -> None:
    _cache(tmp_path / "good", "a = 1")
    make(tmp_path / "bad")
    for target, sources in ((tmp_path / "out", [tmp_path / "good", tmp_path / "bad"]),
                            (tmp_path / "bad", [tmp_path / "good"])):
        before = _files(tmp_path)
        assert cli.main(["merge-cache", str(target), *map(str, sources)]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line == f"sphinx-gpu-admonition: error: {tmp_path / 'bad'}/{expected}"
        assert _files(tmp_path) == before and not (tmp_path / "out").exists()


def test_merge_cache_refuses_a_file_where_a_folder_goes_before_writing(tmp_path,
                                                                       capsys) -> None:
    _cache(tmp_path / "shard", "a = 1", "b = 2")
    (tmp_path / "file").write_text("x")
    assert cli.main(["merge-cache", str(tmp_path / "file"), str(tmp_path / "shard")]) == 2
    assert capsys.readouterr().err == (f"sphinx-gpu-admonition: error: {tmp_path / 'file'}: not "
                                       "a folder (OUT_CACHE is the jupyter-cache to write)\n")
    _cache(tmp_path / "target", "z = 0", capture=False)
    (tmp_path / "target" / SIDECAR_FOLDER).write_text("x")
    before = _files(tmp_path)
    assert cli.main(["merge-cache", str(tmp_path / "target"), str(tmp_path / "shard")]) == 2
    assert capsys.readouterr().err == (
        f"sphinx-gpu-admonition: error: {tmp_path / 'target' / SIDECAR_FOLDER}: not a folder "
        "(the capture data of the cache's notebooks goes there)\n")
    assert _files(tmp_path) == before
