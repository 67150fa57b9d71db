"""Per-cell cost of the in-kernel probe in a real IPython shell.

An IPython ``InteractiveShell`` runs trivial cells through ``run_cell`` (as
ipykernel does for every notebook cell), once with the probe's callbacks
registered and once without, in interleaved repetitions. A row gives the
median extra time per cell and its spread (lowest and highest repetition),
and the time spent inside the probe's callbacks (a low-noise view of the same
cost: the difference of two ~100 us cell times is noisy on a shared machine):

- no JAX: before the notebook imports JAX;
- JAX on the CPU: a backend initialised, 10 live arrays;
- JAX on the CPU, 100,000 live arrays: the end-of-cell device sync must not
  walk them (the probe used to: 150 ms per cell).

Two more rows time the end-of-cell device sync alone, and the live-array walk
it replaced. On a GPU machine (``scripts/record-gpu-fixture.sh``) the JAX rows
are on the GPU.

IPython's history is on, as in every real kernel (``--no-history`` turns it off).

With ``--kernel``, the same cost is also read inside real ipykernels (history on, as
always there), which an in-process shell misses: the kernel's other threads.

With ``--startup``, what loading the probe costs a kernel once, at its start (loading
its files and installing it into a fresh IPython shell, each in a new interpreter);
with ``--callbacks``, the probe's two callbacks alone, called in a loop for a trivial
cell (no IPython, warm caches: the probe's own code and its system calls).
``--probe-folder`` times another copy of ``probe/`` (an earlier release's) in the same
interleaved run, for these and the ``--kernel`` rows.

    python benchmarks/bench_probe.py [--quick | --smoke] [--kernel [--only-kernel]] [--startup]
                                     [--callbacks] [--cells 2000] [--repeats 7]
                                     [--json FILE] [--probe-folder DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

from sphinx_gpu_admonition.probe import KERNEL_PROBE_FILE

#: targets of issue 11, microseconds per cell
TARGETS_US = {"no JAX": 30, "JAX CPU, 10 live arrays": 60,
              "JAX CPU, 100,000 live arrays": 100,
              "real kernel, no JAX": 30, "real kernel, JAX CPU, 10 live arrays": 60}
TRIVIAL_CELL = "x = 1"


def load_probe_module(probe_file: Path = KERNEL_PROBE_FILE) -> types.ModuleType:
    """The probe loaded from its file, as startup.py loads it in a kernel."""
    spec = importlib.util.spec_from_file_location("_bench_probe", probe_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_shell(history_file: Path | None = None):
    """An IPython shell; with ``history_file``, its history on (SQLite in that file),
    as in every real kernel: the store of each cell's input is part of a cell's cost,
    and it changes what the probe's end-of-cell work costs around it."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    if history_file is None:
        config.HistoryManager.enabled = False
    else:
        config.HistoryManager.hist_file = str(history_file)
    return InteractiveShell.instance(config=config)


class ProbeSwitch:
    """Registers and unregisters one installed probe's callbacks.

    They are registered wrapped in a clock, so that the time spent inside them
    is known too: a second, low-noise view of the same cost.
    """

    def __init__(self, shell, probe) -> None:
        self._shell = shell
        self._shell.events.unregister("pre_run_cell", probe.pre_run_cell)
        self._shell.events.unregister("post_run_cell", probe.post_run_cell)
        self.inside = 0.0
        clock = time.perf_counter

        def pre_run_cell(info) -> None:
            started = clock()
            probe.pre_run_cell(info)
            self.inside += clock() - started

        def post_run_cell(result) -> None:
            started = clock()
            probe.post_run_cell(result)
            self.inside += clock() - started

        self._callbacks = {"pre_run_cell": pre_run_cell, "post_run_cell": post_run_cell}
        self.on = False
        self.set(True)

    def set(self, on: bool) -> None:
        if on == self.on:
            return
        change = self._shell.events.register if on else self._shell.events.unregister
        for event, callback in self._callbacks.items():
            change(event, callback)
        self.on = on


def seconds_per_cell(shell, cells: int) -> float:
    run_cell = shell.run_cell
    started = time.perf_counter()
    for _ in range(cells):
        run_cell(TRIVIAL_CELL, store_history=True)
    return (time.perf_counter() - started) / cells


def probe_cost(shell, switch: ProbeSwitch, cells: int, repeats: int) -> dict[str, float]:
    """Extra seconds per cell with the probe: median, lowest, highest repetition."""
    extra, base, inside = [], [], []
    for repeat in range(repeats):
        order = (False, True) if repeat % 2 == 0 else (True, False)  # cancel drift
        measured = {}
        for on in order:
            switch.set(on)
            seconds_per_cell(shell, cells // 10)  # warm up this state
            switch.inside = 0.0
            measured[on] = seconds_per_cell(shell, cells)
            if on:
                inside.append(switch.inside / cells)
        extra.append(measured[True] - measured[False])
        base.append(measured[False])
    switch.set(True)
    return {"median": statistics.median(extra), "low": min(extra), "high": max(extra),
            "inside": statistics.median(inside), "cell_without_probe": statistics.median(base)}


def call_cost(function: Callable[[], object], calls: int, repeats: int) -> dict[str, float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(calls):
            function()
        times.append((time.perf_counter() - started) / calls)
    return {"median": statistics.median(times), "low": min(times), "high": max(times)}


def measure(cells: int, repeats: int, live_arrays: int,
            history: bool = True) -> dict[str, dict[str, float]]:
    probe_module = load_probe_module()
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        # the history outlives the folder: IPython ends its session at exit
        shell = make_shell(Path(tempfile.mkdtemp()) / "history.sqlite" if history else None)
        probe = probe_module.install(shell, str(Path(folder) / "probe.jsonl"))
        switch = ProbeSwitch(shell, probe)
        if "jax" not in sys.modules:
            rows["no JAX"] = probe_cost(shell, switch, cells, repeats)
        shell.run_cell("import jax, jax.numpy as jnp\n"
                       "arrays = [jnp.ones(3) + i for i in range(10)]", store_history=True)
        backend = shell.user_ns["jax"].default_backend().upper()
        rows[f"JAX {backend}, 10 live arrays"] = probe_cost(shell, switch, cells, repeats)
        shell.run_cell(f"arrays = list(jnp.ones(({live_arrays}, 1)))", store_history=True)
        many = f"JAX {backend}, {live_arrays:,} live arrays"
        rows[many] = probe_cost(shell, switch, cells, repeats)
        jax = shell.user_ns["jax"]
        rows[f"device sync alone ({backend})"] = call_cost(probe._sync_jax, cells, repeats)
        rows[f"live-array walk, {live_arrays:,} arrays (the old sync)"] = call_cost(
            lambda: jax.block_until_ready(jax.live_arrays()), max(cells // 200, 3), repeats)
    return rows


# -- a real kernel ----------------------------------------------------------------------
# In-process, the numbers above miss what a kernel adds around a cell: its IOPub and
# history-saving threads. In a real ipykernel (history on, as always) the probe's time is
# read inside the kernel, per cell, from the first pre_run_cell callback to the end of the
# last post_run_cell callback: the notebook's round trip (~5 ms a cell) would hide it.

KERNEL_SETUP = '''
def _bench_setup(probe_file, output):
    import importlib.util, time
    spec = importlib.util.spec_from_file_location("_bench_probe", probe_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shell = get_ipython()
    probe = module.install(shell, output)
    shell.events.unregister("pre_run_cell", probe.pre_run_cell)
    shell.events.unregister("post_run_cell", probe.post_run_cell)
    clock, cpu_clock = time.perf_counter, time.thread_time

    class Bench:
        on = False
        cells, inside, cpu = [], [], []

        def pre(self, info):
            self.started, self.cpu_started = clock(), cpu_clock()
            self.probed = self.on  # start() may switch in the middle of a cell
            if self.probed:
                probe.pre_run_cell(info)
                self.inside_pre = clock() - self.started

        def post(self, result):
            if self.probed:
                started = clock()
                probe.post_run_cell(result)
                self.inside.append(self.inside_pre + clock() - started)
            self.cells.append(clock() - self.started)
            self.cpu.append(cpu_clock() - self.cpu_started)

        def start(self, on):
            self.on = on
            del self.cells[:], self.inside[:], self.cpu[:]

        def sync(self, on):
            """The probe's end-of-cell device sync on (its own) or off (a no-op)."""
            if not hasattr(self, "real_sync"):
                self.real_sync = probe._device_sync
            probe._device_sync = self.real_sync if on else (lambda: None)

        def stop(self):
            import json, statistics
            # the first sample is the rest of the cell that called start()
            cells, inside, cpu = self.cells[1:], self.inside[1:], self.cpu[1:]
            median = statistics.median
            print(json.dumps({"cell": median(cells), "cpu": median(cpu),
                              "inside": median(inside) if inside else 0.0}))

    bench = Bench()
    shell.events.register("pre_run_cell", bench.pre)
    shell.events.register("post_run_cell", bench.post)
    return bench
'''


def _run(client, code: str, timeout: float = 60.0) -> str:
    """Run one cell and return what it printed."""
    printed: list[str] = []

    def keep(message) -> None:
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])

    reply = client.execute_interactive(code, timeout=timeout, output_hook=keep)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"the benchmark kernel failed: {reply['content']}")
    return "".join(printed)


def _kernel_cells(client, on: bool, cells: int) -> dict[str, float]:
    _run(client, f"_bench.start({on})")
    for _ in range(cells):
        client.execute(TRIVIAL_CELL, store_history=True)
        client.get_shell_msg(timeout=60)
    return json.loads(_run(client, "_bench.stop()"))


def _bench_kernel(client, folder: str, jax: bool) -> None:
    """The benchmark's callbacks and the probe in a started kernel; with ``jax``, a
    backend with 10 live arrays and the device sync prepared."""
    _run(client, KERNEL_SETUP)
    _run(client, f"_bench = _bench_setup({str(KERNEL_PROBE_FILE)!r}, "
                 f"{str(Path(folder) / 'probe.jsonl')!r}); del _bench_setup")
    if jax:
        _run(client, "import jax, jax.numpy as jnp\n"
                     "arrays = [jnp.ones(3) + i for i in range(10)]")
        _run(client, "_bench.start(True)")
        for _ in range(50):  # the first cells with a backend prepare the device sync
            _run(client, TRIVIAL_CELL)


def kernel_probe_cost(cells: int, repeats: int, jax: bool,
                      kernel_args: tuple[str, ...] = ()) -> dict[str, float]:
    """Per-cell time with minus without the probe, read inside a real kernel."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", extra_arguments=list(kernel_args),
                                       stderr=subprocess.DEVNULL)  # its TCP warning
    try:
        with tempfile.TemporaryDirectory() as folder:
            _bench_kernel(client, folder, jax)
            extra, inside, cpu = [], [], []
            for repeat in range(repeats):
                order = (False, True) if repeat % 2 == 0 else (True, False)
                measured = {on: _kernel_cells(client, on, cells) for on in order}
                extra.append(measured[True]["cell"] - measured[False]["cell"])
                cpu.append(measured[True]["cpu"] - measured[False]["cpu"])
                inside.append(measured[True]["inside"])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return {"median": statistics.median(extra), "low": min(extra), "high": max(extra),
            "inside": statistics.median(inside), "cpu": statistics.median(cpu)}


def kernel_sync_cost(cells: int, repeats: int) -> dict[str, float]:
    """Per-cell time with minus without the probe's end-of-cell device sync, the probe
    on in both, in one real kernel with JAX on the CPU (what skipping it would save)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", stderr=subprocess.DEVNULL)
    try:
        with tempfile.TemporaryDirectory() as folder:
            _bench_kernel(client, folder, jax=True)
            extra, inside, cpu = [], [], []
            for repeat in range(repeats):
                measured = {}
                for synced in ((True, False) if repeat % 2 == 0 else (False, True)):
                    _run(client, f"_bench.sync({synced})")
                    measured[synced] = _kernel_cells(client, True, cells)
                extra.append(measured[True]["cell"] - measured[False]["cell"])
                cpu.append(measured[True]["cpu"] - measured[False]["cpu"])
                inside.append(measured[True]["inside"] - measured[False]["inside"])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return {"median": statistics.median(extra), "low": min(extra), "high": max(extra),
            "inside": statistics.median(inside), "cpu": statistics.median(cpu)}


VERSIONS_SETUP = '''
def _versions_setup(files, folder):
    import importlib.util, time
    shell, probes = get_ipython(), []
    for number, path in enumerate(files):
        spec = importlib.util.spec_from_file_location(f"_bench_probe_{number}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        probe = module.install(shell, f"{folder}/probe-{number}.jsonl")
        shell.events.unregister("pre_run_cell", probe.pre_run_cell)
        shell.events.unregister("post_run_cell", probe.post_run_cell)
        probes.append(probe)
    clock, cpu_clock = time.perf_counter, time.thread_time

    class Versions:
        which = 0
        inside, cpu = [], []

        def pre(self, info):
            self.probe = probes[self.which]
            self.started, self.cpu_started = clock(), cpu_clock()
            self.probe.pre_run_cell(info)
            self.pre_wall, self.pre_cpu = clock() - self.started, cpu_clock() - self.cpu_started

        def post(self, result):
            started, cpu_started = clock(), cpu_clock()
            self.probe.post_run_cell(result)
            self.inside.append(self.pre_wall + clock() - started)
            self.cpu.append(self.pre_cpu + cpu_clock() - cpu_started)

        def start(self, which):
            self.which = which
            del self.inside[:], self.cpu[:]

        def stop(self):
            import json, statistics
            print(json.dumps({"inside": statistics.median(self.inside[1:]),
                              "cpu": statistics.median(self.cpu[1:])}))

    versions = Versions()
    shell.events.register("pre_run_cell", versions.pre)
    shell.events.register("post_run_cell", versions.post)
    return versions
'''


def kernel_versions_cost(cells: int, repeats: int, jax: bool,
                         other: Path) -> dict[str, float]:
    """This probe's callbacks minus those of the probe in ``other`` (a copy of
    ``probe/``), both installed in one real kernel and used in turn, block by block:
    the time and the main thread's CPU time inside the callbacks, per cell."""
    from jupyter_client.manager import start_new_kernel

    files = [str(KERNEL_PROBE_FILE), str(other / KERNEL_PROBE_FILE.name)]
    manager, client = start_new_kernel(kernel_name="python3", stderr=subprocess.DEVNULL)
    try:
        with tempfile.TemporaryDirectory() as folder:
            _run(client, VERSIONS_SETUP)
            _run(client, f"_versions = _versions_setup({files!r}, {folder!r})")
            if jax:
                _run(client, "import jax, jax.numpy as jnp\n"
                             "arrays = [jnp.ones(3) + i for i in range(10)]")
                for which in (0, 1):  # each probe prepares its device sync
                    _run(client, f"_versions.start({which})")
                    for _ in range(30):
                        _run(client, TRIVIAL_CELL)
            inside, cpu = [], []
            for repeat in range(repeats):
                measured = {}
                for which in ((0, 1) if repeat % 2 == 0 else (1, 0)):
                    _run(client, f"_versions.start({which})")
                    for _ in range(cells):
                        client.execute(TRIVIAL_CELL, store_history=True)
                        client.get_shell_msg(timeout=60)
                    measured[which] = json.loads(_run(client, "_versions.stop()"))
                inside.append(measured[0]["inside"] - measured[1]["inside"])
                cpu.append(measured[0]["cpu"] - measured[1]["cpu"])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return {"median": statistics.median(inside), "low": min(inside), "high": max(inside),
            "inside": statistics.median(inside), "cpu": statistics.median(cpu)}


def measure_kernel(cells: int, repeats: int,
                   other: Path | None = None) -> dict[str, dict[str, float]]:
    """The kernel rows; ``other``: a folder with another copy of ``probe/`` (an earlier
    release's): then this probe minus that one, both in one kernel, interleaved."""
    rows = {}
    for jax in (False, True):
        name = f"real kernel, {'JAX CPU, 10 live arrays' if jax else 'no JAX'}"
        rows[name] = kernel_probe_cost(cells, repeats, jax=jax)
        if other is not None:
            rows[f"{name}: this probe - the other (inside)"] = kernel_versions_cost(
                cells, repeats, jax, other)
    # IPython writes each cell's input to SQLite from its history thread, woken at every
    # cell (db_cache_size 0): batching the writes shows what of the cost is that thread's
    rows["real kernel, JAX CPU, history saved in batches"] = kernel_probe_cost(
        cells, repeats, jax=True, kernel_args=("--HistoryManager.db_cache_size=1000",))
    # what skipping the end-of-cell device sync would save: with minus without it, the
    # probe on in both, interleaved in one kernel
    rows["real kernel, JAX CPU, the device sync (with - without it)"] = kernel_sync_cost(
        cells, repeats)
    return rows


# -- the probe's callbacks alone ----------------------------------------------------------
class _Shell:
    """What the probe reads of an IPython shell: its execution count and callbacks."""

    def __init__(self) -> None:
        self.execution_count = 1
        self.events = types.SimpleNamespace(callbacks={"pre_run_cell": [], "post_run_cell": []})


def callbacks_cost(files: dict[str, Path], cells: int,
                   repeats: int) -> dict[str, dict[str, float]]:
    """Seconds per trivial cell inside the probe's two callbacks, called in a loop (the
    probe's own code and system calls, warm), each probe file in turn."""
    modules = {name: load_probe_module(path) for name, path in files.items()}
    times: dict[str, list[float]] = {name: [] for name in files}
    info = types.SimpleNamespace(store_history=True, raw_cell=TRIVIAL_CELL)
    result = types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None,
                                   error_before_exec=None)
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(repeats):
            for number, name in enumerate(files):
                if repeat % 2:
                    number, name = len(files) - 1 - number, list(files)[len(files) - 1 - number]
                shell = _Shell()
                probe = modules[name].Probe(str(Path(folder) / f"{number}-{repeat}.jsonl"),
                                            shell)
                started = time.perf_counter()
                for _ in range(cells):
                    shell.execution_count += 1
                    probe.pre_run_cell(info)
                    probe.post_run_cell(result)
                times[name].append((time.perf_counter() - started) / cells)
    return {name: {"median": statistics.median(values), "low": min(values),
                   "high": max(values)} for name, values in times.items()}


# -- the probe's start -------------------------------------------------------------------
STARTUP_SCRIPT = """
import importlib.util, sys, tempfile, time, os
import ipykernel.kernelapp  # what a kernel has loaded when its startup file runs
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
config = Config()
config.HistoryManager.enabled = False
shell = InteractiveShell.instance(config=config)
probe_file, output = sys.argv[1], os.path.join(tempfile.mkdtemp(), "probe.jsonl")
started, cpu_started = time.perf_counter(), time.process_time()
spec = importlib.util.spec_from_file_location("_sphinx_gpu_admonition_probe", probe_file)
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
module.install(shell, output)
print(time.perf_counter() - started, time.process_time() - cpu_started)
"""


def startup_cost(folders: dict[str, Path], repeats: int) -> dict[str, dict[str, float]]:
    """Seconds from loading the probe's file to ``install`` returning, in a new
    interpreter each time (the probe's bytecode cached, as in an installed package),
    the folders interleaved; with the CPU time of the same span (less noisy on a
    shared machine)."""
    times: dict[str, list[float]] = {name: [] for name in folders}
    cpu: dict[str, list[float]] = {name: [] for name in folders}
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for repeat in range(repeats + 1):
        names = list(folders) if repeat % 2 == 0 else list(reversed(folders))
        for name in names:
            done = subprocess.run(
                [sys.executable, "-c", STARTUP_SCRIPT, str(folders[name] / "kernel_probe.py")],
                capture_output=True, text=True, check=True, env=environ)
            if repeat:  # the first round writes the bytecode caches
                wall, cpu_time = done.stdout.strip().splitlines()[-1].split()
                times[name].append(float(wall))
                cpu[name].append(float(cpu_time))
    return {name: {"median": statistics.median(values), "low": min(values),
                   "high": max(values), "cpu": statistics.median(cpu[name])}
            for name, values in times.items()}


def table(rows: dict[str, dict[str, float]]) -> str:
    header = (f"{'per cell':48} {'with - without':>14} {'spread':>19} "
              f"{'inside callbacks':>16} {'CPU time':>11} {'target':>9}")
    lines = [header]
    for name, row in rows.items():
        target = TARGETS_US.get(name)
        spread = f"{row['low'] * 1e6:.1f} to {row['high'] * 1e6:.1f} us"
        inside = f"{row['inside'] * 1e6:.1f} us" if "inside" in row else ""
        # the kernel's main thread's CPU time, with minus without: what the probe itself
        # computes, without the waits for the GIL that other threads hold
        cpu = f"{row['cpu'] * 1e6:.1f} us" if "cpu" in row else ""
        lines.append(f"{name:48} {row['median'] * 1e6:11.1f} us {spread:>19} {inside:>16} "
                     f"{cpu:>11} {f'<= {target} us' if target else '':>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer cells and repetitions")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, for benchmarks/run.py --quick (its numbers mean "
                             "nothing; the default 100,000 live arrays alone take a minute)")
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--live-arrays", type=int, default=100_000)
    parser.add_argument("--json", type=Path, help="also save the numbers (seconds) here")
    parser.add_argument("--only-kernel", action="store_true",
                        help="with --kernel: the real kernels' rows only")
    parser.add_argument("--callbacks", action="store_true",
                        help="only the probe's callbacks, called in a loop (no IPython)")
    parser.add_argument("--startup", action="store_true",
                        help="only the probe's start: loading its files and installing it")
    parser.add_argument("--probe-folder", type=Path,
                        help="with --startup or --kernel: another copy of probe/ (an earlier "
                             "release's) to time beside this one")
    parser.add_argument("--no-history", action="store_true",
                        help="IPython's history off (real kernels have it on)")
    parser.add_argument("--kernel", action="store_true",
                        help="also measure in real ipykernels (history on), read inside the "
                             "kernel: 300 cells a repetition (the round trip is ~5 ms a cell)")
    args = parser.parse_args(argv)
    cells, repeats = (1000, 3) if args.quick else (args.cells, args.repeats)
    if args.callbacks:
        files = {"this probe's callbacks": KERNEL_PROBE_FILE}
        if args.probe_folder:
            files[f"callbacks of {args.probe_folder}"] = args.probe_folder / KERNEL_PROBE_FILE.name
        rows = callbacks_cost(files, 5000 if args.quick else 20_000, repeats)
        print("the probe's callbacks alone, a trivial cell, in a loop (warm): "
              f"{repeats} interleaved repetitions")
        for name, row in rows.items():
            print(f"{name:60} {row['median'] * 1e6:7.2f} us  "
                  f"({row['low'] * 1e6:.2f} to {row['high'] * 1e6:.2f} us)")
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        return rows
    if args.startup:
        folders = {"probe start (load + install)": KERNEL_PROBE_FILE.parent}
        if args.probe_folder:
            folders[f"probe start, {args.probe_folder}"] = args.probe_folder
        rows = startup_cost(folders, 5 if args.quick else args.repeats * 5)
        print("the probe's start in a new interpreter: load its files, install into a fresh "
              "IPython shell (once per kernel)")
        for name, row in rows.items():
            print(f"{name:60} {row['median'] * 1e3:6.2f} ms  "
                  f"({row['low'] * 1e3:.2f} to {row['high'] * 1e3:.2f} ms), "
                  f"CPU {row['cpu'] * 1e3:.2f} ms")
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        return rows
    live_arrays = args.live_arrays
    if args.smoke:
        cells, repeats, live_arrays = 50, 2, 1000
    rows = {}
    if not (args.kernel and args.only_kernel):
        rows = measure(cells, repeats, live_arrays, history=not args.no_history)
        print(f"probe cost in a real IPython shell (history "
              f"{'off' if args.no_history else 'on'}): {cells} cells x {repeats} interleaved "
              "repetitions, with minus without the probe")
        print(table(rows))
    if args.kernel:
        kernel_cells = 20 if args.smoke else 100 if args.quick else 300
        kernel_rows = measure_kernel(kernel_cells, repeats, args.probe_folder)
        print(f"\nprobe cost in real ipykernels: {kernel_cells} cells x {repeats} interleaved "
              "repetitions, read inside the kernel from the first pre_run_cell callback to "
              "the end of the last post_run_cell callback")
        print(table(kernel_rows))
        rows.update(kernel_rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return rows


if __name__ == "__main__":
    main()
