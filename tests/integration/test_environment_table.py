"""The ``{execution-environment}`` directive: the machines the notebooks ran on.

The real build (``status_book`` in conftest) ran every notebook on this machine's
CPU; the GPU machine comes from a hand-written record of a Tesla T4 runner (the
same environment as the baseline of the status tests).  Two machines on one page
from a real cache are covered in ``test_status_page.py::test_two_machines_from_the_cache``.
"""

from __future__ import annotations

import copy

from bs4 import BeautifulSoup
from conftest import GPU_ENVIRONMENT, StatusBook, gpu_baseline
from docutils import nodes

from sphinx_gpu_admonition.ext.environment_table import environment_html, environment_table_nodes
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport


def soup_of(path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "lxml")


def rows_of(table) -> dict[str, str]:
    return {tr.th.get_text(): tr.td.get_text() for tr in table.select("tbody tr")}


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


def two_machines() -> StatusReport:
    baseline = StatusReport.from_dict(gpu_baseline())
    cpu = copy.deepcopy(GPU_ENVIRONMENT)
    cpu.update(gpus=[], jax={"backend": "cpu", "version": "0.4.35",
                             "devices": [{"platform": "cpu", "kind": "cpu"}]})
    cpu["host"] = {"cpu": "Apple M2 <b>", "cores": 8, "memory_gb": 16}
    laptop = NotebookRecord.from_dict({
        "docname": "laptop", "status": "ok", "title": "On a <script>laptop</script>",
        "capture": "ok", "environment": cpu})
    never = NotebookRecord(docname="never", status="execution_off")
    return StatusReport([*baseline.notebooks, laptop, never])


def test_one_table_per_machine_with_its_notebooks():
    markup = environment_html(two_machines(), lambda docname: f"{docname}.html")
    assert "<script>" not in markup and "<b>" not in markup
    tables = BeautifulSoup(markup, "lxml").select("table.gpu-environment-table")
    assert [t.caption.get_text() for t in tables] == [
        "Machine 1 of 2: GPU: Tesla T4", "Machine 2 of 2: CPU: Apple M2 <b>, 8 cores"]
    gpu, laptop = (rows_of(t) for t in tables)
    assert gpu["GPU"] == "Tesla T4 (15 GiB, driver 535.104.05, CUDA 12.2)"
    assert gpu["JAX backend"] == "gpu"
    assert gpu["JAX devices"] == "1x gpu:Tesla T4"
    assert "jax-cuda12-plugin 0.4.35" in gpu["JAX"]
    assert gpu["Notebooks (3)"] == "Fast notebook, Retired notebook, Slow notebook"
    assert [a["href"] for a in tables[0].select("a")] == [
        "fast.html", "retired.html", "slow.html"]
    assert laptop["Notebooks (1)"] == "On a <script>laptop</script>"


def test_docutils_tables_for_other_builders():
    result = environment_table_nodes(two_machines(), "status", known_docs={"slow", "fast"})
    assert [type(n) for n in result] == [nodes.table, nodes.table]
    text = result[0].astext()
    assert "Tesla T4" in text and "Retired notebook" in text
    # only pages that exist are linked
    targets = [n["reftarget"] for n in result[0].findall(lambda n: "reftarget" in n)]
    assert targets == ["/fast", "/slow"]


def test_nothing_recorded():
    report = StatusReport([NotebookRecord(docname="a", status="execution_off")])
    assert "No execution environment recorded yet" in environment_html(report, lambda d: None)
    (paragraph,) = environment_table_nodes(report, "status", set())
    assert isinstance(paragraph, nodes.paragraph)


def test_two_directives_on_one_page_have_distinct_ids(status_book: StatusBook):
    page = soup_of(status_book.html.outdir / "options.html")
    tables = page.select(".gpu-execution-environment table.gpu-environment-table")
    assert len(tables) == 2
    ids = [element["id"] for element in page.select("[id]")]
    assert len(ids) == len(set(ids))
    # the first directive keeps the short form that links point at
    assert tables[0]["id"] == "gpu-environment-1"


def test_a_machine_lists_every_library_its_notebooks_imported():
    """The !conda list replacement: the union over the machine's notebooks, not one
    notebook's imports; a library seen at two versions shows both."""
    environments = [copy.deepcopy(GPU_ENVIRONMENT) for _ in range(3)]
    environments[0]["libraries"] = {"numpy": "2.1.3", "matplotlib": "3.9.2", "sympy": "1.13"}
    environments[1]["libraries"] = {"numpy": "2.2.0", "numba": "0.60.0", "quantecon": "0.7.2"}
    environments[2]["libraries"] = {"numpy": "2.10.0", "scipy": "1.14.1", "jax": "0.4.35"}
    report = StatusReport([
        NotebookRecord.from_dict({"docname": f"lecture{n}", "status": "ok", "capture": "ok",
                                  "environment": env}) for n, env in enumerate(environments)])
    (table,) = BeautifulSoup(environment_html(report, lambda d: None), "lxml").select("table")
    assert rows_of(table)["Libraries"] == (
        "matplotlib 3.9.2, numba 0.60.0, numpy 2.1.3 / 2.2.0 / 2.10.0, quantecon 0.7.2, "
        "scipy 1.14.1, sympy 1.13")
    (docutils_table,) = environment_table_nodes(report, "status", set())
    assert "numpy 2.1.3 / 2.2.0 / 2.10.0" in docutils_table.astext()


def test_installed_packages_are_collapsed_and_escaped():
    from sphinx_gpu_admonition.ext.environment_table import packages_node

    packages = (("numpy", "2.2.0"), ("<b>evil</b>", "1<script>"))
    report = two_machines()
    machine = report.notebooks[0].environment.machine_id
    markup = environment_html(report, lambda d: None,
                              packages={machine: ("/opt/py<3>/bin/python", packages)})
    (details,) = BeautifulSoup(markup, "lxml").select("details.gpu-environment-packages")
    assert details.select_one("code").get_text() == "/opt/py<3>/bin/python"
    assert details.get("open") is None
    assert details.summary.get_text() == "Installed packages in the kernel's environment (2)"
    assert details.find("b") is None and details.find("script") is None
    assert [td.get_text() for td in details.select("td")] == [
        "numpy", "2.2.0", "<b>evil</b>", "1<script>"]
    assert "numpy 2.2.0, <b>evil</b> 1<script>" in packages_node("python", packages).astext()


def test_the_package_list_of_a_real_interpreter():
    """One subprocess of this interpreter; a missing one is a reason, not an exception."""
    import sys

    import jax

    from sphinx_gpu_admonition.ext.environment_table import installed_distributions

    listed = dict(installed_distributions(sys.executable))
    assert listed["jax"] == jax.__version__
    reason = installed_distributions("/nonexistent/python")
    assert isinstance(reason, str) and "/nonexistent/python" in reason


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
def test_both_engines_show_the_same_rows_and_the_page_box_begins_with_them():
    """One function decides a machine's rows (render/machine_rows.py): the Sphinx
    table, mystmd's table and the page's "executed on" box; the notebooks of each
    machine when there are several."""
    from sphinx_gpu_admonition.ext.environment_table import machine_tables
    from sphinx_gpu_admonition.ext.page_info import environment_fields
    from sphinx_gpu_admonition.mystmd import environment

    report = two_machines()
    sphinx = [(table.title, [*table.rows, (table.notebooks_label,
                                           ", ".join(title for _, title in table.notebooks))])
              for table in machine_tables(report)]
    nodes_ = environment.environment_nodes(report)
    titles = [text_of(node) for node in nodes_ if node["type"] == "paragraph"]
    tables = [[(text_of(row["children"][0]), text_of(row["children"][1]))
               for row in node["children"]] for node in nodes_ if node["type"] == "table"]
    assert list(zip(titles, tables, strict=True)) == sphinx
    assert tables[1][-1] == ("Notebooks (1)", "On a <script>laptop</script>")
    laptop = report.by_docname()["laptop"]
    assert environment_fields(laptop)[:len(sphinx[1][1]) - 1] == sphinx[1][1][:-1]


def text_of(node) -> str:
    return node.get("value", "") + "".join(text_of(child) for child in node.get("children", []))
