"""model/device.py: one answer to "is this a GPU?" for every view (no Sphinx build)."""

from __future__ import annotations

import pytest

from sphinx_gpu_admonition.model import device
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.formatting import format_gib, format_mib
from sphinx_gpu_admonition.model.record import (
    CellRecord,
    Environment,
    NotebookRecord,
    StatusReport,
)


def environment(backend: str | None, summary: str | None = "Apple M2") -> Environment:
    return Environment.from_dict({
        "host": {"cpu": "AMD EPYC 7763", "cores": 4},
        "jax": {"backend": backend, "version": "0.4.35",
                "devices": [{"platform": backend or "cpu", "kind": summary}] if summary else []}})


def record(backend: str | None) -> NotebookRecord:
    return NotebookRecord(docname="x", status="ok", provenance="executed", capture="ok",
                          environment=environment(backend), runtime_seconds=120.0)


@pytest.mark.parametrize(("backend", "family", "gpu", "kind"), [
    ("gpu", "gpu", True, "GPU"), ("cuda", "gpu", True, "GPU"), ("rocm", "gpu", True, "GPU"),
    ("metal", "gpu", True, "GPU"),  # Apple's GPUs
    ("tpu", "tpu", False, "TPU"),  # an accelerator, not a GPU
    ("cpu", "cpu", False, "CPU"), (None, "cpu", False, "CPU"),
    ("neuron", "neuron", False, "NEURON"),  # unknown: named as JAX names it
])
def test_each_backend_has_one_family(backend, family, gpu, kind):
    assert device.backend_family(backend) == family
    assert device.is_gpu(backend) is gpu
    assert device.device_kind(environment(backend)) == kind


def test_every_configured_backend_is_known():
    from sphinx_gpu_admonition.ext.config import BACKENDS

    assert BACKENDS is device.BACKENDS
    assert set(device.GPU_BACKENDS) < set(device.BACKENDS)


def test_names_and_labels():
    assert device.device_name(environment("cuda", "Tesla T4")) == "Tesla T4"
    assert device.device_name(environment("cpu")) == "AMD EPYC 7763"
    assert device.device_name(environment("tpu", None)) is None
    assert device.device_label(environment("cuda", "Tesla T4")) == "CUDA: Tesla T4"
    assert device.device_label(environment("tpu", None)) == "TPU: tpu"
    assert device.device_label(environment(None)) == "CPU: AMD EPYC 7763, 4 cores"
    assert environment("metal").device_label == "METAL: Apple M2"
    assert device.device_summary(environment("gpu", "Tesla T4")) == "JAX gpu — GPU: Tesla T4"
    assert device.device_summary(environment(None), "no JAX").startswith("no JAX — CPU")
    assert device.build_label({"cuda"}) == "CUDA build"
    assert device.build_label({"cuda", "cpu"}) == "mixed-backend build"
    assert device.build_label(set()) is None


def test_a_metal_page_does_not_say_both_gpu_and_not_gpu():
    """The runtime roles, the page line and the notice agree: metal is a GPU."""
    from sphinx_gpu_admonition.ext.runtime import device_phrase
    from sphinx_gpu_admonition.render.notice_text import executed_on_sentence, ran_on_gpu

    metal = record("metal")
    assert device_phrase(metal) == "a GPU (Apple M2)"
    assert ran_on_gpu(metal)
    assert "not on a GPU" not in executed_on_sentence(metal)
    tpu = record("tpu")
    assert device_phrase(tpu) == "a TPU (Apple M2)"
    assert "not on a GPU" in executed_on_sentence(tpu)


@pytest.mark.parametrize(("backend", "hinted"), [("metal", True), ("cuda", True),
                                                 ("tpu", False), ("cpu", False)])
def test_the_sequential_loop_hint_is_for_gpus(backend, hinted):
    notebook = record(backend)
    notebook.cells = [CellRecord(index=0, execution_count=1, seconds=60.0,
                                 loops=["lax.scan"])]
    (result,) = analyse(StatusReport([notebook]), Thresholds()).notebooks
    rules = [flag.rule for flag in result.cell_flags[0]]
    assert ("sequential_loop" in rules) is hinted


def test_memory_is_labelled_in_binary_units():
    assert format_mib(512.4) == "512 MiB"
    assert format_gib(23.5) == "23.5 GiB"
    assert format_mib(None) == "–"
