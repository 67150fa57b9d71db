"""The in-kernel probe of sphinx-gpu-admonition (standard library only).

Installed by ``startup.py`` at kernel start. It registers IPython
``pre_run_cell`` / ``post_run_cell`` callbacks and appends one JSON line per
executed cell to the output file named by the engine, plus lines describing the
machine, JAX and imported libraries when they become known.  Writing a line per
cell (not one file at the end) keeps the data of every finished cell when the
kernel dies or a cell times out.

Rules, because this runs in every cell of every notebook:
- never import JAX or initialise a backend the notebook did not initialise;
- never print, never raise into the notebook, never touch the user namespace;
- be immune to the notebook: the clock, the JSON string encoder and the
  builtins are the ones of kernel start, so a cell patching
  ``time.perf_counter``, ``json.dumps`` or ``builtins.round`` changes nothing;
- do as little as possible per cell: two clock reads and one line written
  (formatted directly; the source's first line and loop calls are bounded
  string scans, the peak memory one ``getrusage``).

The probe is several files, loaded by path from this one's folder (the kernel may
not see this package): the line protocol (``protocol.py``, which the engines'
readers import too), the machine's and JAX's facts, read once or when they changed
(``facts.py``), the end-of-cell device sync (``device_sync.py``, loaded with a JAX
backend) and what is read from JAX's compilations (``jax_inspect.py``, loaded
with JAX).
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import faulthandler
import importlib.util
import json
import os
import re
import sys
from json.encoder import encode_basestring_ascii as _json_string
from os import getpid as _process_id
from time import perf_counter as _clock
from time import time as _wall_clock

# Every function of this module looks builtins up in this private copy, taken
# when the kernel starts (a function's builtins are bound when it is defined):
# a notebook doing ``builtins.round = ...`` cannot corrupt the record.  The probe's
# other files get the same copy (:func:`_load_beside`).
__builtins__ = dict(vars(builtins))


def _load_beside(name: str):
    """The probe's file ``<name>.py`` of this folder, by path, with the private builtins."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location("_sphinx_gpu_admonition_" + name, path)
    module = importlib.util.module_from_spec(spec)
    module.__builtins__ = __builtins__
    spec.loader.exec_module(module)
    return module


protocol = _load_beside("protocol")
facts = _load_beside("facts")
probe_file = _load_beside("probe_file")

_INFINITY = float("inf")

#: preparing the device sync is tried this often (then the live arrays are walked)
_DEVICE_SYNC_ATTEMPTS = 2

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


class _JaxImportWatcher:
    """A ``sys.meta_path`` finder that runs a callback right after ``import jax``.

    Registering the compile listeners at that moment (rather than in the next
    cell) also measures compilations in the cell that imports JAX. It removes
    itself only once JAX's module code has run: ``importlib.util.find_spec("jax")``
    alone (an availability check before the import) is not the import.
    """

    def __init__(self, on_import):
        self._on_import = on_import
        self._looking_up = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "jax" or self._looking_up:
            return None
        self._looking_up = True  # the lookup below asks sys.meta_path, so us, again
        try:
            spec = importlib.util.find_spec("jax")
        finally:
            self._looking_up = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            self.remove()
            self._on_import()

        spec.loader.exec_module = exec_module  # this spec's own loader object only
        return spec

    def remove(self):
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)


def _json_counts(counts: dict[str, int]) -> str:
    return "{" + ",".join(f"{_json_string(name)}:{int(count)}"
                          for name, count in counts.items()) + "}"


def _json_strings(strings: list[str]) -> str:
    return "[" + ",".join(_json_string(string) for string in strings) + "]"


def _covered(spans: list[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of ``[start, end]`` that the intervals ``spans`` cover: overlapping ones
    (threads compiling at once, a trace inside another) count once, and never more
    than the cell."""
    covered, reach = 0.0, start
    for low, high in sorted(spans):
        low, high = max(low, reach), min(high, end)
        if high > low:
            covered += high - low
            reach = high
    return covered


def _valid_seconds(value) -> bool:
    """A duration that can be written: finite and not negative (NaN fails both tests)."""
    return 0.0 <= value < _INFINITY


def _cell_error(error: BaseException | None) -> BaseException | None:
    """The cell's own exception behind the errors of reporting it (a traceback that
    could not be sent fails again when IPython reports that failure)."""
    own = error
    for _ in range(8):  # context chains are short; never loop on a cyclic one
        context = getattr(own, "__context__", None)
        if context is None or type(own) is not type(error):
            break
        own = context
    return own


class Probe:
    def __init__(self, output: str, ipython=None, explain_recompilations: bool = False):
        # one write(2) per line, straight to the file: a line is in the file when the
        # cell ends (a kernel that dies later loses nothing), and appends of whole
        # lines never interleave; no text and buffer layers on the per-cell path
        self._file = probe_file.ProbeFile(output)
        self._ipython = ipython
        # the ExecutionInfo of the notebook cell now running: runs nested in it
        # (%%capture, get_ipython().run_cell) belong to it and are not cells
        self._running = None
        #: runs nested in the cell that took an execution count (store_history=True):
        #: the reader must not take their counts for cells the probe missed
        self._nested_runs = 0
        self._started: float | None = None
        self._source = ""
        self._compile_seconds = 0.0
        self._compilations: dict[str, int] = {}
        self._jax_listening = False
        self._inspect = None  # jax_inspect.py, loaded with JAX
        self._compiled_loops: list[dict] = []
        #: the input types of each program compiled in the cell (jax_inspect.note_program)
        self._compiled_inputs: list[dict] = []
        #: (start, end) of each compile event of the cell, on the probe's clock
        self._compile_spans: list[tuple[float, float]] = []
        self._explain, self._explaining, self._recompile_reasons = explain_recompilations, False, []
        #: the GPUs whose memory is read after each cell; [] on the CPU (nothing read)
        self._memory_devices: list | None = None
        self._device_peak_mb = 0.0
        self._jax_recorded = False
        self._device_sync = None  # device_sync.DeviceSync, with a JAX backend
        self._device_sync_attempts = 0
        self._modules_seen = 0
        self._libraries: dict[str, str] = {}
        self._failed = False
        self._warned: set[str] = set()
        self._pid = os.getpid()
        kind, pid = protocol.KEY_KIND, protocol.KEY_PID
        self._cell_prefix = f'{{"{kind}":"{protocol.KIND_CELL}","{pid}":{self._pid},'
        self._start_prefix = f'{{"{kind}":"{protocol.KIND_CELL_START}","{pid}":{self._pid},'
        self._first_line = ""
        self._encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
        self._write_facts(protocol.KIND_START, {
            "probe_version": protocol.PROBE_VERSION, "time": _wall_clock(),
            "python": sys.version.split()[0], "host": facts.host_info(), "gpus": facts.gpu_info(),
            "allocator": {name: os.environ[name] for name in facts.ALLOCATOR_VARIABLES
                          if name in os.environ},
        })

    # -- output -----------------------------------------------------------------
    def _write(self, record: dict) -> None:
        record[protocol.KEY_PID] = self._pid
        self._write_line(self._encode(record) + "\n")

    def _write_line(self, line: str) -> None:
        if _process_id() != self._pid:
            # a process forked from the kernel (os.fork in a cell) inherits the probe,
            # its callbacks and this file; its lines would pass for the kernel's
            return
        output = self._file
        if output.write(line.encode("utf-8")) and output.lost_lines:
            self._report_lost()

    def _report_lost(self) -> None:
        """Say how many lines could not be written (then the record misses cells)."""
        output = self._file
        lost, reason = output.lost_lines, output.lost_reason
        output.lost_lines, output.lost_reason = 0, None
        line = self._encode({protocol.KEY_KIND: protocol.KIND_LOST, protocol.KEY_PID: self._pid,
                             protocol.KEY_LOST_LINES: lost, protocol.KEY_MESSAGE: reason})
        if not output.write(line.encode("utf-8") + b"\n"):
            output.lost_lines += lost  # said with the next line that can be written

    def _write_facts(self, kind: str, facts: dict) -> None:
        """A line of the machine's or JAX's facts, each value bounded: a value made huge
        (a plugin's 10 MB device kind) is cut alone, with a warning naming it."""
        notes: list[str] = []
        record = protocol.bounded(facts, notes)
        record[protocol.KEY_KIND] = kind
        self._write(record)
        for note in notes[:8]:
            self.warn(f"the kernel's environment: {note}")

    def _fail(self, where: str, error: BaseException) -> None:
        if not self._failed:  # report the first failure only
            self._failed = True
            with contextlib.suppress(Exception):
                self._write({protocol.KEY_KIND: protocol.KIND_ERROR,
                             protocol.KEY_MESSAGE: f"{where}: {type(error).__name__}: {error}"})

    def warn(self, message: str, once_per: str | None = None) -> None:
        """A line the Sphinx side turns into a ``gpu_admonition.capture`` warning."""
        if once_per is not None:
            if once_per in self._warned:
                return
            self._warned.add(once_per)
        with contextlib.suppress(Exception):
            self._write({protocol.KEY_KIND: protocol.KIND_WARNING, protocol.KEY_MESSAGE: message})

    def _cell_line(self, execution_count, seconds: float, error: str | None) -> str:
        """The cell's JSON line, formatted directly (the hot path: no dict, no encoder)."""
        source = self._source
        compilations = self._compilations
        loops = _loops(source)
        peak = facts.peak_memory_mb()
        jax_fields = (self._compiled_loops or self._memory_devices or self._recompile_reasons
                      or self._compiled_inputs)
        return (
            f'{self._cell_prefix}"execution_count":'
            f'{"null" if execution_count is None else int(execution_count)},'
            f'"seconds":{seconds!r},"first_line":{_json_string(self._first_line)},'
            f'"error":{"null" if error is None else _json_string(error)},'
            f'"compile_seconds":{self._compile_seconds!r},"compilations":'
            f'{_json_counts(compilations) if compilations else "{}"},'
            f'"loops":{_json_strings(loops) if loops else "[]"},'
            f'"peak_memory_mb":{"null" if peak is None else repr(peak)}'
            f'{self._jax_fields() if jax_fields else ""}'
            f'{self._nested_field() if self._nested_runs else ""}}}\n'
        )

    def _nested_field(self) -> str:
        return f',"{protocol.KEY_NESTED_RUNS}":{self._nested_runs}'

    def _jax_fields(self) -> str:
        """The cell's compiled loops and input types, recompile reasons and a GPU's memory,
        where known."""
        loops = self._compiled_loops
        fields = f',"compiled_loops":{self._encode(loops)}' if loops else ""
        if self._compiled_inputs:
            fields += f',"compiled_inputs":{self._encode(self._compiled_inputs)}'
        if self._recompile_reasons:
            fields += f',"recompile_reasons":{self._encode(self._recompile_reasons)}'
        if self._memory_devices:  # never raises
            memory, self._device_peak_mb = self._inspect.memory_fields(
                self._memory_devices, self._device_peak_mb)
            fields += memory
        return fields

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
        with contextlib.suppress(Exception):  # else loops and device memory stay unknown
            self._inspect = _load_beside("jax_inspect")
            if self._explain:  # asked for: JAX's explanations are captured, never shown
                self._explaining = self._inspect.explain_recompilations(
                    sys.modules["jax"], self._recompile_reasons, lambda: self._started is not None)

    def _on_jax_duration(self, event: str, duration: float, **kwargs) -> None:
        if event in _COMPILE_EVENTS and self._started is not None:
            duration = float(duration)
            if not _valid_seconds(duration):
                self.warn(f"dropped a JAX compile duration of {duration!r} s (not a finite, "
                          "non-negative number; was the clock patched?)", once_per="compile")
                return
            # the event ends now: its interval, so that compilations in several threads
            # at once (and a trace inside another) count once (_covered)
            end = _clock()
            self._compile_spans.append((end - duration, end))
            if event == _BACKEND_COMPILE_EVENT:
                name = str(kwargs.get("fun_name") or "<unknown>")
                self._compilations[name] = self._compilations.get(name, 0) + 1
                if self._inspect is not None:  # never raises into JAX's compilation
                    self._inspect.note_program(name, self._compiled_loops,
                                               self._compiled_inputs)

    def _sync_jax(self) -> None:
        """Wait for device work the cell enqueued (JAX dispatch is asynchronous)."""
        if self._device_sync is not None:
            try:
                self._device_sync()
                return
            except Exception:  # backends cleared or replaced: prepare again after the cell
                self._device_sync = None
        jax = sys.modules.get("jax")
        if jax is not None and facts.jax_backends_initialised():
            # the first cell with a backend (no sync program yet) walks the live arrays once
            jax.block_until_ready(jax.live_arrays())

    # -- IPython callbacks --------------------------------------------------------
    def pre_run_cell(self, info) -> None:
        if self._running is not None:  # a run nested in the cell: timed as part of the cell
            if getattr(info, "store_history", False):  # which took an execution count
                self._nested_runs += 1
            return
        self._running = info
        try:
            if info.store_history:
                source = self._source = info.raw_cell or ""
                self._compile_seconds = 0.0
                self._nested_runs = 0
                if self._compile_spans:
                    self._compile_spans = []
                if self._compilations:
                    self._compilations = {}
                if self._compiled_loops:
                    self._compiled_loops = []
                if self._compiled_inputs:
                    self._compiled_inputs = []
                if self._recompile_reasons:  # the list JAX's explanations go to: kept
                    self._recompile_reasons.clear()
                first_line = self._first_line = protocol.first_line(source)
                # written before the cell runs: a kernel killed in it still names it.
                # IPython counts the cell before it triggers pre_run_cell (7.0 to 9.x),
                # so the shell's count is already the next cell's
                count = getattr(self._ipython, "execution_count", None)
                self._write_line(
                    f'{self._start_prefix}"execution_count":'
                    f'{count - 1 if type(count) is int else "null"},'
                    f'"first_line":{_json_string(first_line)},"time":{_wall_clock()!r}}}\n')
                self._started = _clock()
            # else an inline evaluation (MyST-NB's inline mode): not a notebook cell
        except Exception as error:
            self._fail("pre_run_cell", error)

    def post_run_cell(self, result) -> None:
        if result is None:  # the run was cancelled before it produced a result
            self._running = self._started = None
            return
        running = self._running
        replaced = getattr(result, "info", None) is not running
        # IPython gives a new info, with the same source object, to a run whose error
        # escaped IPython itself (ipykernel could not send a traceback holding a lone
        # surrogate); anything else is a nested run, or an empty cell (no pre_run_cell)
        if replaced and (running is None or result.info.raw_cell is not running.raw_cell):
            return
        self._running = None
        started = self._started
        if started is None:
            return
        self._started = None  # also stops counting compile events: the sync is ours
        try:
            try:  # noqa: SIM105 - no context manager object per cell on this hot path
                self._sync_jax()
            except Exception:
                pass  # a failed computation surfaces as the cell's own error
            seconds = _clock() - started
            if self._compile_spans:
                self._compile_seconds = _covered(self._compile_spans, started, started + seconds)
            error = result.error_in_exec
            if error is None:
                error = result.error_before_exec
            count = result.execution_count
            try:  # before the cell's line: a cell initialising a GPU backend has its memory
                self._note_changes()
            except Exception as error:
                self._fail("post_run_cell", error)
            if replaced:
                error = _cell_error(error)
                # the new result has no count; IPython counted the cell when it began
                count = getattr(self._ipython, "execution_count", 1) - 1
            if _valid_seconds(seconds):
                self._write_line(self._cell_line(
                    count, seconds,
                    None if error is None else type(error).__name__))
            else:  # only a broken clock gets here
                self.warn(f"dropped cell {result.execution_count}: its time is {seconds!r} s",
                          once_per="seconds")
        except Exception as error:
            self._fail("post_run_cell", error)

    def _note_changes(self) -> None:
        modules = sys.modules
        if "jax" in modules:
            self.listen_to_jax()
            if self._device_sync is None and facts.jax_backends_initialised():
                if not self._jax_recorded:
                    self._jax_recorded = True
                    try:
                        info = facts.jax_info()
                    except Exception as error:  # a patched jax.devices: the rest is known
                        info = {}
                        self.warn(f"could not read JAX's backend and devices: "
                                  f"{type(error).__name__}: {error}")
                    self._write_facts(protocol.KIND_JAX, {"jax": {
                        **info, "recompilations_explained": self._explaining}})
                    with contextlib.suppress(Exception):
                        self._memory_devices = self._inspect.memory_devices(modules["jax"])
                if self._device_sync_attempts < _DEVICE_SYNC_ATTEMPTS:
                    self._device_sync_attempts += 1
                    self._prepare_device_sync(modules["jax"])
        if len(modules) != self._modules_seen:
            self._modules_seen = len(modules)
            libraries = facts.library_versions()
            if libraries != self._libraries:
                self._libraries = libraries
                self._write_facts(protocol.KIND_LIBRARIES, {"libraries": libraries})

    def _prepare_device_sync(self, jax) -> None:
        try:
            self._device_sync = _load_beside("device_sync").DeviceSync(jax)
        except Exception:  # keep walking the live arrays: slower, still correct
            self._device_sync = None

    # -- end of the kernel ----------------------------------------------------------
    def callbacks_registered(self) -> bool:
        callbacks = getattr(getattr(self._ipython, "events", None), "callbacks", {})
        return (self.pre_run_cell in callbacks.get("pre_run_cell", ())
                and self.post_run_cell in callbacks.get("post_run_cell", ()))

    def at_exit(self) -> None:
        """Say whether the notebook removed the callbacks (then cells went unmeasured),
        and how many cells the kernel ran (the reader tells a record missing some)."""
        with contextlib.suppress(Exception):
            count = getattr(self._ipython, "execution_count", None)
            self._write({protocol.KEY_KIND: protocol.KIND_END,
                         protocol.KEY_CALLBACKS_REGISTERED: self.callbacks_registered(),
                         # the shell's count is the next cell's
                         protocol.KEY_EXECUTION_COUNT: count - 1 if type(count) is int
                         else None})
            self._file.close()


def _trace_fatal_signals(output: str) -> None:
    """A kernel killed by a signal leaves its Python stack in ``<output>.crash``: a
    dead kernel otherwise tells the build only "Kernel died". The descriptor stays
    open for the kernel's life (faulthandler writes to it from the signal handler,
    where nothing can be checked): at a high number, where user code does not reach
    it by accident (``probe_file.owned_descriptor``)."""
    try:
        fd = probe_file.owned_descriptor(os.open(
            output + protocol.CRASH_SUFFIX, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
        faulthandler.enable(file=fd, all_threads=False)
    except Exception:
        pass  # the kernel runs the same; only its death would be untraced


def install(ipython, output: str, explain_recompilations: bool = False) -> Probe:
    _trace_fatal_signals(output)
    probe = Probe(output, ipython, explain_recompilations)
    ipython.events.register("pre_run_cell", probe.pre_run_cell)
    ipython.events.register("post_run_cell", probe.post_run_cell)
    atexit.register(probe.at_exit)
    if "jax" in sys.modules:
        probe.listen_to_jax()
    else:
        sys.meta_path.insert(0, _JaxImportWatcher(probe.listen_to_jax))
    return probe
