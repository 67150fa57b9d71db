"""What an executed page says about where it ran, and the expected-backend check.

The pages' notebooks execute once, in the module's first build (expecting a GPU,
the box on top); the other builds change only the configuration and take the
notebooks from that build's jupyter-cache, so no kernel starts again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import MYST_HEADER, ProjectBuild, build_project

JAX_PAGE = MYST_HEADER + ("# Uses JAX\n\n```{gpu}\n```\n\n```{code-cell} ipython3\n"
                     "import jax.numpy as jnp\nfloat(jnp.ones(3).sum())\n```\n")
PLAIN_PAGE = MYST_HEADER + "# No JAX\n\n```{gpu}\n```\n\n```{code-cell} ipython3\nx = 1\n```\n"
NO_ADMONITION = MYST_HEADER + "# No admonition\n\n```{code-cell} ipython3\ny = 2\n```\n"
FILES = {
    "index.md": "# Pages\n\n```{toctree}\njaxpage\nplain\nquiet\n```\n",
    "jaxpage.md": JAX_PAGE, "plain.md": PLAIN_PAGE, "quiet.md": NO_ADMONITION,
    "myst.md": "# x\n", "rest.rst": "x\n=\n", "notebook.md": NO_ADMONITION,
}


@pytest.fixture(scope="module")
def jupyter_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("page-info-cache") / "jupyter_cache"


def build(dest: Path, jupyter_cache: Path, **config: object) -> ProjectBuild:
    return build_project("admonition", dest, files=FILES, confoverrides=config,
                         conf_append=f"nb_execution_mode = 'cache'\n"
                                     f"nb_execution_cache_path = {str(jupyter_cache)!r}")


@pytest.fixture(scope="module")
def expecting_gpu(tmp_path_factory: pytest.TempPathFactory,
                  jupyter_cache: Path) -> ProjectBuild:
    """The build that executes the notebooks (into ``jupyter_cache``)."""
    return build(tmp_path_factory.mktemp("gpu"), jupyter_cache, gpu_expected_backend="gpu",
                 gpu_execution_info="top")


@pytest.fixture
def rebuild(tmp_path: Path, jupyter_cache: Path,
            expecting_gpu: ProjectBuild) -> Callable[..., ProjectBuild]:
    """``rebuild(**config)``: the same pages with other options, notebooks from the cache."""
    return lambda **config: build(tmp_path, jupyter_cache, **config)


def backend_warnings(result: ProjectBuild) -> list[str]:
    return [line for line in result.warning_lines if "[gpu_admonition.backend]" in line]


def test_expected_gpu_but_ran_on_cpu_warns_with_file_and_line(
        expecting_gpu: ProjectBuild) -> None:
    warnings = backend_warnings(expecting_gpu)
    jax_warning = next(w for w in warnings if "jaxpage.md" in w)
    assert re.search(r"jaxpage\.md:1[12]: ", jax_warning)  # the {gpu} directive's line
    assert "'cpu' backend" in jax_warning and "'gpu'" in jax_warning
    plain_warning = next(w for w in warnings if "plain.md" in w)
    assert "without initialising a JAX backend" in plain_warning
    assert not any("quiet.md" in w for w in warnings)  # no {gpu}: no expectation


def test_the_rebuilds_execute_nothing(expecting_gpu: ProjectBuild, rebuild) -> None:
    assert "Executed notebook in" in expecting_gpu.status
    result = rebuild(gpu_execution_info="bottom")
    assert "Using cached notebook" in result.status
    assert "Executed notebook in" not in result.status
    assert "Executed on CPU: " in result.read("jaxpage.html")


def test_expected_cpu_is_quiet_for_the_jax_page(rebuild) -> None:
    result = rebuild(gpu_expected_backend="cpu")
    warnings = backend_warnings(result)
    assert [w for w in warnings if "jaxpage.md" in w] == []
    assert [w for w in warnings if "plain.md" in w]  # it never initialised a backend


def test_top_position_puts_the_line_under_the_title(expecting_gpu: ProjectBuild) -> None:
    page = BeautifulSoup(expecting_gpu.read("jaxpage.html"), "html.parser")
    section = page.select_one("section")
    first_after_title = section.find_all(recursive=False)[1]
    assert "gpu-execution-info" in first_after_title.get("class", [])
    assert first_after_title.summary.get_text().startswith("Executed on CPU: ")
    notice = page.select_one(".gpu-admonition")
    # one voice: written for a GPU, this copy ran without one
    assert notice.select_one("p.gpu-notice-intro").get_text() == (
        "This lecture was written for a GPU, although it will also run without one.")
    sentence = notice.select_one(".gpu-executed-on").get_text()
    assert sentence.startswith("This page was executed on CPU: ")
    assert sentence.endswith(", not on a GPU.")


def test_the_box_is_not_in_the_search_index(expecting_gpu: ProjectBuild) -> None:
    """Every notebook page has the box: were its words indexed, searching for "CPU" or
    "executed" would list every notebook.  The quiet page (title, code, box) is
    found by its title only."""
    text = expecting_gpu.read("searchindex.js")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    quiet = index["docnames"].index("quiet")
    words = {term for term, docs in index["terms"].items()
             if quiet in (docs if isinstance(docs, list) else [docs])}
    titles = {title for title, places in index["alltitles"].items()
              if any(place[0] == quiet for place in places)}
    assert titles == {"No admonition"}
    assert not words & {"execut", "executed", "cpu", "core", "cores", "python", "os"}, words
    assert "Executed on CPU: " in expecting_gpu.read("quiet.html")  # still on the page


@pytest.mark.parametrize("position", ["bottom", "admonition", "off"])
def test_other_positions(rebuild, position: str) -> None:
    result = rebuild(gpu_execution_info=position)
    page = BeautifulSoup(result.read("jaxpage.html"), "html.parser")
    info = page.select("details.gpu-execution-info")
    if position == "off":
        assert info == [] and page.select(".gpu-executed-on") == []
        return
    (box,) = info
    in_admonition = box.find_parent(class_="gpu-admonition") is not None
    assert in_admonition == (position == "admonition")
    if position == "bottom":
        section = page.select_one("section")
        assert section.find_all(recursive=False)[-1] is box
    # the page without an admonition still gets the box, except in "admonition" mode
    quiet = BeautifulSoup(result.read("quiet.html"), "html.parser")
    assert bool(quiet.select("details.gpu-execution-info")) == (position == "bottom")


def test_bad_position_warns_and_uses_the_default(rebuild) -> None:
    result = rebuild(gpu_execution_info="sideways")
    assert any("gpu_execution_info" in w and "[gpu_admonition.config]" in w
               for w in result.warning_lines)
    page = BeautifulSoup(result.read("jaxpage.html"), "html.parser")
    section = page.select_one("section")
    assert "gpu-execution-info" in section.find_all(recursive=False)[-1].get("class", [])


