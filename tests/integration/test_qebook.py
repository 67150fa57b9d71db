"""The QuantEcon-style test book of issue 26's "done when", end to end.

``tests/roots/qebook`` has the shape of ``QuantEcon/lecture-python-programming.myst``
(see its README): a one-line ``extra_extensions: [...]`` list, a cell of four imports
that takes most of its notebook's time, a demonstration tagged ``slow-ok``, a lecture
whose ``gpu_budget_seconds`` it exceeds, the GPU notice as an include, and a status page
with ``{nb-exec-table}``.  A copy is migrated by the real command, then built as
QuantEcon's CI does, ``jupyter-book build lectures -n -W --keep-going``, and again with
sphinx-tojupyter's builder (the notebooks students download); the book's
``_config.yml`` sets ``gpu_warn_slow_cells`` (a cell slower than a second fails the
build) and ``show_warning_types`` (Sphinx 8's default, for the warnings' subtypes).

What a maintainer expects on the next deploy, and what is asserted:

* the one warning is the budget's (``gpu_admonition.budget``), and with ``-W`` it fails
  the build: a budget is the book's own limit;
* the import cell gets the import note and the ``slow-ok`` cell is shown as slow on
  purpose, and neither ever warns (so neither fails ``-W``), nor is red in JUnit;
* every view names the same cells with the same rules, slowest first, and the
  notebook over its budget: the JSON analysis, the console summary, JUnit, the
  status page, ``report`` and the GitHub annotations (the budget only: notes are no
  annotations);
* the download notebooks: the status table is a valid Markdown table, and the notice
  says how to get a GPU, not where the build ran.

Runs where jupyter-book and sphinx-tojupyter are installed (scripts/test's jupyter-book
1.0.4 environment); the books are built once for the module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from bs4 import BeautifulSoup
from conftest import _ANSI, ROOTS

pytest.importorskip("jupyter_book")
pytest.importorskip("sphinx_tojupyter")

from integration.test_builders import READER_SENTENCE, markdown_tables  # noqa: E402
from sphinx_gpu_admonition.cli import main as cli_main  # noqa: E402
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse  # noqa: E402
from sphinx_gpu_admonition.model.files import read_status  # noqa: E402
from sphinx_gpu_admonition.render import github  # noqa: E402

pytestmark = pytest.mark.jupyter_book

BUDGET_WARNING = re.compile(
    r"^(?P<file>\S+):(?P<line>\d+): WARNING: notebook over its time budget: took "
    r"[\d.]+ s, budget 0\.50 s .*\[gpu_admonition\.budget\]$")
NOTE_RULES = {"imports", "slow_ok"}
# the book's limits (_config.yml), for `report`, which is given them on its command line
LIMITS = ["--slow-cell-seconds", "1.0", "--min-seconds", "0.5"]


@dataclasses.dataclass
class Run:
    """One ``jupyter-book build``: its exit status, warnings (stderr) and console."""

    returncode: int
    warnings: list[str]
    console: list[str]


@dataclasses.dataclass
class QEBook:
    book: Path
    migrate_output: str
    html: Run
    jupyter: Run

    @property
    def html_dir(self) -> Path:
        return self.book / "_build" / "html"

    def status(self) -> dict:
        return json.loads((self.html_dir / "execution-status.json").read_text(encoding="utf-8"))

    def notebook(self, name: str) -> dict:
        path = self.book / "_build" / "jupyter" / f"{name}.ipynb"
        return json.loads(path.read_text(encoding="utf-8"))


def jb_build(book: Path, *builder: str) -> Run:
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(book),
               "-n", "-W", "--keep-going", *builder]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    stderr, stdout = _ANSI.sub("", done.stderr), _ANSI.sub("", done.stdout)
    # stderr also holds the kernels' own log lines ("[IPKernelApp] WARNING | ...")
    warnings = [line for line in stderr.splitlines() if ": WARNING: " in line
                or line.startswith("WARNING: ")]
    return Run(done.returncode, warnings, stdout.splitlines())


@pytest.fixture(scope="module")
def qebook(tmp_path_factory: pytest.TempPathFactory) -> QEBook:
    copy = tmp_path_factory.mktemp("qebook") / "copy"
    shutil.copytree(ROOTS / "qebook", copy)
    book = copy / "lectures"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["migrate", str(book)]) == 0
    html = jb_build(book)
    # the download notebooks: the same doctrees and jupyter-cache, nothing runs again
    jupyter = jb_build(book, "--builder", "custom", "--custom-builder", "jupyter")
    return QEBook(book, out.getvalue(), html, jupyter)


def _budget_line(book: Path) -> int:
    lines = (book / "numpy.md").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith("gpu_budget_seconds:"))


def _flagged_in_json(status: dict) -> list[tuple[str, str, list[str]]]:
    """(docname, cell, rules) of the JSON's analysis, slowest first."""
    cells = [(cell["seconds"], docname, cell["cell"], [flag["rule"] for flag in cell["flags"]])
             for docname, entry in status["analysis"].items() for cell in entry["flagged_cells"]]
    return [(docname, cell, rules) for _, docname, cell, rules in
            sorted(cells, key=lambda row: (-row[0], row[1]))]


def test_migrate_adds_the_extension_to_the_one_line_list(qebook):
    config = (qebook.book / "_config.yml").read_text(encoding="utf-8")
    assert ("  extra_extensions: [sphinx_multitoc_numbering, sphinx_tojupyter, "
            "sphinx.ext.todo, sphinx_togglebutton, sphinx_gpu_admonition]\n") in config
    original = (ROOTS / "qebook" / "lectures" / "_config.yml").read_text(encoding="utf-8")
    assert len(config.splitlines()) == len(original.splitlines())  # comments kept
    assert "added sphinx_gpu_admonition to sphinx: extra_extensions" in qebook.migrate_output
    assert "by hand" not in qebook.migrate_output
    assert "```{gpu}\n```" in (qebook.book / "jax_intro.md").read_text(encoding="utf-8")
    assert "```{execution-status}\n```" in (qebook.book / "status.md").read_text(
        encoding="utf-8")


def test_the_one_warning_is_the_budget_and_it_fails_the_build(qebook):
    """-n -W --keep-going: the build goes on to the end, with one warning, the budget's,
    at the line of the page's gpu_budget_seconds; the import cell and the slow-ok cell
    never warn although gpu_warn_slow_cells is on."""
    (warning,) = qebook.html.warnings
    match = BUDGET_WARNING.match(warning)
    assert match, warning
    assert Path(match["file"]).name == "numpy.md"
    assert int(match["line"]) == _budget_line(qebook.book)
    assert qebook.html.returncode != 0
    assert "build finished with problems, 1 warning." in qebook.html.console
    assert (qebook.html_dir / "status.html").is_file()  # --keep-going: everything written


def test_the_import_cell_and_the_slow_ok_cell_are_notes(qebook):
    status = qebook.status()
    flagged = {(docname, cell): rules for docname, cell, rules in _flagged_in_json(status)}
    assert flagged["need_for_speed", "cell 1"] == ["imports"]  # the four imports
    assert flagged["numpy", "cell 2"] == ["slow_ok"]  # the pure-Python loop
    # JAX's import may cross the limit on a busy machine: a note too, never a warning
    assert all(set(rules) <= NOTE_RULES for rules in flagged.values()), flagged
    cells = {nb["docname"]: nb["cells"] for nb in status["notebooks"]}
    assert cells["numpy"][1]["slow_ok"] and cells["need_for_speed"][0]["imports_only"]
    budget = status["analysis"]["numpy"]["budget"]
    assert budget["budget_seconds"] == 0.5 and budget["seconds"] > 0.5


def _console_flagged(console: list[str], heading: str = "flagged cells (") -> list[
        tuple[str, str, str]]:
    """(docname, cell, reason) of the console summary's flagged cells (or, with
    ``heading`` ``"notes ("``, its notes), in its order."""
    start = next((n for n, line in enumerate(console) if line.startswith(heading)), None)
    found: list[tuple[str, str, str]] = []
    for line in console[start + 1:] if start is not None else []:
        match = re.match(r"^\s+[\d.]+ (?:ms|s)\s+(\w+) (cell \d+) \(\S+:\d+\): (.*)$", line)
        if match:
            found.append(match.groups())
        elif not line.startswith(" "):
            break
    return found


def test_every_view_names_the_same_cells_with_the_same_rules(qebook, capsys):
    status = qebook.status()
    flagged = _flagged_in_json(status)
    names = [(docname, cell) for docname, cell, _ in flagged]
    reasons = {(docname, entry["cell"]): [flag["reason"] for flag in entry["flags"]]
               for docname, analysis in status["analysis"].items()
               for entry in analysis["flagged_cells"]}

    # the console summary: slowest first, each with its reason; every one is a note
    # (slow-ok, imports), never counted among the flagged cells (issue 33, item 8)
    assert _console_flagged(qebook.html.console) == []
    console = _console_flagged(qebook.html.console, "notes (")
    assert [(docname, cell) for docname, cell, _ in console] == names
    assert all(reasons[docname, cell] == [reason] for docname, cell, reason in console)
    budget = qebook.html.console.index("over their time budget (1):")
    assert re.fullmatch(r"\s+[\d.]+ s  numpy \(numpy\.md\): took [\d.]+ s, budget 0\.50 s",
                        qebook.html.console[budget + 1])

    # JUnit: a passing case per flagged cell (notes never fail), after its notebook;
    # the notebook over its budget is the one failure, as the build's one warning
    suite = ElementTree.fromstring(
        (qebook.html_dir / "execution-status.junit.xml").read_text(encoding="utf-8"))
    cases = [case for case in suite.iter("testcase") if case.get("classname") != "notebooks"]
    assert sorted((c.get("classname"), c.get("name")) for c in cases) == sorted(names)
    assert all(case.find("failure") is None for case in cases)
    assert all(reasons[c.get("classname"), c.get("name")][0] in c.find("system-out").text
               for c in cases)
    failing = [(case.get("name"), case.find("failure").get("type"))
               for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failing == [("numpy", "budget")] and suite.get("failures") == "1"

    # the status page's findings: the same cells in the same order, with the same reasons
    page = BeautifulSoup((qebook.html_dir / "status.html").read_text(encoding="utf-8"),
                         "html.parser")
    items = page.select(".gpu-status-finding")
    on_page = [(item.select_one("a[href]")["href"].split(".html")[0],
                re.search(r"cell \d+", item.get_text()).group()) for item in items]
    assert on_page == names
    assert all(reasons[name][0] in item.get_text(" ", strip=True)
               for name, item in zip(names, items, strict=True))
    slow_ok = items[names.index(("numpy", "cell 2"))]
    assert "What to do" not in slow_ok.get_text()  # slow on purpose: nothing to do
    budget = page.select(".gpu-status-over-budget")
    assert [item.get_text(" ", strip=True).split(":")[0] for item in budget] == ["NumPy"]

    # report, given the book's limits: the same cells, file:line, rules and the budget
    assert cli_main(["report", str(qebook.html_dir / "execution-status.json"), "--json",
                     *LIMITS]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["flagged_cells"] == []  # notes only
    assert [(c["docname"], c["cell"], c["rules"]) for c in summary["notes"]] == flagged
    assert all(re.fullmatch(rf"{c['docname']}\.md:\d+", c["location"])
               for c in summary["notes"])
    assert [row["docname"] for row in summary["over_budget"]] == ["numpy"]
    assert cli_main(["report", str(qebook.html_dir / "execution-status.json"), *LIMITS]) == 0
    text = capsys.readouterr().out
    assert re.findall(r"^  [\d.]+ (?:ms|s)  (\w+) (cell \d+) \(", text, flags=re.M) == names
    assert re.search(r"^  [\d.]+ s  numpy \(numpy\.md\): took [\d.]+ s, budget 0\.50 s$",
                     text, flags=re.M)

    # GitHub annotations (a build on Actions writes them): the budget only, no note
    report = read_status(qebook.html_dir / "execution-status.json")
    (annotation,) = github.annotations(report, analyse(report, Thresholds(
        slow_cell_seconds=1.0, slow_cell_min_seconds=0.5)))
    assert annotation.startswith("::warning file=numpy.md,title=Over its time budget%3A numpy::")


def test_the_download_notebooks_have_a_valid_status_table_and_the_readers_notice(qebook):
    status = qebook.notebook("status")
    tables = markdown_tables(status)
    assert tables and tables[0][0].startswith("|Notebook|Status|")
    for table in tables:
        header, rule, *rows = table
        columns = header.count("|") - 1
        assert re.fullmatch(r"(\|:?-+:?)+\|", rule) and rule.count("|") - 1 == columns
        assert rows and all(row.count("|") - row.count("\\|") - 1 == columns for row in rows)
    markdown = "\n".join("".join(cell["source"]) for cell in status["cells"]
                         if cell["cell_type"] == "markdown")
    assert "[](" not in markdown
    assert not re.search(r"What to do:\s*$", markdown, flags=re.M)  # the slow-ok cell
    assert "NumPy: took " in markdown  # the budget list
    lecture = "\n".join("".join(cell["source"]) for cell in qebook.notebook("jax_intro")["cells"])
    assert READER_SENTENCE in lecture
    assert "This page was executed on" not in lecture and "AMD" not in lecture


def test_the_notebook_build_warns_about_the_budget_again(qebook):
    """The download notebooks come from the same doctrees: the budget warning again (a
    CI log of that step says it too), nothing else; sphinx-tojupyter's builder ends the
    process with its own exit status, so -W does not fail that build (not ours)."""
    budget = [line for line in qebook.jupyter.warnings if BUDGET_WARNING.match(line)]
    assert len(budget) == 1
    assert [line for line in qebook.jupyter.warnings if line not in budget] == []
