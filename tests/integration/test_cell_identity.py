"""One name for each cell everywhere (issue 9, item 4), and expected errors (item 7).

``tests/roots/samecell`` is one MyST notebook whose code cells are separated by
markdown cells, with a hidden cell (``remove-cell``), a cell allowed to raise
(``raises-exception``), a 1.5 s sleep (flagged slow) and a cell that fails.  Built
once (one kernel); every view must call the sleep "cell 4" and the failure
"cell 5", and point at the same lines of samecell.md.
"""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree

import pytest
from bs4 import BeautifulSoup
from conftest import ProjectBuild

from sphinx_gpu_admonition.cli import main as cli_main
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.render import github

SLOW, FAILING, EXPECTED = "cell 4", "cell 5", "cell 3"


def _line_of(build: ProjectBuild, text: str) -> int:
    """The line of samecell.md where the code cell holding ``text`` starts."""
    lines = (build.srcdir / "samecell.md").read_text(encoding="utf-8").splitlines()
    found = next(n for n, line in enumerate(lines, 1) if text in line)
    return next(n for n in range(found, 0, -1) if lines[n - 1].startswith("```{code-cell}"))


@pytest.fixture(scope="module")
def build(build_root_module) -> ProjectBuild:
    return build_root_module("samecell")


@pytest.fixture(scope="module")
def status_json(build: ProjectBuild) -> dict:
    return json.loads(build.read("execution-status.json"))


def test_the_json_names_the_cells(build, status_json):
    (notebook,) = status_json["notebooks"]
    assert [c["first_line"] for c in notebook["cells"]] == [
        "import time", "hidden = 1", '{}["an expected error"]', "time.sleep(1.5)",
        'raise ValueError("a real failure")']
    (flagged,) = status_json["analysis"]["samecell"]["flagged_cells"]
    assert flagged["cell"] == SLOW
    sleep = notebook["cells"][3]
    assert sleep["line"] == _line_of(build, "time.sleep(1.5)")
    assert notebook["cells"][1]["index"] is None  # hidden: not on the page


def test_the_page_badge_and_anchors_name_the_same_cell(build):
    status = BeautifulSoup(build.read("status.html"), "lxml")
    finding = status.select_one("li.gpu-status-finding")
    link = finding.select_one(".gpu-status-finding-where a")
    assert link.get_text() == f"A notebook with markdown and hidden cells, {SLOW}"
    page_name, anchor = link["href"].split("#")
    page = BeautifulSoup(build.read(page_name), "lxml")
    assert page.find(id=anchor).select_one("pre").get_text().startswith("time.sleep(1.5)")
    # the badge of that cell links to the line of the same name on the status page
    badge = page.find(id=anchor).select_one(".gpu-cell-badge a")
    target = status.find(id=badge["href"].split("#")[1])
    assert target.a.get_text() == SLOW and target.a["href"] == link["href"]
    assert len(page.select(".gpu-cell-badge")) == 1
    # the error of the notebook, in the row's details
    error = status.select_one(".gpu-status-error-message").get_text()
    assert error.startswith(f"ValueError in {FAILING}:")


def test_console_warning_junit_annotations_and_cli_name_the_same_cell(build, status_json,
                                                                     capsys):
    line = _line_of(build, "time.sleep(1.5)")
    # the console summary: the notebook, the cell and where it starts
    assert re.search(rf"samecell {SLOW} \(\S*samecell\.md:{line}\): took", build.status)
    # the -W warning, at the cell's line
    (warning,) = [w for w in build.warning_lines if f"slow {SLOW} " in w]
    assert f"samecell.md:{line}:" in warning
    # JUnit: the failure names the cell that raised; the expected error is no failure
    suite = ElementTree.fromstring(build.read("execution-status.junit.xml"))
    case, slow = suite.iter("testcase")
    assert case.find("failure").get("message") == f"error: ValueError in {FAILING}"
    assert case.find("system-err").text == f"{EXPECTED} raised KeyError (expected)"
    # the slow cell: a case of its own, by the same name, at its line
    assert (slow.get("classname"), slow.get("name"), slow.get("line")) == (
        "samecell", SLOW, str(line))
    # GitHub annotations, from the JSON as CI reads it
    report = read_status(build.outdir / "execution-status.json")
    commands = github.annotations(report, analyse(report, Thresholds(
        slow_cell_seconds=1.0, slow_cell_min_seconds=0.9)))
    assert commands[0].startswith("::error ") and f"in {FAILING}:" in commands[0]
    assert f",line={_line_of(build, 'a real failure')}," in commands[0]
    slow = next(c for c in commands if c.startswith("::warning "))
    assert f"line={line}," in slow and f"Slow {SLOW} of samecell" in slow
    # every CLI command reads the same JSON; the failing cell makes report exit 1
    assert cli_main(["report", str(build.outdir / "execution-status.json"),
                     "--slow-cell-seconds", "1.0"]) == 1
    out = capsys.readouterr().out
    assert f"samecell {SLOW}" in out and FAILING in out
    assert "KeyError" not in out  # the expected error is not reported as a failure


def test_expected_errors_are_not_failures(build, status_json):
    (notebook,) = status_json["notebooks"]
    expected = notebook["cells"][2]
    assert (expected["error"], expected["error_expected"]) == ("KeyError", True)
    failing = notebook["cells"][4]
    assert (failing["error"], failing["error_expected"]) == ("ValueError", False)
    cells = json.loads(next(build.outdir.glob("status.gpu-cells.json")).read_text("utf-8"))
    entries = cells["nb"]["samecell"]["c"]
    assert entries[2].get("x") == 1 and "x" not in entries[4]
