"""``mystmd/environment.py``: packages that cannot be listed say why."""

from __future__ import annotations


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
