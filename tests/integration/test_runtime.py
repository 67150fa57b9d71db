"""How long a page takes to run, and on what: the runtime roles and the gpu notice.

One small book (tests/roots/runtime: one notebook with a short sleep cell, one
page without code) is executed once (jupyter-cache mode) and written with the
html, text, latex and man builders from the same doctrees; then the notebook's
prose changes and an incremental html build reads it again from the cache,
and then the GPU runner's status file changes and html is built once more.
The wording is tested in-process in tests/unit/ext/test_runtime.py.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import ROOTS, ProjectBuild, sphinx_build
from unit.ext.test_runtime import (
    LAPTOP,
    gpu_runner,
    old_laptop,
)

from sphinx_gpu_admonition.ext.runtime import (
    device_phrase,
    reader_time,
    references,
)
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.model.formatting import format_seconds
from sphinx_gpu_admonition.model.record import SCHEMA_ID, SCHEMA_VERSION, NotebookRecord

bs4 = pytest.importorskip("bs4")


def _status(*notebooks: dict) -> str:
    return json.dumps({"schema": SCHEMA_ID, "schema_version": SCHEMA_VERSION,
                       "build": {"note": "hand-made for tests/test_runtime.py"},
                       "notebooks": list(notebooks), "analysis": {}})


@dataclasses.dataclass
class Book:
    srcdir: Path
    html: ProjectBuild
    text: ProjectBuild
    latex: ProjectBuild
    man: ProjectBuild
    #: the root page's tree holds every page (the roles are on pages below it)
    singlehtml: ProjectBuild
    #: the notebook's record after the build that executed it
    executed: NotebookRecord
    #: html again after an edit of the notebook's prose (a cache hit)
    rebuilt: ProjectBuild
    #: html again after the GPU runner's status file changed
    new_sources: ProjectBuild


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Book:
    dest = tmp_path_factory.mktemp("runtime-book")
    srcdir = dest / "src"
    shutil.copytree(ROOTS / "runtime", srcdir)
    (srcdir / "gpu-status.json").write_text(_status(gpu_runner()), encoding="utf-8")
    (srcdir / "old-status.json").write_text(_status(old_laptop()), encoding="utf-8")
    (srcdir / "broken.json").write_text("{", encoding="utf-8")
    builddir = dest / "_build"
    html = sphinx_build(srcdir, builddir, "html", freshenv=True)
    text = sphinx_build(srcdir, builddir, "text")
    latex = sphinx_build(srcdir, builddir, "latex")
    man = sphinx_build(srcdir, builddir, "man")
    singlehtml = sphinx_build(srcdir, builddir, "singlehtml")
    executed = read_status(html.outdir / "execution-status.json").by_docname()["sleepy"]
    with (srcdir / "sleepy.md").open("a", encoding="utf-8") as notebook:
        notebook.write("\nThe end.\n")
    rebuilt = sphinx_build(srcdir, builddir, "html")
    retired = {**gpu_runner(), "docname": "retired"}
    (srcdir / "gpu-status.json").write_text(_status(gpu_runner(), retired), encoding="utf-8")
    new_sources = sphinx_build(srcdir, builddir, "html")
    return Book(srcdir, html, text, latex, man, singlehtml, executed, rebuilt, new_sources)


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def this_build(book: Book) -> NotebookRecord:
    return read_status(book.html.outdir / "execution-status.json").by_docname()["sleepy"]


# -- the book ----------------------------------------------------------------------------
def test_page_states_both_builds_from_the_records(book, language):
    """Done when: the text and the notice give this build's time and the other build's."""
    record = this_build(book)
    gpu = read_status(book.srcdir / "gpu-status.json").by_docname()["sleepy"]
    mine = f"{reader_time(record.seconds)} on {device_phrase(record)}"
    theirs = f"{reader_time(gpu.seconds)} on {device_phrase(gpu)}"
    assert theirs == "about 2 minutes on a GPU (Tesla T4)"
    old = f"about 25 minutes on a CPU ({LAPTOP}), measured on an earlier version"

    page = bs4.BeautifulSoup(book.html.read("sleepy.html"), "html.parser")
    notice = page.select_one("div.gpu-admonition p.gpu-runtime")
    assert squash(notice.get_text()) == f"It runs in {mine}, {theirs} and {old}."
    text = squash(page.select_one("main, div.body, body").get_text(" "))
    assert f"Full: It runs in {mine} ." in text
    assert f"Time: {reader_time(record.seconds)} ." in text
    assert f"Device: {device_phrase(record)} ." in text
    assert f"All: {mine} , {theirs} and {old} ." in text
    # the exact figures are one hover away
    titles = [abbr["title"] for abbr in notice.select("abbr")]
    assert len(titles) == 3
    assert "130.0 s" in titles[1] and "GPU: Tesla T4" in titles[1]
    assert "gpu-status.json" in titles[1] and "old-status.json" in titles[2]
    assert record.environment.device_label in titles[0]


def test_other_pages_and_html_escaping(book):
    page = book.html.read("prose.html")
    soup = bs4.BeautifulSoup(page, "html.parser")
    runtimes = [squash(n.get_text()) for n in soup.select("span.gpu-runtime")]
    record = this_build(book)
    assert runtimes == [
        "an unknown time (not measured yet)",
        f"{reader_time(record.seconds)} on {device_phrase(record)}",
        device_phrase(record),
        "an unknown time (not measured yet)",
    ]
    # a requested notice without data leaves the sentence out; so does the site default
    assert len(soup.select("div.gpu-admonition")) == 3
    assert not soup.select("div.gpu-admonition p.gpu-runtime")
    sleepy = book.html.read("sleepy.html")
    assert "Laptop &lt;CPU&gt; &amp; co" in sleepy and LAPTOP not in sleepy


def test_every_builder_says_it(book):
    record = this_build(book)
    mine = f"{reader_time(record.seconds)} on {device_phrase(record)}"
    text = squash(book.text.read("sleepy.txt"))
    assert f"It runs in {mine}, about 2 minutes on a GPU (Tesla T4) and about 25 minutes" in text
    assert f"Full: It runs in {mine}." in text
    latex = squash(next(book.latex.outdir.glob("*.tex")).read_text(encoding="utf-8"))
    assert "about 2 minutes on a GPU (Tesla T4)" in latex
    assert r"Laptop \textless{}CPU\textgreater{} \& co" in latex  # escaped
    man = squash(next(book.man.outdir.glob("*.1")).read_text(encoding="utf-8"))
    assert "about 2 minutes on a GPU (Tesla T4)" in man
    single = squash(BeautifulSoup(book.singlehtml.read("index.html"), "html.parser").get_text())
    assert f"It runs in {mine}, about 2 minutes on a GPU (Tesla T4)" in single
    # exact figures stay out of print (only the HTML tooltip has them)
    assert "130.0 s" not in text + latex + man


def test_notice_option_and_site_default(book):
    """:runtime: asks, :runtime: off opts out, the site default covers the rest."""
    sleepy = bs4.BeautifulSoup(book.html.read("sleepy.html"), "html.parser")
    notices = sleepy.select("div.gpu-admonition")
    assert [bool(n.select("p.gpu-runtime")) for n in notices] == [True, False, True]
    assert squash(notices[0].select_one("p.gpu-runtime").get_text()) == squash(
        notices[2].select_one("p.gpu-runtime").get_text())
    # the sentence comes before the page's "executed on" line
    classes = [p.get("class", []) for p in notices[0].find_all("p", recursive=False)]
    assert classes.index(["gpu-runtime"]) < classes.index(["gpu-executed-on"])


def test_no_data_warns_once_per_use_with_its_line(book):
    warnings = [line for line in book.html.warning_lines if "gpu_admonition" in line]
    runtime = [line for line in warnings if "[gpu_admonition.runtime]" in line]
    assert sum("missing.json" in line for line in runtime) == 1
    assert sum("broken.json" in line and "not JSON" in line for line in runtime) == 1
    assert any("prose.md:3" in line and "gpu notice" in line for line in runtime), runtime
    assert any("prose.md:14" in line and "'prose'" in line for line in runtime), runtime
    assert any("prose.md:18" in line and "no such document" in line for line in runtime)
    assert len(runtime) == 5, runtime
    directive = [line for line in warnings if "[gpu_admonition.directive]" in line]
    assert len(directive) == 1 and "prose.md:7" in directive[0] and "'maybe'" in directive[0]
    assert not any("sleepy" in line for line in warnings), warnings


def test_a_cached_run_states_the_run_that_produced_the_outputs(book):
    record = this_build(book)
    assert book.executed.provenance == "executed" and record.provenance == "cache"
    assert record.seconds == book.executed.seconds
    page = bs4.BeautifulSoup(book.rebuilt.read("sleepy.html"), "html.parser")
    assert "The end." in page.get_text()
    first = page.select_one("div.gpu-admonition p.gpu-runtime abbr")
    assert first["title"].startswith(format_seconds(book.executed.seconds) + " · ")
    assert squash(first.get_text()) == f"{reader_time(record.seconds)} on {device_phrase(record)}"


def written(build: ProjectBuild) -> list[str]:
    return sorted(re.findall(r"writing output\.\.\. \[\s*\d+%\] (\S+)", build.status))


def test_pages_referring_to_a_page_read_again_are_rewritten(book):
    # index: Sphinx rewrites a changed page's parent; prose: its roles name sleepy
    # (without the env-updated handler only index and sleepy are written)
    assert written(book.rebuilt) == ["index", "prose", "sleepy"], book.rebuilt.status
    assert references(book.rebuilt.app.env) == {
        "prose": {"pages": ["no-such-page", "sleepy"], "other_builds": True},
        "sleepy": {"pages": [], "other_builds": True},
    }


def test_pages_stating_other_builds_are_rewritten_when_their_files_change(book):
    """Written again, not read again: a changed status file never re-executes a page."""
    assert "0 added, 0 changed, 0 removed" in book.new_sources.status
    # both pages have a notice (the site default); index is their toctree parent
    assert written(book.new_sources) == ["index", "prose", "sleepy"], book.new_sources.status
