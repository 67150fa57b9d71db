"""What a notebook ran on: one vocabulary for every view.

Whether a JAX backend is a GPU, what kind of device a reader needs to run a page
like this, and how the device is named, are decided here once; the page line, the
``gpu`` notice, the runtime roles, the status page, the analysis (the sequential
loop hint is about GPUs), the configuration and the command line all ask here, so
that no two of them can disagree about the same record.

Decisions:

* ``gpu``, ``cuda``, ``rocm`` and ``metal`` (Apple's GPUs) are GPUs;
* ``tpu`` is an accelerator, not a GPU: a TPU page never "runs on a GPU";
* no backend (JAX not used) is the CPU, as is ``cpu``;
* a backend this list does not know is named as JAX names it, and is not a GPU.
"""

from __future__ import annotations

from typing import Any

#: a :class:`.record.Environment` (not imported: the record imports this module)
Environment = Any

#: the JAX backends the configuration accepts (``gpu_expected_backend``)
BACKENDS = ("cpu", "gpu", "tpu", "cuda", "rocm", "metal")
#: the backends that run on a GPU
GPU_BACKENDS = ("gpu", "cuda", "rocm", "metal")

GPU, TPU, CPU = "gpu", "tpu", "cpu"
#: how a reader is told the kind of device: ``a GPU (Tesla T4)``
KIND_NAMES = {GPU: "GPU", TPU: "TPU", CPU: "CPU"}


def backend_family(backend: str | None) -> str:
    """``"gpu"``, ``"tpu"``, ``"cpu"``, or an unknown backend's own name."""
    if not backend or backend == CPU:
        return CPU
    if backend in GPU_BACKENDS:
        return GPU
    return backend


def is_gpu(backend: str | None) -> bool:
    """Whether the backend runs on a GPU (``metal`` does, ``tpu`` does not)."""
    return backend_family(backend) == GPU


def device_kind(environment: Environment) -> str:
    """``"GPU"``, ``"TPU"`` or ``"CPU"`` (an unknown backend: its name in capitals):
    what a reader needs to run the page like this."""
    family = backend_family(environment.backend)
    return KIND_NAMES.get(family, family.upper())


def device_name(environment: Environment) -> str | None:
    """``"Tesla T4"``, ``"2x NVIDIA H200"`` or ``"AMD EPYC 7763"``; None when unknown."""
    if backend_family(environment.backend) == CPU:
        return environment.host.cpu
    return environment.jax.device_summary or (
        environment.gpus[0].name if environment.gpus else None)


def device_label(environment: Environment) -> str:
    """One line: ``"GPU: NVIDIA H200"``, ``"CPU: AMD EPYC 7763, 4 cores"``.

    The prefix is the backend as JAX names it (``CUDA: Tesla T4``), so that two
    backends of one family stay apart in a table of machines.
    """
    backend = environment.backend
    if backend_family(backend) != CPU:
        return f"{backend.upper()}: {device_name(environment) or backend}"
    cpu = environment.host.cpu or "unknown CPU"
    cores = f", {environment.host.cores} cores" if environment.host.cores else ""
    return f"CPU: {cpu}{cores}"


def device_summary(environment: Environment, no_jax: str = "no JAX") -> str:
    """``"JAX gpu — GPU: Tesla T4"``, ``"no JAX — CPU: AMD EPYC 7763, 4 cores"``: the
    backend and the device, as the status page's device column shows them."""
    backend = environment.backend
    prefix = f"JAX {backend}" if backend else no_jax
    return f"{prefix} — {device_label(environment)}"


def build_label(backends: set[str]) -> str | None:
    """``"GPU build"``, ``"CUDA build"``, ``"mixed-backend build"`` for the backends of
    a build's captured notebooks; None for none."""
    if len(backends) == 1:
        return f"{next(iter(backends)).upper()} build"
    return "mixed-backend build" if backends else None


def device_with_jax(environment: Environment) -> str:
    """``"GPU: NVIDIA H200 (JAX 0.10.2)"`` or ``"CPU: AMD EPYC 7763, 4 cores"``: the
    device a page ran on, as the "executed on" sentences of every engine name it."""
    label = device_label(environment)
    if environment.jax.backend and environment.jax.version:
        label += f" (JAX {environment.jax.version})"
    return label
