"""The mystmd engine (Jupyter Book 2): the plugin and the capture.

The plugin's own protocol is tested without mystmd (the executable plugin's, one call
a process; the server the ``.mjs`` keeps: tests/test_mystmd_server.py). The book in
``tests/roots/mystmd/`` (its ``gpu_admonition.mjs`` written by :func:`myst_build`, as
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
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import pythonpath

from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli
from sphinx_gpu_admonition.mystmd import capture, cells, plugin

PROJECT = Path(__file__).resolve().parents[1]
ROOT = Path(__file__).parent / "roots" / "mystmd"
MYST = PROJECT / ".mystmd" / "node_modules" / ".bin" / "myst"
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


def walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children") or []:
        yield from walk(child)


def text_of(node: dict[str, Any]) -> str:
    return "".join(n.get("value", "") for n in walk(node) if n.get("type") in ("text",
                                                                                 "inlineCode"))


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


def test_env_prints_the_kernel_environment(tmp_path):
    lines = mystmd_cli.env_lines(tmp_path)
    assert f"export PYTHONSTARTUP={mystmd_cli.KERNEL_STARTUP}" in lines
    assert any(line.startswith(f"export {capture.ENV_CAPTURE}=") for line in lines)
    assert mystmd_cli.main(["env", str(tmp_path / "missing")]) == 2


def test_env_asks_the_kernels_for_jaxs_explanations_when_the_book_does(tmp_path):
    from sphinx_gpu_admonition.probe import ENV_EXPLAIN_RECOMPILATIONS

    assert not any(ENV_EXPLAIN_RECOMPILATIONS in line for line in mystmd_cli.env_lines(tmp_path))
    write_settings(tmp_path, "      explain_recompilations: true\n")
    assert f"export {ENV_EXPLAIN_RECOMPILATIONS}=1" in mystmd_cli.env_lines(tmp_path)


def test_env_chains_the_users_own_pythonstartup(tmp_path, monkeypatch):
    from sphinx_gpu_admonition.probe import ENV_USER_STARTUP

    monkeypatch.setenv("PYTHONSTARTUP", "/home/me/startup.py")
    lines = mystmd_cli.env_lines(tmp_path)
    assert f"export {ENV_USER_STARTUP}=/home/me/startup.py" in lines
    assert f"export PYTHONSTARTUP={mystmd_cli.KERNEL_STARTUP}" in lines


def test_init_writes_the_plugin_file(tmp_path):
    from sphinx_gpu_admonition.mystmd.plugin_file import PLUGIN_TEXT, mjs_text

    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    written = tmp_path / mystmd_cli.MJS_FILE
    assert written.read_text() == mjs_text()  # this interpreter's (tests/test_mystmd_server)
    # the executable plugin the root keeps (a book may still name it) is this release's
    assert (ROOT / "gpu_admonition.py").read_text() == PLUGIN_TEXT


# -- a real mystmd build ----------------------------------------------------------------
def _servers_of(book: Path) -> list[int]:
    """The Jupyter servers mystmd started for ``book`` (it leaves them running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"jupyter_server" in args and str(book).encode() in args \
                and _running(int(entry.name)):
            found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited (its parent, mystmd, is gone)


def stop_servers(book: Path) -> None:
    """Stop the servers mystmd left running for ``book``: SIGTERM (the server shuts its
    kernels down), then SIGKILL after 20 s."""
    pids = _servers_of(book)
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


def myst_build(book: Path, *options: str, user_startup: str | None = None,
               command: tuple[str, ...] = (str(MYST), "build")
               ) -> subprocess.CompletedProcess[str]:
    config = book / "jupyter-config"
    config.mkdir(exist_ok=True)
    # mystmd starts `jupyter server`, which refuses to run as root without this
    (config / "jupyter_server_config.py").write_text("c.ServerApp.allow_root = True\n")
    # the kernels' provisioner too (conftest.pythonpath): the server starts them
    environment = {**os.environ, "PYTHONPATH": pythonpath(PROJECT),
                   "JUPYTER_CONFIG_DIR": str(config),
                   # mystmd runs `python -m jupyter_server` and the plugin's `python3`
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    if user_startup:
        environment["PYTHONSTARTUP"] = user_startup
    for line in mystmd_cli.env_lines(book, environment):  # what the docs tell CI to export
        name, _, value = line.removeprefix("export ").partition("=")
        environment[name] = value.strip("'")
    if not (book / mystmd_cli.MJS_FILE).exists():  # init, as the docs say (this Python)
        mystmd_cli.write_plugin(book)
    try:
        return subprocess.run([*command, "--execute", "--site", *options], cwd=book,
                              env=environment, capture_output=True, text=True, timeout=300,
                              check=False)
    finally:
        stop_servers(book)


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


def requires_mystmd() -> None:
    if not MYST.exists():
        pytest.skip("mystmd is not installed in .mystmd/ (scripts/test installs it with npm)")
    pytest.importorskip("jupyter_server", reason="myst build --execute needs jupyter_server")


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



def status_table(page: dict[str, Any], css: str = "gpu-status-table") -> list[list[str]]:
    table = next(n for n in walk(page) if n.get("type") == "table"
                 and css in n.get("class", "").split())
    return [[text_of(cell) for cell in row["children"]] for row in table["children"]]


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


def test_packages_that_cannot_be_listed_say_why():
    from sphinx_gpu_admonition.model.record import NotebookRecord
    from sphinx_gpu_admonition.mystmd import environment

    executed = NotebookRecord(docname="a", status="ok", provenance="executed")
    cached = NotebookRecord(docname="b", status="ok", provenance="cache")
    assert environment.machine_packages([executed], ["/x/python exited with 1"]) == (
        "No package list: /x/python exited with 1.")
    assert "mystmd's execution cache" in environment.machine_packages([cached], [])
    [note] = environment.packages_nodes(environment.machine_packages([cached], []))
    assert note["type"] == "paragraph"


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
    assert not _servers_of(book)  # the tests stopped the servers mystmd left running


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
    overrides it, tests/test_parity.py): the warning at the page, the status page's
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
    assert not _servers_of(book)


#: a page that puts its own file on the probe's descriptor, then makes the probe's file
#: unwritable for two cells (its path a folder): tests/test_probe_file.py on Sphinx
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


def test_plugin_main_without_arguments_prints_the_spec(capsys):
    plugin.main([])
    assert json.loads(capsys.readouterr().out)["name"] == "sphinx-gpu-admonition"


# -- the capture's reading, without mystmd ----------------------------------------------
def code_block(code: str, tags: list[str] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "block", "kind": "notebook-code", "children": [
        {"type": "code", "executable": True, "value": code}, {"type": "outputs", "children": []}]}
    if tags:
        block["data"] = {"tags": tags}
    return block


def page_tree(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "root", "children": [{"type": "block", "children": [
        {"type": "paragraph", "children": [{"type": "text", "value": "intro"}]}]}, *blocks]}


def write_kernel(folder: Path, page: Path, cells: list[dict[str, Any]],
                 backend: str | None = "cpu") -> Path:
    from sphinx_gpu_admonition.probe import protocol

    path = folder / capture.KERNELS_FOLDER / capture.page_file_name(str(page))
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"kind": capture.KIND_PAGE, "page": str(page), "pid": 7},
             {"kind": "start", "probe_version": protocol.PROBE_VERSION, "pid": 7,
              "time": 1_780_000_000.0, "python": "3.11.7", "gpus": [],
              "host": {"cpu": "Test CPU", "cores": 2}}]
    if backend:
        lines.append({"kind": "jax", "pid": 7, "jax": {"backend": backend, "version": "0.10.2",
                      "devices": [{"platform": backend, "kind": "Test device"}]}})
    lines += [{"kind": "cell", "pid": 7, "execution_count": n, **cell}
              for n, cell in enumerate(cells, 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_page_finds_its_kernel_by_its_code_and_a_cache_hit_keeps_the_record(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the repository: sources are named relative to it
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    folder, page = tmp_path / "capture", tmp_path / "lectures" / "intro.md"
    page.parent.mkdir()
    page.write_text("# Intro\n\n```{code-cell} python\nimport jax\nx = 1\n```\n\n"
                    "```{code-cell} python\ny = 2\n```\n")
    tree = page_tree(code_block("import jax\nx = 1"), code_block("y = 2"))
    other = write_kernel(folder, tmp_path / "other.md", [{"seconds": 1.0, "first_line": "z"}])
    mine = write_kernel(folder, page, [{"seconds": 0.5, "first_line": "import jax"},
                                       {"seconds": 0.25, "first_line": "y = 2"}])
    record, warnings = capture.page_record(tree, folder, tmp_path)
    assert warnings == []
    assert (record.docname, record.provenance, record.status) == ("lectures/intro", "executed",
                                                                  "ok")
    assert [(c.index, c.seconds, c.line) for c in record.cells] == [(1, 0.5, 3), (2, 0.25, 8)]
    assert record.cell_name(record.cells[1]).location == "lectures/intro.md:8"
    assert not mine.exists() and other.exists()  # read once; the other page's is left
    assert (folder / capture.SIDECARS_FOLDER
            / f"{cells.cache_key(cells.executable_nodes(tree))}.json").is_file()

    hit, _ = capture.page_record(tree, folder, tmp_path)  # no kernel ran: a cache hit
    assert hit.provenance == "cache"
    assert [c.seconds for c in hit.cells] == [0.5, 0.25]
    assert [r.docname for r in capture.build_records(folder, tmp_path)] == ["lectures/intro"]


def test_a_cache_hit_takes_the_page_facts_kept_with_its_sidecar(tmp_path, monkeypatch):
    """As on Sphinx (tests/test_cache_capture.py): a cache hit of the same page parses
    nothing and builds the same record; moved cells (Markdown added above them, which
    mystmd's cache key leaves out) derive the facts again once, and keep them."""
    from sphinx_gpu_admonition.model import enrich

    parses: list[int] = []
    original = enrich.read_code
    monkeypatch.setattr(enrich, "read_code", lambda *args: parses.append(1) or original(*args))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    folder, page = tmp_path / "capture", tmp_path / "intro.md"
    text = "# Intro\n\n```{code-cell} python\nimport jax\nx = 1\n```\n"
    page.write_text(text)
    tree = page_tree(code_block("import jax\nx = 1"))
    write_kernel(folder, page, [{"seconds": 0.5, "first_line": "import jax"}])
    executed, _ = capture.page_record(tree, folder, tmp_path)
    assert parses == [1]
    hit, warnings = capture.page_record(tree, folder, tmp_path)
    assert parses == [1] and warnings == []
    assert hit.cells == executed.cells and hit.provenance == "cache"
    page.write_text(text.replace("# Intro\n", "# Intro\n\nMore\nwords.\n"))
    moved, _ = capture.page_record(tree, folder, tmp_path)
    assert parses == [1, 1] and moved.cells[0].line == executed.cells[0].line + 3
    again, _ = capture.page_record(tree, folder, tmp_path)
    assert parses == [1, 1] and again.cells == moved.cells


def test_cells_nested_in_a_gated_solution_are_found_in_mystmds_order(tmp_path):
    """mystmd nests the cells of {solution-start} ... {solution-end} in the solution
    node and executes them with the page, inline expressions too (which the probe does
    not see: IPython runs no cell for them), skipping skip-execution blocks."""
    solution = {"type": "solution", "children": [code_block("b = 2"), code_block("c = 3")]}
    tree = page_tree(code_block("a = 1"),
                     {"type": "block", "children": [
                         {"type": "paragraph", "children": [
                             {"type": "inlineExpression", "value": "a + 1"}]}, solution]},
                     code_block("never = 1", ["skip-execution"]), code_block(""),
                     code_block("d = 4"))
    nodes = cells.executable_nodes(tree)
    assert [(n.kind, n.content) for n in nodes] == [
        ("block", "a = 1"), ("inlineExpression", "a + 1"), ("block", "b = 2"),
        ("block", "c = 3"), ("block", ""), ("block", "d = 4")]
    page = tmp_path / "a.md"
    page.write_text("".join(f"```{{code-cell}} python\n{code}\n```\n\n" for code in
                            ("a = 1", "b = 2", "c = 3", "never = 1", "", "d = 4")))
    found = cells.page_cells(tree, page)
    assert [(c.position, c.source, c.line) for c in found] == [
        (0, "a = 1", 1), (1, "b = 2", 5), (2, "c = 3", 9), (None, "", 17), (3, "d = 4", 21)]
    folder = tmp_path / "capture"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": line}
                                for line in ("a = 1", "b = 2", "c = 3", "d = 4")])
    record, warnings = capture.page_record(tree, folder, tmp_path)
    assert warnings == [] and [c.first_line for c in record.cells] == [
        "a = 1", "b = 2", "c = 3", "d = 4"]
    assert [n.label for n in record.cell_names()] == ["cell 1", "cell 2", "cell 3", "cell 4"]


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


def test_the_kernels_no_page_took_are_reported_and_every_file_removed(tmp_path):
    folder = tmp_path / "capture"
    (tmp_path / "mine.md").write_text("# A page whose tree the plugin never matched\n")
    mine = write_kernel(folder, tmp_path / "mine.md", [{"seconds": 0.5, "first_line": "x"}])
    old = write_kernel(folder, tmp_path / "old.md", [{"seconds": 0.5, "first_line": "y"}])
    data = [json.loads(line) for line in old.read_text().splitlines()]
    data[1]["time"] = 1_000.0  # an earlier build's kernel
    old.write_text("".join(json.dumps(line) + "\n" for line in data))
    crash = mine.with_name(mine.name + ".crash")
    crash.write_text("")
    records, warnings = capture.leftover_kernels(folder, tmp_path, since=1_700_000_000.0)
    assert [(r.docname, r.capture) for r in records] == [("mine", "failed")]
    assert warnings == [f"mine: capture failed: {records[0].capture_message} (the page ran; "
                        "its record has no cells)"]
    assert "no page of the build matched the 1 code cells its kernel ran" in warnings[0]
    assert not list((folder / capture.KERNELS_FOLDER).iterdir())
    assert [r.docname for r in capture.build_records(folder, tmp_path)] == ["mine"]


def test_changed_code_is_not_matched_with_an_old_kernel(tmp_path):
    folder = tmp_path / "capture"
    write_kernel(folder, tmp_path / "a.md", [{"seconds": 0.5, "first_line": "x = 1"}])
    record, _ = capture.page_record(page_tree(code_block("x = 2")), folder, tmp_path)
    assert record is None  # no data for this code: nothing is claimed


def test_an_unexpected_error_fails_the_page_and_a_tagged_one_does_not(tmp_path):
    folder, page = tmp_path / "capture", tmp_path / "a.md"
    cells = [{"seconds": 0.1, "first_line": "1 / 0", "error": "ZeroDivisionError"}]
    write_kernel(folder, page, cells)
    failed, _ = capture.page_record(page_tree(code_block("1 / 0")), folder, tmp_path)
    assert failed.status == "error" and failed.error.type == "ZeroDivisionError"
    assert failed.error.cell_index == 1
    write_kernel(folder, page, cells)
    tagged, _ = capture.page_record(page_tree(code_block("1 / 0", ["raises-exception"])),
                                    folder, tmp_path)
    assert tagged.status == "ok" and tagged.cells[0].error_expected


def test_a_notice_of_a_page_that_ran_on_a_gpu_keeps_its_claim(tmp_path):
    from sphinx_gpu_admonition.mystmd import notice

    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": "x = 1"}], backend="gpu")
    [admonition] = notice.directive({"options": {}})
    tree = page_tree(admonition, code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    notice.make_truthful(tree, record)
    text = text_of(tree["children"][1])
    assert "built using a machine with access to a GPU" in text
    assert text.endswith("This page was executed on GPU: Test device (JAX 0.10.2).")


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


def test_the_build_options_come_from_mysts_command_line():
    from sphinx_gpu_admonition.mystmd import build_options

    myst = ["node", "/x/myst", "build", "--execute", "--execute-parallel", "3", "--strict"]
    assert build_options.strict(myst)
    assert build_options.execute_parallel(myst) == 3
    assert build_options.execute_parallel(["myst", "--execute-parallel=2"]) == 2
    assert build_options.execute_parallel(["myst", "build"]) == 1
    if Path("/proc/self/cmdline").exists():  # this process's own arguments, read back
        assert build_options.parent_arguments(os.getpid())[:1] == [
            Path("/proc/self/cmdline").read_bytes().split(b"\0")[0].decode()]


def test_parallel_pages_on_one_gpu_with_preallocation_warn(tmp_path):
    from sphinx_gpu_admonition.mystmd import build_options

    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": "x = 1"}], backend="gpu")
    record, _ = capture.page_record(page_tree(code_block("x = 1")), folder, tmp_path)
    message = build_options.preallocation_warning(record, 3, {})
    assert "3 pages at once" in message and "XLA_PYTHON_CLIENT_PREALLOCATE=false" in message
    assert build_options.preallocation_warning(record, 1, {}) is None
    off = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert build_options.preallocation_warning(record, 3, off) is None
    record.environment.jax.backend = "cpu"
    assert build_options.preallocation_warning(record, 3, {}) is None


# -- settings: project: options: gpu_admonition: in myst.yml ---------------------------------
def write_settings(folder: Path, text: str) -> None:
    (folder / "myst.yml").write_text("version: 1\nproject:\n  title: T\n  options:\n"
                                     "    gpu_admonition:\n" + text)


def test_settings_are_the_sphinx_options_read_from_myst_yml(tmp_path):
    from sphinx_gpu_admonition.mystmd import settings

    assert settings.load(tmp_path) == (settings.DEFAULTS, [])  # no myst.yml: the defaults
    write_settings(tmp_path, "      expected_backend: cpu\n      slow_cell_seconds: 30\n"
                             "      colab_url: https://colab.example/{path}.ipynb\n")
    loaded, warnings = settings.load(tmp_path)
    assert warnings == []
    assert loaded.expected_backend == "cpu" and loaded.thresholds.slow_cell_seconds == 30
    assert loaded.colab_url == "https://colab.example/{path}.ipynb"


def test_wrong_settings_warn_and_their_defaults_apply(tmp_path):
    from sphinx_gpu_admonition.mystmd import settings

    write_settings(tmp_path, "      slow_cell_seconds: -1\n      gpu_expected_backend: cpu\n"
                             "      status_console: true\n      colour: red\n      language: xx\n")
    loaded, warnings = settings.load(tmp_path)
    assert loaded.thresholds.slow_cell_seconds == settings.DEFAULTS.thresholds.slow_cell_seconds
    assert loaded.expected_backend == "gpu" and loaded.language is None
    where = "myst.yml project: options: gpu_admonition: "
    assert warnings == [
        where + "'gpu_expected_backend' is written without the 'gpu_' prefix here "
                "('expected_backend'); ignored",
        where + "'status_console' does nothing on mystmd; ignored",
        where + "unknown setting 'colour'; ignored (known: expected_backend, colab_url, "
                "slow_cell_seconds, slow_cell_share, slow_cell_min_seconds, compile_share, "
                "recompile_threshold, warn_slow_cells, explain_recompilations, "
                "publish_interpreter_path, status_baseline, regression_ratio, "
                "warn_regressions, runtime_sources, admonition_runtime, "
                "notebook_budget_seconds, cell_badges, claim_much_factor, "
                "claim_similar_factor, claim_margin, language)",
        where + "invalid value -1 for slow_cell_seconds: must be a finite number >= 0; using "
                f"the default {settings.DEFAULTS.thresholds.slow_cell_seconds!r}",
        where + "no translation for language 'xx' (there are: en, zh_CN); the texts are "
                "English"]
    write_settings(tmp_path, "      - a list\n")
    assert settings.load(tmp_path)[1] == [where + "not a mapping (list), default "
                                          "settings apply"]


def test_the_notice_and_the_roles_speak_the_books_language(tmp_path, monkeypatch):
    """``language: zh_CN``: the package's catalog, as the Sphinx notice uses it."""
    from sphinx_gpu_admonition.mystmd import notice, runtime, settings

    write_settings(tmp_path, "      language: zh_CN\n")
    monkeypatch.chdir(tmp_path)
    [admonition] = plugin.directive("gpu", {"options": {}})
    assert "不过没有 GPU 也可以运行" in text_of(admonition)
    assert "Google Colab 提供可使用 GPU 的免费套餐" in text_of(admonition)
    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 125.0, "first_line": "x = 1"}])
    [role] = runtime.role("runtime-time", {"body": "this page"})
    tree = page_tree(admonition, {"type": "paragraph", "children": [role]}, code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    loaded = settings.load()[0]
    notice.make_truthful(tree, record, loaded)
    runtime.resolve(tree, lambda _target: record, lambda _target: [],
                    runtime.Texts(loaded.translate, loaded.ngettext), this_page_only=True)
    assert "本讲座为 GPU 编写" in text_of(tree) and "而非 GPU" in text_of(tree)
    assert text_of(tree["children"][2]) == "约 2 分钟"


def test_a_gpu_page_on_another_backend_warns_as_on_sphinx(tmp_path):
    folder, page = tmp_path / "capture", tmp_path / "a.md"
    write_kernel(folder, page, [{"seconds": 0.1, "first_line": "x = 1"}])
    from sphinx_gpu_admonition.mystmd import notice

    tree = page_tree(*notice.directive({"options": {}}), code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    warning = plugin.backend_warning(tree, record, "gpu")
    assert (warning.subtype, warning.message, warning.file) == (
        "backend", "page with a gpu directive executed on the 'cpu' backend, but "
        "expected_backend is 'gpu' (CPU: Test CPU, 2 cores)", record.source)
    assert plugin.backend_warning(tree, record, "cpu") is None
    assert plugin.backend_warning(page_tree(code_block("x = 1")), record, "gpu") is None


def test_warn_slow_cells_warns_per_flagged_cell_and_fails_its_junit_case_when_strict(tmp_path):
    """The warnings of the build's one analysis, made at the project stage (Sphinx's
    rule: render/analysis_warnings.py), each at its page and cell's line."""
    from xml.etree import ElementTree

    from sphinx_gpu_admonition.mystmd import project, settings, status
    from sphinx_gpu_admonition.render.junit import FailOn

    folder, page = tmp_path / "capture", tmp_path / "a.md"
    page.write_text("```{code-cell} python\nslow()\n```\n\n```{code-cell} python\nx = 1\n```\n")
    write_kernel(folder, page, [{"seconds": 60.0, "first_line": "slow()"},
                                {"seconds": 0.5, "first_line": "x = 1"}])
    record, _ = capture.page_record(page_tree(code_block("slow()"), code_block("x = 1")),
                                    folder, tmp_path)
    # opt-in, as on Sphinx
    assert project.project_build(settings.DEFAULTS, folder, root=tmp_path).of_page("a") == []
    write_settings(tmp_path, "      warn_slow_cells: true\n")
    opted_in = settings.load(tmp_path)[0]
    build = project.project_build(opted_in, folder, root=tmp_path)
    [warning] = build.of_page("a")
    assert build.of_page("other") == []
    # the Sphinx warning's words; where it points is mystmd's own: the page and line
    assert warning.message.startswith("slow cell 1 (60.0 s): slow: took 60.0 s")
    assert (warning.subtype, warning.file, warning.line) == (
        "slow_cell", record.source, record.cells[0].line) and warning.line == 1
    report, analysis = status.build_report([record], thresholds=opted_in.thresholds)
    for fail_on, failures in ((FailOn(), "0"), (FailOn(slow_cells=True), "1")):
        assert status.write_reports(report, analysis, tmp_path, fail_on) == []
        path = tmp_path / status.JUNIT_FILE
        assert ElementTree.parse(path).getroot().get("failures") == failures


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


def test_the_plugin_writes_the_findings_in_the_books_language_and_keeps_its_warnings(
        tmp_path, monkeypatch):
    """The plugin's own path, in process: ``language: zh_CN`` from myst.yml, a page's
    record at the document stage, the status page at the project stage: the reasons and
    actions are translated; the warnings stay English, are held on their page until its
    project stage shows them to mystmd, and are in the status file."""
    from sphinx_gpu_admonition.model.build_warnings import build_warnings
    from sphinx_gpu_admonition.mystmd import build_options, status, warnings

    # in process, the plugin's parent is no myst build: every kernel file is this build's
    monkeypatch.setattr(build_options, "build_started", lambda pid=None: None)
    write_settings(tmp_path, "      language: zh_CN\n      slow_cell_seconds: 1\n"
                             "      warn_slow_cells: true\n")
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "_build" / "sphinx-gpu-admonition"
    monkeypatch.setenv(capture.ENV_CAPTURE, str(folder))
    page = tmp_path / "a.md"
    page.write_text("# A\n\n```{code-cell} python\nslow()\n```\n\n```{code-cell} python\n"
                    "x = 1\n```\n")
    write_kernel(folder, page, [{"seconds": 12.0, "first_line": "slow()"},
                                {"seconds": 0.5, "first_line": "x = 1"}])
    tree = page_tree(code_block("slow()"), code_block("x = 1"))
    plugin.transform("gpu-capture", tree)  # the document stage
    status_page = {"type": "root", "children": status.placeholder()}
    plugin.transform("gpu-status", status_page)  # the project stage, on the status page
    text = text_of(status_page)
    assert "用时 12.0 s（上限 1.00 s）" in text and "对该单元格进行性能分析" in text
    assert "took" not in text and "profile the cell" not in text
    # the page's warning: held at its document stage, shown at its project stage
    assert not [n for n in walk(tree) if n.get("type") == "crossReference"]
    plugin.transform("gpu-status", tree)
    (shown,) = [n for n in walk(tree) if n.get("type") == "crossReference"]
    assert shown["urlSource"].startswith(f"{warnings.NAME} [slow_cell]: slow cell 1 (12.0 s)")
    assert shown["position"]["start"]["line"] == 3 and shown["children"] == []
    kept = build_warnings(read_status(folder.parent / "execution-status.json"))
    assert [(item.subtype, item.file, item.line) for item in kept] == [("slow_cell", "a.md", 3)]


def test_a_bad_baseline_or_runtime_source_warns_once_and_the_build_goes_on(tmp_path,
                                                                           monkeypatch):
    """``status_baseline`` and ``runtime_sources`` files that are missing, not JSON or the
    build's own output: one warning each per build (Sphinx's words, mystmd's setting
    names), and the analysis goes on without them."""
    from sphinx_gpu_admonition.mystmd import project, runtime, settings

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "_build" / "sphinx-gpu-admonition"
    (tmp_path / "broken.json").write_text("{not json")
    write_settings(tmp_path, "      status_baseline: broken.json\n"
                             "      runtime_sources: [missing.json, broken.json]\n")
    options = settings.load(tmp_path)[0]
    build = project.project_build(options, folder, root=tmp_path)
    [problem] = build.warnings
    assert (problem.subtype, problem.message.split(": ", 1)[0]) == (
        "baseline", "status_baseline ignored, the page renders without comparison")
    assert "broken.json: not JSON" in problem.message
    assert build.analysis.baseline is None and build.report.build["baseline"] is None
    assert project.project_build(options, folder, root=tmp_path).warnings == []  # once
    builds, problems = runtime.other_builds(options, folder)
    assert builds == [] and [p.split(" ignored")[0] for p in problems] == [
        "runtime_sources: 'missing.json'", "runtime_sources: 'broken.json'"]
    assert runtime.other_builds(options, folder)[1] == []
    # the build's own status file is never its baseline
    write_settings(tmp_path, "      status_baseline: _build/execution-status.json\n")
    (tmp_path / "_build" / "execution-status.json").write_text("{}")
    [own] = project.project_build(settings.load(tmp_path)[0], folder, root=tmp_path).warnings
    assert "is this build's own output" in own.message


def test_a_pages_budget_comes_from_its_front_matter_options(tmp_path):
    """``options: gpu_budget_seconds`` (mystmd's free mapping of a page's front matter; a
    key of its own counts too), ``none`` switches the book's off, a bad value warns at
    its line and the book's budget applies."""
    from sphinx_gpu_admonition.model.record import NotebookRecord
    from sphinx_gpu_admonition.mystmd import pages, settings

    write_settings(tmp_path, "      notebook_budget_seconds: 60\n")
    options = settings.load(tmp_path)[0]
    texts = {"own": "---\noptions:\n  gpu_budget_seconds: 300\n---\n# Own\n",
             "key": "---\ngpu_budget_seconds: '30'\n---\n\n# Key\n",
             "off": "---\noptions:\n  gpu_budget_seconds: none\n---\n",
             "bad": "---\ntitle: Bad budget\noptions:\n  gpu_budget_seconds: soon\n---\n",
             "book": "# The book's budget\n"}
    records = []
    for name, text in texts.items():
        (tmp_path / f"{name}.md").write_text(text)
        records.append(NotebookRecord(docname=name, status="ok", source=f"{name}.md"))
    [(record, message, line)] = pages.apply_front_matter(records, options, tmp_path)
    assert {r.docname: r.budget_seconds for r in records} == {
        "own": 300.0, "key": 30.0, "off": None, "bad": 60.0, "book": 60.0}
    assert (record.docname, line) == ("bad", 4)
    assert message.startswith("invalid gpu_budget_seconds 'soon': ") and message.endswith(
        "using notebook_budget_seconds (60.0)")
    assert [r.title for r in records] == ["Own", "Key", "", "Bad budget", "The book's budget"]


def test_the_notices_runtime_option_states_the_run_time_or_warns(tmp_path, monkeypatch):
    """``:runtime:`` (no value, on, off; ``admonition_runtime`` the book's default): the
    Sphinx notice's sentence once the page ran; a bad value and a page without data
    warn; the directive's warning is the page's, adopted at its document stage."""
    from sphinx_gpu_admonition.mystmd import notice, runtime, warnings

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "capture"
    [stated] = notice.directive({"options": {"runtime": ""}})
    assert notice.directive({"options": {"runtime": "off"}})[0] == notice.directive(
        {"options": {}})[0]
    write_kernel(folder, tmp_path / "a.md", [{"seconds": 125.0, "first_line": "x = 1"}])
    tree = page_tree(stated, code_block("x = 1"))
    record, _ = capture.page_record(tree, folder, tmp_path)
    assert runtime.resolve(tree, lambda _t: record, lambda _t: [], runtime.Texts(),
                           this_page_only=True) == []
    sentence = [n for n in walk(tree) if runtime.NOTICE_CLASS in str(n.get("class"))]
    assert [text_of(n) for n in sentence] == [
        "It runs in about 2 minutes on a CPU (Test CPU)."]
    # no data: left out, and a notice that asked for it warns
    empty = page_tree(*notice.directive({"options": {"runtime": "on"}}))
    [why] = runtime.resolve(empty, lambda _t: None, lambda _t: [], runtime.Texts(), True)
    assert why.startswith("the gpu notice cannot state the run time: not an executed page")
    assert not [n for n in walk(empty) if runtime.NOTICE_CLASS in str(n.get("class"))]
    # a bad value: held by the directive, adopted by the page's document stage
    nodes = notice.directive({"options": {"runtime": "maybe"},
                              "node": {"position": {"start": {"line": 7}}}})
    page = {"type": "root", "children": nodes}
    [adopted] = warnings.adopt(page, "a.md", folder)
    assert (adopted.subtype, adopted.file, adopted.line) == ("directive", "a.md", 7)
    assert adopted.message == ("gpu: invalid :runtime: 'maybe' (no value, on or off); using "
                               "admonition_runtime (False)")
    assert warnings.kept(folder) == [adopted] and warnings.adopt(page, "a.md", folder) == []
    warnings.show(page, [])
    [shown] = [n for n in walk(page) if n.get("type") == "crossReference"]
    assert shown["position"]["start"]["line"] == 7


def test_the_status_directives_options_shape_the_table_as_on_sphinx(tmp_path):
    """``{execution-status}``'s ``:sort:``, ``:min-seconds:``, ``:cells:`` and ``:columns:``
    on mystmd: the Sphinx directive's rule (render/status_rows.parse_options) kept in the
    placeholder and applied at the project stage; a bad value warns at the directive's
    line (adopted by the page's document stage) and its default applies."""
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.mystmd import status, warnings

    report = read_status(PROJECT / "tests" / "roots" / "parity" / "_static"
                         / "gpu-runner-status.json")  # lecture (slower) and timing
    report.by_docname()["lecture"].title = "Zeta"  # last by name, first by time
    analysis = analyse(report, Thresholds())

    def page(options: dict[str, Any]) -> dict[str, Any]:
        tree = {"type": "root", "children": plugin.directive("execution-status", {
            "options": options, "node": {"position": {"start": {"line": 5}}}})}
        assert status.fill_placeholders(tree, report, analysis)
        return tree

    default = page({})
    assert [row[0] for row in status_table(default)[1:-1]] == [
        "Zetalecture", "Run times of other buildstiming"]  # the slowest first
    assert [n for n in walk(default) if "gpu-status-cell-table" in str(n.get("class"))]
    # a limit between the two notebooks' run times (the runner file's, as measured)
    times = {nb.docname: nb.runtime_seconds for nb in report.notebooks}
    between = (times["lecture"] + times["timing"]) / 2
    shaped = page({"sort": "name", "columns": "time, cells", "cells": "no",
                   "min-seconds": f"{between:.3f}"})
    rows = status_table(shaped)
    assert rows[0] == ["Notebook", "Time", "Code cells"]
    assert [row[0] for row in rows[1:-1]] == ["Zetalecture"]  # timing is faster
    assert not [n for n in walk(shaped) if "gpu-status-cell-table" in str(n.get("class"))]
    by_name = page({"sort": "name"})
    assert [row[0] for row in status_table(by_name)[1:-1]] == [
        "Run times of other buildstiming", "Zetalecture"]
    # a bad value: the default, and the Sphinx directive's warning at the line
    bad = page({"sort": "fastest", "min-seconds": "soon"})
    assert status_table(bad)[0] == status_table(default)[0]
    adopted = warnings.adopt(bad, "status.md", tmp_path)
    assert [(item.subtype, item.file, item.line) for item in adopted] == [
        ("directive", "status.md", 5)] * 2
    assert adopted[0].message.startswith("execution-status: invalid :sort: 'fastest'")
    assert adopted[1].message.startswith("execution-status: invalid :min-seconds: 'soon'")
