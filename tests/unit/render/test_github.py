"""GitHub Actions output as pure functions: escaping, annotations, summary, outputs.

The end-to-end run (a real Sphinx build and the command line on GitHub
variables) is tests/integration/test_workflow.py; these tests cover what it cannot reach
cheaply: escaping of hostile text, the annotation limit, .ipynb sources, the
output file format and the ``auto`` switch.
"""

from __future__ import annotations

import pytest

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.findings import findings
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    ErrorInfo,
    NotebookRecord,
    StatusReport,
    WorkLine,
)
from sphinx_gpu_admonition.render import github
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS


def _notebook(docname: str, source: str | None, cells: list[tuple[float, int | None]],
              **fields: object) -> NotebookRecord:
    return NotebookRecord(
        docname=docname, status=fields.pop("status", "ok"), provenance="executed",
        source=source, capture="ok",
        cells=[CellRecord(index=i, execution_count=i + 1, seconds=s, first_line=f"step_{i}()",
                          line=line) for i, (s, line) in enumerate(cells)], **fields)


def test_escaping_follows_the_runner() -> None:
    assert github.escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    # a title cannot end the properties or the command early
    line = github.command("warning", "x::y", file="a,b.md", title="t: u")
    assert line == "::warning file=a%2Cb.md,title=t%3A u::x::y"
    assert github.command("notice", "plain") == "::notice::plain"


def test_failure_and_flagged_cells_are_annotated_at_their_lines() -> None:
    failed = _notebook("lectures/bad", "lectures/bad.md", [(0.1, 10), (0.0, 14)],
                       status="error", error=ErrorInfo("ValueError", "bad: value", 1, 2))
    failed.cells[1].error = "ValueError"
    slow = _notebook("lectures/slow", "lectures/slow.md", [(12.0, 8), (0.1, 20)])
    report = StatusReport([failed, slow])
    lines = github.annotations(report, analyse(report, Thresholds()))
    assert lines[0] == ("::error file=lectures/bad.md,line=14,title=Notebook failed%3A "
                        "lectures/bad::error in cell 2: ValueError: bad: value")
    assert lines[1].startswith("::warning file=lectures/slow.md,line=8,title=Slow cell 1 of "
                               "lectures/slow (12")
    assert lines[1].endswith("%0Acode: step_0()")
    assert len(lines) == 2


def test_a_cell_annotation_points_at_the_statement_doing_the_work() -> None:
    """A ``%%time`` cell at line 8 of lectures/slow.md (its code from line 9): the
    annotation is at the timed call (its line 2 in the cell), and names it."""
    slow = _notebook("lectures/slow", "lectures/slow.md", [(12.0, 8), (0.1, 20)])
    slow.cells[0].first_line = "%%time"
    slow.cells[0].code_line = 9
    slow.cells[0].work = WorkLine(code="x = qm(0.1, n)", line=2, kind="jitted_call",
                                  timed=True)
    report = StatusReport([slow])
    (line,) = github.annotations(report, analyse(report, Thresholds()))
    assert line.startswith("::warning file=lectures/slow.md,line=10,title=Slow cell 1 ")
    assert line.endswith("%0Acode: x = qm(0.1, n)")
    # without the code's line (a record of an earlier release): at the cell's fence
    slow.cells[0].code_line = None
    (line,) = github.annotations(report, analyse(report, Thresholds()))
    assert line.startswith("::warning file=lectures/slow.md,line=8,")


def test_a_cell_annotation_carries_the_code_and_compile_against_run() -> None:
    """The lines the console gives under a finding: the code, then the split."""
    slow = _notebook("lectures/slow", "lectures/slow.md", [(12.0, 8), (0.1, 20)])
    slow.cells[0].compile_seconds = 5.0
    slow.cells[0].compilations = {"jit(step)": 1}
    report = StatusReport([slow])
    analysis = analyse(report, Thresholds())
    (line,) = github.annotations(report, analysis)
    (finding,) = findings(analysis)
    message = line.split("::", 2)[2]
    timing = WORDS.timing(finding)
    assert message.endswith(f"%0Acode: step_0()%0A{timing}")
    assert timing.startswith("compile ") and timing.endswith("(first call)")


def test_ipynb_sources_are_annotated_at_the_file() -> None:
    notebook = _notebook("nb", "lectures/nb.ipynb", [(12.0, None)])
    report = StatusReport([notebook])
    (line,) = github.annotations(report, analyse(report, Thresholds()))
    assert line.startswith("::warning file=lectures/nb.ipynb,title=")


def test_absolute_sources_are_made_relative_to_the_workspace(tmp_path) -> None:
    inside = str(tmp_path / "repo" / "lectures" / "a.md")
    assert github.annotation_file(inside, str(tmp_path / "repo")) == "lectures/a.md"
    assert github.annotation_file("/elsewhere/a.md", str(tmp_path)) == "/elsewhere/a.md"
    assert github.annotation_file(None) is None


def test_annotations_stop_at_ten_of_a_kind_with_a_notice() -> None:
    """GitHub shows 10 annotations of each kind per step (issue 26, item 10)."""
    notebooks = [_notebook(f"nb{i:02d}", f"nb{i:02d}.md", [(11.0 + i, 3)]) for i in range(60)]
    notebooks += [_notebook(f"bad{i:02d}", f"bad{i:02d}.md", [(0.1, 3)], status="error",
                            error=ErrorInfo("ValueError", "bad", 0, 1)) for i in range(12)]
    report = StatusReport(notebooks)
    lines = github.annotations(report, analyse(report, Thresholds()))
    kinds = [line.split(" ", 1)[0].split("::")[1] for line in lines]
    assert kinds == ["error"] * 10 + ["warning"] * 10 + ["notice"]
    assert lines[-1].startswith("::notice title=More execution annotations::52 more")
    assert "job summary" in lines[-1]
    assert "Slow cell 1 of nb59" in lines[10]  # the slowest first


def test_annotations_rank_regressions_before_slow_cells() -> None:
    baseline = StatusReport([_notebook(f"nb{i:02d}", f"nb{i:02d}.md", [(1.0, 3), (20.0, 5)])
                             for i in range(12)])
    current = StatusReport([_notebook(f"nb{i:02d}", f"nb{i:02d}.md", [(3.0, 3), (20.0, 5)])
                            for i in range(12)])
    analysis = analyse(current, Thresholds(), baseline)
    lines = github.annotations(current, analysis)
    titles = [line.split("title=", 1)[1].split("::", 1)[0] for line in lines]
    # the twelve regression cells (3 s against 1 s) before the slower, merely slow cells
    assert all("cell 1 of" in title for title in titles[:10]), titles
    assert lines[-1].startswith("::notice")


def test_a_notebook_over_its_budget_is_annotated_before_the_slow_cells() -> None:
    """Its warning (gpu_admonition.budget) fails -W with no opt-in: it comes before
    the cells that are only advice, at the notebook's file."""
    over = _notebook("lectures/long", "lectures/long.md", [(1.0, 8)], budget_seconds=0.5)
    slow = _notebook("lectures/slow", "lectures/slow.md", [(12.0, 8), (0.1, 20)])
    report = StatusReport([slow, over])
    lines = github.annotations(report, analyse(report, Thresholds()))
    assert lines[0].startswith("::warning file=lectures/long.md,title=Over its time budget%3A "
                               "lectures/long::notebook over its time budget: took ")
    assert lines[0].endswith(", budget 0.50 s")
    assert lines[1].startswith("::warning file=lectures/slow.md,line=8,title=Slow cell 1")
    assert len(lines) == 2

def test_outputs_and_summary_append_to_the_runner_files(tmp_path) -> None:
    outputs, summary = tmp_path / "out", tmp_path / "summary.md"
    environ = {"GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)}
    outputs.write_text("earlier=1\n")
    github.append_outputs({"failed": 2, "status-json": "a b.json", "text": "two\nlines"},
                          environ)
    lines = outputs.read_text().splitlines()
    assert lines[:3] == ["earlier=1", "failed=2", "status-json=a b.json"]
    delimiter = lines[3].split("<<", 1)[1]
    assert lines[3] == f"text<<{delimiter}" and lines[4:] == ["two", "lines", delimiter]
    github.append_summary(["### one"], environ)
    github.append_summary(["### two"], environ)
    assert summary.read_text() == "### one\n\n### two\n\n"
    assert github.append_outputs({"x": 1}, {}) is None  # not on GitHub: nothing written


@pytest.mark.parametrize(("setting", "environ", "expected"), [
    ("auto", {"GITHUB_ACTIONS": "true"}, True),
    ("auto", {}, False),
    ("auto", {"GITHUB_ACTIONS": "false"}, False),
    (True, {}, True),
    (False, {"GITHUB_ACTIONS": "true"}, False),
])
def test_auto_means_on_github_actions(setting, environ, expected) -> None:
    assert github.enabled(setting, environ) is expected


# -- the job summary's headline, the step outputs (issue 33, item 8) ----------------------
def _on(backend: str, device: str, seconds: float, docname: str = "jax_intro",
        cells: list[tuple[float, int | None]] | None = None) -> NotebookRecord:
    from sphinx_gpu_admonition.model.record import Environment, GpuInfo, Host, JaxInfo

    record = _notebook(docname, f"lectures/{docname}.md", cells or [(seconds, 10)],
                       runtime_seconds=seconds)
    record.environment = Environment(
        jax=JaxInfo(backend=backend), host=Host(cpu="AMD EPYC", cores=2),
        gpus=[GpuInfo(name=device)] if backend == "gpu" else [])
    return record


@pytest.mark.parametrize("change", ["device", "regression"])
def test_the_job_summary_opens_with_a_regression_or_a_device_change(change) -> None:
    """As the status page: never "✅ ... 2 notebooks: 2 ok" for a build 39x slower on
    another device, or with a notebook regressed beyond the machine factor."""
    if change == "device":
        before = StatusReport([_on("gpu", "Tesla T4", 4.5), _on("gpu", "Tesla T4", 2.0, "ar1")])
        now = StatusReport([_on("cpu", "", 176.0), _on("cpu", "", 2.1, "ar1")])
    else:
        before = StatusReport([_on("cpu", "", 10.0, name) for name in ("a", "b", "c", "d")])
        now = StatusReport([_on("cpu", "", seconds, name) for name, seconds in
                            (("a", 10.0), ("b", 10.0), ("c", 10.5), ("d", 25.0))])
    analysis = analyse(now, Thresholds(), before)
    assert len(analysis.regressed) == 1
    summary = github.job_summary(now, analysis, Thresholds())
    heading, _, headline = summary[:3]
    assert heading.startswith("### ⚠️ Notebook execution:")
    if change == "device":
        assert "the device changed: GPU: Tesla T4 → CPU: AMD EPYC, 2 cores" in headline
        assert "beyond the machine" not in headline
        assert "does not scale" not in "\n".join(summary)
    else:
        assert "1 notebook slower beyond the machine's own speed" in headline
    assert github.output_values(now, analysis, "s.json", None)["regressed"] == 1
    # the same build without the baseline: green
    alone = analyse(now, Thresholds())
    assert github.job_summary(now, alone, Thresholds())[0].startswith("### ✅")


def test_a_slow_ok_cell_is_a_note_in_every_count() -> None:
    """``flagged=4`` counted a slow-ok cell that had no annotation: a note is shown,
    never counted as a flagged cell."""
    from sphinx_gpu_admonition.render.console import summary_lines
    from sphinx_gpu_admonition.render.summary import summarise_report

    record = _notebook("lectures/slow", "lectures/slow.md",
                       [(12.0, 8), (11.0, 12), (13.0, 16), (30.0, 20)])
    record.cells[3].slow_ok = True
    report = StatusReport([record])
    analysis = analyse(report, Thresholds())
    assert len(github.annotations(report, analysis)) == 3
    assert github.output_values(report, analysis, None, None)["flagged"] == 3
    console = summary_lines(report, analysis)
    assert "flagged cells (3):" in console and "notes (1):" in console
    summary = summarise_report(report, analysis, Thresholds(), "x", 5)
    assert len(summary["flagged_cells"]) == 3 and len(summary["notes"]) == 1
    markdown = "\n".join(github.job_summary(report, analysis, Thresholds()))
    assert "#### Flagged cells (3)" in markdown and "#### Notes (1)" in markdown


def test_report_of_a_build_folder_names_its_files_in_the_step_outputs(tmp_path, monkeypatch):
    """``report BUILD_DIR --github``: ``status-json`` is the file in the folder, not the
    folder, and ``junit`` the JUnit file beside it."""
    import json

    from sphinx_gpu_admonition.cli import main

    build = tmp_path / "_build" / "html"
    build.mkdir(parents=True)
    report = StatusReport([_notebook("a", "a.md", [(0.1, 3)])])
    (build / "execution-status.json").write_text(json.dumps(report.to_dict()), "utf-8")
    (build / "execution-status.junit.xml").write_text("<testsuite/>\n", "utf-8")
    outputs = tmp_path / "outputs"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["report", "_build", "--github"]) == 0
    lines = outputs.read_text("utf-8").splitlines()
    assert "status-json=_build/html/execution-status.json" in lines
    assert "junit=_build/html/execution-status.junit.xml" in lines
