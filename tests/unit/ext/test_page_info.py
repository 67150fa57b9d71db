"""The page's environment box (``ext/page_info.py``): hostile text is escaped, the notice says
where this copy ran."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup


def test_hostile_environment_text_is_escaped() -> None:
    """Values in the box come from the kernel; they are text, never markup."""
    from sphinx_gpu_admonition.ext.page_info import details_markup, info_node
    from sphinx_gpu_admonition.model.record import Environment, NotebookRecord

    hostile = "<script>alert(1)</script>"
    record = NotebookRecord(
        docname="x", status="ok", provenance="executed", capture="ok", runtime_seconds=1.0,
        environment=Environment.from_dict({"host": {"cpu": hostile, "cores": 2},
                                           "libraries": {"<b>lib</b>": hostile}}))
    markup = details_markup(info_node(record))
    parsed = BeautifulSoup(markup, "html.parser")
    assert parsed.find("script") is None and parsed.find("b") is None
    assert hostile in parsed.summary.get_text()


def _notice(kind: str = "optional"):
    from docutils import nodes

    from sphinx_gpu_admonition.ext.admonition import default_notice

    node = nodes.admonition("", nodes.title(text="GPU"), *default_notice(kind),
                            classes=["gpu-admonition"])
    node["gpu_kind"] = kind
    return node


def _record(backend: str | None, capture: str = "ok"):
    from sphinx_gpu_admonition.model.record import Environment, NotebookRecord

    environment = Environment.from_dict({
        "host": {"cpu": "AMD EPYC 7763", "cores": 4},
        "jax": {"backend": backend, "version": "0.4.35",
                "devices": [{"platform": "gpu", "kind": "NVIDIA H200"}] if backend else []}})
    return NotebookRecord(docname="x", status="ok", provenance="executed", capture=capture,
                          environment=environment)


@pytest.mark.parametrize(("backend", "capture", "kind", "intro", "sentence"), [
    # on a GPU the author's claim is true and stays
    ("cuda", "ok", "optional", "built using a machine with access to a GPU, although",
     "This page was executed on CUDA: NVIDIA H200 (JAX 0.4.35)."),
    ("cpu", "ok", "required", "written for a GPU and needs one",
     "This page was executed on CPU: AMD EPYC 7763, 4 cores (JAX 0.4.35), not on a GPU."),
    (None, "ok", "optional", "written for a GPU, although",
     "This page was executed on CPU: AMD EPYC 7763, 4 cores, not on a GPU."),
    # nothing known: nothing said about this copy
    (None, "missing", "optional", "built using a machine with access to a GPU, although",
     None),
])
def test_notice_states_where_this_copy_ran(backend, capture, kind, intro, sentence) -> None:
    from sphinx_gpu_admonition.ext.page_info import TEXTS, _make_notices_truthful

    notice = _notice(kind)
    record = _record(backend, capture)
    _make_notices_truthful(record, [notice])
    assert intro in notice[1].astext() and "gpu-notice-intro" in notice[1]["classes"]
    if sentence is not None:
        assert TEXTS.executed_on(record) == sentence


