"""The ``report`` command and the command line's text helpers (``cli/report.py``,
``cli/output.py``): flagged cells with their device and action, notebooks over budget,
Markdown code and table escaping, colour only on a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TESTS

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.record import StatusReport

DATA = TESTS / "data"


# -- helpers (in-process) ----------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("x = 1", "`x = 1`"),
    ("a | b", "`a \\| b`"),
    ("use `jit` here", "``use `jit` here``"),
    ("`start", "`` `start ``"),
    ("a ``b`` c", "```a ``b`` c```"),
])
def test_md_code(text, expected):
    assert cli.md_code(text) == expected


# -- renderers, in-process on tests/data (the GPU incident, hand-made) --------------------------
def incident_report(name: str) -> StatusReport:
    from sphinx_gpu_admonition.model.files import read_status

    return read_status(DATA / f"incident-{name}-status.json")


def test_report_renderers_name_the_flagged_cell_its_device_and_the_action():
    """``report`` names a flagged cell as the console summary does, with its file:line,
    and gives the action the console and the status page give (issue 26, item 3)."""
    from sphinx_gpu_admonition.cli.report import render_report_markdown, render_report_text
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.render.console import summary_lines

    report = incident_report("gpu-t4")
    (notebook,) = report.notebooks
    notebook.source = "lectures/ar1_turningpts.md"  # a text notebook: cells have lines
    notebook.cells[1].line = 42
    analysis = analyse(report, Thresholds())
    summary = cli.summarise_report(report, analysis, Thresholds(), "gpu.json", 5)
    (flagged,) = summary["flagged_cells"]
    assert (flagged["docname"], flagged["cell"]) == ("ar1_turningpts", "cell 2")
    assert flagged["rules"] == ["slow", "share", "sequential_loop"]
    assert flagged["location"] == "lectures/ar1_turningpts.md:42"
    assert flagged["action"].startswith("run the loop on the CPU: jit its function for the CPU")
    text = render_report_text(summary, cli.Style(False), 5)
    assert "\x1b[" not in "".join(text)  # no colour unless asked
    name = "ar1_turningpts cell 2 (lectures/ar1_turningpts.md:42)"
    where = next(i for i, line in enumerate(text) if f"{name}:" in line)
    assert text[where - 1] == "Flagged cells (1)"
    # its JAX compilation against the rest of its time, then the reasons, hints, action
    assert text[where + 1].startswith("      compile ") and ", run " in text[where + 1]
    assert text[where + 4].startswith("      hint: runs lax.scan on the GPU")
    assert text[where + 5] == f"      what to do: {flagged['action']}"
    # the console summary names it and advises the same
    console = summary_lines(report, analysis)
    assert any(f"{name}:" in line for line in console)
    assert f"{'':13}what to do: {flagged['action']}" in console
    assert any(line.split()[:3] == ["Device", "GPU:", "Tesla"] for line in text)
    markdown = render_report_markdown(summary, 5)
    rows = markdown[markdown.index("#### Flagged cells (1)") + 2:]
    assert rows[0] == ("| Time | Notebook | Cell | Where | Code | Compile, run | Why | "
                       "What to do |")
    assert rows[1] == "| ---: | --- | --- | --- | --- | --- | --- | --- |"
    assert rows[2].startswith("| 82.0 s | ar1\\_turningpts | cell 2 | "
                              "`lectures/ar1_turningpts.md:42` | `_, path = jax.lax.scan(")
    assert f" | {cli.md_text(flagged['timing'])} | " in rows[2]
    # the action's code as code spans, not escaped backticks
    assert rows[2].endswith(" | run the loop on the CPU: jit its function for the CPU "
                            '(`jax.jit(f, device=jax.devices("cpu")[0])`) or call it inside '
                            '`with jax.default_device(jax.devices("cpu")[0]):`; on the GPU, '
                            "`unroll=k` (`lax.scan`, `lax.fori_loop`) runs k steps per "
                            "iteration, or restructure the loop (vectorise it, "
                            "`lax.associative_scan`) |")
    assert rows[3] == ""  # one row: one flagged cell
    # an .ipynb notebook (no lines): the file
    notebook.source, notebook.cells[1].line = "lectures/ar1.ipynb", None
    summary = cli.summarise_report(report, analyse(report, Thresholds()), Thresholds(),
                                   "gpu.json", 5)
    assert summary["flagged_cells"][0]["location"] == "lectures/ar1.ipynb"


def test_report_lists_the_notebooks_over_their_budget_after_the_flagged_cells():
    """The notebooks of the build's ``gpu_admonition.budget`` warnings, in every form of
    ``report`` and in the build's console summary; a book without budgets has no such
    section."""
    from sphinx_gpu_admonition.cli.report import render_report_markdown, render_report_text
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.render.console import summary_lines

    report = incident_report("gpu-t4")
    (notebook,) = report.notebooks
    summary = cli.summarise_report(report, analyse(report, Thresholds()), Thresholds(),
                                   "gpu.json", 5)
    assert summary["over_budget"] == []
    assert not any("budget" in line for line in summary_lines(report, analyse(report,
                                                                              Thresholds())))
    assert not any("budget" in line for line in render_report_text(summary, cli.Style(False), 5))
    notebook.source, notebook.budget_seconds = "lectures/ar1_turningpts.md", 60.0
    summary = cli.summarise_report(report, analyse(report, Thresholds()), Thresholds(),
                                   "gpu.json", 5)
    (row,) = summary["over_budget"]
    assert (row["docname"], row["location"], row["budget_seconds"]) == (
        "ar1_turningpts", "lectures/ar1_turningpts.md", 60.0)
    text = render_report_text(summary, cli.Style(False), 5)
    where = text.index("Over their time budget (1)")
    assert text[where - 1] == "" and text.index("Failures (0)") == where + 3
    assert text[where + 1].endswith(
        f"ar1_turningpts (lectures/ar1_turningpts.md): {row['reason']}")
    assert row["reason"].startswith("took ") and row["reason"].endswith(", budget 60.0 s")
    markdown = render_report_markdown(summary, 5)
    rows = markdown[markdown.index("#### Over their time budget (1)") + 2:]
    assert rows[0] == "| Time | Notebook | Where | Budget |"
    assert rows[2].startswith("| ") and rows[2].endswith(
        " | ar1\\_turningpts | `lectures/ar1_turningpts.md` | 60.0 s |")
    # the build's console summary lists it after its flagged cells, as report does
    console = summary_lines(report, analyse(report, Thresholds()))
    where = console.index("over their time budget (1):")
    assert console[where + 1].endswith(
        f"  ar1_turningpts (lectures/ar1_turningpts.md): {row['reason']}")


def test_md_text_escapes_table_syntax():
    assert cli.md_text("a|b *c* <d>") == "a\\|b \\*c\\* \\<d\\>"


class _Stream:
    def __init__(self, tty: bool):
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert cli.colour_enabled(False, _Stream(True))
    assert not cli.colour_enabled(False, _Stream(False))
    assert not cli.colour_enabled(True, _Stream(True))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cli.colour_enabled(False, _Stream(True))
    style = cli.Style(True)
    lines = cli.text_table(["a", "bb"], [[("x", ("red",)), "1"]], style, right=(1,))
    assert lines[1] == "  \x1b[31mx\x1b[0m   1"


def test_summary_sentence():
    assert cli.summary_sentence("CPU build", "GPU build", 1 / 3.2, 4, 40.0, 12.5) == (
        "GPU build is 3.2x faster than CPU build overall (12.5 s vs 40.0 s, 4 notebooks in both)")
    assert "slower" in cli.summary_sentence("A", "B", 2.0, 1, 1.0, 2.0)
    assert "about as long" in cli.summary_sentence("A", "B", 1.01, 1, 1.0, 1.01)


# -- a status file must list its notebooks -----------------------------------------------
def test_a_status_file_with_null_notebooks_is_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_gpu_admonition.cli import main
    from sphinx_gpu_admonition.model.record import SCHEMA_ID, SCHEMA_VERSION

    path = tmp_path / "status.json"
    path.write_text(json.dumps({"schema": SCHEMA_ID, "schema_version": SCHEMA_VERSION,
                                "build": {}, "notebooks": None}), encoding="utf-8")
    assert main(["report", str(path)]) == 2
    assert main(["compare", str(path), str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and all("notebooks: not an array (got null)" in x for x in lines)
