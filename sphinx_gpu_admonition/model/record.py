"""The execution record: one model for what a notebook's execution was.

This is the only definition of the data.  An engine's adapter (the Sphinx
extension in :mod:`..ext`) builds :class:`NotebookRecord` objects from what the
kernel probe wrote and keeps the objects themselves; every consumer (the page
line, the ``gpu`` admonition, the status page, the JSON / JUnit / console
writers and the command line) reads the same objects, or reads a status file
back through :meth:`StatusReport.from_dict` (:mod:`.files`).

Loading checks every value against the dataclasses' field types (one validator,
:func:`.schema.load_model`): a bad value raises :class:`.schema.SchemaError`
naming its path (``notebooks[3].cells[2].seconds: not a number``).

The JSON form is described by ``schema/execution-status.schema.json`` (strict; a
test fails when it and the dataclasses disagree); bump :data:`SCHEMA_VERSION`
whenever a field changes meaning or disappears, and :data:`.files.SIDECAR_VERSION`
whenever the model changes at all.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from . import device
from .schema import (
    Loadable,
    ModelObject,
    SchemaError,
    choices,
    dumper,
    load_model,
    model_class,
    short_repr,
)
from .timing_record import Claim, Timing, TimingStatement

SCHEMA_ID = "sphinx-gpu-admonition/execution-status"
SCHEMA_VERSION = 2
#: the earlier versions this release reads, migrated on load (:func:`_migrate`):
#: 1 named and paired cells by their place in the record and stored a defining cell's
#: MyST-NB index in ``runs[].defined_cell``
READABLE_SCHEMA_VERSIONS = (1, SCHEMA_VERSION)

# Notebook statuses, in the order the status page explains them.
OK = "ok"
ERROR = "error"
TIMEOUT = "timeout"
KERNEL_DIED = "kernel_died"
OUTPUTS_PRESENT = "outputs_present"
EXCLUDED = "excluded"
EXECUTION_OFF = "execution_off"
STATUSES = (OK, ERROR, TIMEOUT, KERNEL_DIED, OUTPUTS_PRESENT, EXCLUDED, EXECUTION_OFF)
FAILED_STATUSES = (ERROR, TIMEOUT, KERNEL_DIED)
NOT_EXECUTED_STATUSES = (OUTPUTS_PRESENT, EXCLUDED, EXECUTION_OFF)
#: the order in which every view lists statuses: problems first
STATUS_ORDER = (*FAILED_STATUSES, OK, *NOT_EXECUTED_STATUSES)

# Where a notebook's outputs (and so its measurements) came from.
EXECUTED = "executed"  # executed by this build
CACHE = "cache"  # reused from the jupyter-cache; measurements are from that execution
#: executed by an earlier build of the same environment; this build did not read the
#: page again (its source was unchanged), so outputs and measurements are that build's
EARLIER_BUILD = "earlier_build"
NOT_EXECUTED = "none"
PROVENANCES = (EXECUTED, CACHE, EARLIER_BUILD, NOT_EXECUTED)

# Whether the build that wrote a status document finished (``build.outcome``).
BUILD_SUCCEEDED = "succeeded"
BUILD_FAILED = "failed"


#: what the kernel's probe recorded: "ok" (every cell the kernel ran), "partial" (the
#: environment and some cells: the probe could not write the others), "missing" (no
#: probe data: a non-IPython kernel, capture off) or "failed" (the probe broke)
CAPTURE_STATES = ("ok", "partial", "missing", "failed")
#: the states whose record holds the kernel's environment and measured cells
MEASURED_CAPTURES = ("ok", "partial")
GPU_SOURCES = ("nvml", "nvidia-smi")

# Why a notebook executed although the jupyter-cache held a copy of it (``cache`` mode).
CELL_CHANGED = "cell_changed"  # a code cell's source differs (or cells were added/removed)
METADATA_CHANGED = "metadata_changed"  # a code cell's metadata differs (jupyter-cache hashes it)
KERNEL_CHANGED = "kernel_changed"  # the notebook's kernelspec differs
NEW_NOTEBOOK = "new_notebook"  # the cache holds no copy of this notebook
CACHE_MISS_REASONS = (CELL_CHANGED, METADATA_CHANGED, KERNEL_CHANGED, NEW_NOTEBOOK)

@model_class
class Device(Loadable):
    """Devices of one kind that JAX saw (``count`` of them)."""

    platform: str
    kind: str
    count: int = dataclasses.field(default=1, metadata={"minimum": 1})


@model_class
class GpuInfo(Loadable):
    """An NVIDIA GPU as NVML or nvidia-smi reported it."""

    name: str
    memory_mb: float | None = None
    driver: str | None = None
    cuda: str | None = None
    source: str = choices(GPU_SOURCES, default="nvml")


@model_class
class JaxInfo(Loadable):
    """JAX as the notebook used it; ``backend`` is None when it never initialised one."""

    backend: str | None = None
    version: str | None = None
    jaxlib_version: str | None = None
    #: ``jax_enable_x64`` when the backend was initialised (None: not known)
    x64: bool | None = None
    #: the probe captured JAX's explanations of recompilations (the book asked for them:
    #: ``gpu_explain_recompilations``); None: not known (an older record)
    recompilations_explained: bool | None = None
    #: a persistent compilation cache was configured (``jax_compilation_cache_dir``)
    #: when the backend was initialised (None: not known); never its path
    compilation_cache: bool | None = None
    plugins: dict[str, str] = dataclasses.field(default_factory=dict)
    devices: list[Device] = dataclasses.field(default_factory=list)

    @property
    def device_summary(self) -> str | None:
        """``"2x NVIDIA H200"`` style text of the devices of the default backend."""
        if not self.devices:
            return None
        parts = [f"{d.count}x {d.kind}" if d.count > 1 else d.kind for d in self.devices]
        return ", ".join(parts)


@model_class
class Host(Loadable):
    """The machine the kernel ran on."""

    cpu: str | None = None
    cores: int | None = None
    memory_gb: float | None = None
    os: str | None = None
    machine: str | None = None


@model_class
class Environment(Loadable):
    """Where a notebook ran, as the kernel saw it."""

    host: Host = dataclasses.field(default_factory=Host)
    python: str | None = None
    jax: JaxInfo = dataclasses.field(default_factory=JaxInfo)
    gpus: list[GpuInfo] = dataclasses.field(default_factory=list)
    libraries: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the kernel's XLA GPU allocator settings as its environment set them
    #: (``XLA_PYTHON_CLIENT_PREALLOCATE``: "false", ...); unset ones are absent, so
    #: JAX's defaults applied (preallocate 75 % of the GPU's memory at first use)
    allocator: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def backend(self) -> str | None:
        return self.jax.backend

    @property
    def machine_id(self) -> str:
        """A short stable id of the machine (host and GPUs), to group notebooks by it."""
        # vars(): the host's fields as asdict gives them (all plain values), without
        # its deep copy; the status page asks for it for every notebook
        key = json.dumps([vars(self.host), [g.name for g in self.gpus]], sort_keys=True)
        return hashlib.sha1(key.encode()).hexdigest()[:10]

    @property
    def device_label(self) -> str:
        """One line: ``"GPU: NVIDIA H200"``, ``"CPU: AMD EPYC 7763, 4 cores"``
        (:func:`.device.device_label`)."""
        return device.device_label(self)


@model_class
class LoopCall(Loadable):
    """A sequential JAX loop a cell runs (:func:`.code.link_loops`): in its own code,
    or in a user function it calls, defined in an earlier cell or a local module."""

    #: ``lax.scan``, ``lax.fori_loop``, ``lax.while_loop``, ``lax.map``, ...
    primitive: str
    #: the user function the cell calls (None: the cell calls the primitive itself)
    function: str | None = None
    #: the position (:attr:`CellRecord.position`) of the code cell that defined
    #: ``function`` (None: not a cell's)
    defined_cell: int | None = None
    #: the local module that defined ``function`` (``mylib``), when a module did
    module: str | None = None
    #: the function holding the loop, when ``function`` reaches it through calls
    loop_function: str | None = None
    #: the loop's step count, where the code gives it (a literal, a constant, the
    #: argument passed for its length)
    steps: int | None = dataclasses.field(default=None, metadata={"minimum": 0})
    #: the cell's line that runs it
    call: str = ""


@model_class
class CompiledLoop(Loadable):
    """A loop in a program JAX compiled during the cell (the probe read the program:
    a ``stablehlo.while``), so also one inside library code (numpyro's NUTS sampler)."""

    #: the compiled function as JAX names it (``jit(sample)``; ``jit(while)`` for a
    #: library's loop run outside a ``jit``)
    function: str
    #: the loop construct: ``while`` (what lax.scan, fori_loop and while_loop lower to)
    loop: str = "while"
    #: the trip count, where the program fixes it (a counter against a constant)
    steps: int | None = dataclasses.field(default=None, metadata={"minimum": 0})
    #: the platform it was compiled for (``cpu``, ``cuda``); None: not known
    platform: str | None = None


@model_class
class CompiledInputs(Loadable):
    """One compilation of a function during the cell and the shapes and dtypes of its
    program's inputs (the probe read the program JAX compiled), so that a function
    compiled again for a new input shape (``f32[10000]``, before ``f32[1000]``) is told
    from one re-created or compiled for another device."""

    #: the compiled function as JAX names it (``jit(f)``)
    function: str
    #: the program's inputs in order, as JAX writes types: ``f32[1000]``, ``i32[]``,
    #: ``u32[2]`` (a PRNG key), ``bool[3,4]``; the arguments JAX keeps (unused ones and
    #: static arguments are not inputs of the program), at most 16
    inputs: list[str] = dataclasses.field(default_factory=list)
    #: how many inputs the program has (``inputs`` holds the first 16)
    arguments: int = dataclasses.field(default=0, metadata={"minimum": 0})
    #: the platform it was compiled for (``cpu``, ``cuda``); None: not known
    platform: str | None = None


@model_class
class RecompileReason(Loadable):
    """Why JAX traced a function again in the cell, as JAX explained it
    (``jax_explain_cache_misses``, captured when the book asks for it)."""

    #: the Python function as JAX names it (``q``, ``<lambda>``; compiled as ``jit(q)``)
    function: str
    #: JAX's reason, one line: "seen another function defined on the same line; maybe
    #: the function is being re-defined repeatedly, preventing caching?"
    reason: str


#: how a Python loop pulls a device value to the host (:class:`HostSync`): ``float`` /
#: ``int`` / ``bool`` of it, ``.item()`` (``.tolist()``), a ``numpy`` function of it
#: (``np.asarray``, ``np.max``), ``print`` of it, ``block_until_ready``,
#: ``jax.device_get``, or a ``condition`` on it (``while error > tol``, ``if``)
HOST_SYNC_KINDS = ("float", "int", "bool", "item", "numpy", "print", "block_until_ready",
                   "device_get", "condition")
#: the two Python loop statements
PYTHON_LOOP_KINDS = ("for", "while")


@model_class
class HostSync(Loadable):
    """A statement in a Python loop that waits for the device and copies a value to
    the host on every iteration it runs (JAX's asynchronous dispatch stops there)."""

    kind: str = choices(HOST_SYNC_KINDS)
    #: its line, stripped: ``error = float(jnp.max(jnp.abs(v_new - v)))``
    code: str = ""
    #: its line number in the cell (or module) holding the loop, from 1
    line: int = dataclasses.field(default=1, metadata={"minimum": 1})
    #: under an ``if`` inside the loop (``if i % 10 == 0: print(error)``): not every
    #: iteration
    guarded: bool = False


@model_class
class DispatchLoop(Loadable):
    """A Python ``for`` / ``while`` loop that dispatches JAX work on every iteration
    (:func:`.code.read_code`): calls of jitted functions, or JAX operations one by one;
    in the cell's own code, or in a user function it calls.  On a GPU every dispatch
    also pays a launch."""

    loop: str = choices(PYTHON_LOOP_KINDS)
    #: the loop statement's line, stripped: ``for _ in range(200_000):``
    code: str = ""
    #: its line number in the cell (or module) that holds it, from 1
    line: int = dataclasses.field(default=1, metadata={"minimum": 1})
    #: the user function the cell calls to run it (None: the loop is the cell's own)
    function: str | None = None
    #: the function holding the loop, when ``function`` reaches it through calls
    loop_function: str | None = None
    #: the index of the code cell holding the loop (the cell itself for its own loop,
    #: else the cell that defined the function holding it); None: a local module's
    defined_cell: int | None = dataclasses.field(default=None, metadata={"minimum": 0})
    #: the local module holding the loop (``mylib``), when a module does
    module: str | None = None
    #: the jitted (or vmapped) user functions each iteration calls, as the code names
    #: them, directly or through the plain Python functions it calls
    calls: list[str] = dataclasses.field(default_factory=list)
    #: the JAX operations each iteration runs one by one, outside any jitted function
    #: (``jnp.max``), as the code writes them
    operations: list[str] = dataclasses.field(default_factory=list)
    #: how many times the body runs, where the code gives it (``range(200_000)``, a
    #: constant, the argument for its length; nested loops multiplied); None: not known
    #: (a ``while`` loop)
    iterations: int | None = dataclasses.field(default=None, metadata={"minimum": 0})
    #: the work runs on the CPU (``with jax.default_device(cpu)``, ``jax.jit(f,
    #: device=cpu)``): no GPU dispatch
    pinned_to_cpu: bool = False
    #: every function it calls is a ``jax.vmap`` (each call one batched program)
    batched: bool = False
    #: the statements in the loop that pull device values to the host
    syncs: list[HostSync] = dataclasses.field(default_factory=list)
    #: the cell's line that runs it (the loop's own line for the cell's loop)
    call: str = ""


@model_class
class JitCall(Loadable):
    """A jitted function the cell runs (:func:`.code.read_code`), and how the code
    makes it: once at the top level, or anew on every call of a function or every
    iteration of a loop (then each one is a new function to JAX, compiled again)."""

    #: the Python function as JAX names its compilation (``jit(q)``): ``q``, ``<lambda>``
    function: str
    #: what the cell's code calls to run it (``qm_cpu``, ``mylib.sample``, ``newton``)
    called: str = ""
    #: the code cell holding the jit (None: a local module's, see ``module``)
    defined_cell: int | None = dataclasses.field(default=None, metadata={"minimum": 0})
    module: str | None = None
    #: the line of the jit there (``@partial(jax.jit, static_argnums=(1,))``), from 1
    line: int = dataclasses.field(default=1, metadata={"minimum": 1})
    code: str = ""
    #: it wraps a function made anew each time the code runs (a lambda, a closure, a
    #: ``partial``, a function passed in), inside a function or a loop
    recreated: bool = False
    #: the user function whose every call makes it again (None: the cell's own loop,
    #: or not recreated)
    created_in: str | None = None
    pinned_to_cpu: bool = False
    #: the cell's line that runs it
    call: str = ""


#: why :class:`WorkLine` chose its statement, the surest first: it calls a function
#: running a JAX loop (``loop_call``); it is, or calls a function holding, a Python loop
#: dispatching JAX work (``dispatch_loop``); it calls a jitted user function or one
#: running JAX code (``jitted_call``), a known-heavy library function (``heavy_call``:
#: ``np.linalg``, ``scipy.optimize`` ...), a JAX operation (``jax_call``), another user
#: function (``user_call``); it is a Python loop (``python_loop``) or another call
#: (``call``); the first statement of the timed code (``timed``)
WORK_KINDS = ("loop_call", "dispatch_loop", "jitted_call", "heavy_call", "jax_call",
              "user_call", "python_loop", "call", "timed")


@model_class
class WorkLine(Loadable):
    """The statement of a cell that takes its time (:func:`.work_line.work_line`):
    inside the timed block (``%%time``, ``%time``, ``with qe.Timer():``) when there is
    one, the call of the slow function or the loop, not the set-up around it."""

    #: the statement on one line (a statement over several lines joined), stripped
    code: str
    #: its first line's number in the cell, from 1
    line: int = dataclasses.field(default=1, metadata={"minimum": 1})
    kind: str = choices(WORK_KINDS, default="call")
    #: inside the cell's timed code (a timing magic, a ``Timer`` block, between two
    #: ``time.perf_counter()`` readings)
    timed: bool = False


@model_class
class CellRecord(Loadable):
    """One executed code cell."""

    #: the engine's index of the cell on its page, for its anchor only (MyST-NB's
    #: index among all cells, Markdown ones included; mystmd's block number); None
    #: when the cell is not rendered on the page and could not be matched
    index: int | None
    execution_count: int | None
    seconds: float
    first_line: str = ""
    #: exception type name when the cell raised
    error: str | None = None
    #: the cell was allowed to raise (tagged ``raises-exception``, or the book sets
    #: ``nb_execution_allow_errors``): its error is expected, not a failure
    error_expected: bool = False
    #: JAX tracing + lowering + compilation time inside this cell: the time its compile
    #: events cover (compilations in several threads at once count once; never more
    #: than the cell)
    compile_seconds: float = 0.0
    #: XLA compilations inside this cell, by function name
    compilations: dict[str, int] = dataclasses.field(default_factory=dict,
                                                     metadata={"minimum": 1})
    #: sequential JAX loop primitives called in the source (lax.scan, fori_loop, while_loop)
    loops: list[str] = dataclasses.field(default_factory=list)
    #: the loops the cell runs, through the functions it calls (the builder's parse of
    #: the whole notebook; ``loops`` is only what the cell's own text calls)
    runs: list[LoopCall] = dataclasses.field(default_factory=list)
    #: the loops of the programs JAX compiled during the cell (the probe's reading)
    compiled_loops: list[CompiledLoop] = dataclasses.field(default_factory=list)
    #: each compilation of a function during the cell with its inputs' shapes and dtypes,
    #: in order (at most 4 per function and 32 per cell; the probe's reading)
    compiled_inputs: list[CompiledInputs] = dataclasses.field(default_factory=list)
    #: why JAX traced functions again in the cell, one per function (only when the book
    #: asked: ``gpu_explain_recompilations``; see ``JaxInfo.recompilations_explained``)
    recompile_reasons: list[RecompileReason] = dataclasses.field(default_factory=list)
    #: the user functions the cell wraps in a ``jit`` pinned to a device
    #: (:func:`.code.device_twins`): compiling them here is for that device, not again
    device_twins: list[str] = dataclasses.field(default_factory=list)
    #: the Python loops around JAX work the cell runs, with the host syncs in them
    #: (the builder's parse of the notebook, :func:`.code.read_code`)
    dispatch_loops: list[DispatchLoop] = dataclasses.field(default_factory=list)
    #: the jitted functions the cell runs, and whether the code makes them anew
    jit_calls: list[JitCall] = dataclasses.field(default_factory=list)
    #: the statement doing the cell's work (None: nothing better than its first line)
    work: WorkLine | None = None
    #: resident memory of the kernel process after the cell (peak so far)
    peak_memory_mb: float | None = None
    #: GPU memory in use after the cell (MiB, the fullest device, JAX's
    #: ``memory_stats``); None: not a GPU, or the backend does not report it
    device_memory_mb: float | None = dataclasses.field(default=None, metadata={"minimum": 0})
    #: the GPU memory peak during the cell, known when the kernel's peak grew in it
    device_peak_memory_mb: float | None = dataclasses.field(default=None,
                                                            metadata={"minimum": 0})
    #: line of the cell in the source file (text notebooks; None for .ipynb sources),
    #: so that CI annotations point at it from the JSON alone
    line: int | None = dataclasses.field(default=None, metadata={"minimum": 1})
    #: the line of the cell's first line of code in that file (after its fence and its
    #: options), so that a finding points at its work line (``work.line`` in it)
    code_line: int | None = dataclasses.field(default=None, metadata={"minimum": 1})
    #: the cell is tagged ``slow-ok`` (:data:`SLOW_OK_TAG`): slow on purpose (a
    #: demonstration), shown as such and never warned about
    slow_ok: bool = False
    #: the cell's code is only imports (and comments, magics): its time is paid once
    #: per kernel, not by the lecture's code (:func:`.analysis.is_imports_only`)
    imports_only: bool = False
    #: the cell only runs shell commands or magics (``!pip install``, ``%pip``,
    #: :func:`.analysis.is_shell_or_magic`): the machine's time, which no view flags
    shell: bool = False
    #: the cell's place among the code cells the kernel ran, from 0 (its ``In [n]``
    #: less one, :func:`cell_positions`): the one identity of a cell on every engine,
    #: which names it ("cell 3") and pairs it with another build's; None: not set
    #: (a record made without a page), the cell's place in the record then
    position: int | None = dataclasses.field(default=None, metadata={"minimum": 0})

    @property
    def compilation_count(self) -> int:
        return sum(self.compilations.values())


#: the cell tag (``:tags: [slow-ok]`` in MyST, the cell's metadata tags in an
#: ``.ipynb``) that marks a cell as slow on purpose
SLOW_OK_TAG = "slow-ok"


#: how a cell is named in every view (page, badge, console, warnings, JUnit, JSON, CLI)
CELL_LABEL = "cell {number}"


def cell_positions(cells: Sequence[CellRecord]) -> list[int]:
    """Each cell's position (:attr:`CellRecord.position`) from the kernel's execution
    counts, which both engines' kernels number 1, 2, 3 ... for the code cells they run
    (empty cells get none): a cell the probe could not record shifts no other cell.
    Counts that do not rise one by one from 1 or more (a record of another kind): the
    cells' places in the record."""
    counts = [cell.execution_count for cell in cells]
    if all(type(count) is int and count >= 1 for count in counts) and all(
            later > earlier for earlier, later in zip(counts, counts[1:], strict=False)):
        return [count - 1 for count in counts]  # type: ignore[operator]
    return list(range(len(cells)))


def cell_anchor(index: int) -> str:
    """The id of the code cell with MyST-NB index ``index`` on its notebook's page."""
    return f"cell-{index}"


@dataclasses.dataclass(frozen=True)
class CellName:
    """The one identity of a code cell, derived from the record (never stored).

    ``number`` counts the notebook's code cells that ran, from 1, in order (the
    cell's :attr:`~CellRecord.position` plus one): hidden cells count, markdown cells
    do not, so "cell 3" is the cell Jupyter shows as ``In [3]``, on every engine.
    ``index`` is the engine's index of the cell (what the page's anchor ``cell-<index>``
    uses on Sphinx); ``source`` and ``line`` say where the cell starts in a text
    notebook (MyST / rST), for editors and CI.
    """

    docname: str
    number: int
    index: int | None
    first_line: str = ""
    source: str | None = None
    line: int | None = None

    @property
    def label(self) -> str:
        """``cell 3``"""
        return CELL_LABEL.format(number=self.number)

    @property
    def anchor(self) -> str | None:
        """The id of the cell on its notebook's page (None: not on the page)."""
        return None if self.index is None else cell_anchor(self.index)

    @property
    def location(self) -> str | None:
        """``lectures/intro.md:42`` for a text notebook, else None."""
        if self.source is None or self.line is None:
            return None
        return f"{self.source}:{self.line}"

    @property
    def full(self) -> str:
        """``intro cell 3 (lectures/intro.md:42)``: the notebook, the cell and its line."""
        where = self.location
        return f"{self.docname} {self.label}" + (f" ({where})" if where else "")


@model_class
class ErrorInfo(Loadable):
    """Why a notebook failed, and in which cell."""

    type: str
    message: str = ""
    cell_index: int | None = None
    execution_count: int | None = None
    #: the signal that killed the kernel (``SIGSEGV``), where faulthandler saw it
    signal: str | None = None
    #: the Python stack when the kernel died, innermost frame first
    #: (``File "/tmp/ipykernel_1/2.py", line 2 in crash``)
    stack: list[str] = dataclasses.field(default_factory=list)
    #: the GPU memory in use when last measured before the kernel died (MiB)
    device_memory_mb: float | None = dataclasses.field(default=None, metadata={"minimum": 0})


@model_class
class CacheMiss(Loadable):
    """Why a notebook missed the jupyter-cache: what differs between the cached copy of
    it (the newest from the same source) and the notebook that executed."""

    reason: str = choices(CACHE_MISS_REASONS)
    #: the first code cell that differs, named as every view names cells ("cell 3")
    cell: str | None = None


@model_class
class KernelPackages(Loadable):
    """Every distribution installed in the kernel's environment (``!conda list``),
    read by the build after the notebook executed, kept so that cache hits show it."""

    #: the kernel's Python executable (where the list was read)
    executable: str
    #: distribution name -> version
    distributions: dict[str, str] = dataclasses.field(default_factory=dict)


@model_class
class NotebookRecord(Loadable):
    """Everything known about one notebook page's execution."""

    docname: str
    status: str = choices(STATUSES)
    title: str = ""
    provenance: str = choices(PROVENANCES, default=NOT_EXECUTED)
    #: MyST-NB execution mode that produced it (force, auto, cache, inline, off)
    method: str | None = None
    #: ISO 8601 time of the execution that produced the outputs
    executed_at: str | None = None
    #: MyST-NB's run time (includes kernel start-up and shutdown)
    runtime_seconds: float | None = None
    error: ErrorInfo | None = None
    environment: Environment = dataclasses.field(default_factory=Environment)
    cells: list[CellRecord] = dataclasses.field(default_factory=list)
    #: one of :data:`CAPTURE_STATES`: "ok", "partial" (cells missing: ``capture_message``
    #: says which), "missing" (no probe data: non-IPython kernel, disabled) or "failed"
    capture: str = choices(CAPTURE_STATES, default="missing")
    capture_message: str | None = None
    peak_memory_mb: float | None = None
    #: the GPU memory peak of the kernel (MiB, the fullest device), where JAX reports it
    device_peak_memory_mb: float | None = dataclasses.field(default=None,
                                                            metadata={"minimum": 0})
    #: the source file, relative to the repository root (``GITHUB_WORKSPACE`` or the
    #: current folder) when inside it, else to the book's source folder, for CI
    #: annotations (:func:`.files.repository_path`: never the machine's absolute path)
    source: str | None = None
    #: the machine calibration (:mod:`.calibration`) measured right after the notebook
    #: was executed: the runner's speed when it ran, kept by merges and cache hits
    calibration_seconds: float | None = None
    #: why a ``cache``-mode build executed the notebook instead of reusing the cache
    cache_miss: CacheMiss | None = None
    #: the kernel environment's installed distributions, read after a cache miss
    packages: KernelPackages | None = None
    #: the functions the notebook's own code defines (its cells' ``def`` s and lambdas,
    #: and those of the local modules it imports, :func:`.code.defined_functions`): a
    #: compilation of one of them is the user's, any other JAX's own; None: unknown (a
    #: status file of an earlier release: then JAX's own are told by their names)
    user_functions: list[str] | None = None
    #: the notebook's time budget (its ``gpu_budget_seconds`` metadata, else
    #: ``gpu_notebook_budget_seconds``); None: no budget
    budget_seconds: float | None = dataclasses.field(default=None, metadata={"minimum": 0})
    #: the cells timed for the text (``time:NAME`` tags, cells that printed a timer's
    #: reading) and their values in this execution (:mod:`.timings`)
    timings: list[Timing] = dataclasses.field(default_factory=list)

    @property
    def cells_seconds(self) -> float:
        return sum(c.seconds for c in self.cells)

    @property
    def compile_seconds(self) -> float:
        return sum(c.compile_seconds for c in self.cells)

    @property
    def seconds(self) -> float:
        """The notebook's time: MyST-NB's run time, else the sum of its cells."""
        if self.runtime_seconds is not None:
            return self.runtime_seconds
        return self.cells_seconds

    @property
    def measured(self) -> bool:
        """The record holds the kernel's environment and cells (capture "ok", or
        "partial": some cells missing), so its device is known."""
        return self.capture in MEASURED_CAPTURES

    @property
    def device_label(self) -> str | None:
        """Where it ran (``Environment.device_label``), None without capture data:
        a notebook never claims a device nobody measured."""
        return self.environment.device_label if self.measured else None

    @property
    def executed(self) -> bool:
        return self.status not in NOT_EXECUTED_STATUSES

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    def slowest_cell(self) -> CellRecord | None:
        return max(self.cells, key=lambda c: c.seconds, default=None)

    def cell_name(self, cell: CellRecord) -> CellName:
        """How every view names ``cell`` (one of :attr:`cells`): see :class:`CellName`."""
        return self._name(cell, self.cell_number(cell))

    def cell_names(self) -> list[CellName]:
        """:meth:`cell_name` of every cell, in order, in one pass (the per-cell data of
        a 100-cell notebook would otherwise look each cell's number up again)."""
        return [self._name(cell, number) for number, cell in enumerate(self.cells, 1)]

    def _name(self, cell: CellRecord, place: int) -> CellName:
        number = cell.position + 1 if cell.position is not None else place
        return CellName(docname=self.docname, number=number, index=cell.index,
                        first_line=cell.first_line, source=self.source, line=cell.line)

    def cell_number(self, cell: CellRecord) -> int:
        """1 for the first code cell that ran (by identity: two cells may be equal)."""
        place = next(n for n, c in enumerate(self.cells, 1) if c is cell)
        return cell.position + 1 if cell.position is not None else place

    def error_cell(self) -> CellRecord | None:
        """The cell that raised the notebook's error, when the record knows it."""
        if self.error is None:
            return None
        if self.error.cell_index is None:
            # a kernel that died before its page was read: the cell is known by its
            # execution count only (the cell it was running, see capture.died_in_cell)
            count = self.error.execution_count
            return next((c for c in self.cells if c.index is None and c.error
                         and c.execution_count == count), None) if count else None
        return next((c for c in self.cells if c.index == self.error.cell_index), None)

    def to_dict(self) -> dict[str, Any]:
        return dumper(NotebookRecord)(self)


@model_class
class StatusReport(ModelObject):
    """The whole build: the content of ``execution-status.json``."""

    notebooks: list[NotebookRecord]
    build: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: derived data written for consumers that do not share this model (flags,
    #: baseline comparison); keyed by docname
    analysis: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the text's timing claims with their verdicts (:mod:`.claims`)
    claims: list[Claim] = dataclasses.field(default_factory=list)
    #: the sentences about speed that have no claim, with their evidence: the review list
    #: (:mod:`.speed_statements`)
    timing_statements: list[TimingStatement] = dataclasses.field(default_factory=list)

    def by_docname(self) -> dict[str, NotebookRecord]:
        return {nb.docname: nb for nb in self.notebooks}

    def machines(self) -> dict[str, tuple[Environment, list[str]]]:
        """Machine id -> (an environment seen on it, docnames executed there)."""
        result: dict[str, tuple[Environment, list[str]]] = {}
        for nb in self.notebooks:
            if not nb.measured:
                continue
            env = nb.environment
            entry = result.setdefault(env.machine_id, (env, []))
            entry[1].append(nb.docname)
            # prefer an environment that knows the JAX backend
            if entry[0].jax.backend is None and env.jax.backend is not None:
                result[env.machine_id] = (env, entry[1])
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_ID,
            "schema_version": SCHEMA_VERSION,
            "build": self.build,
            "notebooks": [nb.to_dict() for nb in self.notebooks],
            "analysis": self.analysis,
            "claims": [dumper(Claim)(claim) for claim in self.claims],
            "timing_statements": [dumper(TimingStatement)(statement)
                                  for statement in self.timing_statements],
        }

    @classmethod
    def from_dict(cls, data: Any) -> StatusReport:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_ID:
            raise SchemaError("not an execution-status document (no 'schema' field "
                              f"{SCHEMA_ID!r})")
        version = data.get("schema_version")
        if version not in READABLE_SCHEMA_VERSIONS or type(version) is not int:
            readable = ", ".join(map(str, READABLE_SCHEMA_VERSIONS))
            raise SchemaError(f"schema version {short_repr(version)} is not supported "
                              f"(this version reads {readable})")
        if data.get("notebooks", ()) is None:
            # elsewhere null reads as empty; here it would read as a green build of
            # nothing, so a document must list its notebooks (an empty list is fine)
            raise SchemaError("notebooks: not an array (got null)")
        report = load_model(cls, data)
        if version == 1:
            for notebook in report.notebooks:
                _migrate(notebook)
        return report


def _migrate(notebook: NotebookRecord) -> None:
    """A notebook of a version-1 status file as this version models it: each cell's
    position is its place in the record (how version 1 named it), and a loop's
    defining cell is that cell's position instead of its MyST-NB index."""
    position_of = {}
    for position, cell in enumerate(notebook.cells):
        cell.position = position
        if cell.index is not None:
            position_of.setdefault(cell.index, position)
    for cell in notebook.cells:
        for run in cell.runs:
            if run.defined_cell is not None:
                run.defined_cell = position_of.get(run.defined_cell)



def sorted_slowest_first(notebooks: Iterable[NotebookRecord]) -> list[NotebookRecord]:
    return sorted(notebooks, key=lambda nb: (-nb.seconds, nb.docname))
