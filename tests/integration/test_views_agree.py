"""Every view carries the findings, in one order, and names sources without the build
machine's paths (issue 26, items 3 and 9), on a real build.

``tests/roots/views`` has two notebooks, each with one slow cell: ``alpha`` (0.3 s)
comes first by name, ``beta`` (0.7 s) is the slowest, so "slowest first" and
"docname order" differ.  The book is built with real kernels from an absolute
source path while the current folder is elsewhere (the test runner's, as a CI job
running ``sphinx-build /abs/docs /abs/out`` from another folder), with
``gpu_warn_slow_cells``; then again with ``-W`` (nothing executes again).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import ProjectBuild, build_project, sphinx_build

from sphinx_gpu_admonition.cli import main as cli_main
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.render import github

SLOWEST_FIRST = ["beta", "alpha"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    build = build_project("views", tmp_path_factory.mktemp("views"))
    assert not Path.cwd().resolve().is_relative_to(build.srcdir.resolve())
    return build


def _junit(build: ProjectBuild) -> ElementTree.Element:
    return ElementTree.fromstring(build.read("execution-status.junit.xml"))


def test_the_warnings_come_slowest_first_like_the_console(built):
    warned = re.findall(r"(\w+)\.md:\d+: WARNING: slow (cell \d+) ", built.warnings)
    assert warned == [(name, "cell 2") for name in SLOWEST_FIRST]
    lines = built.status.splitlines()
    start = lines.index("flagged cells (2):")
    # each finding's first line: its time, then its name (code, timing, action follow)
    listed = [match.group(1) for line in lines[start + 1:]
              if (match := re.match(r"^\s+[\d.]+ (?:ms|s)\s+(\w+) cell \d+", line))]
    assert listed == SLOWEST_FIRST


def test_junit_has_a_passing_case_per_flagged_cell(built):
    suite = _junit(built)
    cells = [(c.get("classname"), c.get("name"), c.get("file"), c.get("line"))
             for c in suite.iter("testcase") if c.get("classname") != "notebooks"]
    # each after its notebook; the notebooks by name
    assert [c[0] for c in cells] == ["alpha", "beta"]
    assert all(name == "cell 2" and line for _, name, _, line in cells)
    assert [c[2] for c in cells] == ["alpha.md", "beta.md"]  # not the machine's path
    assert suite.get("failures") == "0"  # the build does not fail on its warnings
    beta = next(c for c in suite.iter("testcase") if c.get("classname") == "beta")
    text = beta.find("system-out").text
    assert "what to do: " in text
    # the code line the console shows under the finding, the same words
    code = next(line.strip() for line in built.status.splitlines()
                if line.strip().startswith("code: "))
    assert code in text.splitlines()


def test_no_public_file_holds_the_machines_absolute_path(built):
    srcdir = str(built.srcdir.resolve())
    status = json.loads(built.read("execution-status.json"))
    assert {nb["docname"]: nb["source"] for nb in status["notebooks"]} == {
        "alpha": "alpha.md", "beta": "beta.md"}
    flagged = [cell for entry in status["analysis"].values() for cell in entry["flagged_cells"]]
    assert flagged and all(srcdir not in json.dumps(cell) for cell in flagged)
    page = built.read("status.html")
    assert "beta.md:" in page
    for text in (built.read("execution-status.json"), page,
                 built.read("execution-status.junit.xml")):
        assert srcdir not in text and str(built.srcdir) not in text
    report = read_status(built.outdir / "execution-status.json")
    commands = github.annotations(report, analyse(report, Thresholds(
        slow_cell_seconds=0.25, slow_cell_min_seconds=0.2)))
    assert commands and all(srcdir not in command for command in commands)
    assert any("file=beta.md,line=" in command for command in commands)


def test_report_shows_the_path_it_was_given_without_the_machines_folders(built, capsys,
                                                                         monkeypatch):
    status = built.outdir / "execution-status.json"
    assert cli_main(["report", str(status), "--slow-cell-seconds", "0.25",
                     "--min-seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Build status  execution-status.json"
    # file:line and the action of each flagged cell, slowest first
    flagged = out.split("Flagged cells (2)")[1].split("Failures")[0]
    assert re.findall(r"(\w+) cell 2 \((\w+)\.md:\d+\):", flagged) == [
        (name, name) for name in SLOWEST_FIRST]
    assert flagged.count("what to do: ") == 2
    # inside the current folder: relative to it
    monkeypatch.chdir(built.outdir.parent)
    assert cli_main(["report", str(status), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "html/execution-status.json"


def test_report_on_the_builds_file_flags_what_the_build_flagged(built, capsys, monkeypatch,
                                                                  tmp_path):
    """The book sets its own limits (gpu_slow_cell_seconds 0.25, not the default 10 s):
    its status file stores them, so report without an option flags the build's cells,
    in JSON and in the GitHub annotations the build would have written."""
    status = built.outdir / "execution-status.json"
    stored = json.loads(status.read_text(encoding="utf-8"))
    assert stored["build"]["thresholds"]["slow_cell_seconds"] == 0.25
    assert stored["build"]["rules"] == {"warn_slow_cells": True, "warn_regressions": False,
                                        "expected_backend": "gpu"}
    built_cells = sorted((docname, cell["cell"]) for docname, entry
                         in stored["analysis"].items() for cell in entry["flagged_cells"])
    assert built_cells == [("alpha", "cell 2"), ("beta", "cell 2")]
    assert cli_main(["report", str(status), "--json"]) == 0
    reported = json.loads(capsys.readouterr().out)
    assert sorted((c["docname"], c["cell"]) for c in reported["flagged_cells"]) == built_cells
    assert reported["thresholds"] == stored["build"]["thresholds"]
    # an option still overrides the stored value
    assert cli_main(["report", str(status), "--json", "--slow-cell-seconds", "60",
                     "--slow-cell-share", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["flagged_cells"] == []
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    assert cli_main(["report", str(status), "--github"]) == 0
    annotations = [line for line in capsys.readouterr().err.splitlines()
                   if line.startswith("::warning") and "title=Slow cell 2 of " in line]
    assert len(annotations) == len(built_cells)
    assert "flagged=2" in (tmp_path / "outputs").read_text(encoding="utf-8")


def test_with_warnings_as_errors_junit_fails_the_flagged_cells(built):
    # again with -W: nothing executes; Sphinx 7.4 stops at the first warning (the
    # slowest cell's), later versions fail at the end; JUnit is red either way
    again = sphinx_build(built.srcdir, built.outdir.parent, "html", warningiserror=True,
                         raising=False, show_warning_types=False)
    first = str(again.raised) if again.raised is not None else again.warning_lines[0]
    assert "beta.md" in first and "slow cell 2" in first
    suite = _junit(again)
    failing = [(c.get("classname"), c.find("failure").get("type"))
               for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failing == [("alpha", "slow_cell"), ("beta", "slow_cell")]


def test_the_quantecon_book_names_sources_by_the_book_and_lists_flagged_cells_in_junit(
        quantecon_book):
    """The QuantEcon-style book, built from its absolute path by the suite (from another
    folder): sources relative to the book, and JUnit's cell cases are the JSON's
    flagged cells."""
    html = quantecon_book.html
    status = json.loads(html.read("execution-status.json"))
    assert status["notebooks"]
    assert all(nb["source"] == f"{nb['docname']}.md" for nb in status["notebooks"])
    for name in ("execution-status.json", "execution-status.junit.xml", "status.html"):
        text = html.read(name)
        assert str(html.srcdir.resolve()) not in text and str(html.srcdir) not in text
    flagged = sorted((docname, cell["cell"]) for docname, entry in status["analysis"].items()
                     for cell in entry["flagged_cells"])
    suite = _junit(html)
    cases = sorted((c.get("classname"), c.get("name")) for c in suite.iter("testcase")
                   if c.get("classname") != "notebooks")
    assert cases == flagged
