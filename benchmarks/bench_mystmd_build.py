"""What the mystmd plugin costs a whole ``myst build``: a book without it, with the
JavaScript plugin (``gpu_admonition.mjs``, one Python server for the build's
transforms) and with the executable plugin (``gpu_admonition.py``, a process for
every call).

    python benchmarks/bench_mystmd_build.py [--pages 10] [--repeats 7] [--forced]
        [--directives] [--myst .mystmd/node_modules/.bin/myst] [--keep FOLDER]

A synthetic book of ``--pages`` pages (three trivial code cells each) is copied once
per variant; each copy is executed once (``myst build --execute --site``), then built
again ``--repeats`` times as a cache hit (no kernel runs), the variants interleaved
and their order swapped every round. ``--forced`` also times builds with the
execution cache removed first (every page's kernel runs). ``--directives`` gives each
page of the plugin's books a ``{gpu}`` notice and a ``{runtime}`` role, as a GPU
lecture has (mystmd calls them synchronously). The plugin's variants export the
capture's environment (``mystmd env``), as the docs tell users to.

Printed: medians with their spread (min-max) of the build's wall time, the CPU time
of the ``myst`` process tree that ``myst`` waits for (node, and the executable
plugin's processes), and the CPU time of the plugin's own Python processes (every
process of both plugins runs under ``/usr/bin/time``, which logs it when it ends:
the ``.mjs`` plugin's server ends after node, which does not wait for it); the
plugin's part is the difference from the book without it, per round.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
TEMPLATE = PROJECT / "tests" / "roots" / "mystmd" / "template"
PAGE = """---
kernelspec:
  name: python3
  display_name: Python 3
---

# Page {n}

Some text before the code.

```{{code-cell}} python
x = {n}
```

```{{code-cell}} python
y = [i * x for i in range(100)]
```

```{{code-cell}} python
print(sum(y))
```
"""
VARIANTS = ("none", "mjs", "executable")
#: with --directives, after each page's title in the plugin's books
DIRECTIVES = "\n```{gpu}\n```\n\nThis lecture runs in {runtime}`this page`.\n"


def make_book(folder: Path, pages: int, variant: str, python: Path,
              directives: bool = False) -> Path:
    from sphinx_gpu_admonition.mystmd import plugin_file

    book = folder / variant
    shutil.copytree(TEMPLATE, book / "template")
    names = [f"page{n:02d}.md" for n in range(pages)]
    for n, name in enumerate(names):
        text = PAGE.format(n=n)
        if directives and variant != "none":
            text = text.replace(f"# Page {n}\n", f"# Page {n}\n{DIRECTIVES}", 1)
        (book / name).write_text(text, encoding="utf-8")
    plugins = {"none": "",
               "mjs": f"  plugins:\n    - {plugin_file.MJS_FILE}\n",
               "executable": ("  plugins:\n    - type: executable\n"
                              f"      path: {plugin_file.PLUGIN_FILE}\n")}[variant]
    (book / "myst.yml").write_text(
        "version: 1\nproject:\n  title: Bench\n" + plugins + "  toc:\n"
        + "".join(f"    - file: {name}\n" for name in names)
        + "site:\n  template: ./template\n", encoding="utf-8")
    if variant == "mjs":
        plugin_file.write_plugin_file(book / plugin_file.MJS_FILE,
                                      plugin_file.mjs_text(str(python)))
    elif variant == "executable":  # the file init wrote before, run by the same wrapper
        text = plugin_file.PLUGIN_TEXT.replace("#!/usr/bin/env python3", f"#!{python}", 1)
        plugin_file.write_plugin_file(book / plugin_file.PLUGIN_FILE, text)
    config = book / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.py").write_text("c.ServerApp.allow_root = True\n")
    return book


def wrapper(folder: Path) -> Path:
    """The plugin's interpreter: this Python under /usr/bin/time, logging each process's
    wall, user and system seconds when it ends (and a line when it starts)."""
    path = folder / "timed-python"
    path.write_text(f"#!/bin/sh\necho start >> \"$PLUGIN_STARTS\"\n"
                    f"exec /usr/bin/time -a -o \"$PLUGIN_TIMES\" -f '%e %U %S' "
                    f"{sys.executable} \"$@\"\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def environment(book: Path, variant: str, logs: Path) -> dict[str, str]:
    from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli

    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(book / "jupyter-config"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PLUGIN_STARTS": str(logs / "starts"), "PLUGIN_TIMES": str(logs / "times")}
    if variant != "none":
        for line in mystmd_cli.env_lines(book, env):
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = value.strip("'")
    return env


def stop_servers(book: Path) -> None:
    """The Jupyter servers mystmd leaves running after an executing build."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"jupyter_server" in args and str(book).encode() in args:
                with contextlib.suppress(OSError):
                    os.kill(int(entry.name), 15)


def build(myst: str, book: Path, variant: str, logs: Path) -> tuple[float, float, float]:
    """(wall, CPU of the tree myst waits for, CPU of the plugin's processes)."""
    for name in ("starts", "times"):
        (logs / name).write_text("")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([myst, "build", "--execute", "--site"], cwd=book,
                          env=environment(book, variant, logs), capture_output=True,
                          text=True, timeout=900)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stop_servers(book)
    if done.returncode:
        raise SystemExit(f"{variant}: myst build failed\n{done.stdout[-3000:]}"
                         f"{done.stderr[-3000:]}")
    started = len((logs / "starts").read_text().splitlines())
    deadline = time.monotonic() + 30  # the .mjs plugin's server ends after node
    while time.monotonic() < deadline:
        ended = [line.split() for line in (logs / "times").read_text().splitlines()
                 if line.strip() and line.split()[0][0].isdigit()]
        if len(ended) >= started:
            break
        time.sleep(0.05)
    plugin_cpu = sum(float(user) + float(system) for _wall, user, system in ended)
    tree_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, tree_cpu, plugin_cpu


def spread(values: list[float], unit: str = "s") -> str:
    scale = 1e3 if unit == "ms" else 1
    return (f"{statistics.median(values) * scale:.{0 if unit == 'ms' else 2}f} {unit} "
            f"({min(values) * scale:.{0 if unit == 'ms' else 2}f}-"
            f"{max(values) * scale:.{0 if unit == 'ms' else 2}f})")


def rounds(myst: str, books: dict[str, Path], logs: Path, repeats: int, forced: bool
           ) -> dict[str, list[tuple[float, float, float]]]:
    found: dict[str, list[tuple[float, float, float]]] = {v: [] for v in books}
    for number in range(repeats):
        for variant in (list(books) if number % 2 == 0 else list(books)[::-1]):
            if forced:
                shutil.rmtree(books[variant] / "_build" / "execute", ignore_errors=True)
            found[variant].append(build(myst, books[variant], variant, logs))
    return found


def report(title: str, found: dict[str, list[tuple[float, float, float]]]) -> None:
    print(f"\n{title}: median (min-max) of {len(found['none'])} interleaved rounds")
    print(f"{'variant':12} {'wall':>22} {'myst tree CPU':>22} {'plugin processes CPU':>22}"
          f" {'plugin wall (- none)':>22} {'ratio to none':>20}")
    for variant, rows in found.items():
        walls = [row[0] for row in rows]
        extra = [row[0] - base[0] for row, base in zip(rows, found["none"], strict=True)]
        ratio = [row[0] / base[0] for row, base in zip(rows, found["none"], strict=True)]
        print(f"{variant:12} {spread(walls):>22} {spread([r[1] for r in rows]):>22} "
              f"{spread([r[2] for r in rows], 'ms'):>22} {spread(extra, 'ms'):>22} "
              f"{statistics.median(ratio):8.3f} ({min(ratio):.3f}-{max(ratio):.3f})")
    print(json.dumps({variant: rows for variant, rows in found.items()}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--forced", action="store_true")
    parser.add_argument("--directives", action="store_true",
                        help="a {gpu} notice and a {runtime} role on every page")
    parser.add_argument("--myst", default=str(PROJECT / ".mystmd" / "node_modules" / ".bin"
                                              / "myst"))
    parser.add_argument("--keep", type=Path, help="build in FOLDER and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gpu-mystmd-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        logs = folder / "logs"
        logs.mkdir(exist_ok=True)
        python = wrapper(folder)
        books = {variant: make_book(folder, args.pages, variant, python, args.directives)
                 for variant in VARIANTS}
        for variant, book in books.items():  # executed once: the later builds hit
            build(args.myst, book, variant, logs)
        report(f"cache-hit myst build, {args.pages} pages",
               rounds(args.myst, books, logs, args.repeats, forced=False))
        if args.forced:
            report(f"forced myst build (execution cache removed), {args.pages} pages",
                   rounds(args.myst, books, logs, args.repeats, forced=True))
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
