"""The probe's line protocol (standard library only, no imports): what a kernel writes.

One JSON object per line, told apart by :data:`KEY_KIND`.  The kernel probe writes
these lines; every engine's reader (:mod:`..model.probe_output`) imports this module
for their names, so the writer and the readers cannot drift.  It is loaded in the
kernel by path (``kernel_probe.py`` loads it beside itself) and imported as part of
the package by the builder: it must import nothing.
"""

#: version of the line protocol; the readers refuse other versions
PROBE_VERSION = 3

KEY_KIND = "kind"
#: beside the output file: the Python stack faulthandler writes when a signal kills
#: the kernel (SIGSEGV, SIGABRT from an XLA fatal error, SIGBUS, SIGFPE, SIGILL)
CRASH_SUFFIX = ".crash"
#: the kernel process that wrote a line (a kernel started by the notebook is not ours)
KEY_PID = "pid"
KEY_MESSAGE = "message"
#: the kernel's execution count: on a cell's lines the cell's own, on the end line the
#: number of counted runs the kernel made (IPython counts each stored-history run once)
KEY_EXECUTION_COUNT = "execution_count"
#: first line: probe_version, pid, time, python, host, gpus
KIND_START = "start"
#: one per notebook cell: the fields of ``record.CellRecord`` except ``index``, and
#: :data:`KEY_NESTED_RUNS` when runs nested in the cell took execution counts
KIND_CELL = "cell"
#: runs nested in the cell (``get_ipython().run_cell(..., store_history=True)``) that
#: took execution counts of their own (the cell's count + 1, + 2, ...): not cells
KEY_NESTED_RUNS = "nested_runs"
#: when a notebook cell starts: execution_count, first_line, time (wall clock); the
#: cell a kernel died in is the one that started and has no KIND_CELL line
KIND_CELL_START = "cell_start"
#: once JAX initialised a backend: {"jax": {backend, version, devices, ...}}
KIND_JAX = "jax"
#: when the imported numerical libraries changed: {"libraries": {name: version}}
KIND_LIBRARIES = "libraries"
#: the probe failed: the capture is incomplete ("capture: failed")
KIND_ERROR = "probe_error"
#: something the user should know; the capture itself is fine
KIND_WARNING = "warning"
#: lines the probe could not write (its file unwritable for a while): KEY_LOST_LINES
#: of them, the first error in KEY_MESSAGE; written with the first line that could be
KIND_LOST = "lost"
KEY_LOST_LINES = "lines"
#: written at kernel exit: whether the probe's callbacks were still registered, and
#: the kernel's execution count (KEY_EXECUTION_COUNT)
KIND_END = "end"
KEY_CALLBACKS_REGISTERED = "callbacks_registered"

#: the length of a cell's recorded first line
FIRST_LINE_LENGTH = 120
#: the length of any text of the machine, JAX or a library (a device kind, a CPU model,
#: a version) in the probe's lines, and of their lists (devices, libraries): one value
#: a plugin or a notebook made huge is cut, never the line or the rest of the
#: environment (the model's own limit, ``schema.MAX_STRING_CHARS``, is far above)
TEXT_LENGTH = 200
ITEMS = 64


def first_line(source: str) -> str:
    """A cell's first non-blank line as the record keeps it (at most
    :data:`FIRST_LINE_LENGTH` characters), without splitting the cell into lines."""
    line = source.lstrip().split("\n", 1)[0].strip()
    return line if len(line) <= FIRST_LINE_LENGTH else line[: FIRST_LINE_LENGTH - 1] + "…"


def bounded(value, notes: list, path: str = ""):
    """``value`` (the probe's facts: dicts, lists, JSON scalars) as a line may hold it:
    texts (and keys) cut to :data:`TEXT_LENGTH` characters, lists and dicts to
    :data:`ITEMS` items, what JSON cannot hold (an object, NaN) dropped to None; each
    change noted in ``notes`` with the value's path (``jax.devices[0].kind``)."""
    kind = type(value)
    if kind is str:
        if len(value) <= TEXT_LENGTH:
            return value
        notes.append(f"{path}: {len(value)} characters, cut to {TEXT_LENGTH}")
        return value[: TEXT_LENGTH - 1] + "…"
    if kind is bool or kind is int or value is None:
        return value
    if kind is float:
        if value == value and value not in (float("inf"), float("-inf")):
            return value
        notes.append(f"{path}: {value!r}, dropped")
        return None
    if kind is dict:
        if len(value) > ITEMS:
            notes.append(f"{path}: {len(value)} items, cut to {ITEMS}")
        result = {}
        for key, item in list(value.items())[:ITEMS]:
            name = bounded(key, notes, f"{path}[key]") if type(key) is str else str(key)
            result[name] = bounded(item, notes, f"{path}.{name}" if path else name)
        return result
    if kind is list or kind is tuple:
        if len(value) > ITEMS:
            notes.append(f"{path}: {len(value)} items, cut to {ITEMS}")
        return [bounded(item, notes, f"{path}[{n}]") for n, item in enumerate(value[:ITEMS])]
    notes.append(f"{path}: not a text or number ({kind.__name__}), dropped")
    return None
