"""render/junit.py: every flagged cell is a test case of its own (issue 26, item 3).

A CI dashboard reading the JUnit file sees each flagged cell under its notebook
(classname the notebook, name the cell's name in every view), with its reason and
action, passing unless the build was set to fail on it (``FailOn``: the opt-in
warning with ``-W``).
"""

from __future__ import annotations

from xml.etree import ElementTree

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.findings import findings
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    ErrorInfo,
    NotebookRecord,
    StatusReport,
)
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS
from sphinx_gpu_admonition.render.junit import NEVER_FAIL, FailOn, junit_xml


def _notebook(docname: str, seconds: list[float], provenance: str = "executed",
              source: str | None = None) -> NotebookRecord:
    cells = [CellRecord(index=n, execution_count=n, seconds=s, first_line=f"step({n})",
                        line=10 * n if source and source.endswith(".md") else None)
             for n, s in enumerate(seconds, 1)]
    return NotebookRecord(docname=docname, status="ok", provenance=provenance,
                          runtime_seconds=sum(seconds) + 1.0, cells=cells, capture="ok",
                          source=source, executed_at="2026-01-05T03:00:00+00:00")


def _report() -> StatusReport:
    # "intro" cell 2 and "numpy" cell 1 are slow (over 10 s); "fast" has no flagged cell
    return StatusReport([
        _notebook("fast", [0.1, 0.2], source="lectures/fast.md"),
        _notebook("intro", [0.5, 12.0, 0.5], source="lectures/intro.md"),
        _notebook("numpy", [30.0, 0.1], provenance="cache", source="lectures/numpy.ipynb"),
    ])


def _suite(report: StatusReport, fail_on: FailOn = NEVER_FAIL) -> ElementTree.Element:
    return ElementTree.fromstring(junit_xml(report, analyse(report, Thresholds()), fail_on))


def test_each_flagged_cell_is_a_passing_case_under_its_notebook():
    report = _report()
    suite = _suite(report)
    cases = [(case.get("classname"), case.get("name")) for case in suite.iter("testcase")]
    assert cases == [("notebooks", "fast"), ("notebooks", "intro"), ("intro", "cell 2"),
                     ("notebooks", "numpy"), ("numpy", "cell 1")]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "0", "0")
    intro = next(c for c in suite.iter("testcase") if c.get("classname") == "intro")
    assert (intro.get("file"), intro.get("line")) == ("lectures/intro.md", "20")
    assert intro.find("failure") is None and intro.find("skipped") is None
    text = intro.find("system-out").text
    finding = next(f for f in findings(analyse(report, Thresholds()))
                   if f.notebook.docname == "intro")
    # the name, reason and action every other view gives
    assert text.startswith("intro cell 2 (lectures/intro.md:20) (12.0 s): flagged: ")
    assert WORDS.finding_reason(finding) in text
    assert f"what to do: {WORDS.finding_action(finding)}" in text
    assert "code: step(2)" in text
    # the notebook's own case no longer carries the cell
    notebook = next(c for c in suite.iter("testcase") if c.get("name") == "intro")
    assert notebook.find("system-out") is None
    # an .ipynb cell: the file without a line; a cache hit costs this build nothing
    numpy = next(c for c in suite.iter("testcase") if c.get("classname") == "numpy")
    assert (numpy.get("file"), numpy.get("line")) == ("lectures/numpy.ipynb", None)
    assert numpy.get("time") == "0.000" and intro.get("time") == "12.000"


def test_a_flagged_cell_fails_only_when_its_warning_fails_the_build():
    report = _report()
    suite = _suite(report, FailOn(slow_cells=True))
    assert suite.get("failures") == "2"
    failing = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failing] == [
        ("intro", "cell 2"), ("numpy", "cell 1")]
    failure = failing[0].find("failure")
    assert failure.get("type") == "slow_cell"
    assert failure.get("message").startswith("cell 2 (12.0 s): ")
    assert "what to do: " in failure.text
    # failing on regressions only: these cells are slow, not regressions
    assert _suite(report, FailOn(regressions=True)).get("failures") == "0"


def test_regressions_fail_when_regression_warnings_fail_the_build():
    baseline = StatusReport([_notebook("intro", [0.5, 1.0, 0.5], source="lectures/intro.md")])
    report = StatusReport([_notebook("intro", [0.5, 12.0, 0.5], source="lectures/intro.md")])
    analysis = analyse(report, Thresholds(), baseline)
    passing = ElementTree.fromstring(junit_xml(report, analysis))
    assert passing.get("failures") == "0"
    suite = ElementTree.fromstring(junit_xml(report, analysis, FailOn(regressions=True)))
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert cases["intro", "cell 2"].find("failure").get("type") == "regression"
    # the notebook itself is slower than the baseline beyond the machine: failing too
    notebook = cases["notebooks", "intro"].find("failure")
    assert notebook.get("type") == "regression" and "the baseline" in notebook.get("message")
    assert suite.get("failures") == "2"


def test_slow_ok_and_import_cells_pass_even_when_slow_cells_fail_the_build():
    # the cells a lecture lives with are notes: never a warning, so never a red case
    report = _report()
    intro, numpy = report.notebooks[1], report.notebooks[2]
    intro.cells[1].slow_ok = True
    numpy.cells[0].imports_only = True
    suite = _suite(report, FailOn(slow_cells=True))
    assert suite.get("failures") == "0"
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    slow_ok = cases["intro", "cell 2"].find("system-out").text
    assert "slow on purpose" in slow_ok and "what to do" not in slow_ok  # it has no action
    assert "what to do: " in cases["numpy", "cell 1"].find("system-out").text


def test_a_notebook_over_its_budget_fails_when_warnings_fail_the_build():
    report = _report()
    report.notebooks[1].budget_seconds = 5.0  # intro takes 14 s
    passing = _suite(report)
    assert passing.get("failures") == "0"
    intro = next(c for c in passing.iter("testcase") if c.get("name") == "intro")
    assert intro.find("system-out").text.startswith("over its time budget: took 14.0 s, "
                                                    "budget 5.00 s")
    failing = _suite(report, FailOn(budget=True))
    assert failing.get("failures") == "1"
    (case,) = [c for c in failing.iter("testcase") if c.find("failure") is not None]
    assert case.get("name") == "intro"
    assert case.find("failure").get("type") == "budget"
    assert case.find("failure").get("message").startswith("over its time budget: took ")
    assert case.find("system-out") is None


# -- what the extension writes stays valid ------------------------------------------------------
def test_junit_xml_is_valid_with_control_characters_in_names_and_types() -> None:
    from lxml import etree

    from sphinx_gpu_admonition.render.junit import junit_xml

    failed = NotebookRecord(docname="bad\x01name", status="error", provenance="executed",
                            error=ErrorInfo(type="Esc\x1bError", message="m\x00es\x0bsage\ud800"))
    cached = NotebookRecord(docname="old\x1f", status="ok", provenance="cache",
                            executed_at="2026-01-01T00:00:00\x07")
    suite = etree.fromstring(junit_xml(StatusReport([failed, cached])).encode("utf-8"))
    cases = suite.findall("testcase")
    # the one rule of every output (model.formatting.safe_line): a control character is
    # a space, a vertical tab a line break, a lone surrogate U+FFFD
    assert [case.get("name") for case in cases] == ["bad name", "old "]
    failure = cases[0].find("failure")
    assert failure.get("type") == "Esc Error"
    assert failure.get("message") == "error: Esc Error"
    assert failure.text == "m es\nsage\ufffd"
    assert "\x07" not in cases[1].find("system-out").text


def test_every_character_xml_cannot_hold_is_dropped_and_no_other() -> None:
    """What the JUnit file's texts keep is XML 1.0's ``Char`` production, character by
    character (the Basic Multilingual Plane and both ends of the others), so that an
    output holding any of them is still a valid file and loses nothing else."""
    from sphinx_gpu_admonition.render.junit import _xml_characters

    def is_xml_char(point: int) -> bool:
        return point in (0x9, 0xA, 0xD) or 0x20 <= point <= 0xD7FF \
            or 0xE000 <= point <= 0xFFFD or 0x10000 <= point <= 0x10FFFF

    points = [*range(0x10000), 0x10000, 0x1F600, 0x10FFFF]
    text = "".join(map(chr, points))
    assert _xml_characters(text) == "".join(chr(p) for p in points if is_xml_char(p))
