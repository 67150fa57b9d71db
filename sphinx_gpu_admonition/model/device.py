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


# -- several kernels on one GPU ----------------------------------------------------------
#: JAX's variable that turns its GPU memory preallocation (75 % of the GPU) on or off
PREALLOCATE = "XLA_PYTHON_CLIENT_PREALLOCATE"
#: JAX's variables that size the pool instead: a fraction each kernel fits in, or the
#: platform allocator (no pool)
MEMORY_SETTINGS = ("XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION",
                   "XLA_PYTHON_CLIENT_ALLOCATOR")


def preallocates(environ: Any) -> bool:
    """Whether kernels started with ``environ`` (they inherit the build's) take JAX's
    default 75 % of the GPU's memory at their first computation."""
    if environ.get(PREALLOCATE, "").strip().lower() in ("false", "0"):
        return False
    return not any(environ.get(name) for name in MEMORY_SETTINGS)


def parallel_preallocation_warning(parallel: int, gpu: str, running: str,
                                   one_at_a_time: str, environ: Any) -> str | None:
    """The one rule, for both engines: ``parallel`` kernels at once on a GPU (``gpu``
    says why one is expected) with preallocation on; the second kernel on that GPU
    runs out of memory (QuantEcon's runner: three JAX notebooks on one T4, the
    second died with an XLA error and no traceback).  ``running``: how the engine
    runs them ("Sphinx reads 2 notebooks at once (-j 2)"); ``one_at_a_time``: the
    engine's option that runs one at a time.  None when it does not apply."""
    if parallel < 2 or not preallocates(environ):
        return None
    fraction = f"{0.9 / parallel:.2f}".rstrip("0")
    return (f"{gpu} while {running} with JAX's GPU memory preallocation on: each "
            f"kernel takes 75% of the GPU's memory, so kernels sharing it run out of "
            f"memory; set {PREALLOCATE}=false for the build (or "
            f"XLA_PYTHON_CLIENT_MEM_FRACTION={fraction}, a share each of {parallel} "
            f"kernels fits in), or use {one_at_a_time}")


def backend_mismatch(record: Any, expected: str | None,
                     option: str = "gpu_expected_backend") -> str | None:
    """Why a page with a ``{gpu}`` notice did not run as ``expected`` (the backend the
    book expects, ``option`` naming its setting), for both engines: it ran on another
    backend family, without initialising JAX, or its backend is unknown (no capture
    data: a check that cannot be made must not pass silently, ``-W`` and ``--strict``
    builds rely on it).  None when it ran as expected, or nothing is expected."""
    if not expected:
        return None
    actual = record.environment.backend
    if record.capture == "missing" or (not record.measured and actual is None):
        return (f"cannot check {option} {expected!r}: the kernel's backend is unknown "
                f"({record.capture_message or 'no capture data'})")
    # a page that never initialised JAX ran on no backend at all: not what was expected
    if actual is not None and backend_family(actual) == backend_family(expected):
        return None
    ran = f"on the {actual!r} backend" if actual else "without initialising a JAX backend"
    return (f"page with a gpu directive executed {ran}, but {option} is {expected!r} "
            f"({record.environment.device_label})")
