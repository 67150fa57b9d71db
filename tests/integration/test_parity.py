"""One lecture, two engines, one truth (issue 30): ``tests/roots/parity``, one folder
with ``_config.yml`` / ``_toc.yml`` (Jupyter Book 1, built by Sphinx in-process as
tests/quantecon_book.py builds QuantEcon's shape) and ``myst.yml`` (mystmd 1.8.3),
built once by each engine with real kernels; both records give the same cells,
names, marks, flags and verdicts, and ``compare`` of the two status files pairs
every cell. Every later feature adds its case to that book.

The numbers in a reason are each engine's own measurement; everything else of it is
the same words.
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import make_gpu_fixture
import pytest
import quantecon_book
from conftest import ROOTS
from mystmd_builds import myst_build, requires_mystmd, text_of, walk

from sphinx_gpu_admonition.cli import main as cli_main
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.build_warnings import build_warnings
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.model.findings import findings
from sphinx_gpu_admonition.model.judging import judged_by
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.finding_text import ENGLISH

ROOT = ROOTS / "parity"
EXECUTED = ["failing", "lecture", "timing"]
#: the GPU runner's build of the book (tests/make_gpu_fixture.py), and the baseline the
#: tests derive from it (both books' settings name them)
RUNNER = Path("_static") / "gpu-runner-status.json"
BASELINE = Path("_static") / "baseline-status.json"


@pytest.fixture(scope="module")
def parity_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The book, with its baseline: the GPU runner's build of ``timing`` (the lecture's is
    left out: its cells' times move with the machine's load), its sleep ten times
    faster there, as a real GPU build of it might have been."""
    book = tmp_path_factory.mktemp("parity-book") / "lectures"
    shutil.copytree(ROOT, book)
    data = json.loads((book / RUNNER).read_text(encoding="utf-8"))
    data["notebooks"] = [nb for nb in data["notebooks"] if nb["docname"] == "timing"]
    [timing] = data["notebooks"]
    timing["cells"][1]["seconds"] /= 10
    timing["runtime_seconds"] /= 10
    data["build"]["note"] += "; tests/integration/test_parity.py made the sleep 10 times faster"
    (book / BASELINE).write_text(json.dumps(data), encoding="utf-8")
    return book


@dataclasses.dataclass
class EngineBuild:
    """One engine's build of the book: its status file and its pages' text."""

    status: Path
    #: a page's parts by CSS class: page -> class -> [text, ...]
    parts: dict[str, dict[str, list[str]]]
    log: str

    def texts(self, page: str, css: str) -> list[str]:
        return self.parts.get(page, {}).get(css, [])


#: the parts both engines show, by their CSS class (the same on both)
PARTS = ("gpu-runtime", "gpu-cell-badge", "gpu-status-summary", "gpu-status-headline",
         "gpu-status-slowest")
_TAG = re.compile(r"<[^>]+>")


def html_parts(page: Path) -> dict[str, list[str]]:
    """The text of each element of :data:`PARTS` of a Sphinx HTML page (a badge's words
    without its screen readers' copy of the reasons)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r'<span class="gpu-visually-hidden">.*?</span>', "", text, flags=re.S)
    found: dict[str, list[str]] = {}
    for css in PARTS:
        for match in re.finditer(rf'<(p|span|div)\b[^>]*class="(?:[^"]* )?{css}(?: [^"]*)?"'
                                 rf"[^>]*>(.*?)</\1>", text, flags=re.S):
            found.setdefault(css, []).append(
                html.unescape(_TAG.sub("", match.group(2))).strip())
    return found


def mdast_parts(tree: dict[str, Any]) -> dict[str, list[str]]:
    """The same of a mystmd page's mdast (a runtime role's placeholder is a span)."""
    found: dict[str, list[str]] = {}
    for node in walk(tree):
        classes = str(node.get("class") or "").split()
        for css in PARTS:
            if css in classes and not (css == "gpu-runtime" and node.get("type") != "span"):
                found.setdefault(css, []).append(text_of(node).strip())
    return found


@pytest.fixture(scope="module")
def sphinx_build(parity_book: Path, tmp_path_factory: pytest.TempPathFactory) -> EngineBuild:
    """The book as Jupyter Book 1 builds it (its _config.yml's Sphinx settings)."""
    pytest.importorskip("sphinx_exercise", reason="the gated solution needs sphinx-exercise "
                                                  "(pyproject's test extra)")
    dest = tmp_path_factory.mktemp("parity-sphinx")
    build = quantecon_book.build(parity_book, dest, dest / "cache")
    status = dest / "sphinx-execution-status.json"
    shutil.copyfile(build.outdir / "execution-status.json", status)
    return EngineBuild(status, {path.stem: html_parts(path)
                                for path in build.outdir.glob("*.html")}, build.warnings)


@pytest.fixture(scope="module")
def mystmd_build(parity_book: Path, tmp_path_factory: pytest.TempPathFactory) -> EngineBuild:
    """The same folder as mystmd builds it (its myst.yml); the book is beside it."""
    requires_mystmd()
    book = tmp_path_factory.mktemp("parity-mystmd") / "lectures"
    shutil.copytree(parity_book, book)
    shutil.copytree(ROOTS / "mystmd" / "template", book / "template")
    completed = myst_build(book)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    status = book.parent / "mystmd-execution-status.json"  # (the book: status.parent)
    shutil.copyfile(book / "_build" / "execution-status.json", status)
    content = book / "_build" / "site" / "content"
    return EngineBuild(status, {path.stem.replace("-", "_"): mdast_parts(
        json.loads(path.read_text(encoding="utf-8"))["mdast"]) for path in content.glob("*.json")},
        completed.stdout + completed.stderr)


@pytest.fixture(scope="module")
def sphinx_status(sphinx_build: EngineBuild) -> Path:
    return sphinx_build.status


@pytest.fixture(scope="module")
def mystmd_status(mystmd_build: EngineBuild) -> Path:
    return mystmd_build.status


def masked(text: str) -> str:
    """A reason without its numbers and their time units (each engine measured its own
    times: a step of 0.9 ms on one is 1.1 ms on the other, or 980 µs)."""
    return re.sub(r"N (ns|µs|ms|s)\b", "N <time>", re.sub(r"\d[\d,.]*", "N", text))


def cells_of(record: NotebookRecord) -> list[dict[str, Any]]:
    """What each engine must agree on about a cell: everything but its times."""
    return [{"name": name.label, "position": cell.position, "first_line": cell.first_line,
             "line": cell.line, "error": cell.error, "error_expected": cell.error_expected,
             "slow_ok": cell.slow_ok, "imports_only": cell.imports_only, "shell": cell.shell,
             "device_twins": cell.device_twins,
             "runs": [dataclasses.asdict(run) for run in cell.runs],
             "compiled_loops": sorted(loop.function for loop in cell.compiled_loops),
             # the parse's facts of issue 32, from the same enrich on both engines
             "dispatch_loops": [dataclasses.asdict(loop) for loop in cell.dispatch_loops],
             "jit_calls": [dataclasses.asdict(jit) for jit in cell.jit_calls],
             "work": dataclasses.asdict(cell.work) if cell.work else None,
             "compiled": sorted(cell.compilations)}
            for cell, name in zip(record.cells, record.cell_names(), strict=True)]


def with_times_of(report: StatusReport, timed: StatusReport) -> StatusReport:
    """``report`` with each cell's times (and each notebook's) taken from ``timed``'s cell
    of the same position: each engine measured its own run, and a cell near a limit (the
    import cell, on a loaded machine) may fall on either side of it; with the same times,
    the same rules must give the same findings."""
    copy = StatusReport.from_dict(report.to_dict())
    times = timed.by_docname()
    for record in copy.notebooks:
        other = times.get(record.docname)
        if other is None:
            continue
        record.runtime_seconds = other.runtime_seconds
        by_position = {cell.position: cell for cell in other.cells}
        for cell in record.cells:
            source = by_position.get(cell.position)
            if source is not None:
                cell.seconds, cell.compile_seconds = source.seconds, source.compile_seconds
    return copy


#: the note on an import cell that took long (``imports``): each engine measured its own
#: run, and on a loaded machine the import cell falls on either side of the limit
IMPORT_NOTE = "imports"


def timed_rules(flags: list[dict[str, Any]]) -> list[str]:
    """A flagged cell's rules as a status file's analysis lists them, but the import note
    (:data:`IMPORT_NOTE`), whose cell's time decides it on each engine's own run."""
    return sorted(flag["rule"] for flag in flags if flag["rule"] != IMPORT_NOTE)


def is_import_note(badge: str) -> bool:
    """A badge of an import cell that is only that note (see :data:`IMPORT_NOTE`)."""
    return badge.split(" — ", 1)[-1].startswith("imports (")


def flags_of(report: StatusReport) -> dict[str, list[list[tuple[str, str]]]]:
    """Each notebook's cells' flags (rule, reason without numbers), as each build's
    status file says it judged them."""
    analysis = analyse(report, judged_by(report.build).thresholds)
    return {result.notebook.docname: [[(flag.rule, masked(ENGLISH.reason(flag))) for flag in flags]
                                      for flags in result.cell_flags]
            for result in analysis.notebooks}


@pytest.mark.mystmd
def test_both_engines_give_the_same_cells_names_marks_and_verdicts(sphinx_status,
                                                                     mystmd_status):
    sphinx, mystmd = read_status(sphinx_status), read_status(mystmd_status)
    assert (sphinx.build["engine"], mystmd.build["engine"]) == ("sphinx", "mystmd")
    assert judged_by(sphinx.build).thresholds == judged_by(mystmd.build).thresholds
    assert sorted(sphinx.by_docname()) == sorted(mystmd.by_docname()) == EXECUTED
    for docname in EXECUTED:
        one, other = sphinx.by_docname()[docname], mystmd.by_docname()[docname]
        assert (one.status, one.capture) == (other.status, other.capture), docname
        assert cells_of(one) == cells_of(other), docname
        assert one.user_functions == other.user_functions, docname
        assert one.environment.device_label == other.environment.device_label
    assert flags_of(sphinx) == flags_of(with_times_of(mystmd, sphinx))

    lecture = mystmd.by_docname()["lecture"]
    # every executed cell, the gated solution's two included, in mystmd's order
    assert [c.first_line for c in lecture.cells] == [
        "import numpy as np", "!pip --version", "import time", "def step(x, n):",
        'g_cpu = jax.jit(step, static_argnums=1, device=jax.devices("cpu")[0])',
        'int(jnp.searchsorted(jnp.arange(10.0), 3.5, method="scan"))',
        'raise ValueError("shown on purpose")', "total = sum(range(10))", "total * 2",
        "print(np.float64(total))", "@jax.jit", "y, error = jnp.zeros(4), 1.0",
        "def grow(v):", "%%time"]
    marks = [(c.imports_only, c.shell, c.slow_ok, c.error_expected) for c in lecture.cells]
    assert marks[:3] == [(True, False, False, False), (False, True, False, False),
                         (False, False, True, False)]
    assert marks[6] == (False, False, False, True) and lecture.status == "ok"
    assert lecture.cells[4].device_twins == ["step"]
    runs = lecture.cells[3].runs
    # the loop of step, defined in this cell (position 3: "cell 4"), run through g
    assert {(run.primitive, run.function, run.defined_cell) for run in runs} == {
        ("lax.fori_loop", "step", 3), ("lax.fori_loop", "g", 3)}, runs
    # the slow-ok cell is a note, never a warned finding, on both engines
    assert flags_of(mystmd)["lecture"][2] == [("slow_ok", "slow on purpose (tagged slow-ok), "
                                                          "took N <time>")]
    # the failing page: its own exception, whatever its class name's length and escape
    for report in (sphinx, mystmd):
        failing = report.by_docname()["failing"]
        assert failing.status == "error"
        assert failing.error.type == "Parity" * 10 + "Error"
        assert failing.error.message == "Parity" * 10 + "Error: it went bang"
        assert failing.cell_name(failing.error_cell()).label == "cell 2"


#: the rules of issue 32 whose verdict does not hang on a ratio of two times (the
#: compile share does: a cell at 49 % on one engine and 51 % on the other)
LOOP_RULES = ("dispatch_loop", "host_sync", "python_loop", "compiled_again",
              "sequential_loop")


def loop_findings(status: Path, on_gpu: bool = True) -> list[
        tuple[str, list[str], list[str], str, int | None, str]]:
    """The lecture's findings on a GPU (the execution moved to a T4's device fields,
    every cell judged; ``on_gpu=False``: as it ran, on the CPU): each cell's loop and
    compiled-again rules, their reasons and action without numbers, its code and the
    line it points at."""
    data = json.loads(status.read_text(encoding="utf-8"))
    moved = StatusReport.from_dict(make_gpu_fixture.to_gpu(data) if on_gpu else data)
    every_cell = Thresholds(slow_cell_seconds=0.0, slow_cell_min_seconds=0.0)
    rows = []
    for row in findings(analyse(moved, every_cell)):
        flags = [flag for flag in row.flags if flag.rule in LOOP_RULES]
        if row.notebook.docname == "lecture" and flags:
            rows.append((row.name.label, [str(flag.rule) for flag in flags],
                         [masked(ENGLISH.reason(flag)) for flag in flags], row.code,
                         row.source_line, masked(ENGLISH.rule_action(flags[0]))))
    return sorted(rows)


@pytest.mark.mystmd
def test_the_loop_and_new_shape_findings_are_the_same_on_both_engines(sphinx_status,
                                                                       mystmd_status):
    sphinx, mystmd = loop_findings(sphinx_status), loop_findings(mystmd_status)
    assert sphinx == mystmd
    by_cell = {name: (rules, reasons, code, line) for name, rules, reasons, code, line, _
               in sphinx}
    page = (ROOT / "lecture.md").read_text(encoding="utf-8").splitlines()
    rules, reasons, code, line = by_cell["cell 11"]
    assert "dispatch_loop" in rules and code == "for _ in range(200):"
    assert reasons[rules.index("dispatch_loop")].startswith(
        "its `for` loop (line N) calls `half` N times")
    rules, reasons, code, line = by_cell["cell 12"]  # after its :tags: option
    assert rules == ["host_sync"] and code == "while error > 1e-3:"
    assert "`error = float(jnp.max(jnp.abs(y - N)))` (line N)" in reasons[0]
    rules, reasons, code, line = by_cell["cell 14"]
    assert rules == ["compiled_again"] and code.startswith("grow_jit(jnp.ones(100))")
    assert reasons[0].startswith("compiled again: jit(grow) for a new input shape: fN[N]")
    # each points at its statement in the page, on both engines
    for _, _, _, code, line, _ in sphinx:
        assert page[line - 1].strip() == code
    # on the CPU the two loops are the note python_loop, the same on both engines
    on_cpu = loop_findings(sphinx_status, on_gpu=False)
    assert on_cpu == loop_findings(mystmd_status, on_gpu=False)
    notes = {name: rules for name, rules, *_ in on_cpu}
    assert "python_loop" in notes["cell 11"] and "python_loop" in notes["cell 12"]
    assert not {"dispatch_loop", "host_sync"} & {rule for rules in notes.values()
                                                  for rule in rules}


@pytest.mark.mystmd
def test_both_engines_give_a_named_timing_and_a_claim_the_same_verdict(sphinx_status,
                                                                        mystmd_status):
    """Issue 31: the same ``time:NAME`` tags give the same named timings (by name, cell
    and source: no timer printed, so the cells' run times), the ``%%time`` cell an
    unnamed one from its timer, and the claim the same sentence, line and verdict,
    checked against each engine's own build and the GPU runner's file."""
    sphinx, mystmd = read_status(sphinx_status), read_status(mystmd_status)
    lines = (ROOT / "lecture.md").read_text(encoding="utf-8").splitlines()

    def line_of(text: str) -> int:
        return next(number for number, line in enumerate(lines, 1) if text in line)

    for report in (sphinx, mystmd):
        timings = report.by_docname()["lecture"].timings
        assert [(t.name, t.status, t.source, t.line) for t in timings] == [
            ("sleep", "ok", "cell", line_of("[slow-ok, time:sleep]") - 1),
            ("print", "ok", "cell", line_of("[time:print]") - 1),
            (None, "ok", "timer", line_of("%%time") - 1)], report.build["engine"]
        assert all(t.seconds > 0 for t in timings)

    def claims_of(report: StatusReport) -> list[tuple[Any, ...]]:
        return [(c.page, c.line, c.expression, c.sentence, c.verdict,
                 [(check.build, check.verdict) for check in c.checks])
                for c in report.claims]

    assert claims_of(sphinx) == claims_of(mystmd) == [(
        "lecture", line_of("{timing-claim}"), "print << sleep",
        "Printing the sum is much faster than the pause.", "holds",
        # this build, then the GPU runner's of runtime_sources, named as configured
        [(None, "holds"), ("_static/gpu-runner-status.json", "holds")])]


@pytest.mark.mystmd
def test_compare_of_the_two_builds_pairs_every_cell(sphinx_status, mystmd_status):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["compare", str(sphinx_status), str(mystmd_status), "--json",
                         "--top", "0"]) == 0
    data = json.loads(out.getvalue())
    assert [row["state"] for row in data["notebooks"]] == ["compared"] * len(EXECUTED)
    # the cells whose time changed are listed (none new, none gone), the others counted
    states = {(row["docname"], row["cell"]): row["state"] for row in data["cells"]}
    assert set(states.values()) <= {"compared"}, states
    cells = sum(len(nb.cells) for nb in read_status(sphinx_status).notebooks)
    assert len(states) + data["cells_unchanged"] == cells == 18


@pytest.mark.mystmd
def test_mystmd_keys_the_record_as_it_keys_its_cache_with_nested_cells(mystmd_status):
    """The lecture's gated solution nests two code cells and it raises on purpose: the
    sidecar's key is the name of mystmd's own cache file of the page, and no kernel's
    file is left behind."""
    build = mystmd_status.parent / "lectures" / "_build"
    cached = {path.stem for path in (build / "execute").glob("*.json")}
    sidecars = {path.stem for path in (build / "sphinx-gpu-admonition" / "sidecars")
                .glob("*.json")}
    # the lecture's and timing's (failing is not cached)
    assert len(sidecars) == 2 and sidecars <= cached
    assert not list((build / "sphinx-gpu-admonition" / "kernels").glob("*"))


#: a reader's time ("a few seconds", "about 15 seconds"): each engine measured its own
_READER_TIME = re.compile(r"a few seconds|under a minute|about \d+ (?:second|minute|hour)s?")


def reader_masked(text: str) -> str:
    return masked(_READER_TIME.sub("T", text))


@pytest.mark.mystmd
def test_both_engines_judge_against_the_baseline_and_the_budget_alike(sphinx_build,
                                                                      mystmd_build):
    """``gpu_status_baseline`` / ``status_baseline`` (a GPU runner's build, where timing's
    sleep took a tenth) and timing's ``options: gpu_budget_seconds``: the same regression
    flags and verdicts in each build's own analysis, the same warnings (the budget's at
    its front matter line, each regression's), the baseline each build kept, and the
    same headline and summary line on each status page."""
    sphinx, mystmd = read_status(sphinx_build.status), read_status(mystmd_build.status)
    used = [judged_by(report.build).baseline for report in (sphinx, mystmd)]
    assert used[0] is not None and used[1] is not None
    assert used[0].digest == used[1].digest and used[0].path.endswith(str(BASELINE))

    def verdicts(report: StatusReport) -> dict[str, Any]:
        return {docname: ([(cell["cell"], rules) for cell in data["flagged_cells"]
                           if (rules := timed_rules(cell["flags"]))],
                          (data.get("baseline") or {}).get("state"),
                          (data.get("baseline") or {}).get("regression"),
                          "budget" in data)
                for docname, data in report.analysis.items()}

    assert verdicts(sphinx) == verdicts(mystmd)
    assert verdicts(mystmd)["timing"] == (
        [("cell 2", ["regression", "share", "slow"])], "compared", True, True)

    def warned(report: StatusReport) -> list[tuple[str, str, int, str]]:
        return sorted((item.subtype, Path(item.file or "").name, item.line or 0,
                       masked(item.message)) for item in build_warnings(report)
                      if item.subtype in ("budget", "regression"))

    assert warned(sphinx) == warned(mystmd)
    lines = (ROOT / "timing.md").read_text(encoding="utf-8").splitlines()
    assert [item[:3] for item in warned(mystmd)] == [
        ("budget", "timing.md", next(n for n, line in enumerate(lines, 1)
                                     if "gpu_budget_seconds:" in line)),
        ("regression", "timing.md", 0),
        ("regression", "timing.md", lines.index("time.sleep(2.1)"))]
    # each page's time as each engine has it: what "Slowest:" chose from
    seconds = {engine: {nb.docname: (nb.runtime_seconds, round(nb.cells_seconds, 2))
                        for nb in report.notebooks}
               for engine, report in (("sphinx", sphinx), ("mystmd", mystmd))}
    for css in ("gpu-status-summary", "gpu-status-headline", "gpu-status-slowest"):
        assert [masked(text) for text in sphinx_build.texts("status", css)] == [
            masked(text) for text in mystmd_build.texts("status", css)], (css, seconds)
    [headline] = mystmd_build.texts("status", "gpu-status-headline")
    assert "the device changed: GPU: Tesla T4 → CPU:" in headline, headline
    # mystmd's log shows them at the page, as Sphinx's does
    assert "timing.md" in next(line for line in mystmd_build.log.splitlines()
                               if "[budget]: notebook over its time budget" in line)


@pytest.mark.mystmd
def test_both_engines_state_the_other_builds_run_times(sphinx_build, mystmd_build):
    """``gpu_runtime_sources`` / ``runtime_sources``: ``{runtime-all}`` and the notice's
    ``:runtime:`` list this build and the GPU runner's, in the same words (each engine's
    own times)."""
    for page in ("lecture", "timing"):
        sphinx = sphinx_build.texts(page, "gpu-runtime")
        assert [reader_masked(text) for text in sphinx] == [
            reader_masked(text) for text in mystmd_build.texts(page, "gpu-runtime")]
        assert sphinx and all("on a GPU (Tesla T4)" in text for text in sphinx), sphinx
    [notice] = mystmd_build.texts("lecture", "gpu-runtime")
    assert re.fullmatch(r"It runs in .+ on a CPU \(.+\) and .+ on a GPU \(Tesla T4\)\.",
                        notice), notice


@pytest.mark.mystmd
def test_both_engines_badge_the_same_cells_and_title_the_notebooks(sphinx_build,
                                                                    mystmd_build):
    """``gpu_cell_badges`` / ``cell_badges``: the same cells badged, in the same words; the
    records' titles are the pages' on both engines."""
    for page in EXECUTED:
        assert [masked(text) for text in sphinx_build.texts(page, "gpu-cell-badge")
                if not is_import_note(text)] == [
            masked(text) for text in mystmd_build.texts(page, "gpu-cell-badge")
            if not is_import_note(text)], page
    [badge] = mystmd_build.texts("timing", "gpu-cell-badge")
    assert badge.endswith("slow, large share, regression (on the status page)"), badge
    sphinx, mystmd = read_status(sphinx_build.status), read_status(mystmd_build.status)
    assert {nb.docname: nb.title for nb in sphinx.notebooks} == {
        nb.docname: nb.title for nb in mystmd.notebooks} == {
        "failing": "A failing lecture", "lecture": "A lecture",
        "timing": "Run times of other builds"}


@pytest.mark.mystmd
def test_the_status_directives_options_reach_both_engines(sphinx_build, mystmd_build):
    """``{execution-status}``'s ``:columns:`` (status.md adds the cells column) reaches
    mystmd's table as Sphinx's (the Sphinx directive's own tests check its table)."""
    content = mystmd_build.status.parent / "lectures" / "_build" / "site" / "content"
    tree = json.loads((content / "status.json").read_text(encoding="utf-8"))["mdast"]
    [table] = [node for node in walk(tree) if node.get("type") == "table"
               and "gpu-status-table" in str(node.get("class")).split()]
    header = [text_of(cell) for cell in table["children"][0]["children"]]
    assert header == ["Notebook", "Status", "Time", "Backend and device", "Flagged cells",
                      "Code cells"]
    # neither engine warned about the option
    assert "execution-status:" not in sphinx_build.log + mystmd_build.log
