"""The build's warnings as data (``model/build_warnings.py``): a warning that repeats a finding is
annotated once, the warnings file is read back strictly, the schema lists every subtype."""

from __future__ import annotations

import json

import pytest
from conftest import ROOTS

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.build_warnings import (
    SUBTYPES,
    BuildWarning,
    build_warnings,
    warning_entry,
)
from sphinx_gpu_admonition.model.record import StatusReport
from sphinx_gpu_admonition.model.schema import SchemaError
from sphinx_gpu_admonition.render import github


def test_a_warning_that_repeats_a_finding_is_annotated_once() -> None:
    report = StatusReport([], build={"warnings": [
        warning_entry("slow_cell", "slow cell 3 (12.0 s): slow: took 12.0 s", "a.md", 3)
        .to_dict(), warning_entry("capture", "the probe failed", "a.md").to_dict()]})
    lines = github.annotations(report, analyse(report, Thresholds()))
    assert [line.split("::", 2)[1].split("title=")[1] for line in lines] == [
        "Build warning%3A gpu_admonition.capture"]


def test_the_warnings_are_read_back_strictly(tmp_path, capsys) -> None:
    # one line that cannot become a workflow command (it quotes notebooks and files)
    good = warning_entry("backend", "::stop-commands::x\nran on the CPU", "a.md", 0)
    assert good == BuildWarning("backend", "%3A:stop-commands::x ran on the CPU", "a.md", None)
    report = StatusReport([], build={"warnings": [good.to_dict()]})
    assert build_warnings(report) == [good]
    assert build_warnings(StatusReport([], build={})) == []  # a file of an earlier version
    for bad, said in (({"warnings": {}}, "build.warnings: not an array"),
                      ({"warnings": [{"subtype": "backend"}]},
                       "build.warnings[0].message: not a str"),
                      ({"warnings": [{"subtype": "x", "message": "m", "line": "3"}]},
                       "build.warnings[0].line: not a int")):
        with pytest.raises(SchemaError, match=said.replace("[", r"\[").replace("]", r"\]")):
            build_warnings(StatusReport([], build=bad))
    path = tmp_path / "execution-status.json"
    data = StatusReport([], build={"warnings": [{"subtype": "backend"}]}).to_dict()
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cli.main(["report", str(path)]) == 2  # bad input: one line, no traceback
    assert "build.warnings[0].message" in capsys.readouterr().err


def test_the_schema_lists_every_subtype() -> None:
    schema = json.loads((ROOTS.parents[1] / "sphinx_gpu_admonition" / "schema"
                         / "execution-status.schema.json").read_text(encoding="utf-8"))
    item = schema["properties"]["build"]["properties"]["warnings"]["items"]
    assert item["properties"]["subtype"]["enum"] == list(SUBTYPES)
