"""What the probe reads from JAX beyond its events (standard library only): the
loops and the input types of the programs JAX compiles during a cell, and the
devices' memory.

Loaded by ``kernel_probe.py`` from its own folder once the notebook imports JAX.
A cell that calls a library function (numpyro's NUTS sampler, BFGS in
``jax.scipy.optimize``) has no loop in its source, but the program JAX compiles for
it has one: every ``lax.scan``, ``fori_loop`` and ``while_loop`` lowers to a
``stablehlo.while``.  At each backend compilation the probe reads the program being
compiled (:func:`compiling_program`) and finds its loops and, where the program
fixes it, their trip count (:func:`while_loops`), and the shapes and dtypes of its
inputs (:func:`program_inputs`: ``f32[1000]``, as JAX writes them), so that a function
compiled again for a new input shape can be told from one re-created.

Why this way (measured, see the notes of issue 22): JAX's public ``jax_dump_ir_to``
gives the same text but changes the user's configuration (``jax.config`` reads the
probe's folder), writes a file per compilation with debug information and logs
"Dumped the module" at INFO; and it never says the platform a program was compiled
for, which the probe needs (a function placed on the CPU is not a GPU loop).
Printing the program JAX already holds costs about 1 % of a small program's
compilation (0.25 ms of 28 ms) and 0.4 % of a large one's (4.7 ms for the 58 KB
program of a jitted BFGS minimisation that took 1.3 s to compile).
Nothing here changes the program, its results or JAX's configuration.
"""

from __future__ import annotations

import re
import sys

#: how many frames above the compile listener JAX's compile function may be
_FRAMES = 8
#: loops read per program (a program of thousands of loops is not read to the end)
MAX_LOOPS = 32
#: loops kept per cell (``compiled_loops``)
MAX_CELL_LOOPS = 16
#: compilations whose input types are kept per cell (``compiled_inputs``), of them per
#: function, and input types kept per compilation (``arguments`` counts them all)
MAX_CELL_INPUTS = 32
MAX_FUNCTION_INPUTS = 4
MAX_INPUTS = 16

#: False once reading a program failed (another JAX): the probe stops trying
_reading = True

_WHILE = "stablehlo.while("
_OPERAND = re.compile(r"(%iterArg\w*) = (%[\w#]+)")
_COMPARE = re.compile(r"stablehlo\.compare\s+LT,\s*(%[\w#]+),\s*(%[\w#]+)")
_CONSTANT_VALUE = re.compile(r"(-?\d+)>")


def compiling_program(skip: int = 1) -> tuple[str, str | None] | None:
    """The text of the program JAX is compiling and the platform it compiles it for
    (``cpu``, ``cuda``), from inside a ``jax.monitoring`` listener of the backend
    compile event; None when this JAX does not show them.

    The one private detail the probe relies on, isolated here: the listener runs
    inside JAX's compile function (``pxla._cached_compilation`` from JAX 0.4 to 0.10),
    whose locals ``computation`` (the MLIR module) and ``backend`` (the XLA client)
    are read from its frame.  Printed without debug information and with large
    constants elided: only the operations matter.  ``skip``: the frames of the
    probe's own between the listener and this function.
    """
    frame = sys._getframe(skip)
    for _ in range(_FRAMES):
        frame = frame.f_back
        if frame is None:
            return None
        names = frame.f_code.co_varnames
        if "computation" in names and "backend" in names:
            values = frame.f_locals
            operation = getattr(values.get("computation"), "operation", None)
            if operation is None:
                return None
            platform = getattr(values.get("backend"), "platform", None)
            try:
                text = operation.get_asm(enable_debug_info=False, large_elements_limit=16,
                                         assume_verified=True)
            except TypeError:  # MLIR bindings without assume_verified
                text = operation.get_asm(enable_debug_info=False, large_elements_limit=16)
            return text, platform if isinstance(platform, str) else None
    return None


def note_program(function: str, loops: list[dict], inputs: list[dict]) -> None:
    """Add what the program JAX is compiling for ``function`` (``jit(f)``) holds to the
    cell's lists: its loops to ``loops`` (once each, at most :data:`MAX_CELL_LOOPS`),
    its input types to ``inputs`` (``{"function", "inputs", "arguments",
    "platform"}``, at most :data:`MAX_FUNCTION_INPUTS` per function and
    :data:`MAX_CELL_INPUTS` in all)."""
    global _reading
    if not _reading:
        return
    want_loops = len(loops) < MAX_CELL_LOOPS
    want_inputs = len(inputs) < MAX_CELL_INPUTS and sum(
        1 for item in inputs if item["function"] == function) < MAX_FUNCTION_INPUTS
    if not (want_loops or want_inputs):
        return
    try:  # called inside JAX's compilation: never raise into it
        program = compiling_program(2)
        if program is None:
            return
        text, platform = program
        for steps in while_loops(text) if want_loops else ():
            loop = {"function": function, "loop": "while", "steps": steps,
                    "platform": platform}
            if loop not in loops and len(loops) < MAX_CELL_LOOPS:
                loops.append(loop)
        types = program_inputs(text) if want_inputs else None
        if types is not None:
            entry = {"function": function, "inputs": types[:MAX_INPUTS],
                     "arguments": len(types), "platform": platform}
            if entry not in inputs:
                inputs.append(entry)
    except Exception:  # another JAX: nothing from programs, nothing else changes
        _reading = False


_MAIN = "@main("
_ARGUMENT = re.compile(r"%arg\d+: (tensor<(?:[^<>]|<[^<>]*>)*>|![\w.]+)")
#: StableHLO element types as JAX writes dtypes (``f32[10]``): the rest are the same
_DTYPES = {"i1": "bool", "complex<f32>": "c64", "complex<f64>": "c128"}


def program_inputs(program: str) -> list[str] | None:
    """The input types of ``program``'s entry function, as JAX writes them
    (``["f32[1000]", "i32[]", "u32[2]"]``; effect tokens left out), in order; None when
    the program has no entry function this reading knows."""
    start = program.find(_MAIN)
    if start == -1:
        return None
    end = program.find(") ->", start)
    line_end = program.find("\n", start)
    header = program[start:end if end != -1 else line_end if line_end != -1 else None]
    types = []
    for found in _ARGUMENT.findall(header):
        if found.startswith("tensor<"):
            types.append(_jax_type(found[len("tensor<"):-1]))
    return types


def _jax_type(tensor: str) -> str:
    """``1000x3xf32`` -> ``f32[1000,3]``; ``complex<f32>`` -> ``c64[]``; ``2xui32`` ->
    ``u32[2]``."""
    parts = tensor.split("x")
    dims: list[str] = []
    while len(parts) > 1 and (parts[0].isdigit() or parts[0] == "?"):
        dims.append(parts.pop(0))
    element = "x".join(parts)
    element = _DTYPES.get(element, "u" + element[2:] if element.startswith("ui") else element)
    return f"{element}[{','.join(dims)}]"


def while_loops(program: str) -> list[int | None]:
    """The trip count of each ``stablehlo.while`` of ``program`` (None: not fixed by the
    program, as a ``while_loop`` on a condition), in the order they appear."""
    found: list[int | None] = []
    start = program.find(_WHILE)
    while start != -1 and len(found) < MAX_LOOPS:
        found.append(_trip_count(program, start))
        start = program.find(_WHILE, start + len(_WHILE))
    return found


def _trip_count(program: str, start: int) -> int | None:
    """A counter that starts at a constant, grows by one in the body and is compared
    ``LT`` against a constant in the condition: what ``lax.scan`` and a ``fori_loop``
    with static bounds lower to."""
    line_start = program.rfind("\n", 0, start) + 1
    line_end = program.find("\n", start)
    if line_end == -1:
        return None
    header = program[line_start:line_end]
    indent = header[: len(header) - len(header.lstrip())]
    cond_end = program.find("\n" + indent + "} do {", line_end)
    if cond_end == -1:
        return None
    body_end = program.find("\n" + indent + "}", cond_end + len(indent) + 2)
    condition = program[line_end:cond_end]
    body = program[cond_end:body_end if body_end != -1 else len(program)]
    compares = _COMPARE.findall(condition)
    operands = dict(_OPERAND.findall(header))
    if len(compares) != 1 or compares[0][0] not in operands:
        return None
    counter, bound_name = compares[0]
    bound = _constant(condition, bound_name)
    if bound is None:
        bound = _constant_before(program, bound_name, line_start)
    first = _constant_before(program, operands[counter], line_start)
    step = re.search(re.escape(f"stablehlo.add {counter}, ") + r"(%[\w#]+)", body)
    if bound is None or first is None or step is None:
        return None
    increment = _constant(body, step.group(1))
    if increment is None:
        increment = _constant_before(program, step.group(1), line_start)
    return max(bound - first, 0) if increment == 1 else None


def _definition(name: str) -> str:
    return f" {name} = stablehlo.constant dense<"


def _constant(text: str, name: str) -> int | None:
    at = text.find(_definition(name))
    return None if at == -1 else _value(text, at + len(_definition(name)))


def _constant_before(program: str, name: str, end: int) -> int | None:
    """The nearest definition of ``name`` before ``end``: the one in scope (names repeat
    from one function of the program to the next)."""
    at = program.rfind(_definition(name), 0, end)
    return None if at == -1 else _value(program, at + len(_definition(name)))


def _value(text: str, at: int) -> int | None:
    match = _CONSTANT_VALUE.match(text, at)
    return int(match.group(1)) if match else None


def memory_devices(jax) -> list:
    """The devices whose memory is worth reading after each cell: the default
    backend's, unless it is the CPU (whose ``memory_stats`` JAX does not report, so
    the CPU path reads nothing per cell).  Call once the backend is initialised."""
    if jax.default_backend() == "cpu":
        return []
    return [device for device in jax.local_devices() if device.platform != "cpu"]


def device_memory_mb(devices) -> tuple[float | None, float | None]:
    """(in use, peak since the kernel started) in MiB on the fullest device, from
    ``Device.memory_stats()`` (``bytes_in_use``, ``peak_bytes_in_use``); None where no
    device reports it."""
    in_use = peak = None
    for device in devices:
        stats = device.memory_stats()
        if not stats:
            continue
        used, top = stats.get("bytes_in_use"), stats.get("peak_bytes_in_use")
        if isinstance(used, int) and (in_use is None or used > in_use):
            in_use = used
        if isinstance(top, int) and (peak is None or top > peak):
            peak = top
    return (None if in_use is None else round(in_use / 2**20, 1),
            None if peak is None else round(peak / 2**20, 1))


def memory_fields(devices, peak_before: float) -> tuple[str, float]:
    """The cell line's ``device_memory_mb`` (in use after the cell) and
    ``device_peak_memory_mb`` (the peak, when it grew during the cell: the peak JAX
    reports is the kernel's since it started) and the peak now."""
    try:
        in_use, peak = device_memory_mb(devices)
    except Exception:  # a backend that cannot tell: nothing recorded
        return "", peak_before
    cell_peak = None
    if peak is not None and peak > peak_before:
        cell_peak = peak_before = peak
    return (f',"device_memory_mb":{"null" if in_use is None else repr(in_use)},'
            f'"device_peak_memory_mb":{"null" if cell_peak is None else repr(cell_peak)}',
            peak_before)


# -- why JAX traced a function again (opt-in: gpu_explain_recompilations) ------------------
#: the logger of JAX's explanations of tracing-cache misses (``jax_explain_cache_misses``)
EXPLAIN_LOGGER = "jax._src.interpreters.partial_eval"
#: the loggers whose persistent-cache messages that option raises from DEBUG to WARNING
_PERSISTENT_CACHE_LOGGERS = ("jax._src.compiler", "jax._src.compilation_cache")
_PERSISTENT_CACHE_MESSAGES = ("PERSISTENT COMPILATION CACHE MISS", "Not writing persistent",
                              "Writing %s to persistent", "_get_cache: Unsupported")
#: reasons kept per cell (``recompile_reasons``), and the length of one
MAX_REASONS = 8
REASON_LENGTH = 160


def explain_recompilations(jax, reasons: list[dict], in_cell) -> bool:
    """Capture JAX's explanations of tracing-cache misses into ``reasons`` (while
    ``in_cell()``); those the notebook did not ask for reach neither the cell's output
    nor stderr.  Called once, right after ``import jax``; True when explanations are
    recorded.

    The probe turns them on for the kernel's main thread only, where cells run
    (``jax.explain_cache_misses(True)``, entered for the kernel's life), and leaves the
    global setting the notebook's own: while it is off, an explanation is the probe's
    and is kept out of sight; once the notebook turns it on itself (the usual
    ``jax.config.update("jax_explain_cache_misses", True)`` cell, or
    ``JAX_EXPLAIN_CACHE_MISSES=1``), its explanations reach its handlers as without
    the probe, and are recorded too.  A JAX without the global setting apart (before
    0.4.36) gets the setting turned on globally, and every explanation is the probe's.
    """
    import logging

    state = getattr(jax, "explain_cache_misses", None)
    setting = getattr(state, "get_global", None)  # the notebook's own setting
    if setting is None:
        if jax.config.jax_explain_cache_misses:
            return False  # the environment asked for them: they are the user's to see
        jax.config.update("jax_explain_cache_misses", True)
    else:
        # the main thread only: explanations of a notebook's own threads are its own
        state(True).__enter__()

    def asked() -> bool:
        if setting is None:
            return False
        try:
            return setting() is True
        except Exception:  # never raise into JAX's logging
            return False

    def capture(record) -> bool:
        if in_cell():
            with _suppress():
                note_reason(reasons, record.getMessage())
        return asked()  # the notebook asked for them: they reach its handlers

    def back_to_debug(record) -> bool:
        # what the setting raised to WARNING goes out at DEBUG, as without it, unless
        # the notebook asked for it
        if record.levelno == logging.WARNING and str(record.msg).startswith(
                _PERSISTENT_CACHE_MESSAGES) and not asked():
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True

    logging.getLogger(EXPLAIN_LOGGER).addFilter(capture)
    for name in _PERSISTENT_CACHE_LOGGERS:
        logging.getLogger(name).addFilter(back_to_debug)
    return True


class _suppress:
    """``contextlib.suppress(Exception)`` without importing contextlib here."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace) -> bool:
        return kind is not None and issubclass(kind, Exception)


def note_reason(reasons: list[dict], message: str) -> None:
    """Add the reason of one explanation to the cell's ``reasons``: one per function,
    at most :data:`MAX_REASONS`."""
    found = recompile_reason(message)
    if found is None or len(reasons) >= MAX_REASONS:
        return
    function, reason = found
    if all(item["function"] != function for item in reasons):
        reasons.append({"function": function, "reason": reason})


def recompile_reason(message: str) -> tuple[str, str] | None:
    """(function, why) from JAX's explanation of a tracing-cache miss; None for a first
    trace (JAX says only "never seen function") or a text this JAX writes otherwise.

    The two forms (JAX 0.4.36 to 0.10)::

        TRACING CACHE MISS at /tmp/ipykernel_1/2.py:5 (newton):
          never seen function:
            q id=140 defined at /tmp/ipykernel_1/2.py:2
          but seen another function defined on the same line; maybe the function is
          being re-defined repeatedly, preventing caching?

        TRACING CACHE MISS at /tmp/ipykernel_1/3.py:2 (<module>):
          for f defined at /tmp/ipykernel_1/3.py:1
          all previously seen cache keys differ. For the closest previous key:
          different input types:
          * at x, now f32[20] and before f32[10]
    """
    lines = [line.strip() for line in message.split("\n")]
    if len(lines) < 3 or not lines[0].startswith("TRACING CACHE MISS"):
        return None
    if lines[1] == "never seen function:":
        function, why = lines[2].split(" ", 1)[0], " ".join(lines[3:])
        if why.startswith("but "):
            why = why[4:]
    elif lines[1].startswith("for ") and len(lines) > 3:
        function = lines[1].split(" ", 2)[1]
        details = [line[2:] if line.startswith("* ") else line for line in lines[3:] if line]
        why = details[0] if details else ""
        if len(details) > 1:
            why = f"{why.rstrip(':')}: {details[1]}"
            if len(details) > 2:
                why += f" (+{len(details) - 2} more)"
    else:
        return None
    if not function or not why:
        return None
    return function[:REASON_LENGTH], (why if len(why) <= REASON_LENGTH
                                      else why[: REASON_LENGTH - 1] + "…")
