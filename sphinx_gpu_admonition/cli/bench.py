"""What ``sphinx-gpu-admonition check`` measures on the machine it runs on.

Three plain-data producers, rendered by :mod:`.cli`:

- :func:`inspect_machine`: Python, host, NVIDIA driver / GPUs, JAX and its
  plugins, backends and devices.  Host and GPU detection are the kernel probe's
  own functions (:mod:`.probe.facts`), so ``check`` sees the machine the
  way a notebook's record does.
- :func:`device_tests`: a small jitted computation on every device, timing the
  compilation and the run separately (``block_until_ready``, so asynchronous
  dispatch cannot make a device look fast), and checking the result.
- :func:`run_bench`: a short hardware characterisation comparable between
  runners (pure-Python loop, NumPy and JAX matmul and element-wise work; JAX
  first call and compiled call reported separately).
- :func:`requirement`: whether a backend (cpu, gpu, tpu) is usable, and if not,
  every reason that can be detected.

JAX is optional: without it everything still works and says so.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from ..probe.facts import gpu_info, host_info, jax_distributions, jax_info

BACKENDS = ("cpu", "gpu", "tpu")
#: values of JAX_PLATFORMS that select each backend
_PLATFORM_NAMES = {"cpu": ("cpu",), "gpu": ("cuda", "rocm", "gpu"), "tpu": ("tpu",)}
NVIDIA_DRIVER_FILE = "/proc/driver/nvidia/version"
DEVICE_TEST_SIZE = 256


def _error_text(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


# -- the machine -------------------------------------------------------------------------
def python_info() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    }


def nvidia_info() -> dict[str, Any]:
    """The NVIDIA driver as the operating system shows it, and the GPUs NVML / nvidia-smi list."""
    driver_line = None
    try:
        with open(NVIDIA_DRIVER_FILE, encoding="utf-8", errors="replace") as stream:
            driver_line = stream.readline().strip() or None
    except OSError:
        pass
    gpus = gpu_info()
    driver = next((g.get("driver") for g in gpus if g.get("driver")), None)
    if driver is None and driver_line:
        # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..."
        words = driver_line.split()
        driver = next((w for w in words if w[:1].isdigit() and "." in w), None)
    return {
        "driver_file": os.path.exists(NVIDIA_DRIVER_FILE),
        "driver": driver,
        "nvidia_smi": shutil.which("nvidia-smi"),
        "gpus": gpus,
    }


def cuda_plugins(distributions: dict[str, str]) -> list[str]:
    """The CUDA support among ``distributions`` (plugins, or a jaxlib built with CUDA)."""
    names = [n for n in distributions if n.startswith("jax-cuda")]
    if "+cuda" in distributions.get("jaxlib", ""):
        names.append("jaxlib")
    return names


def _device_entry(device: Any) -> dict[str, Any]:
    memory = None
    stats_method = getattr(device, "memory_stats", None)
    if stats_method is not None:
        try:
            stats = stats_method() or {}
        except Exception:
            stats = {}
        if stats.get("bytes_limit"):
            memory = {"bytes_limit": stats.get("bytes_limit"),
                      "bytes_in_use": stats.get("bytes_in_use")}
    return {
        "id": device.id,
        "name": str(device),
        "platform": device.platform,
        "kind": getattr(device, "device_kind", device.platform),
        "memory": memory,
    }


def _import_jax() -> tuple[Any, str | None]:
    try:
        import jax
    except Exception as error:  # not installed (ImportError), or a broken installation
        return None, f"import jax failed: {_error_text(error)}"
    return jax, None


def inspect_jax() -> dict[str, Any]:
    """JAX, its plugins, the default backend and every usable backend's devices."""
    distributions: dict[str, str] = {}
    with contextlib.suppress(Exception):
        distributions = jax_distributions()
    info: dict[str, Any] = {
        "installed": False,
        "import_error": None,
        "distributions": distributions,
        "jax_platforms": os.environ.get("JAX_PLATFORMS"),
    }
    jax, import_error = _import_jax()
    if jax is None:
        info["import_error"] = import_error
        return info
    info.update(installed=True, version=getattr(jax, "__version__", None),
                default_backend=None, init_error=None, backends={}, devices=[],
                backend_errors={}, plugins={})
    try:
        import jaxlib

        info["jaxlib_version"] = getattr(jaxlib, "__version__", None)
    except Exception:
        info["jaxlib_version"] = None
    platforms_config = getattr(jax.config, "jax_platforms", None)
    if platforms_config and not info["jax_platforms"]:
        info["jax_platforms"] = platforms_config
    try:
        jax.devices()
        probed = jax_info()
        info["default_backend"] = probed["backend"]
        info["plugins"] = probed["plugins"]
    except Exception as error:
        info["init_error"] = _error_text(error)
    for backend in BACKENDS:
        try:
            devices = jax.devices(backend)
        except Exception as error:
            info["backends"][backend] = {"usable": False, "devices": 0,
                                         "error": _error_text(error)}
            continue
        info["backends"][backend] = {"usable": True, "devices": len(devices), "error": None}
        info["devices"].extend(_device_entry(d) for d in devices)
    try:  # the reason each platform failed to initialise (private, so guarded)
        from jax._src import xla_bridge

        info["backend_errors"] = dict(getattr(xla_bridge, "_backend_errors", {}) or {})
    except Exception:
        pass
    return info


def inspect_machine() -> dict[str, Any]:
    host = host_info()
    try:
        host["hostname"] = platform.node() or None
    except Exception:
        host["hostname"] = None
    return {"python": python_info(), "host": host, "nvidia": nvidia_info(),
            "jax": inspect_jax()}


# -- a jitted computation on every device ---------------------------------------------------
def _all_devices(jax: Any) -> list[Any]:
    devices = []
    for backend in BACKENDS:
        try:
            devices.extend(jax.devices(backend))
        except Exception:
            continue
    return devices


def device_test(jax: Any, device: Any, size: int = DEVICE_TEST_SIZE) -> dict[str, Any]:
    """Compile and run ``sum(tanh(x @ x.T))`` on ``device``; times and a result check."""
    import numpy as np

    entry: dict[str, Any] = {"device": str(device), "platform": device.platform,
                             "kind": getattr(device, "device_kind", device.platform),
                             "ok": False, "compile_seconds": None, "first_run_seconds": None,
                             "run_seconds": None, "error": None}
    try:
        import jax.numpy as jnp

        host = (np.arange(size * size, dtype=np.float32).reshape(size, size) % 7) / 7.0
        x = jax.device_put(host, device)
        x.block_until_ready()

        def work(a):
            return jnp.tanh(a @ a.T).sum()

        start = time.perf_counter()
        compiled = jax.jit(work).lower(x).compile()
        entry["compile_seconds"] = time.perf_counter() - start
        start = time.perf_counter()
        result = compiled(x)
        result.block_until_ready()
        entry["first_run_seconds"] = time.perf_counter() - start
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            compiled(x).block_until_ready()
            runs.append(time.perf_counter() - start)
        entry["run_seconds"] = statistics.median(runs)
        expected = float(np.tanh(host.astype(np.float64) @ host.T.astype(np.float64)).sum())
        value = float(result)
        placed = {str(d) for d in result.devices()}
        if placed != {str(device)}:
            entry["error"] = f"the result lives on {', '.join(sorted(placed))}, not {device}"
        elif not abs(value - expected) <= 1e-3 * abs(expected) + 1e-3:
            entry["error"] = f"wrong result {value!r} (expected {expected!r})"
        else:
            entry["ok"] = True
    except Exception as error:
        entry["error"] = _error_text(error)
    return entry


def device_tests(size: int = DEVICE_TEST_SIZE) -> list[dict[str, Any]]:
    jax = sys.modules.get("jax")
    if jax is None:
        return []
    return [device_test(jax, device, size) for device in _all_devices(jax)]


# -- is a backend usable, and if not, why -----------------------------------------------------
def requirement(backend: str, machine: dict[str, Any],
                tests: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether ``backend`` is usable: a device of it exists and the device test passed on it."""
    jax_data = machine["jax"]
    nvidia = machine["nvidia"]
    reasons: list[str] = []
    if not jax_data["installed"]:
        reasons.append(f"JAX is not installed ({jax_data['import_error']})")
        return {"backend": backend, "ok": False, "reasons": reasons}
    state = jax_data["backends"].get(backend, {})
    backend_tests = [t for t in tests if _platform_backend(t["platform"]) == backend]
    passed = [t for t in backend_tests if t["ok"]]
    if state.get("usable") and passed:
        return {"backend": backend, "ok": True, "reasons": []}
    platforms = jax_data.get("jax_platforms")
    if platforms:
        selected = {p.strip().lower() for p in str(platforms).split(",") if p.strip()}
        if not selected & set(_PLATFORM_NAMES[backend]):
            reasons.append(f"JAX_PLATFORMS={platforms!r} excludes the {backend} backend")
    distributions = jax_data.get("distributions") or {}
    if backend == "gpu":
        rocm = [n for n in distributions if n.startswith("jax-rocm")]
        if not cuda_plugins(distributions) and not rocm:
            reasons.append("no CUDA plugin for jaxlib is installed (no jax-cuda*-plugin "
                           "distribution); install it with pip install 'jax[cuda12]' "
                           "(or cuda13)")
        if not nvidia["driver_file"]:
            reasons.append(f"NVIDIA driver not found ({NVIDIA_DRIVER_FILE} is missing: the "
                           "kernel module is not loaded or this is not a GPU machine)")
        if not nvidia["nvidia_smi"]:
            reasons.append("nvidia-smi not found on PATH")
    elif backend == "tpu" and not any(n.startswith("libtpu") for n in distributions):
        reasons.append("no libtpu distribution is installed (pip install 'jax[tpu]')")
    errors = jax_data.get("backend_errors") or {}
    for platform_name in _PLATFORM_NAMES[backend]:
        if platform_name in errors:
            reasons.append(f"JAX could not initialise {platform_name}: {errors[platform_name]}")
    if jax_data.get("init_error"):
        reasons.append(f"JAX initialisation failed: {jax_data['init_error']}")
    if not state.get("usable") and state.get("error"):
        reasons.append(f"jax.devices({backend!r}) failed: {state['error']}")
    for test in backend_tests:
        if not test["ok"]:
            reasons.append(f"the test computation failed on {test['device']}: {test['error']}")
    if not reasons:
        reasons.append(f"no {backend} device is usable")
    return {"backend": backend, "ok": False, "reasons": reasons}


def _platform_backend(platform_name: str) -> str:
    for backend, names in _PLATFORM_NAMES.items():
        if platform_name in names:
            return backend
    return platform_name


# -- benchmark -------------------------------------------------------------------------------
#: problem sizes: (python loop iterations, numpy matmul n, numpy elements, jax matmul n,
#: jax elements)
BENCH_SIZES = {
    "small": (300_000, 256, 1_000_000, 256, 1_000_000),
    "normal": (5_000_000, 1536, 10_000_000, 2048, 10_000_000),
}
_REPEATS = 5
_BUDGET_SECONDS = 1.5


def _repeat(function: Callable[[], Any], repeats: int = _REPEATS,
            budget: float = _BUDGET_SECONDS) -> dict[str, Any]:
    """Run ``function`` 3 to ``repeats`` times (more than 3 while under ``budget`` seconds)."""
    times: list[float] = []
    spent = 0.0
    while len(times) < repeats and (len(times) < 3 or spent < budget):
        start = time.perf_counter()
        function()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        spent += elapsed
    return {"seconds": statistics.median(times), "best_seconds": min(times),
            "repeats": len(times)}


def _python_loop(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def run_bench(size: str = "normal") -> dict[str, Any]:
    """Time the benchmark; every entry reports the median and the best of its repeats."""
    import numpy as np

    loop_n, np_n, np_elements, jax_n, jax_elements = BENCH_SIZES[size]
    started = time.perf_counter()
    results: list[dict[str, Any]] = []

    timing = _repeat(lambda: _python_loop(loop_n))
    results.append({"name": "python-loop", "library": "python", "device": "cpu (1 thread)",
                    "work": f"{loop_n:,} loop iterations", **timing,
                    "rate": loop_n / timing["best_seconds"] / 1e6, "unit": "M it/s"})

    rng = np.random.default_rng(0)
    a = rng.random((np_n, np_n))
    b = rng.random((np_n, np_n))
    timing = _repeat(lambda: a @ b)
    results.append({"name": "numpy-matmul", "library": "numpy", "device": "cpu",
                    "work": f"{np_n}x{np_n} float64 matmul", **timing,
                    "rate": 2 * np_n**3 / timing["best_seconds"] / 1e9, "unit": "GFLOP/s"})
    v = rng.random(np_elements)
    timing = _repeat(lambda: np.sin(v) * np.exp(-v) + v * v)
    results.append({"name": "numpy-elementwise", "library": "numpy", "device": "cpu",
                    "work": f"sin(x)*exp(-x)+x*x, {np_elements:,} float64", **timing,
                    "rate": np_elements / timing["best_seconds"] / 1e6, "unit": "M elem/s"})

    jax = sys.modules.get("jax")
    jax_note = None
    if jax is None:
        jax_note = "JAX is not installed: JAX benchmarks skipped"
    else:
        try:
            results.extend(_jax_bench(jax, jax_n, jax_elements))
        except Exception as error:
            jax_note = f"JAX benchmarks failed: {_error_text(error)}"
    return {"size": size, "seconds": time.perf_counter() - started, "results": results,
            "note": jax_note}


def _jax_bench(jax: Any, n: int, elements: int) -> list[dict[str, Any]]:
    import jax.numpy as jnp
    import numpy as np

    device = jax.devices()[0]
    kind = getattr(device, "device_kind", device.platform)
    label = device.platform if kind == device.platform else f"{device.platform}: {kind}"
    rng = np.random.default_rng(1)
    a = jax.device_put(rng.random((n, n), dtype=np.float32), device)
    b = jax.device_put(rng.random((n, n), dtype=np.float32), device)
    v = jax.device_put(rng.random(elements, dtype=np.float32), device)
    jax.block_until_ready((a, b, v))

    results = []
    cases = [
        ("jax-matmul", f"{n}x{n} float32 matmul", lambda x, y: x @ y, (a, b),
         2 * n**3 / 1e9, "GFLOP/s"),
        ("jax-elementwise", f"sin(x)*exp(-x)+x*x, {elements:,} float32",
         lambda x: jnp.sin(x) * jnp.exp(-x) + x * x, (v,), elements / 1e6, "M elem/s"),
    ]
    for name, work, function, arguments, amount, unit in cases:
        jitted = jax.jit(function)
        start = time.perf_counter()
        jitted(*arguments).block_until_ready()
        first = time.perf_counter() - start
        timing = _repeat(lambda jitted=jitted, arguments=arguments:
                         jitted(*arguments).block_until_ready())
        results.append({"name": name, "library": "jax", "device": label, "work": work,
                         "first_call_seconds": first, **timing,
                         "rate": amount / timing["best_seconds"], "unit": unit})
    return results
