"""model/judging.py and the commands that start from it: a status file says how its
build judged it (thresholds, rule settings, the baseline), and ``report``, ``compare``
and ``merge`` start from that, the command line overriding a value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sphinx_gpu_admonition.cli import main as cli_main
from sphinx_gpu_admonition.model.analysis import Thresholds
from sphinx_gpu_admonition.model.judging import (
    BaselineUsed,
    Rules,
    baseline_used,
    build_fields,
    find_baseline,
    judged_by,
)
from sphinx_gpu_admonition.model.record import SCHEMA_ID, SCHEMA_VERSION
from sphinx_gpu_admonition.model.schema import SchemaError


def status_document(seconds: list[float], build: dict | None = None) -> dict:
    cells = [{"index": n + 1, "execution_count": n + 1, "position": n, "seconds": s,
              "first_line": f"step({n})"} for n, s in enumerate(seconds)]
    return {"schema": SCHEMA_ID, "schema_version": SCHEMA_VERSION, "build": build or {},
            "notebooks": [{"docname": "nb", "status": "ok", "provenance": "executed",
                           "runtime_seconds": None, "capture": "ok",
                           "environment": {"jax": {"backend": "cpu"}}, "cells": cells}]}


def write(path: Path, document: dict) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_a_file_without_judging_data_is_judged_with_the_defaults():
    assert judged_by({}) == (Thresholds(), Rules(), None, False)
    fields = build_fields(Thresholds(slow_cell_seconds=0.8), Rules(warn_slow_cells=True),
                          BaselineUsed("base.json", "sha256:00", "2026-01-01"))
    judging = judged_by(json.loads(json.dumps(fields)))
    assert judging.thresholds.slow_cell_seconds == 0.8 and judging.stored
    assert judging.rules.warn_slow_cells and judging.baseline.path == "base.json"


@pytest.mark.parametrize(("build", "message"), [
    ({"thresholds": []}, "build.thresholds: not an object"),
    ({"thresholds": {"slow_cell_seconds": "5"}}, "build.thresholds.slow_cell_seconds: must be a"),
    ({"thresholds": {"slow_cell_share": 3}}, "build.thresholds.slow_cell_share: must be a "
                                              "fraction"),
    ({"thresholds": {"recompile_threshold": 2.5}}, "recompile_threshold: must be an integer"),
    ({"thresholds": {"cache_compile_seconds": -1}}, "cache_compile_seconds: must be a finite"),
    ({"rules": {"warn_slow_cells": "yes"}}, "build.rules.warn_slow_cells: not a boolean"),
    ({"rules": {"expected_backend": "quantum"}}, "build.rules.expected_backend: not one of"),
    ({"baseline": {"path": 1}}, "build.baseline: not an object with a path and a digest"),
])
def test_a_value_no_build_writes_is_named_and_is_bad_input(build, message, tmp_path, capsys):
    with pytest.raises(SchemaError, match=message.replace("(", r"\(")):
        judged_by(build)
    path = write(tmp_path / "status.json", status_document([1.0], build))
    assert cli_main(["report", path]) == 2
    assert message in capsys.readouterr().err


def test_report_and_compare_start_from_the_files_thresholds(tmp_path, capsys):
    judged = build_fields(Thresholds(slow_cell_seconds=0.8), Rules(), None)
    b = write(tmp_path / "b.json", status_document([0.9, 0.1, 0.1, 0.1], judged))
    assert cli_main(["report", b, "--json"]) == 0
    assert [c["cell"] for c in json.loads(capsys.readouterr().out)["flagged_cells"]] == [
        "cell 1"]
    assert cli_main(["report", b, "--json", "--slow-cell-seconds", "1",
                     "--slow-cell-share", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["flagged_cells"] == []
    a = write(tmp_path / "a.json", status_document([0.3, 0.1, 0.1, 0.1]))
    # B's minimum time (not the default 1 s): its 0.9 s cell tripled is a regression
    strict = build_fields(Thresholds(slow_cell_min_seconds=0.5), Rules(), None)
    b = write(tmp_path / "b.json", status_document([0.9, 0.1, 0.1, 0.1], strict))
    assert cli_main(["compare", a, b, "--json", "--fail-above", "2"]) == 1
    assert json.loads(capsys.readouterr().out)["min_seconds"] == 0.5
    capsys.readouterr()
    assert cli_main(["compare", a, b, "--json", "--fail-above", "2", "--min-seconds",
                     "2"]) == 0  # the option overrides it (the notebook took 1.2 s)


def test_report_compares_with_the_builds_own_baseline_where_it_still_is(tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    base_path = tmp_path / "baseline.json"
    write(base_path, status_document([0.3, 0.1]))
    used = baseline_used("baseline.json", base_path.read_bytes(), None)
    status = write(tmp_path / "status.json", status_document(
        [3.0, 0.1], build_fields(Thresholds(slow_cell_min_seconds=0.5), Rules(), used)))
    assert find_baseline(used, Path(status)) == tmp_path / "baseline.json"
    assert cli_main(["report", status, "--json"]) == 0
    [cell] = json.loads(capsys.readouterr().out)["flagged_cells"]
    assert "regression" in cell["rules"]
    assert cli_main(["report", status, "--json", "--no-baseline"]) == 0
    assert "regression" not in json.loads(capsys.readouterr().out)["flagged_cells"][0]["rules"]
    write(base_path, status_document([3.0, 0.1]))  # changed since: not the build's baseline
    assert cli_main(["report", status]) == 0
    assert "is not there or has changed since" in capsys.readouterr().err


def test_merge_keeps_the_jobs_judging_and_says_when_they_differ(tmp_path, capsys):
    from sphinx_gpu_admonition.model.files import read_status

    one = build_fields(Thresholds(slow_cell_seconds=5), Rules(), None) | {"engine": "sphinx"}
    other = build_fields(Thresholds(slow_cell_seconds=7), Rules(), None) | {"engine": "sphinx"}
    a = write(tmp_path / "a.json", status_document([1.0], one))
    b = write(tmp_path / "b.json", status_document([1.0], one))
    assert cli_main(["merge", str(tmp_path / "m.json"), a, b]) == 0
    assert "note:" not in capsys.readouterr().err
    merged = read_status(tmp_path / "m.json").build
    assert merged["thresholds"]["slow_cell_seconds"] == 5 and merged["engine"] == "sphinx"
    c = write(tmp_path / "c.json", status_document([1.0], other))
    assert cli_main(["merge", str(tmp_path / "m.json"), a, c]) == 0
    assert "differ in build thresholds" in capsys.readouterr().err
