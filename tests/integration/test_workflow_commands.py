"""Untrusted text never becomes a GitHub workflow command (issues 25 and 33, item 1), in a
real build: what a notebook puts in its names, lines and exceptions, printed by the build
(the rule and every other output, in-process: tests/unit/test_workflow_commands.py)."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
from runner_commands import forged_commands, run, runner_lines

# -- a real build: what a notebook puts in its names, lines and exceptions ----------------
HOSTILE = (
    "# Hostile \u202eTITLE ##[error]T\n\n"
    "```{code-cell} ipython3\nx = 1  # ##[add-mask]secret \u2066iso\u2069\n```\n\n"
    "```{code-cell} ipython3\n#\u200b#[warning]zero width\ny = 2\n```\n\n"
    "```{code-cell} ipython3\nraise type(\"E##[error]X\", (Exception,), {})("
    "\"##[stop-commands]tok \u202egnp.live\")\n```\n")


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from conftest import MYST_HEADER, build_project

    folder = tmp_path_factory.mktemp("hostile")
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(folder / "summary.md"),
               "GITHUB_OUTPUT": str(folder / "outputs")}
    stderr = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stderr(stderr):
        for name, value in environ.items():
            patch.setenv(name, value)
        build = build_project(
            "outcomes", folder, files={
                "index.md": "# Book\n\n```{toctree}\nhostile\n```\n",
                "hostile.md": MYST_HEADER + HOSTILE},
            confoverrides={"gpu_slow_cell_seconds": 0, "gpu_slow_cell_min_seconds": 0,
                           "gpu_github_annotations": True})
    return build, stderr.getvalue(), folder


def _extensions_lines(text: str) -> list[str]:
    """The lines of a build's log that are the extension's (its summary and warnings):
    Sphinx's own progress lines and MyST-NB's are theirs."""
    ours = ("execution:", "flagged cells", "  ", "build:", "cache misses", "over their")
    return [line for line in runner_lines(text)
            if line.startswith(ours) or "gpu_admonition" in line]


def test_a_real_build_prints_no_command_of_its_notebook(hostile_build) -> None:
    """A real kernel's exception class ``E##[error]X``, a cell whose first line is
    ``##[add-mask]`` and one hidden behind a zero-width space, and a title with a
    right-to-left override: the console summary, the warnings, the annotations, JUnit,
    the JSON and every form of ``report`` print none of them as a command."""
    build, annotations, folder = hostile_build
    record = next(nb for nb in json.loads(build.read("execution-status.json"))["notebooks"]
                  if nb["docname"] == "hostile")
    assert record["error"]["type"] == "E##[error]X"  # recorded as it is
    summary = _extensions_lines(build.status + build.warnings)
    assert any("FAILED hostile" in line for line in summary), build.status
    assert any("E%23#[error]X" in line for line in summary)
    assert forged_commands("\n".join(summary)) == []
    assert "::error " in annotations and "E%23#[error]X" in annotations
    assert forged_commands(annotations, annotations=True) == []
    assert forged_commands(build.read("execution-status.junit.xml")) == []
    assert forged_commands((folder / "summary.md").read_text("utf-8")) == []
    for form in ([], ["--markdown"], ["--json"], ["--github"]):
        code, out, err = run("report", str(build.outdir), "--slow-cell-seconds", "0",
                             "--min-seconds", "0", *form)
        assert code == 1 and "E" in out
        assert forged_commands(out) == [] and forged_commands(err, annotations=True) == []
