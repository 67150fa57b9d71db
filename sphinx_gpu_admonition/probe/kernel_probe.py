"""The in-kernel probe of sphinx-gpu-admonition (standard library only).

Installed by ``startup.py`` at kernel start. It registers IPython
``pre_run_cell`` / ``post_run_cell`` callbacks and appends one JSON line per
executed cell to the output file named by the Sphinx side, plus lines
describing the machine, JAX and imported libraries when they become known.
Writing a line per cell (not one file at the end) keeps the data of every
finished cell when the kernel dies or a cell times out.

Rules, because this runs in every cell of every notebook:
- never import JAX or initialise a backend the notebook did not initialise;
- never print, never raise into the notebook, never touch the user namespace;
- do as little as possible per cell: a clock read, a regex on the source, a
  dict, one buffered line.  Expensive facts (host, GPU, JAX devices, library
  versions) are read once, or only when they changed.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import sys
import time

PROBE_VERSION = 1

# Sequential JAX loop primitives whose per-iteration cost on a GPU is kernel-launch bound.
_LOOP_CALL = re.compile(r"\b(?:jax\.)?(?:lax\.)?(scan|fori_loop|while_loop)\s*\(")
_LOOP_NEEDS_LAX = {"scan"}  # a bare ``scan(`` is too common a name to count

# JAX compile-pipeline events (jax.monitoring) that together are the compile time.
_COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)
_BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

# Numerical libraries whose versions are worth reporting when a notebook imported them.
_LIBRARIES = (
    "numpy", "scipy", "jax", "jaxlib", "numba", "pandas", "polars", "matplotlib",
    "torch", "tensorflow", "cupy", "quantecon", "sympy", "statsmodels", "sklearn",
    "numpyro", "optax", "flax", "equinox", "networkx",
)

_FIRST_LINE_LENGTH = 120

#: seconds nvidia-smi may take before the probe gives up on it (it must never hang)
NVIDIA_SMI_TIMEOUT = 5.0


def _first_line(source: str) -> str:
    # the first non-blank line, without splitting the whole cell into lines
    line = source.lstrip().split("\n", 1)[0].strip()
    return line if len(line) <= _FIRST_LINE_LENGTH else line[: _FIRST_LINE_LENGTH - 1] + "…"


def _loops(source: str) -> list[str]:
    if "loop" not in source and "scan" not in source:
        return []
    found = []
    for match in _LOOP_CALL.finditer(source):
        name = match.group(1)
        if name in _LOOP_NEEDS_LAX and "lax." not in match.group(0):
            continue
        label = f"lax.{name}"
        if label not in found:
            found.append(label)
    return found


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
    cpu = _read_first("/proc/cpuinfo", "model name") or platform.processor() or None
    memory_gb = None
    with contextlib.suppress(ValueError, OSError, AttributeError):
        memory_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
    }


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
            try:
                memory = float(parts[1])
            except ValueError:
                memory = None
            gpus.append({"name": parts[0], "memory_mb": memory, "driver": parts[2],
                         "source": "nvidia-smi"})
    return gpus


def gpu_info() -> list[dict]:
    """NVIDIA GPUs of this machine; empty (and cheap) where there is no NVIDIA driver."""
    if not (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl")):
        return []
    try:
        return _nvml_gpus()
    except Exception:
        try:
            return _nvidia_smi_gpus()
        except Exception:
            return []


def _jax_backends_initialised() -> bool:
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
        key = (device.platform, getattr(device, "device_kind", device.platform))
        devices[key] = devices.get(key, 0) + 1
    jaxlib = sys.modules.get("jaxlib")
    plugins = jax_plugins()
    return {
        "backend": jax.default_backend(),
        "version": getattr(jax, "__version__", None),
        "jaxlib_version": getattr(jaxlib, "__version__", None) if jaxlib else None,
        "plugins": plugins,
        "devices": [{"platform": p, "kind": k, "count": n} for (p, k), n in devices.items()],
    }


def _library_versions() -> dict:
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


def _peak_memory_mb() -> float | None:
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # kilobytes on Linux, bytes on macOS
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)


class _JaxImportWatcher:
    """A one-shot ``sys.meta_path`` finder: runs a callback right after ``import jax``.

    Registering the compile listeners at that moment (rather than in the next
    cell) also measures compilations in the cell that imports JAX.
    """

    def __init__(self, on_import):
        self._on_import = on_import

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "jax":
            return None
        self.remove()
        import importlib.util

        spec = importlib.util.find_spec("jax")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module
        on_import = self._on_import

        def exec_module(module):
            original(module)
            on_import()

        spec.loader.exec_module = exec_module
        return spec

    def remove(self):
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)


class Probe:
    def __init__(self, output: str):
        self._stream = open(output, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
        self._started: float | None = None
        self._source = ""
        self._compile_seconds = 0.0
        self._compilations: dict[str, int] = {}
        self._jax_listening = False
        self._jax_recorded = False
        self._modules_seen = 0
        self._libraries: dict[str, str] = {}
        self._failed = False
        self._write({
            "kind": "start", "probe_version": PROBE_VERSION, "time": time.time(),
            "python": platform.python_version(), "host": host_info(), "gpus": gpu_info(),
        })

    # -- output -----------------------------------------------------------------
    def _write(self, record: dict) -> None:
        self._stream.write(json.dumps(record, separators=(",", ":")) + "\n")

    def _fail(self, where: str, error: BaseException) -> None:
        if not self._failed:  # report the first failure only
            self._failed = True
            with contextlib.suppress(Exception):
                self._write({"kind": "probe_error", "message": f"{where}: "
                             f"{type(error).__name__}: {error}"})

    # -- JAX ----------------------------------------------------------------------
    def listen_to_jax(self) -> None:
        if self._jax_listening:
            return
        self._jax_listening = True
        try:
            import jax.monitoring

            jax.monitoring.register_event_duration_secs_listener(self._on_jax_duration)
        except Exception as error:
            self._fail("jax.monitoring", error)

    def _on_jax_duration(self, event: str, duration: float, **kwargs) -> None:
        if event in _COMPILE_EVENTS and self._started is not None:
            self._compile_seconds += duration
            if event == _BACKEND_COMPILE_EVENT:
                name = str(kwargs.get("fun_name") or "<unknown>")
                self._compilations[name] = self._compilations.get(name, 0) + 1

    def _sync_jax(self) -> None:
        """Wait for device work the cell enqueued (JAX dispatch is asynchronous)."""
        jax = sys.modules.get("jax")
        if jax is not None and _jax_backends_initialised():
            jax.block_until_ready(jax.live_arrays())

    # -- IPython callbacks --------------------------------------------------------
    def pre_run_cell(self, info) -> None:
        try:
            if not getattr(info, "store_history", True):
                self._started = None  # inline evaluations: not a cell of the notebook
                return
            self._source = info.raw_cell or ""
            self._compile_seconds = 0.0
            self._compilations = {}
            self._started = time.perf_counter()
        except Exception as error:
            self._fail("pre_run_cell", error)

    def post_run_cell(self, result) -> None:
        if self._started is None:
            return
        try:
            try:  # noqa: SIM105 - no context manager object per cell on this hot path
                self._sync_jax()
            except Exception:
                pass  # a failed computation surfaces as the cell's own error
            seconds = time.perf_counter() - self._started
            self._started = None
            error = result.error_in_exec or result.error_before_exec
            record = {
                "kind": "cell",
                "execution_count": result.execution_count,
                "seconds": seconds,
                "first_line": _first_line(self._source),
                "error": type(error).__name__ if error is not None else None,
                "compile_seconds": self._compile_seconds,
                "compilations": self._compilations,
                "loops": _loops(self._source),
                "peak_memory_mb": _peak_memory_mb(),
            }
            self._write(record)
            self._note_changes()
        except Exception as error:
            self._fail("post_run_cell", error)

    def _note_changes(self) -> None:
        if "jax" in sys.modules:
            self.listen_to_jax()
            if not self._jax_recorded and _jax_backends_initialised():
                self._jax_recorded = True
                self._write({"kind": "jax", "jax": jax_info()})
        if len(sys.modules) != self._modules_seen:
            self._modules_seen = len(sys.modules)
            libraries = _library_versions()
            if libraries != self._libraries:
                self._libraries = libraries
                self._write({"kind": "libraries", "libraries": libraries})


def install(ipython, output: str) -> Probe:
    probe = Probe(output)
    ipython.events.register("pre_run_cell", probe.pre_run_cell)
    ipython.events.register("post_run_cell", probe.post_run_cell)
    if "jax" in sys.modules:
        probe.listen_to_jax()
    else:
        sys.meta_path.insert(0, _JaxImportWatcher(probe.listen_to_jax))
    return probe
