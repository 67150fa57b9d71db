"""The machine table (``ext/environment_table.py``) from records: a table per machine, docutils
tables for other builders, library and package lists, the same rows as the mystmd adapter's."""

from __future__ import annotations

import copy

from bs4 import BeautifulSoup
from conftest import GPU_ENVIRONMENT, gpu_baseline
from docutils import nodes

from sphinx_gpu_admonition.ext.environment_table import environment_html, environment_table_nodes
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport


def rows_of(table) -> dict[str, str]:
    return {tr.th.get_text(): tr.td.get_text() for tr in table.select("tbody tr")}


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
