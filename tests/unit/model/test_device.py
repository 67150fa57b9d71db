"""model/device.py: one answer to "is this a GPU?" for every view (no Sphinx build)."""

from __future__ import annotations

import pytest

from sphinx_gpu_admonition.model import device
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.device import parallel_preallocation_warning
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


def test_one_rule_and_text_for_both_engines() -> None:
    text = parallel_preallocation_warning(3, "lecture ran on Tesla T4",
                                          "mystmd executes 3 pages at once",
                                          "--execute-parallel 1", {})
    assert text is not None and text.startswith("lecture ran on Tesla T4 while mystmd")
    assert "XLA_PYTHON_CLIENT_MEM_FRACTION=0.3," in text
    assert parallel_preallocation_warning(
        3, "x", "y", "z", {"XLA_PYTHON_CLIENT_PREALLOCATE": "0"}) is None
    assert parallel_preallocation_warning(
        3, "x", "y", "z", {"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"}) is None
    assert parallel_preallocation_warning(1, "x", "y", "z", {}) is None
