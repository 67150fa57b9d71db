"""The mystmd engine (Jupyter Book 2): the plugin and the capture.

The plugin's own protocol is tested without mystmd (the executable plugin's, one call
a process, and its transforms and the capture in-process: tests/unit/mystmd/; the
server the ``.mjs`` keeps: tests/integration/test_mystmd_server.py). The book in
``tests/roots/mystmd/`` (its ``gpu_admonition.mjs`` written by ``myst_build``, as
``init`` writes it) is built for real with the pinned mystmd that
``scripts/test`` installs into ``.mystmd/`` (``myst build --execute --site``,
offline with a local template folder), executing JAX on the CPU in real kernels;
the tests read the site content (``_build/site/content/*.json``) and the status
JSON. A second build is a cache hit (no kernel runs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from mystmd_builds import (
    PROJECT,
    ROOT,
    code_block,
    myst_build,
    page_tree,
    requires_mystmd,
    servers_of,
    status_table,
    text_of,
    walk,
    write_kernel,
)

from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli
from sphinx_gpu_admonition.mystmd import capture

#: Jupyter Book 2 from PyPI (its own bundled mystmd), installed by scripts/test
JUPYTER_BOOK_2 = PROJECT / ".venv-jupyter-book2" / "bin" / "jupyter-book"
PAGE = "jax_page"


def run_plugin(*args: str, data: Any = None) -> Any:
    completed = subprocess.run(
        [str(ROOT / "gpu_admonition.py"), *args], input=json.dumps(data) if data else "",
        capture_output=True, text=True, check=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(PROJECT),
             "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    return json.loads(completed.stdout)


# -- the plugin's protocol, without mystmd --------------------------------------------
def test_the_plugin_declares_its_directives_and_transforms():
    spec = run_plugin()
    assert [d["name"] for d in spec["directives"]] == [
        "gpu", "execution-status", "execution-environment"]
    assert {t["name"]: t["stage"] for t in spec["transforms"]} == {
        "gpu-capture": "document", "gpu-status": "project"}
    assert [r["name"] for r in spec["roles"]] == [
        "runtime", "runtime-time", "runtime-device", "runtime-all",
        "timing", "timing-ratio", "timing-claim"]


def test_a_runtime_role_of_an_unknown_page_says_so_and_warns():
    from sphinx_gpu_admonition.mystmd import runtime

    [node] = run_plugin("--role", "runtime-time", data={"name": "runtime-time",
                                                        "body": "lectures/gone.md"})
    tree = {"type": "root", "children": [{"type": "paragraph", "children": [node]}]}
    assert runtime.resolve(tree, {}.get, lambda _target: [], runtime.Texts(),
                           this_page_only=True) == []  # another page's: the project stage
    [warning] = runtime.resolve(tree, {}.get, lambda _target: [], runtime.Texts(),
                                this_page_only=False)
    assert warning.startswith("{runtime}: no run time of 'lectures/gone' is known")
    assert text_of(tree) == "an unknown time (not measured yet)"


def test_the_gpu_directive_is_a_standard_admonition_with_the_sphinx_texts():
    [node] = run_plugin("--directive", "gpu",
                        data={"name": "gpu", "options": {"required": True, "title": "GPU!"}})
    assert node["type"] == "admonition"
    assert node["class"].split() == ["gpu-admonition", "admonition-gpu", "gpu-required"]
    assert text_of(node["children"][0]) == "GPU!"
    assert "needs one to run in a reasonable amount of time" in text_of(node)
    assert "Google Colab" in text_of(node)


def test_the_mystmd_package_imports_no_sphinx():
    """Every module of the package, also those the plugin imports only in the call that
    needs them."""
    script = ("import importlib, pkgutil, sys\n"
              "import sphinx_gpu_admonition.mystmd as package\n"
              "for module in pkgutil.iter_modules(package.__path__):\n"
              "    if module.name != 'kernel_startup':  # a kernel's PYTHONSTARTUP\n"
              "        importlib.import_module(f'{package.__name__}.{module.name}')\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('sphinx', 'docutils', 'myst_nb')))")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                               check=True, cwd=PROJECT, timeout=60,
                               env={**os.environ, "PYTHONPATH": str(PROJECT)})
    assert completed.stdout.strip() == "[]"


class Build:
    def __init__(self, book: Path, completed: subprocess.CompletedProcess[str],
                 name: str = "build"):
        assert completed.returncode == 0, completed.stdout + completed.stderr
        self.book = book
        self.log = completed.stdout + completed.stderr
        # a copy, read now: the book's next build writes the same files
        self.status_file = book.parent / f"{name}-execution-status.json"
        shutil.copyfile(book / "_build" / "execution-status.json", self.status_file)
        self.junit = (book / "_build" / "execution-status.junit.xml").read_text(
            encoding="utf-8")
        self.report = read_status(self.status_file)
        self.record = self.report.by_docname()[PAGE]
        self.content = {path.stem: json.loads(path.read_text()) for path in
                        (book / "_build" / "site" / "content").glob("*.json")}

    def page(self, slug: str) -> dict[str, Any]:
        return self.content[slug]["mdast"]

    def notice(self) -> dict[str, Any]:
        return next(n for n in walk(self.page("jax-page"))
                    if n.get("type") == "admonition" and "gpu-admonition" in n.get("class", ""))


class Builds(NamedTuple):
    """One book built three times, each build a variant the tests assert on."""

    #: executed, two pages at once
    first: Build
    #: a cache hit, with a user's PYTHONSTARTUP that does not exist: mystmd caches no
    #: page that raised, so ``failing_page`` runs again, in a kernel that warns; judged
    #: with :data:`SECOND_SETTINGS`: the first build as a GPU runner's
    #: (``runtime_sources``) and as the baseline, where jax_page's sleep took a tenth
    second: Build
    #: ``--strict`` with the same missing PYTHONSTARTUP (``failing_page`` runs again)
    strict: subprocess.CompletedProcess[str]
    missing_startup: str


#: the settings of the builds after the first: its status file as a GPU runner's build
#: and as the baseline, regressions warned, a budget jax_page's sleep exceeds, badges
SECOND_SETTINGS = ("      runtime_sources: [gpu-runner-status.json]\n"
                   "      status_baseline: baseline-status.json\n"
                   "      warn_regressions: true\n"
                   "      slow_cell_min_seconds: 0.2\n"
                   "      notebook_budget_seconds: 0.25\n"
                   "      cell_badges: true\n")
#: jax_page's cell of ``time.sleep(0.3)``: ten times faster in the baseline
SLEEP_CELL = 2


def judge_with(book: Path, first: Build) -> None:
    """:data:`SECOND_SETTINGS` in the book's myst.yml, with the files they name: the first
    build's status file moved to a GPU (tests/make_gpu_fixture.py) and the same file with
    jax_page's sleep ten times faster (a cache hit makes no machine factor)."""
    from make_gpu_fixture import to_gpu

    data = json.loads(first.status_file.read_text(encoding="utf-8"))
    (book / "gpu-runner-status.json").write_text(json.dumps(to_gpu(data)), encoding="utf-8")
    [page] = [nb for nb in data["notebooks"] if nb["docname"] == PAGE]
    page["cells"][SLEEP_CELL]["seconds"] /= 10
    (book / "baseline-status.json").write_text(json.dumps(data), encoding="utf-8")
    config = (book / "myst.yml").read_text(encoding="utf-8")
    (book / "myst.yml").write_text(config.replace("    gpu_admonition:\n",
                                                  "    gpu_admonition:\n" + SECOND_SETTINGS),
                                   encoding="utf-8")


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> Builds:
    """The book's builds, shared by the tests: one execution, then cache hits (a full
    build costs a Jupyter server and a kernel per page; the cache hits run one kernel)."""
    requires_mystmd()
    book = tmp_path_factory.mktemp("mystmd") / "book"
    shutil.copytree(ROOT, book)
    missing = str(book.parent / "no-such-startup.py")
    # two pages at once, as QuantEcon's fork does by default: each kernel's data
    # still lands in its own page's record
    first = Build(book, myst_build(book, "--execute-parallel", "2"), "first")
    judge_with(book, first)
    second = Build(book, myst_build(book, user_startup=missing), "second")
    strict = myst_build(book, "--strict", user_startup=missing)
    return Builds(first, second, strict, missing)


def status_row(page: dict[str, Any], docname: str) -> list[str]:
    """A notebook's row (its name cell: the page's title, then the docname)."""
    return next(row for row in status_table(page)[1:] if row[0].endswith(docname))


def notebook_details(page: dict[str, Any], docname: str) -> dict[str, Any]:
    from sphinx_gpu_admonition.render.status_rows import row_id

    return next(n for n in walk(page) if n.get("type") == "div"
                and n.get("html_id") == row_id(docname))


@pytest.mark.mystmd
def test_the_status_json_holds_per_cell_times_measured_in_the_kernel(builds):
    first = builds.first
    assert first.report.build["engine"] == "mystmd"
    record = first.record
    assert (record.status, record.capture, record.provenance) == ("ok", "ok", "executed")
    assert [c.first_line for c in record.cells] == [
        "import jax", "x = jnp.ones((200, 200))", "import time"]
    assert all(cell.seconds > 0 for cell in record.cells)
    assert record.cells[1].compile_seconds > 0  # the matmul's jit compilation
    source = (ROOT / "jax_page.md").read_text().splitlines()
    assert [c.line for c in record.cells] == [
        n for n, line in enumerate(source, 1) if line.startswith("```{code-cell}")]
    assert record.environment.backend == "cpu"


@pytest.mark.mystmd
def test_pages_executed_in_parallel_keep_their_own_records(builds):
    first = builds.first
    assert sorted(first.report.by_docname()) == ["failing_page", "jax_page", "second_page"]
    second_page = first.report.by_docname()["second_page"]
    assert [c.first_line for c in second_page.cells] == [
        "import jax.numpy as jnp", "float(jnp.arange(10).sum())"]
    assert second_page.capture == "ok" and second_page.provenance == "executed"


@pytest.mark.mystmd
def test_a_failing_notebook_names_its_cell_and_error(builds):
    first = builds.first
    failed = first.report.by_docname()["failing_page"]
    assert failed.status == "error"
    assert failed.error.type == "ZeroDivisionError"
    assert failed.error.message == "ZeroDivisionError: division by zero"
    # mystmd stops a page at its first error: the cell after it did not run
    assert [c.first_line for c in failed.cells] == ["x = 1", "1 / 0"]
    assert failed.cell_name(failed.error_cell()).location == "failing_page.md:13"
    row = status_row(first.page("status"), "failing_page")
    assert row[1] == "error: ZeroDivisionError"  # the Sphinx table's, and in its details:
    details = notebook_details(first.page("status"), "failing_page")
    assert "ZeroDivisionError in cell 2: ZeroDivisionError: division by zero" in text_of(details)


@pytest.mark.mystmd
def test_the_notice_states_the_device_the_page_ran_on(builds):
    first = builds.first
    text = text_of(first.notice())
    assert f"This page was executed on {first.record.environment.device_label}" in text
    assert "not on a GPU" in text
    # the copy ran without a GPU: the notice does not claim one
    assert "written for a GPU" in text and "built using a machine with access" not in text


@pytest.mark.mystmd
def test_the_notice_links_the_pages_notebook_in_colab_as_myst_yml_says(builds):
    first = builds.first
    links = [n["url"] for n in walk(first.notice()) if n.get("type") == "link"]
    assert links == ["https://colab.research.google.com/github/example/lectures/blob/main/"
                     "jax_page.ipynb"]


@pytest.mark.mystmd
def test_the_status_page_names_the_slowest_cell_as_report_does(builds):
    first = builds.first
    completed = subprocess.run(
        [sys.executable, "-m", "sphinx_gpu_admonition", "report", "--json", "--exit-zero",
         str(first.status_file)], capture_output=True, text=True, check=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(PROJECT)})
    slowest = json.loads(completed.stdout)["slowest_cells"][0]
    page = text_of(first.page("status"))
    assert f"Slowest cell: {slowest['docname']} {slowest['cell']}" in page
    assert slowest["first_line"] in page
    rows = status_table(first.page("status"))
    assert rows[0] == ["Notebook", "Status", "Time", "Backend and device", "Flagged cells"]
    row = status_row(first.page("status"), PAGE)
    assert row[3] == f"JAX cpu — {first.record.environment.device_label}"
    # the columns the table does not show are in the notebook's details, as on Sphinx
    slowest = first.record.cell_name(first.record.slowest_cell()).label
    assert f" · {slowest}" in text_of(notebook_details(first.page("status"), PAGE))


@pytest.mark.mystmd
def test_the_environment_table_shows_the_machine_the_kernels_reported(builds):
    first = builds.first
    table = next(n for n in walk(first.page("status")) if n.get("type") == "table"
                 and "gpu-environment-table" in n.get("class", ""))
    rows = {text_of(row["children"][0]): text_of(row["children"][1])
            for row in table["children"]}
    assert rows["JAX backend"] == "cpu"
    assert rows["GPU"] == "none" and rows["Memory"].endswith(" GiB")
    # the rows of the Sphinx table and page box: one function decides them
    from sphinx_gpu_admonition.render.machine_rows import machine_rows

    assert list(rows.items()) == machine_rows(first.record.environment,
                                              first.report.notebooks)
    title = f"Execution environment: {first.record.environment.device_label}"
    assert title in text_of(first.page("status"))


@pytest.mark.mystmd
def test_the_status_page_and_machine_table_speak_the_books_language(builds):
    """``language: zh_CN``: the status page and the machine table of this build's
    records through the package's catalog (the texts of the Sphinx page)."""
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.model.findings import findings
    from sphinx_gpu_admonition.mystmd import environment, settings, status
    from sphinx_gpu_admonition.render.finding_text import FindingText
    from sphinx_gpu_admonition.render.labels import Labels

    catalog = settings.translator("zh_CN")
    report = builds.first.report
    page = {"type": "root", "children": [*status.placeholder(), *environment.placeholder()]}
    labels = Labels.load(catalog.gettext, catalog.ngettext)
    assert status.fill_placeholders(page, report, analyse(report, Thresholds()), labels)
    assert environment.fill_placeholders(page, report, catalog.gettext) == []
    text = text_of(page)
    assert "最慢的单元格：" in text and "执行环境：" in text
    tables = {n["class"]: n for n in walk(page) if n.get("type") == "table"}
    assert status_table(page)[0] == [labels.notebook, labels.status, labels.time,
                                     labels.device, labels.flags]
    assert labels.notebook == "笔记本"
    failed = status_row(page, "failing_page")
    assert failed[1] == labels.status_of(report.by_docname()["failing_page"])
    assert failed[1].startswith("错误")
    rows = {text_of(row["children"][0]): text_of(row["children"][1])
            for row in tables["gpu-environment-table"]["children"]}
    assert rows["JAX 后端"] == "cpu" and rows["GPU"] == "无"
    # the findings' reasons and actions too (every cell flagged here: the book's are fast)
    every_cell = Thresholds(slow_cell_seconds=0.0, slow_cell_min_seconds=0.0)
    flagged = {"type": "root", "children": status.placeholder()}
    analysis = analyse(report, every_cell)
    status.fill_placeholders(flagged, report, analysis, labels)
    # the findings' list (each notebook's details below the table list its flagged cells
    # again, without the reasons)
    [status_div] = flagged["children"]
    items = [text_of(item) for node in status_div["children"] if node.get("type") == "list"
             for item in node["children"]]
    words = FindingText(catalog.gettext, catalog.ngettext)
    assert len(items) == len(findings(analysis)) > 0
    for item, finding in zip(items, findings(analysis), strict=True):
        assert item.endswith(f"{words.finding_reason(finding)}. {words.finding_action(finding)}")
        assert "用时" in item and "took" not in item and "profile the cell" not in item
    # English without a language: the page the build wrote
    english = {"type": "root", "children": status.placeholder()}
    status.fill_placeholders(english, report, analyse(report, Thresholds()))
    assert text_of(english) == text_of(next(
        n for n in walk(builds.first.page("status"))
        if n.get("type") == "div" and "gpu-execution-status" in n.get("class", "")))


def packages_of(page: dict[str, Any]) -> dict[str, Any]:
    [listed] = [n for n in walk(page) if n.get("type") == "details"
                and "gpu-environment-packages" in n.get("class", "")]
    return listed


@pytest.mark.mystmd
def test_the_environment_lists_the_kernels_packages_and_a_cache_hit_keeps_them(builds):
    """``:packages:``: every distribution of the kernel's environment (``!conda
    list``), read once after the execution by the kernel's own Python, collapsed;
    a cache hit shows the list of the run that produced its outputs."""
    from importlib.metadata import version

    first, second = builds.first, builds.second
    kept = first.record.packages
    assert kept is not None and kept.executable == sys.executable  # the kernel's Python
    assert kept.distributions["jax"] == version("jax")
    listed = packages_of(first.page("status"))
    assert text_of(listed["children"][0]) == (
        f"Installed packages in the kernel's environment ({len(kept.distributions)}): "
        f"{sys.executable}")
    assert f"jax {version('jax')}" in text_of(listed["children"][1]).split(", ")
    assert second.record.provenance == "cache" and second.record.packages == kept
    assert text_of(packages_of(second.page("status"))) == text_of(listed)
    # one listing per build and executable, kept for its pages (earlier builds' removed)
    listings = list((first.book / "_build" / capture.DEFAULT_CAPTURE.name
                     / "packages").glob("*.json"))
    assert len(listings) == 1


@pytest.mark.mystmd
def test_a_cache_hit_keeps_the_measurements_of_the_execution(builds):
    first, second = builds.first, builds.second
    assert "Adding cached notebook outputs" in second.log
    assert second.record.provenance == "cache"
    assert [c.seconds for c in second.record.cells] == [c.seconds for c in first.record.cells]
    assert "not on a GPU" in text_of(second.notice())


@pytest.mark.mystmd
def test_the_sidecar_is_named_like_mystmds_cache_entry(builds):
    first = builds.first
    book = first.book
    cached = {path.stem for path in (book / "_build" / "execute").glob("*.json")}
    sidecars = {path.stem for path in (book / "_build" / capture.DEFAULT_CAPTURE.name
                                       / capture.SIDECARS_FOLDER).glob("*.json")}
    assert sidecars and sidecars <= cached
    assert not servers_of(book)  # the tests stopped the servers mystmd left running


@pytest.mark.mystmd
def test_the_build_records_how_many_pages_it_executed_at_once(builds):
    first, second = builds.first, builds.second
    assert first.report.build["execute_parallel"] == 2
    assert second.report.build["execute_parallel"] == 1  # mystmd's default


@pytest.mark.mystmd
def test_the_junit_file_is_the_sphinx_builds_and_fails_only_on_the_failed_notebook(builds):
    """Beside the JSON, the JUnit file the Sphinx build writes from the same records: a
    case per notebook and per flagged cell; without an opt-in warning that fails the
    build, only the notebook that raised fails (as on Sphinx)."""
    from xml.etree import ElementTree

    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.render.junit import junit_xml

    first = builds.first
    report = first.report
    assert first.junit == junit_xml(report, analyse(report, Thresholds()))
    text = first.junit
    suite = ElementTree.fromstring(text)
    notebooks = {case.get("name"): case for case in suite.iter("testcase")
                 if case.get("classname") == "notebooks"}
    assert sorted(notebooks) == ["failing_page", "jax_page", "second_page"]
    failed = [case.get("name") or "" for case in suite.iter("testcase")
              if case.find("failure") is not None]
    assert failed == ["failing_page"]
    assert notebooks["failing_page"].find("failure").get("message") == (
        "error: ZeroDivisionError in cell 2")
    assert suite.get("failures") == "1" and suite.get("errors") == "0"
    flagged = [case for case in suite.iter("testcase") if case.get("classname") != "notebooks"]
    assert all(case.get("file", "").endswith(".md") for case in flagged)


def runtime_nodes(tree: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in walk(tree) if n.get("type") == "span"
            and "gpu-runtime" in str(n.get("class", "")).split()]


@pytest.mark.mystmd
def test_the_runtime_roles_state_this_builds_time_and_device(builds):
    """The Sphinx roles' texts, from this build's records: the page's own (``this page``,
    resolved after it ran) and another page's (once every page ran); exact figures in
    the abbreviation's title."""
    from sphinx_gpu_admonition.render import runtime_text

    first, second = builds.first, builds.second
    record = first.record
    measurement = runtime_text.Measurement(record)
    own = runtime_nodes(first.page("jax-page"))
    assert [text_of(node) for node in own] == [runtime_text.run_phrase(measurement)] * 2
    [abbreviation] = [n for n in walk(own[0]) if n.get("type") == "abbreviation"]
    assert abbreviation["title"] == runtime_text.exact_figures(measurement)
    assert " on a CPU" in text_of(own[0])
    other = runtime_nodes(first.page("index"))
    assert [text_of(node) for node in other] == [
        runtime_text.reader_time(record.seconds), runtime_text.device_phrase(record)]
    assert "placeholder" not in json.dumps(first.content)
    # a cache hit states the measurements of the execution that produced its outputs, and
    # {runtime-all} the GPU runner's build of runtime_sources (the first build, moved)
    cached = [text_of(node) for node in runtime_nodes(second.page("jax-page"))]
    gpu = runtime_text.Measurement(read_status(second.book / "gpu-runner-status.json")
                                   .by_docname()[PAGE], "gpu-runner-status.json")
    assert cached == [text_of(own[0]), f"{text_of(own[1])} and {runtime_text.run_phrase(gpu)}"]
    assert " on a GPU (Tesla T4)" in cached[1]


@pytest.mark.mystmd
def test_the_status_page_has_the_sphinx_pages_parts_linked_by_mystmd(builds):
    """The summary line, the table's columns and totals, each notebook's details with
    every cell (render/status_rows.py, render/status_html.cells_data: the Sphinx page's),
    the notebooks' titles linked to their pages and the cells to their blocks, as mystmd
    resolved the links the status page's document stage left (mystmd/page_links.py)."""
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.render.labels import Labels
    from sphinx_gpu_admonition.render.status_rows import StatusOptions, status_rows

    first = builds.first
    page = first.page("status")
    table = status_rows(analyse(first.report, Thresholds()), StatusOptions(), Labels.load())
    [summary] = [n for n in walk(page) if "gpu-status-summary" in str(n.get("class"))]
    assert text_of(summary) == table.summary
    assert table.summary.startswith("3 notebooks: 1 error, 2 ok (3 this build, 0 from the "
                                    "cache)")
    rows = status_table(page)
    assert rows[-1][0] == "All notebooks: 3" and rows[-1][1] == "1 error, 2 ok"
    links = {n["url"]: text_of(n) for n in walk(page) if n.get("type") == "link"
             and n.get("internal")}
    record = first.record
    assert links["/jax-page"] == record.title == "JAX on a device"
    assert status_row(page, PAGE)[0] == f"{record.title}{PAGE}"
    # every cell of the notebook in its details, linked to its block on the page
    details = notebook_details(page, PAGE)
    assert details["children"][0]["type"] == "details"
    cells = status_table(details, "gpu-status-cell-table")
    assert [row[0] for row in cells[1:]] == [name.label for name in record.cell_names()]
    anchors = [n["html_id"] for n in first.page("jax-page")["children"]
               if n.get("type") == "block" and n.get("kind") == "notebook-code"]
    assert anchors == [name.anchor for name in record.cell_names()]
    assert {f"/jax-page#{anchor}" for anchor in anchors} <= set(links)
    assert not [n for n in walk(page) if n.get("type") == "comment" and n.get("children")]


@pytest.mark.mystmd
def test_a_baseline_judges_the_build_and_its_regressions_warn_as_on_sphinx(builds):
    """``status_baseline``: the build's one analysis compares with it (jax_page's sleep
    took a tenth there): the regression flag, ``warn_regressions``' warning at the cell's
    line in mystmd's log, the headline on the status page, ``build.baseline``, and
    ``report`` on the file flags what the build flagged."""
    from sphinx_gpu_admonition.model.analysis import analyse
    from sphinx_gpu_admonition.model.findings import headline
    from sphinx_gpu_admonition.model.judging import file_digest, judged_by
    from sphinx_gpu_admonition.render.finding_text import ENGLISH

    second = builds.second
    baseline_file = second.book / "baseline-status.json"
    used = judged_by(second.report.build).baseline
    assert used is not None and used.digest == file_digest(baseline_file.read_bytes())
    assert used.path.endswith("baseline-status.json")
    sleep = second.record.cells[SLEEP_CELL]
    [flagged] = [cell for cell in second.report.analysis[PAGE]["flagged_cells"]
                 if cell["cell"] == f"cell {SLEEP_CELL + 1}"]
    assert "regression" in [flag["rule"] for flag in flagged["flags"]]
    line = next(line for line in second.log.splitlines()
                if f"[regression]: cell {SLEEP_CELL + 1} regressed" in line)
    assert line.startswith(f"⚠️  jax_page.md:{sleep.line} "), line
    analysis = analyse(second.report, judged_by(second.report.build).thresholds,
                       read_status(baseline_file))
    [shown] = [n for n in walk(second.page("status"))
               if "gpu-status-headline" in str(n.get("class"))]
    assert text_of(shown) == ENGLISH.headline(headline(analysis))
    completed = subprocess.run(
        [sys.executable, "-m", "sphinx_gpu_admonition", "report", "--json", "--exit-zero",
         "--no-github", str(second.status_file)], capture_output=True, text=True, check=True,
        timeout=60, cwd=second.book, env={**os.environ, "PYTHONPATH": str(PROJECT)})
    data = json.loads(completed.stdout)
    assert any(row["docname"] == PAGE and row["cell"] == f"cell {SLEEP_CELL + 1}"
               and "regression" in row["rules"] for row in data["flagged_cells"]), data


@pytest.mark.mystmd
def test_a_notebook_over_its_budget_warns_and_is_listed_first(builds):
    """``notebook_budget_seconds`` (the book's; a page's ``options: gpu_budget_seconds``
    overrides it, tests/integration/test_parity.py): the warning at the page, the status page's
    list, and the record's budget."""
    second = builds.second
    assert second.record.budget_seconds == 0.25
    assert any(line.startswith("⚠️  jax_page.md:1 ") and "[budget]: notebook over its time "
               "budget" in line for line in second.log.splitlines()), second.log
    budgets = [text_of(item) for node in walk(second.page("status"))
               if node.get("type") == "list" for item in node["children"]
               if "budget" in text_of(item)]
    assert any(text.startswith(f"{second.record.title}: took ") for text in budgets), budgets
    assert "budget" in second.report.analysis[PAGE]


@pytest.mark.mystmd
def test_cell_badges_put_a_badge_in_the_flagged_cells_block(builds):
    """``cell_badges``: the Sphinx badge's words in a ``div`` first in the cell's block,
    its reasons the tooltip, linked to the cell's line on the status page."""
    from sphinx_gpu_admonition.render.status_rows import flagged_cell_id

    second = builds.second
    record = second.record
    anchor = record.cell_name(record.cells[SLEEP_CELL]).anchor
    [block] = [n for n in second.page("jax-page")["children"] if n.get("html_id") == anchor]
    badge = block["children"][0]
    assert badge["type"] == "div" and "gpu-cell-badge-regression" in badge["class"]
    [link] = [n for n in walk(badge) if n.get("type") == "link"]
    assert link["url"] == f"/status#{flagged_cell_id(PAGE, SLEEP_CELL + 1)}"
    [tooltip] = [n for n in walk(badge) if n.get("type") == "abbreviation"]
    assert "regression:" in tooltip["title"]
    assert text_of(badge).endswith("— slow, regression (on the status page)") or \
        "regression (on the status page)" in text_of(badge), text_of(badge)
    # the line it links to, in the notebook's details on the status page
    assert [n for n in walk(second.page("status"))
            if n.get("html_id") == flagged_cell_id(PAGE, SLEEP_CELL + 1)]


@pytest.mark.mystmd
def test_a_migrated_quantecon_book_builds_with_mystmd(tmp_path):
    """``migrate`` on QuantEcon's jb2 shape (tests/roots/quantecon_mystmd), then a real
    ``myst build --execute``: the notice, the status table and the machine table."""
    from sphinx_gpu_admonition.cli import main

    requires_mystmd()
    book = tmp_path / "lectures"
    shutil.copytree(ROOT.parent / "quantecon_mystmd" / "lectures", book)
    assert main(["migrate", str(book)]) == 0
    completed = myst_build(book)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = read_status(book / "_build" / "execution-status.json")
    # the status page lost its machine cells: no kernel ran for it
    assert list(report.by_docname()) == ["jax_intro"]
    record = report.by_docname()["jax_intro"]
    assert (record.capture, record.status) == ("ok", "ok")
    content = book / "_build" / "site" / "content"
    lecture = json.loads((content / "jax-intro.json").read_text())["mdast"]
    [notice] = [n for n in walk(lecture) if n.get("type") == "admonition"]
    assert f"This page was executed on {record.environment.device_label}" in text_of(notice)
    status = json.loads((content / "status.json").read_text())["mdast"]
    tables = {n["class"]: n for n in walk(status) if n.get("type") == "table"}
    names = [row[0] for row in status_table(status)]
    assert names[0] == "Notebook" and names[-1] == "All notebooks: 1"
    assert len(names) == 3 and names[1].endswith("jax_intro")
    rows = {text_of(row["children"][0]): text_of(row["children"][1])
            for row in tables["gpu-environment-table"]["children"]}
    assert rows["JAX backend"] == "cpu" and rows["GPU"] == "none"


@pytest.mark.mystmd
def test_jupyter_book_2_builds_the_book_with_the_plugin(tmp_path):
    """``jupyter book build --execute`` (jupyter-book 2.1.7, its own mystmd), the same
    book and myst.yml: the capture, the truthful notice and the status page."""
    if not JUPYTER_BOOK_2.exists():
        pytest.skip("jupyter-book 2.1.7 is not installed in .venv-jupyter-book2/ "
                    "(scripts/test installs it with pip)")
    pytest.importorskip("jupyter_server", reason="the build's kernels need jupyter_server")
    book = tmp_path / "book"
    shutil.copytree(ROOT, book)
    # two pages at once (its option too): the build's wall time is mostly kernels starting
    built = Build(book, myst_build(book, "--execute-parallel", "2",
                                   command=(str(JUPYTER_BOOK_2), "build")))
    assert "Building Jupyter Book" in built.log
    assert built.report.build["engine"] == "mystmd"
    assert sorted(built.report.by_docname()) == ["failing_page", "jax_page", "second_page"]
    assert (built.record.capture, built.record.provenance) == ("ok", "executed")
    assert [c.first_line for c in built.record.cells][0] == "import jax"
    device = built.record.environment.device_label
    assert f"This page was executed on {device}" in text_of(built.notice())
    nb, cell = max(((nb, cell) for nb in built.report.notebooks if nb.executed
                    for cell in nb.cells), key=lambda item: item[1].seconds)
    assert f"Slowest cell: {nb.cell_name(cell).full}" in text_of(built.page("status"))
    assert not servers_of(book)


#: a page that puts its own file on the probe's descriptor, then makes the probe's file
#: unwritable for two cells (its path a folder): tests/integration/test_probe_file.py on Sphinx
HOSTILE_CELLS = (
    "import os\n\ndef probe_descriptors():\n"
    "    return [int(n) for n in os.listdir('/proc/self/fd')\n"
    "            if os.path.realpath(f'/proc/self/fd/{n}').endswith('.jsonl')]",
    "results = open('results.csv', 'w', buffering=1)\n[fd] = probe_descriptors()\n"
    "os.dup2(results.fileno(), fd)\nresults.write('a,b\\n')",
    "[fd] = probe_descriptors()\npath = os.readlink(f'/proc/self/fd/{fd}')\nos.close(fd)\n"
    "os.rename(path, path + '.away')\nos.mkdir(path)",
    "x = 4",
    "os.rmdir(path)\nos.rename(path + '.away', path)",
    "results.write('c,d\\n')\nresults.close()",
)


@pytest.mark.mystmd
def test_a_page_that_takes_the_probes_file_says_partial_and_keeps_its_own_file(tmp_path):
    requires_mystmd()
    book = tmp_path / "book"
    shutil.copytree(ROOT, book)
    (book / f"{PAGE}.md").write_text(
        "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n# Hostile\n\n"
        + "".join(f"```{{code-cell}} python\n{cell}\n```\n\n" for cell in HOSTILE_CELLS),
        encoding="utf-8")
    config = (book / "myst.yml").read_text(encoding="utf-8")
    (book / "myst.yml").write_text(config.replace("    - file: second_page.md\n", "")
                                   .replace("    - file: failing_page.md\n", ""), "utf-8")
    built = Build(book, myst_build(book))
    record = built.record
    assert (record.status, record.capture) == ("ok", "partial")
    assert [c.execution_count for c in record.cells] == [1, 2, 5, 6]
    blocks = [index for index, n in enumerate(built.page("jax-page")["children"])
              if n.get("type") == "block" and n.get("kind") == "notebook-code"]
    # each recorded cell at its own block, after the gap too
    assert [c.index for c in record.cells] == [blocks[n] for n in (0, 1, 4, 5)]
    assert [c.first_line for c in record.cells] == [
        HOSTILE_CELLS[n].split("\n")[0] for n in (0, 1, 4, 5)]
    assert record.capture_message.startswith(
        "the probe recorded 4 of the 6 cells the kernel ran (not recorded: the cells with "
        "execution count 3 and 4)")
    assert (book / "results.csv").read_text(encoding="utf-8") == "a,b\nc,d\n"
    assert record.environment.backend is None and record.environment.host.cores


def test_a_page_whose_kernel_ran_other_cells_is_never_silent(tmp_path):
    """The page's source holds its code, its kernel (this build's) ran something else:
    a record that says capture failed, a warning naming the page and why, and the
    notice claims no GPU machine."""
    from sphinx_gpu_admonition.mystmd import notice

    folder, page = tmp_path / "capture", tmp_path / "lectures" / "numba.md"
    page.parent.mkdir()
    page.write_text("```{code-cell} python\nx = 1\n```\n\n```{code-cell} python\ny = 2\n```\n")
    kernel = write_kernel(folder, page, [{"seconds": 0.5, "first_line": "x = 1"},
                                         {"seconds": 0.5, "first_line": "hidden()"}])
    tree = page_tree(*notice.directive({"options": {}}), code_block("x = 1"),
                     code_block("y = 2"))
    record, warnings = capture.page_record(tree, folder, tmp_path)
    assert (record.docname, record.capture, record.cells) == ("lectures/numba", "failed", [])
    assert record.capture_message == ("the page's code cells are not what its kernel ran: "
                                      "cell 2 ran 'hidden()', the page's starts with 'y = 2'")
    assert warnings == [f"lectures/numba: capture failed: {record.capture_message} (the page "
                        "ran; its record has no cells)"]
    assert not kernel.exists()
    notice.make_truthful(tree, record)
    text = text_of(tree)
    assert "written for a GPU" in text and "built using a machine" not in text
    assert "This page was executed on" not in text
    # the views: the status table's device column, JUnit's case, report
    from sphinx_gpu_admonition.mystmd import status

    report, analysis = status.build_report([record])
    table = next(n for n in walk({"type": "root", "children": status.status_nodes(
        report, analysis)}) if n.get("type") == "table")
    row = [text_of(c) for c in table["children"][1]["children"]]
    assert row[3] == f"capture failed: {record.capture_message}"
    assert status.write_reports(report, analysis, tmp_path) == []
    junit = (tmp_path / status.JUNIT_FILE).read_text()
    assert "capture failed: the page's code cells are not what its kernel ran" in junit
    written = tmp_path / status.STATUS_FILE
    completed = subprocess.run(
        [sys.executable, "-m", "sphinx_gpu_admonition", "report", str(written)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(PROJECT)})
    assert "Not measured (1)\n  lectures/numba: capture failed: the page's code cells" in (
        completed.stdout)
    # a kernel of an earlier build (older than this build's start) is not this page's
    write_kernel(folder, page, [{"seconds": 0.5, "first_line": "hidden()"}])
    assert capture.page_record(tree, folder, tmp_path, since=1_780_000_001.0) == (None, [])


@pytest.mark.mystmd
def test_the_status_json_follows_the_schema(builds):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((PROJECT / "sphinx_gpu_admonition" / "schema"
                         / "execution-status.schema.json").read_text())
    cache_hit = builds.second
    data = json.loads(cache_hit.status_file.read_text())
    jsonschema.validate(data, schema)
    assert data["build"]["engine"] == "mystmd"


@pytest.mark.mystmd
def test_a_capture_warning_fails_a_strict_build_only(builds):
    """The probe warns about a user's PYTHONSTARTUP that does not exist: the page is
    built either way; ``myst build --strict`` fails on the warning, as ``-W`` does."""
    failed = builds.strict
    assert failed.returncode != 0
    # mystmd shows a plugin's stderr only when it exited non-zero: the plugin failed it
    # (offline, a strict build would fail later anyway, on the unresolved Colab link)
    assert (f"the PYTHONSTARTUP file {builds.missing_startup} does not exist"
            in failed.stdout + failed.stderr)
    # the build without --strict executed a page with the same startup: captured
    rerun = builds.second.report.by_docname()["failing_page"]
    assert (rerun.capture, rerun.provenance) == ("ok", "executed")
    assert "Executing notebook (failing_page.md)" in builds.second.log


def test_the_kernel_startup_names_the_pages_file_and_leaves_no_trace(tmp_path):
    """In a real IPython: the page's capture file gets the probe's lines; the
    notebook's namespace and the environment kernels it starts itself see nothing."""
    pytest.importorskip("IPython")
    folder, page = tmp_path / "capture", tmp_path / "page.md"
    code = ("import os; print('names', sorted(k for k in globals() if 'sphinx' in k)); "
            f"print('environment', os.environ.get({capture.ENV_CAPTURE!r}), "
            "os.environ.get('PYTHONSTARTUP'))\n")
    completed = subprocess.run(
        [sys.executable, "-m", "IPython", "--simple-prompt", "--no-banner"], input=code,
        capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(PROJECT), "JPY_SESSION_NAME": str(page),
             "PYTHONSTARTUP": str(mystmd_cli.KERNEL_STARTUP),
             capture.ENV_CAPTURE: str(folder)})
    assert "names []" in completed.stdout
    assert "environment None None" in completed.stdout
    output = capture.KernelOutput(folder / capture.KERNELS_FOLDER
                                  / capture.page_file_name(str(page)))
    assert output.page == str(page)
    assert len(output.cells) == 1 and output.cells[0].first_line.startswith("import os")
    assert output.errors == []


@pytest.mark.mystmd
def test_a_warning_shows_in_a_normal_build_and_report_repeats_it(builds):
    """mystmd shows a plugin's stderr only with ``--debug``: the warning reaches its
    normal log through mystmd's own check (mystmd/warnings.py), at the page, and is
    kept in the status file, whose ``report`` repeats it (text, JSON, annotations)."""
    from sphinx_gpu_admonition.model.build_warnings import build_warnings

    second = builds.second
    said = f"the PYTHONSTARTUP file {builds.missing_startup} does not exist"
    shown = [line for line in second.log.splitlines() if said in line]
    assert shown, second.log
    assert all(line.startswith("⚠️  failing_page.md") and "sphinx-gpu-admonition [capture]"
               in line for line in shown), shown
    assert "--debug" not in " ".join(sys.argv)  # (the build above ran without it)
    (kept,) = [item for item in build_warnings(second.report) if said in item.message]
    assert (kept.subtype, kept.file) == ("capture", "failing_page.md")
    environment = {**os.environ, "PYTHONPATH": str(PROJECT), "GITHUB_ACTIONS": "true",
                   "GITHUB_WORKSPACE": str(second.book)}
    completed = subprocess.run(
        [sys.executable, "-m", "sphinx_gpu_admonition", "report", "--exit-zero",
         str(second.status_file)], capture_output=True, text=True, check=True, timeout=60,
        env=environment)
    assert "Build warnings (" in completed.stdout and said in completed.stdout
    annotation = next(line for line in completed.stderr.splitlines()
                      if "gpu_admonition.capture" in line)
    assert annotation.startswith("::warning file=failing_page.md,title=Build warning%3A "
                                 "gpu_admonition.capture::")
    data = json.loads(subprocess.run(
        [sys.executable, "-m", "sphinx_gpu_admonition", "report", "--json", "--exit-zero",
         "--no-github", str(second.status_file)], capture_output=True, text=True,
        check=True, timeout=60, env=environment).stdout)
    assert [item["message"] for item in data["warnings"]] == [
        item.message for item in build_warnings(second.report)]


