"""The ``{execution-environment}`` directive: the machines the notebooks ran on.

The real build (``status_book`` in conftest) ran every notebook on this machine's
CPU; the GPU machine comes from a hand-written record of a Tesla T4 runner (the
same environment as the baseline of the status tests).  Two machines on one page
from a real cache are covered in ``test_status_page.py::test_two_machines_from_the_cache``.
"""

from __future__ import annotations

from bs4 import BeautifulSoup
from conftest import StatusBook
from unit.ext.test_environment_table import rows_of


def soup_of(path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "lxml")


def test_one_machine_in_the_html_build(status_book: StatusBook):
    page = soup_of(status_book.html.outdir / "status.html")
    tables = page.select(".gpu-execution-environment table.gpu-environment-table")
    assert len(tables) == 1
    table = tables[0]
    assert table.caption.get_text().startswith("Execution environment: CPU")
    assert all(tr.th["scope"] == "row" for tr in table.select("tbody tr"))
    rows = rows_of(table)
    assert {"CPU", "Memory", "JAX backend", "JAX devices", "JAX", "Python"} <= rows.keys()
    assert rows["JAX backend"] == "cpu"
    assert rows["JAX devices"] == "1x cpu:cpu"
    assert rows["JAX"].startswith("jax ")
    assert not any(key.startswith("Notebooks") for key in rows)  # only one machine
    assert rows["GPU"] == "none"  # said, not left out: the machine had no GPU


def test_text_and_latex_builders(status_book: StatusBook):
    text = status_book.text.read("status.txt")
    assert "Execution environment: CPU" in text
    assert "JAX backend" in text
    tex = next(status_book.latex.outdir.glob("*.tex")).read_text(encoding="utf-8")
    assert "Execution environment: CPU" in tex


def test_two_directives_on_one_page_have_distinct_ids(status_book: StatusBook):
    page = soup_of(status_book.html.outdir / "options.html")
    tables = page.select(".gpu-execution-environment table.gpu-environment-table")
    assert len(tables) == 2
    ids = [element["id"] for element in page.select("[id]")]
    assert len(ids) == len(set(ids))
    # the first directive keeps the short form that links point at
    assert tables[0]["id"] == "gpu-environment-1"


def test_the_interpreter_path_can_be_left_out_of_every_public_file(tmp_path):
    """``gpu_publish_interpreter_path = False``: the status page's package list and
    ``execution-status.json`` do not name the kernel's Python (issue 33, item 8); by
    default they name it as the policy says (here: absolute, outside the checkout and
    the home folder)."""
    import json
    import sys

    from conftest import MYST_HEADER, build_project

    from sphinx_gpu_admonition.model.files import public_path
    from sphinx_gpu_admonition.mystmd.environment import packages_nodes

    files = {"index.md": "# Book\n\n```{toctree}\nstatus\npage\n```\n",
             "status.md": "# Status\n\n```{execution-environment}\n:packages:\n```\n",
             "page.md": MYST_HEADER + "# Page\n\n```{code-cell} ipython3\nx = 1\n```\n"}
    shown = public_path(sys.executable)
    for publish in (True, False):
        build = build_project("outcomes", tmp_path / str(publish), files=files,
                              confoverrides={"gpu_publish_interpreter_path": publish,
                                             # a cache miss keeps the list in its record
                                             "nb_execution_mode": "cache"})
        page = soup_of(build.outdir / "status.html")
        (details,) = page.select("details.gpu-environment-packages")
        (record,) = [nb for nb in json.loads(build.read("execution-status.json"))["notebooks"]
                     if nb["docname"] == "page"]
        assert record["packages"]["distributions"]  # the list itself is kept
        text = details.get_text(" ") + build.read("execution-status.json")
        assert (shown in text) is publish
        assert record["packages"]["executable"] == (shown if publish else "")
    # mystmd's package list: the same option, the same rule
    (hidden,) = packages_nodes((shown, [("numpy", "2.2.0")]), interpreter_path=False)
    assert shown not in json.dumps(hidden) and "numpy 2.2.0" in json.dumps(hidden)


