"""What the kernel's machine and JAX are (standard library only): the host, its NVIDIA
GPUs, JAX's backend, devices and installed distributions, the numerical libraries a
notebook imported, the kernel's peak memory.

Read by the kernel probe (``kernel_probe.py`` loads this file beside itself) once per
kernel, or when they changed (the libraries; JAX once a backend exists), and by
``check`` (:mod:`..cli.bench`), so that it reports the machine as the probe does.
Never imports JAX or initialises a backend: JAX's facts are read only once the
notebook itself initialised one (:func:`jax_backends_initialised`).
"""

from __future__ import annotations

import contextlib
import os
import sys

#: numerical libraries whose versions are worth reporting when a notebook imported them
_LIBRARIES = (
    "numpy", "scipy", "jax", "jaxlib", "numba", "pandas", "polars", "matplotlib",
    "torch", "tensorflow", "cupy", "quantecon", "sympy", "statsmodels", "sklearn",
    "numpyro", "optax", "flax", "equinox", "networkx",
)

#: the environment variables that set how JAX's GPU allocator takes device memory
ALLOCATOR_VARIABLES = (
    "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR",
)

#: seconds nvidia-smi may take before the probe gives up on it (it must never hang)
NVIDIA_SMI_TIMEOUT = 5.0



def _read_first(path: str, prefix: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def host_info() -> dict:
    # imported here: ``check`` imports this module and needs no ``platform`` to start
    import platform

    cpu = _read_first("/proc/cpuinfo", "model name") or platform.processor() or None
    memory_gb = None
    with contextlib.suppress(ValueError, OSError, AttributeError):
        memory_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": memory_gb,
            "os": f"{platform.system()} {platform.release()}", "machine": platform.machine()}


def _nvml_gpus() -> list[dict]:
    import pynvml  # nvidia-ml-py, only when installed in the kernel's environment

    pynvml.nvmlInit()
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = pynvml.nvmlDeviceGetName(handle)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle).total
            gpus.append({
                "name": name.decode() if isinstance(name, bytes) else name,
                "memory_mb": round(memory / 2**20),
                "driver": driver.decode() if isinstance(driver, bytes) else driver,
                "cuda": f"{cuda // 1000}.{cuda % 1000 // 10}",
                "source": "nvml",
            })
        return gpus
    finally:
        pynvml.nvmlShutdown()


def _nvidia_smi_gpus(timeout: float | None = None) -> list[dict]:
    import shutil
    import subprocess

    executable = shutil.which("nvidia-smi")
    if executable is None:
        return []
    completed = subprocess.run(
        [executable, "--query-gpu=name,memory.total,driver_version",
         "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=False,
        timeout=NVIDIA_SMI_TIMEOUT if timeout is None else timeout,
    )
    gpus = []
    for line in completed.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            memory = float(parts[1]) if parts[1].replace(".", "", 1).isdigit() else None  # N/A
            gpus.append({"name": parts[0], "memory_mb": memory, "driver": parts[2],
                         "source": "nvidia-smi"})
    return gpus


def gpu_info() -> list[dict]:
    """NVIDIA GPUs of this machine; empty (and cheap) where there is no NVIDIA driver."""
    if not (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl")):
        return []
    for read in (_nvml_gpus, _nvidia_smi_gpus):  # NVML, else nvidia-smi, else none
        with contextlib.suppress(Exception):
            return read()
    return []


def jax_backends_initialised() -> bool:
    """True when the notebook itself has initialised a JAX backend (never initialises one)."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is None:
        return False
    check = getattr(bridge, "backends_are_initialized", None)
    if check is not None:
        return bool(check())
    return bool(getattr(bridge, "_backends", None))


_PLUGIN_PREFIXES = ("jax_cuda", "jax_rocm", "jax_tpu", "jax_metal", "libtpu")
_JAX_PROJECTS = ("jax", "jaxlib")


def jax_distributions() -> dict[str, str]:
    """Installed jax, jaxlib and backend plugins (jax-cuda13-plugin, libtpu, ...).

    Read from the ``*.dist-info`` folder names on ``sys.path`` (the first one
    wins, as for imports): a directory listing, where
    ``importlib.metadata.distributions()`` parses every installed package's
    metadata (about 80 ms in a typical environment).
    """
    found: dict[str, str] = {}
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            project, _, version = name[: -len(".dist-info")].partition("-")
            project = project.lower()
            if project in _JAX_PROJECTS or project.startswith(_PLUGIN_PREFIXES):
                found.setdefault(project.replace("_", "-"), version)
    return dict(sorted(found.items()))


def jax_plugins() -> dict[str, str]:
    """The installed JAX backend plugins and their versions."""
    return {k: v for k, v in jax_distributions().items() if k not in _JAX_PROJECTS}


def jax_info() -> dict:
    """Backend, devices and versions; only call once backends are initialised."""
    jax = sys.modules["jax"]
    devices: dict[tuple[str, str], int] = {}
    for device in jax.devices():
        platform = getattr(device, "platform", None)
        key = (platform, getattr(device, "device_kind", platform))
        devices[key] = devices.get(key, 0) + 1
    jaxlib = sys.modules.get("jaxlib")
    plugins = jax_plugins()
    config = getattr(jax, "config", None)
    x64 = getattr(config, "jax_enable_x64", None)
    # whether a persistent compilation cache is set (JAX_COMPILATION_CACHE_DIR or
    # jax_compilation_cache_dir), not its path: that may name the user's home folder
    cache_dir = getattr(config, "jax_compilation_cache_dir", False)  # False: no such option
    return {"backend": jax.default_backend(), "version": getattr(jax, "__version__", None),
            "x64": x64 if isinstance(x64, bool) else None,
            "compilation_cache": bool(cache_dir) if cache_dir is None
            or isinstance(cache_dir, str) else None,
            "jaxlib_version": getattr(jaxlib, "__version__", None) if jaxlib else None,
            "plugins": plugins,
            "devices": [{"platform": p, "kind": k, "count": n} for (p, k), n in devices.items()]}


def library_versions() -> dict:
    versions = {}
    modules = sys.modules
    for name in _LIBRARIES:
        module = modules.get(name)
        if module is not None:
            version = getattr(module, "__version__", None)
            if isinstance(version, str):
                versions[name] = version
    return versions


try:
    import resource
except ImportError:  # Windows
    resource = None


def peak_memory_mb() -> float | None:
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # kilobytes on Linux, bytes on macOS
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)
