"""What one call of the mystmd plugin costs: a whole Python process per call.

mystmd runs the executable plugin once for its specification, once per ``{gpu}``
directive and runtime role, and once per page for the ``gpu-capture`` transform
(``gpu-status`` once per build). Each call starts Python, imports what the call
needs and answers on stdout. This runs each kind of call (with an empty page, so
that only the start-up is timed) against ``python -c pass`` in the same
interpreter, interleaved, and prints medians with their spread (min-max), wall and
CPU time (the process's, from ``resource``), then the heaviest imports of the
plugin (``-X importtime``, the best of the rounds).

    python benchmarks/bench_plugin_startup.py [--repeats 15] [--python PYTHON]
                                              [--before FOLDER] [--serve]

``--before FOLDER``: the same calls with another copy of the package (a folder
holding ``sphinx_gpu_admonition/``, e.g. ``git archive main sphinx_gpu_admonition``
unpacked) first on the path, interleaved with this one's.

``--serve``: the same calls sent to one server process (``plugin.py --serve``, what
``gpu_admonition.mjs`` keeps for a build's calls) instead: its start (until its
first line), then each request's wall time and the server's CPU time for it (from
``/proc``), interleaved in the same way.

Run it with the package's byte code written (as an installed wheel has it): with
``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__``, every call compiles the
sources again.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EMPTY_PAGE = json.dumps({"type": "root", "children": []})
GPU_DIRECTIVE = json.dumps({"name": "gpu", "options": {}, "body": ""})


def calls(plugin: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (arguments after the interpreter, stdin)."""
    return {
        "python -c pass (the floor)": (["-c", "pass"], ""),
        "plugin: specification": ([str(plugin)], ""),
        "plugin: {gpu} directive": ([str(plugin), "--directive", "gpu"], GPU_DIRECTIVE),
        "plugin: gpu-capture transform": ([str(plugin), "--transform", "gpu-capture"],
                                          EMPTY_PAGE),
        "plugin: gpu-status transform": ([str(plugin), "--transform", "gpu-status"],
                                         EMPTY_PAGE),
    }


def run_once(python: str, arguments: list[str], stdin: str, cwd: Path,
             path: str | None = None) -> tuple[float, float]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [path, env.get("PYTHONPATH")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([python, *arguments], input=stdin, capture_output=True, text=True,
                          cwd=cwd, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"failed: {arguments}\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def spread_ms(values: list[float], digits: int = 0) -> str:
    return (f"{statistics.median(values) * 1e3:7.{digits}f} ms "
            f"({min(values) * 1e3:.{digits}f}-{max(values) * 1e3:.{digits}f})")


IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def heaviest_imports(python: str, plugin: Path, cwd: Path, repeats: int, path: str,
                     count: int = 12) -> list[tuple[str, float]]:
    """The plugin's own modules by cumulative import time in a page's ``gpu-capture``
    call (the call made once per page), best of ``repeats``."""
    best: dict[str, float] = {}
    for _ in range(repeats):
        done = subprocess.run([python, "-X", "importtime", str(plugin), "--transform",
                               "gpu-capture"], input=EMPTY_PAGE, capture_output=True,
                              text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": path})
        for line in done.stderr.splitlines():
            found = IMPORT_LINE.match(line)
            if found and found.group(4).startswith("sphinx_gpu_admonition"):
                name, cumulative = found.group(4), int(found.group(2)) / 1e3
                best[name] = min(best.get(name, cumulative), cumulative)
    return sorted(best.items(), key=lambda item: -item[1])[:count]


def _process_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stream:
        fields = stream.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_rounds(python: str, cwd: Path, repeats: int, path: str) -> int:
    """Start one server, then time each kind of request ``repeats`` times (one server)."""
    env = {**os.environ, "PYTHONPATH": path}
    start = time.perf_counter()
    server = subprocess.Popen([python, "-m", "sphinx_gpu_admonition.mystmd.plugin", "--serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd, env=env,
                              text=True)
    assert server.stdin is not None and server.stdout is not None
    json.loads(server.stdout.readline())
    started = time.perf_counter() - start
    start_cpu = _process_cpu(server.pid)
    kinds = {"{gpu} directive": ("directive", "gpu", json.loads(GPU_DIRECTIVE)),
             "gpu-capture transform": ("transform", "gpu-capture", json.loads(EMPTY_PAGE)),
             "gpu-status transform": ("transform", "gpu-status", json.loads(EMPTY_PAGE))}
    wall: dict[str, list[float]] = {name: [] for name in kinds}
    cpu: dict[str, list[float]] = {name: [] for name in kinds}
    names = list(kinds)
    for number in range(repeats):
        for name in names if number % 2 == 0 else names[::-1]:
            kind, call, data = kinds[name]
            before = _process_cpu(server.pid)
            begin = time.perf_counter()
            server.stdin.write(json.dumps({"id": number, "kind": kind, "name": call,
                                           "data": data}) + "\n")
            server.stdin.flush()
            reply = json.loads(server.stdout.readline())
            wall[name].append(time.perf_counter() - begin)
            cpu[name].append(_process_cpu(server.pid) - before)
            if "error" in reply:
                raise SystemExit(f"failed: {name}: {reply['error']}")
    server.stdin.close()
    server.wait(timeout=60)
    print(f"one server (plugin.py --serve), {repeats} interleaved rounds: median (min-max); "
          "CPU to the clock tick")
    print(f"  started (until its first line): {started * 1e3:.0f} ms wall, "
          f"{start_cpu * 1e3:.0f} ms CPU")
    print(f"{'request':42} {'wall':>22} {'CPU':>22}")
    for name in names:
        print(f"{name:42} {spread_ms(wall[name], 1):>22} {spread_ms(cpu[name]):>22}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--before", type=Path, metavar="FOLDER",
                        help="also time the calls with the package in FOLDER")
    parser.add_argument("--serve", action="store_true",
                        help="send the calls to one server process instead")
    args = parser.parse_args()
    import sphinx_gpu_admonition
    from sphinx_gpu_admonition.mystmd.plugin_file import PLUGIN_FILE, PLUGIN_TEXT

    here = Path(sphinx_gpu_admonition.__file__).resolve().parent
    compileall.compile_dir(str(here), quiet=1)
    if args.before is not None:
        compileall.compile_dir(str(args.before / "sphinx_gpu_admonition"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="gpu-plugin-bench-") as tmp:
        folder = Path(tmp)
        plugin = folder / PLUGIN_FILE
        plugin.write_text(PLUGIN_TEXT, encoding="utf-8")
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        if args.serve:
            return serve_rounds(args.python, folder, args.repeats, str(here.parent))
        kinds = {name: (*call, str(here.parent)) for name, call in calls(plugin).items()}
        if args.before is not None:
            kinds.update({f"before: {name}": (*call, str(args.before.resolve()))
                          for name, call in calls(plugin).items() if "plugin" in name})
        wall: dict[str, list[float]] = {name: [] for name in kinds}
        cpu: dict[str, list[float]] = {name: [] for name in kinds}
        names = list(kinds)
        for round_ in range(args.repeats):
            for name in names if round_ % 2 == 0 else names[::-1]:
                arguments, stdin, path = kinds[name]
                seconds, cpu_seconds = run_once(args.python, arguments, stdin, folder, path)
                wall[name].append(seconds)
                cpu[name].append(cpu_seconds)
        print(f"one plugin call, {args.repeats} interleaved rounds: median (min-max)")
        print(f"{'call':42} {'wall':>22} {'CPU':>22}")
        for name in names:
            print(f"{name:42} {spread_ms(wall[name]):>22} {spread_ms(cpu[name]):>22}")
        print("\nthe plugin's modules by cumulative import time in a gpu-capture call "
              "(best of the rounds)")
        for name, ms in heaviest_imports(args.python, plugin, folder, min(args.repeats, 5),
                                         str(here.parent)):
            print(f"  {name:56} {ms:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
