"""Timing claims end to end (issue 31): ``tests/roots/claims``, a lecture shaped like
QuantEcon's numpy_vs_numba_vs_jax (a Python loop, NumPy's vectorization, JAX's meshgrid,
two vmap versions; tiny sizes), built for real on both engines with a GPU runner's
status file among the other builds (``tests/data/claims-gpu-t4-status.json``: a real CPU
execution of the same book with its device fields moved, ``tests/make_gpu_fixture.py
--root claims``).

Its claims: a true one (``numpy << loop``), a false one (``mesh ~ loop``), an "about the
same" one (``vmap-v2 ~ vmap-v1``), a GPU-only one (``mesh < numpy on gpu``) and one on a
page without code (``summary``); a page of bad input (``problems``); the quoting roles;
an unmarked "significantly faster" sentence. The claims are made so that noise cannot
move them: the verdicts asserted are ratios of 20 times and more, or two runs of the
same code, never a time.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any, NamedTuple
from xml.etree import ElementTree

import pytest
from conftest import ROOTS, TESTS, ProjectBuild, sphinx_build
from mystmd_builds import myst_build, requires_mystmd, text_of, walk

from sphinx_gpu_admonition.cli import main as cli_main
from sphinx_gpu_admonition.model import page_claims
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.model.record import StatusReport
from sphinx_gpu_admonition.render.claims_view import claim_anchor
from sphinx_gpu_admonition.render.github import annotations

bs4 = pytest.importorskip("bs4")

ROOT = ROOTS / "claims"
GPU_FILE = TESTS / "data" / "claims-gpu-t4-status.json"
SOURCE = "_static/claims-gpu-t4-status.json"
LECTURE = (ROOT / "lecture.md").read_text(encoding="utf-8").splitlines()
PROBLEMS = (ROOT / "problems.md").read_text(encoding="utf-8").splitlines()
TRUE = ("numpy << loop", "vmap-v2 ~ vmap-v1", "mesh < numpy on gpu")
FALSE = "mesh ~ loop"


def line_of(lines: list[str], text: str) -> int:
    return next(number for number, line in enumerate(lines, 1) if text in line)


class SphinxBook(NamedTuple):
    srcdir: Path
    html: ProjectBuild
    text: ProjectBuild
    latex: ProjectBuild
    #: the status file of the html build, read back
    report: StatusReport
    status_file: Path
    #: -E again: every notebook a cache hit, the claim warnings silenced, -W
    rebuilt: ProjectBuild
    #: how often a page's text was split into sentences in that rebuild
    texts_read_again: int


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> SphinxBook:
    dest = tmp_path_factory.mktemp("claims-book")
    srcdir = dest / "src"
    shutil.copytree(ROOT, srcdir)
    (srcdir / "_static").mkdir()
    shutil.copyfile(GPU_FILE, srcdir / SOURCE)
    builddir = dest / "_build"
    html = sphinx_build(srcdir, builddir, "html", freshenv=True)
    status_file = dest / "execution-status.json"
    shutil.copyfile(html.outdir / "execution-status.json", status_file)
    text = sphinx_build(srcdir, builddir, "text")
    latex = sphinx_build(srcdir, builddir, "latex")
    reads = []
    original = page_claims.read_page_text
    page_claims.read_page_text = lambda *args: reads.append(args) or original(*args)
    try:
        rebuilt = sphinx_build(srcdir, builddir, "html", freshenv=True, warningiserror=True,
                               confoverrides={"suppress_warnings": ["gpu_admonition.claim"]})
    finally:
        page_claims.read_page_text = original
    return SphinxBook(srcdir, html, text, latex, read_status(status_file), status_file,
                      rebuilt, len(reads))


def claims_of(report: StatusReport) -> dict[str, Any]:
    return {claim.expression: claim for claim in report.claims}


def verdicts(report: StatusReport) -> dict[tuple[str, str], str]:
    return {(claim.page, claim.expression): claim.verdict for claim in report.claims}


def warnings_of(build: ProjectBuild, subtype: str = "claim") -> list[str]:
    return [line for line in build.warning_lines if f"[gpu_admonition.{subtype}]" in line]


# -- Done when: the false claim warns at its line with both values, the true ones do not
def test_the_false_claim_warns_at_its_line_with_both_values(book):
    line = line_of(LECTURE, f"{{timing-claim}}`{FALSE}`")
    [warning] = [w for w in warnings_of(book.html) if FALSE in w]
    assert f"lecture.md:{line}: WARNING: claim `{FALSE}` fails on CPU (" in warning
    # both builds' figures: this CPU's and the GPU runner's, each "A vs B, N times faster"
    assert re.search(r"fails on CPU \([^)]+\): [\d.]+ m?s vs [\d.]+ m?s, [\d.]+ times faster; "
                     r"GPU \(Tesla T4\): [\d.]+ m?s vs [\d.]+ m?s, [\d.]+ times faster",
                     warning), warning
    for expression in TRUE:
        assert not [w for w in warnings_of(book.html) if f"`{expression}`" in w]
    assert claims_of(book.report)[FALSE].verdict == "fails"
    assert {claims_of(book.report)[e].verdict for e in TRUE} == {"holds"}


def test_the_gpu_only_claim_is_checked_against_the_gpu_build_only(book):
    claim = claims_of(book.report)["mesh < numpy on gpu"]
    here, gpu = claim.checks
    assert (here.build, here.device_kind, here.verdict, here.reason) == (
        None, "CPU", "not_checked", "other_device")
    assert (gpu.build, gpu.device_kind, gpu.device_name, gpu.verdict) == (
        SOURCE, "GPU", "Tesla T4", "holds")
    assert gpu.left.source == gpu.right.source == "timer" and gpu.ratio < 1


def test_a_claim_on_a_page_without_code_is_checked(book):
    claim = claims_of(book.report)["lecture:numpy << lecture:loop"]
    lecture = book.report.by_docname()["lecture"].source
    assert (claim.page, claim.verdict) == ("summary", "holds")
    assert claim.source == lecture.replace("lecture.md", "summary.md")
    assert claim.sentence == "The lecture's NumPy version is much faster than its loop."
    assert claim.line == 4  # its own line, not its paragraph's first


def test_timers_of_each_kind_are_read_from_real_output(book):
    record = book.report.by_docname()["lecture"]
    timings = {timing.name: timing for timing in record.timings}
    assert {name: (t.status, t.source, t.timer) for name, t in timings.items()} == {
        "loop": ("ok", "timer", "qe.Timer"), "numpy": ("ok", "timer", "qe.Timer"),
        "numpy-time": ("ok", "timer", "%time"), "mesh": ("ok", "timer", "qe.Timer"),
        "vmap-v1": ("ok", "timer", "%timeit"), "vmap-v2": ("ok", "timer", "%timeit")}
    assert all(t.seconds > 0 and t.printed == [t.seconds] for t in timings.values())
    assert timings["loop"].line == line_of(LECTURE, ":tags: [time:loop]") - 1


# -- Done when: every view lists the same claims and verdicts ------------------------------
def run_cli(*args: str, environ: dict[str, str] | None = None,
            monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_every_view_lists_the_same_claims_and_verdicts(book, monkeypatch):
    expected = verdicts(book.report)
    assert len(expected) == 9
    # the status page: a row per claim, failing first, its id the marks' link target
    page = bs4.BeautifulSoup(book.html.read("status.html"), "html.parser")
    rows = page.select(".gpu-claims-list > .gpu-claim")
    shown = {(row.select_one(".gpu-claim-where a").get_text(), row.select_one(
        ".gpu-claim-expression").get_text()): row["class"][1].removeprefix("gpu-claim-")
        for row in rows}
    assert shown == expected
    assert rows[0].select_one(".gpu-claim-expression").get_text() == FALSE
    by_id = {claim_anchor(claim) for claim in book.report.claims}
    assert {row["id"] for row in rows} == by_id
    # report --json, on the file the build wrote
    code, out, _ = run_cli("report", str(book.status_file), "--json")
    assert code == 0
    data = json.loads(out)
    assert {(row["page"], row["expression"]): row["verdict"] for row in data["claims"]} == \
        expected
    # JUnit: a case per claim, a failure where it fails, skipped where no build checked it
    suite = ElementTree.fromstring(book.html.read("execution-status.junit.xml"))
    cases = {(case.get("classname"), case.get("name").removeprefix("timing claim ")): case
             for case in suite.iter("testcase") if case.get("name").startswith("timing claim")}
    assert set(cases) == set(expected)
    for key, verdict in expected.items():
        failed = cases[key].find("failure") is not None
        skipped = cases[key].find("skipped") is not None
        assert (failed, skipped) == (verdict == "fails", verdict == "not_checked"), key
    assert cases[("lecture", FALSE)].get("line") == str(line_of(LECTURE, f"`{FALSE}`"))
    # GitHub annotations (report --github): each claim that fails or was not checked
    # because of the text, at its file and line; none for the claims that hold
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, _out, err = run_cli("report", str(book.status_file))
    annotated = [line for line in err.splitlines() if "title=Timing claim" in line]
    assert {re.search(r"::claim `([^`]+)`", line).group(1) for line in annotated} == {
        expression for (page, expression), verdict in expected.items()
        if verdict == "fails" or page == "problems"}
    failing = next(line for line in annotated if f"`{FALSE}`" in line)
    source = book.report.by_docname()["lecture"].source
    assert failing.startswith(f"::warning file={source},line={line_of(LECTURE, FALSE)},")
    # the build's own annotations list the same (the file's claims, analysed once)
    report = read_status(book.status_file)
    assert annotations(report, analyse(report, Thresholds())) == [
        line for line in err.splitlines() if line.startswith("::")]


def test_report_gives_the_verdicts_of_the_build(book):
    """``report`` on the status file: the same verdicts (the claims are in the file)."""
    report = read_status(book.status_file)
    assert [c.verdict for c in analyse(report, Thresholds()).claims] == \
        [c.verdict for c in book.report.claims]
    code, out, _ = run_cli("report", str(book.status_file), "--no-color")
    assert code == 0
    assert "9 timing claims: 1 fails, 4 hold, 4 not checked" in out
    source = book.report.by_docname()["lecture"].source
    assert f"✗ {source}:{line_of(LECTURE, FALSE)}: `{FALSE}`" in out
    code, out, _ = run_cli("report", str(book.status_file), "--markdown")
    assert "#### 9 timing claims: 1 fails, 4 hold, 4 not checked" in out
    assert "Timing statements to review: 2 on 1 page" in out


def test_compare_lists_the_claims_whose_verdict_differs(book):
    """Is this different on the GPU? A: the GPU runner's file, B: this CPU build."""
    code, out, _ = run_cli("compare", str(GPU_FILE), str(book.status_file), "--json")
    assert code == 0
    rows = {row["expression"]: row for row in json.loads(out)["claims"]}
    gpu_only = rows["mesh < numpy on gpu"]
    assert (gpu_only["a_verdict"], gpu_only["b_verdict"]) == ("holds", "not_checked")
    assert gpu_only["a"].startswith("holds on GPU (Tesla T4): ")
    assert gpu_only["b"] == "not checked on CPU (AMD EPYC): the claim is about the GPU" or \
        gpu_only["b"].endswith(": the claim is about the GPU")
    assert all(row["a_verdict"] != row["b_verdict"] for row in rows.values())
    code, out, _ = run_cli("compare", str(GPU_FILE), str(book.status_file), "--no-color")
    assert "Timing claims that differ" in out and "`mesh < numpy on gpu`" in out


# -- the roles ------------------------------------------------------------------------------
def test_timing_and_ratio_roles_state_times_with_their_device_and_a_ratio(book):
    page = bs4.BeautifulSoup(book.html.read("lecture.html"), "html.parser")
    text = re.sub(r"\s+", " ", page.get_text())
    assert re.search(r"Version 2 runs in [\d.]+ ms on a CPU \([^)]+\), [\d.]+ ms on a GPU "
                     r"\(Tesla T4\)\.", text), text
    assert re.search(r"Against the loop, the vectorized code is [\d.]+ times faster on a CPU "
                     r"\([^)]+\), [\d.]+ times faster on a GPU \(Tesla T4\)\.", text)
    timing = page.select(".gpu-timing abbr")
    assert "(%timeit)" in timing[1]["title"] and "claims-gpu-t4-status.json" in \
        timing[1]["title"]
    # a claim is a mark after its sentence, linking to its row on the status page
    marks = page.select("a.gpu-claim-mark")
    assert [mark.get_text() for mark in marks] == ["✓", "✗", "✓", "✓"]
    failing = marks[1]
    assert failing["aria-label"] == "timing claim: fails"
    claim = claims_of(book.report)[FALSE]
    assert failing["href"] == f"status.html#{claim_anchor(claim)}"
    assert "ratio" in failing["title"] and "Tesla T4" in failing["title"]


def test_the_roles_are_plain_text_in_every_builder(book):
    text = re.sub(r"\s+", " ", book.text.read("lecture.txt"))
    assert re.search(r"Version 2 runs in [\d.]+ ms on a CPU \([^)]+\), [\d.]+ ms on a GPU",
                     text)
    assert "(timing claim: fails)" in text and "✗" not in text and "✓" not in text
    latex = re.sub(r"\s+", " ", next(book.latex.outdir.glob("*.tex")).read_text(
        encoding="utf-8"))
    assert "(timing claim: holds)" in latex and "✓" not in latex


# -- the review list -----------------------------------------------------------------------
def test_an_unmarked_significantly_faster_sentence_is_listed_with_the_values(book):
    [statement] = [s for s in book.report.timing_statements if "significantly" in s.sentence]
    assert statement.sentence == ("When run on a GPU, the vectorized versions are usually "
                                  "significantly faster.")
    assert statement.line == line_of(LECTURE, "significantly faster")
    named = {evidence.name: evidence for evidence in statement.evidence}
    assert {"vmap-v1", "vmap-v2"} <= set(named)
    for evidence in named.values():  # this build's value, then the GPU runner's
        assert [(v.build, v.device_kind) for v in evidence.values] == [
            (None, "CPU"), (SOURCE, "GPU")]
    page = bs4.BeautifulSoup(book.html.read("status.html"), "html.parser")
    review = page.select_one("details.gpu-review")
    assert review.summary.get_text() == "Timing statements to review: 2 on 1 page"
    item = next(li for li in review.select(".gpu-review-statement")
                if "significantly" in li.get_text())
    assert re.search(r"vmap-v2 \(line \d+\): [\d.]+ ms on a CPU \([^)]+\), [\d.]+ ms on a GPU",
                     item.get_text())


# -- bad input: not checked, with the reason and one warning at its line ------------------
def test_bad_input_is_not_checked_with_one_warning_at_its_line(book):
    reasons = {claim.expression: (claim.verdict, claim.checks[0].reason)
               for claim in book.report.claims if claim.page == "problems"}
    assert reasons == {
        "twice < lecture:loop": ("not_checked", "timer_values"),
        "broken < lecture:loop": ("not_checked", "cell_failed"),
        "lecture:lop > lecture:numpy": ("not_checked", "unknown_name"),
        "lecture:loop <= lecture:numpy": ("not_checked", "parse"),
    }
    warned = [w for w in warnings_of(book.html) if "problems.md" in w]
    expected = {
        "time:a.b": "the tag 'time:a.b' names no timing",
        "`twice < lecture:loop`": "printed 2 timer values",
        "`broken < lecture:loop`": "the cell of 'broken' failed",
        "`lecture:lop > lecture:numpy`": "no timing is named 'lecture:lop' (did you mean "
                                         "'loop'?)",
        "`lecture:loop <= lecture:numpy`": "'<=' is not a comparison of timings",
        "{timing}`nothing-here`": "no timing is named 'nothing-here'",
    }
    assert len(warned) == len(expected)
    for marker, words in expected.items():
        [warning] = [w for w in warned if marker.strip("`") in w]
        # a tag's warning is at its cell's fence, the line above the tags
        line = (line_of(PROBLEMS, f":tags: [{marker}]") - 1 if marker.startswith("time:")
                else line_of(PROBLEMS, marker))
        assert f"problems.md:{line}: WARNING" in warning and words in warning, warning


# -- a cache-hit rebuild, -W and suppress_warnings ------------------------------------------
def test_a_cache_hit_rebuild_keeps_the_claims_and_reads_no_text_again(book):
    """-E: every page read again, every notebook a jupyter-cache hit; the texts' readings
    are loaded by their digest; the claims' warnings silenced, so -W passes."""
    assert book.rebuilt.raised is None
    assert not warnings_of(book.rebuilt)
    again = read_status(book.rebuilt.outdir / "execution-status.json")
    assert verdicts(again) == verdicts(book.report)
    assert [s.sentence for s in again.timing_statements] == \
        [s.sentence for s in book.report.timing_statements]
    assert book.texts_read_again == 0


def test_minus_w_fails_on_a_failing_claim(book, tmp_path):
    """The same rebuild (a copy of the book, its cache and doctrees) with the claims'
    warnings shown: -W fails (Sphinx 7.4 at the first warning, 8.1+ at the end)."""
    copy = tmp_path / "book"
    shutil.copytree(book.srcdir.parent, copy)
    failed = sphinx_build(copy / "src", copy / "_build", "html", freshenv=True,
                          warningiserror=True, raising=False)
    assert failed.raised is not None or failed.app.statuscode == 1
    # Sphinx 7.4 raises the first warning (its text is the exception's), 8.1+ logs them
    assert "[gpu_admonition.claim]" in failed.warnings + str(failed.raised or "")


# -- the same book on mystmd ----------------------------------------------------------------
class MystBook(NamedTuple):
    book: Path
    log: str
    report: StatusReport
    #: the site content's mdast of each page, by its slug
    pages: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def mystmd_book(tmp_path_factory: pytest.TempPathFactory) -> MystBook:
    requires_mystmd()
    book = tmp_path_factory.mktemp("claims-mystmd") / "book"
    shutil.copytree(ROOT, book)
    shutil.copytree(ROOTS / "mystmd" / "template", book / "template")
    (book / "_static").mkdir()
    shutil.copyfile(GPU_FILE, book / SOURCE)
    completed = myst_build(book)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    pages = {path.stem: json.loads(path.read_text(encoding="utf-8"))["mdast"]
             for path in (book / "_build" / "site" / "content").glob("*.json")}
    return MystBook(book, completed.stdout + completed.stderr,
                    read_status(book / "_build" / "execution-status.json"), pages)


def checks_of(report: StatusReport) -> dict[tuple[str, str], list[tuple[Any, ...]]]:
    return {(claim.page, claim.expression): [(check.build, check.device_kind, check.verdict,
                                              check.reason) for check in claim.checks]
            for claim in report.claims}


@pytest.mark.mystmd
def test_the_same_book_on_mystmd_gives_the_same_verdicts(book, mystmd_book):
    assert verdicts(mystmd_book.report) == verdicts(book.report)
    assert checks_of(mystmd_book.report) == checks_of(book.report)
    assert [(c.page, c.line, c.sentence) for c in mystmd_book.report.claims] == \
        [(c.page, c.line, c.sentence) for c in book.report.claims]
    assert [(s.page, s.line, s.sentence) for s in mystmd_book.report.timing_statements] == \
        [(s.page, s.line, s.sentence) for s in book.report.timing_statements]


@pytest.mark.mystmd
def test_mystmd_warns_at_the_claims_lines(mystmd_book):
    line = line_of(LECTURE, f"`{FALSE}`")
    assert re.search(rf"lecture\.md:{line} .*\[claim\]: claim `{re.escape(FALSE)}` fails on "
                     r"CPU \([^)]+\): [\d.]+ m?s vs", mystmd_book.log), mystmd_book.log
    for expression in TRUE:
        assert f"`{expression}`" not in mystmd_book.log
    for marker in ("`twice < lecture:loop`", "{timing}`nothing-here`"):
        assert f"problems.md:{line_of(PROBLEMS, marker)} " in mystmd_book.log
    kept = [item for item in mystmd_book.report.build["warnings"] if item["subtype"] == "claim"]
    assert len(kept) == 7  # the false claim, and one a problem (as on Sphinx)


@pytest.mark.mystmd
def test_mystmd_pages_show_the_marks_the_values_and_the_claims(mystmd_book):
    nodes = [node for page in mystmd_book.pages.values() for node in walk(page)]
    marks = [node["class"].split()[1] for node in nodes
             if "gpu-claim-mark" in str(node.get("class", ""))]
    assert sorted(marks) == sorted(f"gpu-claim-{claim.verdict}"
                                   for claim in mystmd_book.report.claims)
    timings = [text_of(node) for node in nodes if node.get("class") == "gpu-timing"]
    assert any(re.fullmatch(r"[\d.]+ ms on a CPU \([^)]+\), [\d.]+ ms on a GPU \(Tesla T4\)",
                            text) for text in timings), timings
    status = next(page for page in mystmd_book.pages.values()
                  if "Timing claims" in [text_of(n) for n in walk(page)
                                         if n.get("type") == "heading"])
    items = [text_of(node) for node in walk(status) if node.get("type") == "listItem"]
    assert any(item.startswith(f"✗ fails {FALSE}") for item in items), items
    assert any("significantly faster" in item for item in items)
