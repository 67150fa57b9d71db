"""What the capture keeps with the jupyter-cache: the package list and why a notebook
missed the cache (issue 26, items 7 and 11).

Real builds of ``tests/roots/cachemiss`` (one notebook, no JAX) sharing one
jupyter-cache: the first executes the notebook (a new notebook), a fresh build from
the same cache takes every output from it, and edits of the notebook (a cell's code,
a cell's tag, the kernelspec) each miss the cache with their reason on the page, in
``execution-status.json`` and in the console summary.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import ROOTS, ProjectBuild, sphinx_build

from sphinx_gpu_admonition.model.files import SIDECAR_FOLDER


def copy_root(dest: Path, cache: Path) -> Path:
    srcdir = dest / "src"
    shutil.copytree(ROOTS / "cachemiss", srcdir)
    with (srcdir / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write(f"\nnb_execution_cache_path = {str(cache)!r}\n")
    return srcdir


def build(srcdir: Path) -> ProjectBuild:
    return sphinx_build(srcdir, srcdir.parent / "_build")


def lecture(build: ProjectBuild) -> dict:
    data = json.loads(build.read("execution-status.json"))
    return next(nb for nb in data["notebooks"] if nb["docname"] == "lecture")


def status_page(build: ProjectBuild) -> BeautifulSoup:
    return BeautifulSoup(build.read("status.html"), "lxml")


def cache_miss_on_page(build: ProjectBuild) -> str | None:
    found = status_page(build).select_one(".gpu-status-cache-miss")
    return found.get_text() if found is not None else None


def environment_rows(build: ProjectBuild) -> dict[str, str]:
    table = status_page(build).select_one("table.gpu-environment-table")
    return {tr.th.get_text(): tr.td.get_text() for tr in table.select("tbody tr")}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cachemiss") / "jupyter_cache"


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> ProjectBuild:
    """The build that executes the notebook into the empty cache."""
    return build(copy_root(tmp_path_factory.mktemp("first"), cache))


@pytest.fixture(scope="module")
def hits(tmp_path_factory: pytest.TempPathFactory, cache: Path,
         first: ProjectBuild) -> ProjectBuild:
    """A fresh build (another folder, as a CI deploy) whose outputs all come from the cache."""
    return build(copy_root(tmp_path_factory.mktemp("hits"), cache))


def test_a_new_notebook_misses_the_cache(first: ProjectBuild):
    record = lecture(first)
    assert record["provenance"] == "executed"
    assert record["cache_miss"] == {"reason": "new_notebook", "cell": None}
    assert cache_miss_on_page(first) == (
        "Executed instead of taken from the cache: a new notebook (the cache held no copy "
        "of it).")
    assert "cache misses (1): lecture (a new notebook" in first.status


def test_cache_hits_list_the_packages_of_the_run_that_made_the_outputs(hits: ProjectBuild):
    record = lecture(hits)
    assert record["provenance"] == "cache"
    assert record["cache_miss"] is None  # a hit missed nothing
    assert "cache misses" not in hits.status
    assert cache_miss_on_page(hits) is None
    packages = record["packages"]
    assert "jupyter-cache" in {name.lower() for name in packages["distributions"]}
    page = status_page(hits)
    (details,) = page.select("details.gpu-environment-packages")
    assert details.summary.get_text().startswith("Installed packages in the kernel's environment")
    assert packages["executable"] in details.get_text()
    assert page.select_one(".gpu-environment-packages-missing") is None
    # a CPU machine says it had no GPU, rather than leaving the row out
    assert environment_rows(hits)["GPU"] == "none"


def edited(tmp_path: Path, cache: Path, old: str, new: str) -> ProjectBuild:
    """A fresh build, from a copy of the shared cache (each edit is compared with the
    first build's record, not with another test's), of the notebook with ``old`` replaced."""
    copied = tmp_path / "jupyter_cache"
    shutil.copytree(cache, copied)
    srcdir = copy_root(tmp_path, copied)
    source = srcdir / "lecture.md"
    text = source.read_text(encoding="utf-8")
    assert old in text
    source.write_text(text.replace(old, new), encoding="utf-8")
    return build(srcdir)


@pytest.mark.parametrize(("old", "new", "reason", "cell", "said"), [
    ("print(x + 1)", "print(x + 2)", "cell_changed", "cell 2", "the code of cell 2 changed"),
    ("```{code-cell}\nx = 1", "```{code-cell}\n:tags: [hide-input]\nx = 1", "metadata_changed",
     "cell 1", "the metadata of cell 1 changed"),
    ("display_name: Python 3", "display_name: Python (lectures)", "kernel_changed", None,
     "the notebook's kernel changed"),
    # a failed execution is not cached; the reason comes from the notebook as read
    ("print(x + 1)", "print(undefined_name)", "cell_changed", "cell 2",
     "the code of cell 2 changed"),
], ids=["code", "tag", "kernel", "failed"])
def test_why_an_edited_notebook_missed_the_cache(tmp_path: Path, cache: Path,
                                                 hits: ProjectBuild, old: str, new: str,
                                                 reason: str, cell: str | None, said: str):
    result = edited(tmp_path, cache, old, new)
    record = lecture(result)
    assert record["provenance"] == "executed"
    assert record["cache_miss"] == {"reason": reason, "cell": cell}
    assert cache_miss_on_page(result) == f"Executed instead of taken from the cache: {said}."
    assert f"cache misses (1): lecture ({said})" in result.status


def test_cached_outputs_without_a_package_list_say_why(tmp_path: Path, cache: Path,
                                                       hits: ProjectBuild):
    """Sidecars of a release that kept no list (version 3): the page says why there is none."""
    copied = tmp_path / "old_cache"
    shutil.copytree(cache, copied)
    for sidecar in (copied / SIDECAR_FOLDER).glob("*.json"):
        data = json.loads(sidecar.read_text(encoding="utf-8"))
        data["sidecar_version"] = 3
        data["record"].pop("packages", None)
        data["record"].pop("cache_miss", None)
        sidecar.write_text(json.dumps(data), encoding="utf-8")
    result = build(copy_root(tmp_path, copied))
    assert lecture(result)["provenance"] == "cache"
    assert lecture(result)["capture"] == "ok"  # the measurements are still there
    page = status_page(result)
    assert page.select_one("details.gpu-environment-packages") is None
    missing = page.select_one(".gpu-environment-packages-missing").get_text()
    assert missing.startswith("No package list: these outputs come from the jupyter-cache")
    assert result.warning_lines == []


def test_a_cache_hit_takes_the_page_facts_kept_with_its_sidecar(
        tmp_path: Path, cache: Path, hits: ProjectBuild, monkeypatch: pytest.MonkeyPatch):
    """What the builder derives from a page (its code's parse, the cells' marks and lines)
    is kept in the sidecar: a rebuild of the same page parses nothing and makes the same
    record; Markdown that moves the cells (no cache miss: jupyter-cache hashes only the
    code) derives them again once, with the new lines, and keeps them."""
    from sphinx_gpu_admonition.model import enrich

    parses: list[int] = []
    original = enrich.read_code
    monkeypatch.setattr(enrich, "read_code",
                        lambda *args: parses.append(1) or original(*args))
    derived: list[int] = []  # every derivation from the page, the parse's included
    original_facts = enrich.page_facts
    monkeypatch.setattr(enrich, "page_facts",
                        lambda *args: derived.append(1) or original_facts(*args))
    copied = tmp_path / "jupyter_cache"
    shutil.copytree(cache, copied)
    same = build(copy_root(tmp_path / "same", copied))
    assert parses == [] and derived == []
    expected = lecture(hits)
    assert lecture(same)["cells"] == expected["cells"]
    assert lecture(same)["user_functions"] == expected["user_functions"]

    srcdir = copy_root(tmp_path / "moved", copied)
    source = srcdir / "lecture.md"
    source.write_text(source.read_text(encoding="utf-8").replace(
        "# A lecture\n", "# A lecture\n\nTwo lines\nmore.\n"), encoding="utf-8")
    moved = build(srcdir)
    assert parses == [1] and derived == [1] and lecture(moved)["provenance"] == "cache"
    assert [cell["line"] for cell in lecture(moved)["cells"]] == [
        cell["line"] + 3 for cell in expected["cells"]]
    shutil.rmtree(srcdir.parent / "_build")
    again = build(srcdir)
    assert parses == [1] and derived == [1]
    assert lecture(again)["cells"] == lecture(moved)["cells"]
    assert again.warning_lines == []
