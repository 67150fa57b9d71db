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

    python benchmarks/bench_probe.py [--quick | --smoke] [--kernel] [--cells 2000]
                                     [--repeats 7] [--json FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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


def load_probe_module() -> types.ModuleType:
    """The probe loaded from its file, as startup.py loads it in a kernel."""
    spec = importlib.util.spec_from_file_location("_bench_probe", KERNEL_PROBE_FILE)
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


def kernel_probe_cost(cells: int, repeats: int, jax: bool,
                      kernel_args: tuple[str, ...] = ()) -> dict[str, float]:
    """Per-cell time with minus without the probe, read inside a real kernel."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", extra_arguments=list(kernel_args),
                                       stderr=subprocess.DEVNULL)  # its TCP warning
    try:
        with tempfile.TemporaryDirectory() as folder:
            _run(client, KERNEL_SETUP)
            _run(client, f"_bench = _bench_setup({str(KERNEL_PROBE_FILE)!r}, "
                         f"{str(Path(folder) / 'probe.jsonl')!r}); del _bench_setup")
            if jax:
                _run(client, "import jax, jax.numpy as jnp\n"
                             "arrays = [jnp.ones(3) + i for i in range(10)]")
                _run(client, "_bench.start(True)")
                for _ in range(50):  # the first cells with a backend prepare the device sync
                    _run(client, TRIVIAL_CELL)
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


def measure_kernel(cells: int, repeats: int) -> dict[str, dict[str, float]]:
    return {
        "real kernel, no JAX": kernel_probe_cost(cells, repeats, jax=False),
        "real kernel, JAX CPU, 10 live arrays": kernel_probe_cost(cells, repeats, jax=True),
        # IPython writes each cell's input to SQLite from its history thread, woken at every
        # cell (db_cache_size 0): batching the writes shows what of the cost is that thread's
        "real kernel, JAX CPU, history saved in batches": kernel_probe_cost(
            cells, repeats, jax=True, kernel_args=("--HistoryManager.db_cache_size=1000",)),
    }


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
    parser.add_argument("--no-history", action="store_true",
                        help="IPython's history off (real kernels have it on)")
    parser.add_argument("--kernel", action="store_true",
                        help="also measure in real ipykernels (history on), read inside the "
                             "kernel: 300 cells a repetition (the round trip is ~5 ms a cell)")
    args = parser.parse_args(argv)
    cells, repeats = (1000, 3) if args.quick else (args.cells, args.repeats)
    live_arrays = args.live_arrays
    if args.smoke:
        cells, repeats, live_arrays = 50, 2, 1000
    rows = measure(cells, repeats, live_arrays, history=not args.no_history)
    print(f"probe cost in a real IPython shell (history {'off' if args.no_history else 'on'}):"
          f" {cells} cells x {repeats} interleaved repetitions, with minus without the probe")
    print(table(rows))
    if args.kernel:
        kernel_cells = 20 if args.smoke else 100 if args.quick else 300
        kernel_rows = measure_kernel(kernel_cells, repeats)
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
