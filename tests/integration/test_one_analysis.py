"""One analysis per build, every view (issue 23, item 2).

``tests/roots/oneanalysis`` has one notebook of three equal 0.3 s cells: nothing is
slow by the build's own rules.  It is built twice with real kernels: the first
build's status file, with cell 2 made 30 times faster, is the second build's
``gpu_status_baseline``.  So the second build's only flagged cell is cell 2, flagged
by the ``regression`` rule alone, and every view must name exactly that cell: the
console summary, the ``-W`` warnings, JUnit, the GitHub annotations, the job summary
and step outputs, ``execution-status.json`` and ``report``.  (Before, the job summary
re-analysed without the baseline and listed no flagged cell.)
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from xml.etree import ElementTree

import pytest
from conftest import ProjectBuild, build_project

from sphinx_gpu_admonition.cli import main as cli_main

FLAGGED = ("timed", "cell 2")


class Built:
    def __init__(self, build: ProjectBuild, annotations: str, summary: str, outputs: str):
        self.build, self.annotations, self.summary, self.outputs = (build, annotations,
                                                                    summary, outputs)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    first = build_project("oneanalysis", tmp_path_factory.mktemp("first"))
    baseline = json.loads(first.read("execution-status.json"))
    (notebook,) = [nb for nb in baseline["notebooks"] if nb["docname"] == "timed"]
    notebook["cells"][1]["seconds"] /= 30  # cell 2 was much faster in the baseline
    # no machine factor: the cells sleep, they do not scale with the machine's speed, and
    # a loaded machine's calibration would make the other cells look slower beyond it
    baseline["build"].pop("calibration", None)
    for entry in baseline["notebooks"]:
        entry["calibration_seconds"] = None
    baseline.pop("analysis", None)
    dest = tmp_path_factory.mktemp("second")
    summary, outputs = dest / "summary.md", dest / "outputs.txt"
    stderr = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stderr(stderr):
        patch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        patch.setenv("GITHUB_OUTPUT", str(outputs))
        second = build_project("oneanalysis", dest,
                               files={"baseline.json": json.dumps(baseline)},
                               confoverrides={"gpu_status_baseline": "baseline.json"})
    return Built(second, stderr.getvalue(), summary.read_text("utf-8"),
                 outputs.read_text("utf-8"))


def test_the_json_analysis_flags_only_the_regression_cell(built):
    analysis = json.loads(built.build.read("execution-status.json"))["analysis"]
    flagged = [(docname, cell["cell"], [flag["rule"] for flag in cell["flags"]])
               for docname, entry in analysis.items() for cell in entry["flagged_cells"]]
    assert flagged == [(*FLAGGED, ["regression"])]


def test_the_console_summary_names_it(built):
    lines = built.build.status.splitlines()
    start = lines.index("flagged cells (1):")
    assert f"{FLAGGED[0]} {FLAGGED[1]} (" in lines[start + 1]
    assert "slower than the baseline" in lines[start + 1]


def test_the_warnings_name_it(built):
    slow = set(re.findall(r"slow (cell \d+) \(", built.build.warnings))
    regressed = set(re.findall(r"(cell \d+) regressed:", built.build.warnings))
    assert slow == regressed == {FLAGGED[1]}


def test_junit_names_it_without_failing(built):
    suite = ElementTree.fromstring(built.build.read("execution-status.junit.xml"))
    notebook = next(c for c in suite.iter("testcase") if c.get("name") == FLAGGED[0])
    assert notebook.find("failure") is None
    # the flagged cell is a case of its own, under its notebook, passing
    (case,) = [c for c in suite.iter("testcase") if c.get("classname") == FLAGGED[0]]
    assert case.get("name") == FLAGGED[1] and case.find("failure") is None
    assert "slower than the baseline" in case.find("system-out").text
    assert suite.get("failures") == "0"


def test_annotations_name_it(built):
    titles = re.findall(r"^::warning [^\n]*title=Slow (cell \d+) of (\w+)", built.annotations,
                        re.MULTILINE)
    assert titles == [(FLAGGED[1], FLAGGED[0])]
    assert not re.search(r"^::error", built.annotations, re.MULTILINE)


def test_the_job_summary_and_outputs_name_it(built):
    assert "#### Flagged cells (1)" in built.summary
    rows = [line for line in built.summary.splitlines()
            if line.startswith("| ") and "slower than the baseline" in line]
    assert len(rows) == 1 and f"| {FLAGGED[0]} | {FLAGGED[1]} |" in rows[0]
    assert "flagged=1" in built.outputs.splitlines()


def test_report_names_it_with_the_baseline(built, capsys):
    status = built.build.outdir / "execution-status.json"
    baseline = built.build.srcdir / "baseline.json"
    assert cli_main(["report", str(status), "--baseline", str(baseline), "--min-seconds",
                     "0.2", "--json"]) == 0
    flagged = json.loads(capsys.readouterr().out)["flagged_cells"]
    assert [(c["docname"], c["cell"], c["rules"]) for c in flagged] == [
        (*FLAGGED, ["regression"])]
    assert cli_main(["report", str(status), "--baseline", str(baseline), "--min-seconds",
                     "0.2"]) == 0
    text = capsys.readouterr().out
    assert "Flagged cells (1)" in text and f"{FLAGGED[0]} {FLAGGED[1]} (" in text
