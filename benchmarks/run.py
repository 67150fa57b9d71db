"""Every benchmark of sphinx-gpu-admonition, printed as one table.

    python benchmarks/run.py [--quick | --full] [--repeats N] [--json FILE]
                             [--instructions] [--forced-only]
                             [--page-only] [--page-reference FOLDER] [--hits-only]
                             [--lectures FOLDER] [--before FOLDER]

Each figure is a ratio against the same work without the extension (a book
whose status page is MyST-NB's ``{nb-exec-table}``), or against the reference
named in its row.  Builds run ``python -m sphinx`` in a subprocess, as a user
would; the runs with and without the extension alternate (interleaved
repetitions, the order swapped every round), so that other load on the machine
falls on both alike.  Ratios are medians of the per-round ratios, with their
spread (min-max).

- forced build: N notebooks x M trivial code cells, ``nb_execution_mode = "force"``;
  its wall time, the same less the kernel-shutdown waits that strike notebooks at
  random with or without the extension (:class:`BuildTime`), and the CPU time of
  the build and its kernels (``--forced-only`` runs these alone);
- cache-hit rebuild: the same book, every notebook a jupyter-cache hit, ``-E``
  (re-read everything), its wall and CPU time; the extra cost per notebook is
  printed too, and must not grow with the book (``--full`` adds a 500-notebook
  book; ``--hits-only`` runs these rows alone, with a code-heavy book of 12
  notebooks x 60 lecture-like cells of 14 lines, and with ``--lectures FOLDER`` a
  book of the real lectures in FOLDER, QuantEcon's for instance; ``--before
  FOLDER`` builds each of these books with another checkout's package too, in the
  same rounds, and compares: a change measured in one run);
- ``-j 2``: the forced build with two processes against the serial one, and
  whether both write the same ``execution-status.json`` apart from times;
- timing claims: the cache-hit rebuild of a book whose notebooks name cells for
  timing and have the three timing roles and a claim, against the same book without
  them (``--claims-only`` runs these alone);
- cache-hit lookups: finding the jupyter-cache record of each hit, in caches of
  20 and 500 records, against listing every record per notebook (as before);
- environment pickle: bytes the extension adds to ``environment.pickle`` per
  code cell (with minus without, over the number of cells);
- status page: 1,000 notebooks x 100 cells (synthetic records, rendered as a
  build does): HTML size, what the browser fetches until it has loaded, load,
  one sort and one filter in headless Chromium (Playwright with Debian's
  ``chromium``), against the same table without per-cell details
  (``:cells: no``), or with ``--page-reference`` against the page another
  checkout wrote (``--page-only`` measures the page alone);
- the probe's per-cell cost: ``benchmarks/bench_probe.py`` (``--smoke`` with
  ``--quick``) when it exists (printed after the table).

``--quick`` is a smoke test (tiny sizes, one round): its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import http.server
import json
import os
import pickle
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_status_page  # noqa: E402 - beside this file
from timed_sphinx import SET_UP  # noqa: E402

#: keys of execution-status.json whose values differ between two runs of the same
#: book (besides every "...seconds" key)
TIME_KEYS = {"executed_at", "created", "peak_memory_mb", "started", "time", "timestamp",
             "mtime", "ratio"}


@dataclasses.dataclass
class Row:
    measure: str
    with_extension: str
    reference: str
    ratio: str
    target: str


@dataclasses.dataclass(frozen=True)
class Sizes:
    notebooks: int
    cells: int
    repeats: int
    page_notebooks: int
    page_cells: int
    big_book: int | None  # notebooks of the second cache-hit book (--full)
    big_cache: int  # records of the larger cache for the lookup measure


QUICK = Sizes(notebooks=1, cells=2, repeats=1, page_notebooks=50, page_cells=10, big_book=None,
              big_cache=20)
DEFAULT = Sizes(notebooks=20, cells=30, repeats=3, page_notebooks=1000, page_cells=100,
                big_book=None, big_cache=500)


def spread(values: list[float], digits: int = 2) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# -- books ---------------------------------------------------------------------------
NOTEBOOK_HEADER = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
"""


def trivial_cell(notebook: int, cell: int) -> str:
    return f"x_{cell} = {notebook} * {cell} + 1"


def lecture_cell(notebook: int, cell: int) -> str:
    """A lecture-like cell: a function with a loop and a branch (14 lines), called."""
    return (f"def step_{cell}(a, b, steps=10):\n"
            f"    \"\"\"Cell {cell} of notebook {notebook}.\"\"\"\n"
            "    total = 0.0\n"
            "    values = []\n"
            "    for i in range(steps):\n"
            "        x = a * i + b\n"
            "        if x > 0:\n"
            "            total += x ** 0.5\n"
            "        else:\n"
            "            total -= x\n"
            "        values.append(total)\n"
            "    return total, values\n"
            "\n"
            f"result_{cell} = step_{cell}({notebook}, {cell})[0]")


#: the books' kinds of code cell
CELL_CODE: dict[str, Callable[[int, int], str]] = {"one-line": trivial_cell,
                                                   "code-heavy": lecture_cell}
#: notebooks and cells of the code-heavy cache-hit book (``--hits-only``)
CODE_HEAVY = (12, 60)


#: with ``claims``, each notebook's text after its cells: the three timing roles and an
#: unmarked sentence about speed for the review list (the first two cells are named)
CLAIMS_TEXT = ("\nThe first cell takes {timing}`c0`, {timing-ratio}`c0 / c1` the second. "
               "It is about the same as the second. {timing-claim}`c0 ~ c1`\n\n"
               "The second cell is not much faster than the first.\n")
#: the same sentences with no role: the reference that has the text of the claims book
#: (Sphinx and MyST parse and write it, with or without claims) but no claim
PROSE_TEXT = ("\nThe first cell takes `c0`, `c0 / c1` the second. "
              "It is about the same as the second. `c0 ~ c1`\n\n"
              "The second cell is not much faster than the first.\n")


def make_book(folder: Path, notebooks: int, cells: int, extension: bool,
              cell_code: Callable[[int, int], str] = trivial_cell,
              claims: bool = False, prose: bool = False) -> Path:
    """A book of ``notebooks`` MyST notebooks of ``cells`` code cells (``cell_code``'s,
    trivial ones by default) and a status page: ``{execution-status}`` with the
    extension, ``{nb-exec-table}`` without; with ``claims``, each notebook names two
    cells for timing and has a claim (:data:`CLAIMS_TEXT`); with ``prose``, the same
    sentences without roles or names (:data:`PROSE_TEXT`)."""
    src = folder / "src"
    src.mkdir(parents=True)
    names = [f"nb{n:04d}" for n in range(notebooks)]
    extensions = ["myst_nb"] + (["sphinx_gpu_admonition"] if extension else [])
    (src / "conf.py").write_text(
        f"project = 'bench'\nextensions = {extensions!r}\n"
        "exclude_patterns = ['_build']\nnb_execution_timeout = 300\n", encoding="utf-8")
    toctree = "\n".join(["status", *names])
    (src / "index.md").write_text(f"# Bench\n\n```{{toctree}}\n{toctree}\n```\n",
                                  encoding="utf-8")
    directive = "execution-status" if extension else "nb-exec-table"
    (src / "status.md").write_text(f"# Status\n\n```{{{directive}}}\n```\n", encoding="utf-8")
    for n, name in enumerate(names):
        body = "".join(f"\n```{{code-cell}} ipython3\n"
                       f"{f':tags: [time:c{c}]' + chr(10) if claims and c < 2 else ''}"
                       f"{cell_code(n, c)}\n```\n" for c in range(cells))
        body += CLAIMS_TEXT if claims else PROSE_TEXT if prose else ""
        (src / f"{name}.md").write_text(f"{NOTEBOOK_HEADER}# Notebook {n}\n{body}",
                                        encoding="utf-8")
    return src


def compile_extension(before: Path | None = None) -> None:
    """Byte-compile the extension where the builds import it from, as installing a
    wheel does: from a checkout (an editable install) with ``PYTHONDONTWRITEBYTECODE``
    set, every build would compile its sources again (about 60 ms), a cost the
    reference's installed packages never pay and users do not either.  ``before``:
    the checkout of ``--before`` too."""
    import compileall

    import sphinx_gpu_admonition

    compileall.compile_dir(str(Path(sphinx_gpu_admonition.__file__).parent), quiet=1)
    if before is not None:
        if not (before / "sphinx_gpu_admonition" / "__init__.py").is_file():
            raise SystemExit(f"--before: no sphinx_gpu_admonition package in {before}")
        compileall.compile_dir(str(before / "sphinx_gpu_admonition"), quiet=1)


def sphinx_command(src: Path, build: Path, mode: str, *options: str,
                   own_time: Path | None = None, quiet: bool = True) -> list[str]:
    """``python -m sphinx`` for an html build; with ``own_time``, ``timed_sphinx.py``,
    which also writes the extension's own seconds in that build to that file."""
    runner = ["-m", "sphinx"] if own_time is None else [str(HERE / "timed_sphinx.py"),
                                                         str(own_time)]
    return [sys.executable, *runner, "-b", "html", *(["-q"] if quiet else []),
            "-d", str(build / "doctrees"), "-D", f"nb_execution_mode={mode}",
            *options, str(src), str(build / "html")]


#: MyST-NB's line for each executed notebook (printed without ``-q``)
EXECUTED = re.compile(r"Executed notebook in ([0-9.]+) seconds")
#: a notebook of the forced book this much slower than the book's median one waited
#: for its kernel to shut down (see :class:`BuildTime`)
SHUTDOWN_WAIT_MARGIN = 2.0


@dataclasses.dataclass(frozen=True)
class BuildTime:
    """One build: its wall time, the CPU time of the build and of its kernels, and
    its notebooks' kernel-shutdown waits.

    About one notebook in ten to twenty, with or without the extension, waits some
    3.4 s for its kernel to exit when nbclient shuts it down (plain nbclient
    executing the same notebook in a loop shows it too).  A 20-notebook forced
    build thus takes 16, 19.5, 23 or 26 s by chance, and a ratio of wall times
    says more about those waits than about the extension.  ``waits`` is their
    time: each notebook's excess over the book's median notebook, for those at
    least :data:`SHUTDOWN_WAIT_MARGIN` seconds over it (the books' notebooks are
    all alike), read from MyST-NB's "Executed notebook in ... seconds" lines.
    """

    wall: float
    cpu: float
    waits: float
    waited: int  # notebooks that waited

    @property
    def without_waits(self) -> float:
        return self.wall - self.waits


def shutdown_waits(output: str) -> tuple[float, int]:
    """(seconds, notebooks) of the kernel-shutdown waits in a build's output."""
    times = [float(found) for found in EXECUTED.findall(output)]
    if not times:
        return 0.0, 0
    typical = statistics.median(times)
    waits = [t - typical for t in times if t > typical + SHUTDOWN_WAIT_MARGIN]
    return sum(waits), len(waits)


def sphinx_build(src: Path, build: Path, mode: str, *options: str,
                 own_time: Path | None = None, quiet: bool = True,
                 package: Path | None = None) -> BuildTime:
    """One build of :func:`sphinx_command` (a failed build stops the run); with
    ``package``, the extension imported from that checkout instead (``--before``)."""
    command = sphinx_command(src, build, mode, *options, own_time=own_time, quiet=quiet)
    environment = None if package is None else {**os.environ, "PYTHONPATH": str(package)}
    for attempt in range(3):
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=environment)
        seconds = time.perf_counter() - start
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if not done.returncode:
            cpu = (cpu_after.ru_utime - cpu_before.ru_utime
                   + cpu_after.ru_stime - cpu_before.ru_stime)
            return BuildTime(seconds, cpu, *shutdown_waits(done.stdout))
        # kernels started at the same moment by other jobs can take the same port
        # (jupyter_client); such a build is run again, any other failure stops
        if "Address already in use" not in done.stderr or attempt == 2:
            break
        print(f"a kernel could not bind its port; building again: {src}", file=sys.stderr)
    raise SystemExit(f"build failed: {' '.join(command)}\n{done.stderr[-3000:]}")


def interleaved(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, list[float]]:
    """Each run once per round, the order reversed every other round."""
    names = list(runs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(repeats):
        for name in (names if round_ % 2 == 0 else names[::-1]):
            times[name].append(runs[name]())
    return times


def ratios(numerator: list[float], denominator: list[float]) -> list[float]:
    return [a / b for a, b in zip(numerator, denominator, strict=True)]


# -- the measures ----------------------------------------------------------------------
def without_times(data: object) -> object:
    """``execution-status.json`` without anything that differs between two runs."""
    if isinstance(data, dict):
        return {k: without_times(v) for k, v in data.items()
                if k not in TIME_KEYS and not k.endswith("seconds") and k != "build"}
    if isinstance(data, list):
        return [without_times(v) for v in data]
    return data


def json_differences(first: object, second: object, path: str = "") -> list[str]:
    """Where two ``execution-status.json`` differ, apart from times."""
    first, second = without_times(first), without_times(second)
    if isinstance(first, dict) and isinstance(second, dict):
        return [found for key in sorted(first.keys() | second.keys())
                for found in json_differences(first.get(key), second.get(key),
                                              f"{path}/{key}")]
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return [found for index, (a, b) in enumerate(zip(first, second, strict=True))
                for found in json_differences(a, b, f"{path}[{index}]")]
    return [] if first == second else [path or "/"]


def forced_builds(folder: Path, sizes: Sizes) -> tuple[list[Row], dict[str, Path]]:
    """Forced builds with / without the extension, and with ``-j 2``."""
    books = {name: make_book(folder / name, sizes.notebooks, sizes.cells, name == "with")
             for name in ("with", "without")}
    books["parallel"] = books["with"]  # the same sources (their paths are in the JSON)
    counter = {name: 0 for name in books}
    builds: dict[str, list[BuildTime]] = {name: [] for name in books}

    def run(name: str, *options: str) -> Callable[[], float]:
        def build() -> float:
            counter[name] += 1
            target = folder / name / f"_build{counter[name]}"
            built = sphinx_build(books[name], target, "force", *options, quiet=False)
            builds[name].append(built)
            return built.wall
        return build

    times = interleaved({"with": run("with"), "without": run("without"),
                         "parallel": run("parallel", "-j", "2")}, sizes.repeats)
    label = f"{sizes.notebooks} nb x {sizes.cells} cells"
    differences = []
    for round_ in range(1, sizes.repeats + 1):
        files = [folder / name / f"_build{round_}" / "html" / "execution-status.json"
                 for name in ("with", "parallel")]
        differences.append(
            json_differences(*(json.loads(f.read_text(encoding="utf-8")) for f in files))
            if all(f.is_file() for f in files) else ["no execution-status.json"])
    same = sum(not found for found in differences)
    first = next((found for found in differences if found), [])
    same_text = f"{same}/{len(differences)}" + (f" (differ: {', '.join(first[:3])})"
                                                 if first else "")
    sides = ("with", "without")
    without_waits = [[built.without_waits for built in builds[name]] for name in sides]
    cpu = [[built.cpu for built in builds[name]] for name in sides]
    waited = {name: sum(built.waited for built in builds[name]) for name in sides}
    rows = [
        Row(f"forced build, {label}", f"{median(times['with']):.1f} s",
            f"{median(times['without']):.1f} s", spread(ratios(times["with"], times["without"])),
            "<= 1.01"),
        Row(f"forced build, {label}, less kernel-shutdown waits",
            f"{median(without_waits[0]):.1f} s ({waited['with']} waits)",
            f"{median(without_waits[1]):.1f} s ({waited['without']} waits)",
            spread(ratios(*without_waits)), "<= 1.01"),
        Row(f"forced build, {label}, CPU time of the build and its kernels",
            f"{median(cpu[0]):.1f} s", f"{median(cpu[1]):.1f} s", spread(ratios(*cpu)),
            "<= 1.01"),
        Row(f"-j 2 vs serial, {label} (with the extension)",
            f"{median(times['parallel']):.1f} s", f"{median(times['with']):.1f} s serial",
            spread(ratios(times["parallel"], times["with"])),
            f"< 1; same JSON apart from times: {same_text}"),
    ]
    return rows, {"with": folder / "with" / "_build1", "without": folder / "without" / "_build1"}


def environment_bytes_per_cell(builds: dict[str, Path], sizes: Sizes) -> Row:
    sizes_on_disk = {name: (build / "doctrees" / "environment.pickle").stat().st_size
                     for name, build in builds.items()}
    with (builds["with"] / "doctrees" / "environment.pickle").open("rb") as stream:
        env = pickle.load(stream)
    records = getattr(env, "gpu_execution_records", {})
    cells = sum(len(record.cells) for record in records.values()) or 1
    extra = (sizes_on_disk["with"] - sizes_on_disk["without"]) / cells
    return Row("environment pickle, bytes per code cell",
               f"{sizes_on_disk['with'] / 1e3:.0f} kB", f"{sizes_on_disk['without'] / 1e3:.0f} kB",
               f"+{extra:.0f} B/cell", "<= 150 B/cell")


@dataclasses.dataclass(frozen=True)
class CacheHitBooks:
    """The same book with and without the extension, each with a cache that holds
    every notebook: a build with ``-E`` re-reads everything and executes nothing."""

    folder: Path
    notebooks: int
    cells: int
    code: str = "one-line"  # a key of CELL_CODE, or the kind of a book of real lectures

    def arguments(self, name: str) -> tuple[Path, Path, str, str, str, str]:
        """:func:`sphinx_command`'s arguments for the rebuild of the book ``name``."""
        return (self.folder / name / "src", self.folder / name / "_build", "cache",
                "-D", f"nb_execution_cache_path={self.folder / name / 'cache'}", "-E")

    def build(self, name: str, own_time: Path | None = None,
              package: Path | None = None) -> BuildTime:
        """One rebuild of the book ``name`` ("with", "without", or "before": the book
        with the extension, built by the checkout ``package``)."""
        return sphinx_build(*self.arguments(name), own_time=own_time, package=package)

    def add_before(self, package: Path) -> None:
        """A copy of the book with the extension and its cache, for the checkout
        ``package``: its own cache, because the page facts kept in the sidecars are
        keyed by the code that derived them (two checkouts sharing a cache would
        derive them again in turn, at every build), filled by one build."""
        shutil.copytree(self.folder / "with", self.folder / "before")
        shutil.rmtree(self.folder / "before" / "_build", ignore_errors=True)
        self.build("before", package=package)


def cache_hit_books(folder: Path, notebooks: int, cells: int,
                    code: str = "one-line") -> CacheHitBooks:
    make_book(folder / "with", notebooks, cells, True, CELL_CODE[code])
    make_book(folder / "without", notebooks, cells, False, CELL_CODE[code])
    books = CacheHitBooks(folder, notebooks, cells, code)
    _fill_caches(books)
    return books


def _fill_caches(books: CacheHitBooks) -> None:
    """Each book's cache filled with every notebook (the book without the extension
    gets a copy of the other's)."""
    folder = books.folder
    # fill the cache once (with the extension, so that its capture is saved beside
    # the cache); the outputs and hashes are the same, so the book without it
    # gets a copy of the same cache.  Serially: two processes adding records race
    # in jupyter-cache (truncate_caches lists the records to keep, then deletes the
    # others, among them one another process added in between: "KeyError: Notebook
    # file does not exist for cache record"), which a 500-notebook book meets
    from jupyter_cache import get_cache

    get_cache(str(folder / "with" / "cache")).db  # noqa: B018 - creates the database
    books.build("with")
    shutil.copytree(folder / "with" / "cache", folder / "without" / "cache")
    books.build("without")  # all hits


#: the Sphinx extensions of QuantEcon's lectures that the lecture book loads when they are
#: installed (their directives otherwise stay unknown: a warning, the same in both books)
LECTURE_EXTENSIONS = ("sphinx_exercise", "sphinx_togglebutton")
#: the code cells of a MyST notebook
CODE_CELL = re.compile(r"^```\{code-cell\}", re.MULTILINE)


def make_lecture_book(folder: Path, lectures: list[Path], extension: bool) -> Path:
    """A book of real lectures (MyST notebooks, as QuantEcon writes them: their text,
    directives and code unchanged) and a status page, with or without the extension."""
    import importlib.util

    src = folder / "src"
    src.mkdir(parents=True)
    extensions = ["myst_nb", *[name for name in LECTURE_EXTENSIONS
                               if importlib.util.find_spec(name) is not None]]
    extensions += ["sphinx_gpu_admonition"] if extension else []
    (src / "conf.py").write_text(
        f"project = 'lectures'\nextensions = {extensions!r}\n"
        "exclude_patterns = ['_build']\nnb_execution_timeout = 600\n"
        "myst_enable_extensions = ['dollarmath', 'amsmath', 'colon_fence']\n",
        encoding="utf-8")
    toctree = "\n".join(["status", *[lecture.stem for lecture in lectures]])
    (src / "index.md").write_text(f"# Lectures\n\n```{{toctree}}\n{toctree}\n```\n",
                                  encoding="utf-8")
    directive = "execution-status" if extension else "nb-exec-table"
    (src / "status.md").write_text(f"# Status\n\n```{{{directive}}}\n```\n", encoding="utf-8")
    for lecture in lectures:
        shutil.copyfile(lecture, src / lecture.name)
    return src


def lecture_books(folder: Path, lectures_folder: Path) -> CacheHitBooks:
    """:func:`cache_hit_books` of the lectures in ``lectures_folder`` (every ``*.md``)."""
    lectures = sorted(lectures_folder.glob("*.md"))
    if not lectures:
        raise SystemExit(f"--lectures: no *.md in {lectures_folder}")
    make_lecture_book(folder / "with", lectures, True)
    make_lecture_book(folder / "without", lectures, False)
    cells = sum(len(CODE_CELL.findall(lecture.read_text(encoding="utf-8")))
                for lecture in lectures)
    books = CacheHitBooks(folder, len(lectures), round(cells / len(lectures)),
                          f"real-lecture ({lectures_folder.name})")
    _fill_caches(books)
    return books


def claims_rebuilds(folder: Path, notebooks: int, cells: int, repeats: int,
                    filled: Path | None = None) -> list[Row]:
    """The all-cache-hit ``-E`` rebuild of a book whose notebooks each have named
    timings, the three roles and a claim against the same book without them (both
    with the extension): what reading the texts and checking the claims costs, in
    the whole build and in the extension's own code (issue 31: within 1 %). Two
    references: the same notebooks with the same sentences as plain text (``prose``:
    the text Sphinx and MyST parse and write whatever the extension does, so the
    difference is the claims'), and without that text (``plain``). ``filled``: a
    jupyter-cache that already holds the notebooks of ``plain`` (the cache-hit book with
    the extension is that book), else one is filled here."""
    for name, claims, prose in (("claims", True, False), ("prose", False, True),
                                ("plain", False, False)):
        make_book(folder / name, notebooks, cells, True, claims=claims, prose=prose)
    books = CacheHitBooks(folder, notebooks, cells)
    from jupyter_cache import get_cache

    def fill(name: str) -> None:  # serially: see _fill_caches
        get_cache(str(folder / name / "cache")).db  # noqa: B018 - creates the database
        books.build(name)

    # jupyter-cache hashes a notebook's code cells with their metadata, not its text: the
    # prose and plain books have the same notebooks (one cache, copied: all hits, no
    # kernel), the claims book's tags make its notebooks others (a cache of its own)
    fill("claims")
    copies = ("plain", "prose")
    if filled is None:
        fill("plain")
        filled, copies = folder / "plain" / "cache", ("prose",)
    for name in copies:
        shutil.copytree(filled, folder / name / "cache")
        books.build(name)
    own: dict[str, list[float]] = {"claims": [], "prose": [], "plain": []}

    def run(name: str) -> Callable[[], float]:
        def build() -> float:
            seconds = books.build(name, own_time=folder / f"{name}.json").wall
            timed = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
            own[name].append(timed["total"] - timed["by"].get(SET_UP, 0.0))
            return seconds
        return build

    times = interleaved({name: run(name) for name in ("claims", "prose", "plain")}, repeats)
    label = f"{notebooks} nb x {cells} cells"
    rows = []
    for reference, says in (("prose", "the same sentences, no roles"),
                            ("plain", "no claims, no sentences")):
        per_notebook = (median(own["claims"]) - median(own[reference])) / notebooks * 1e3
        rows += [
            Row(f"all-cache-hit -E rebuild with timing claims, {label}",
                f"{median(times['claims']):.2f} s",
                f"{median(times[reference]):.2f} s ({says})",
                spread(ratios(times["claims"], times[reference]), 3), "<= 1.01"),
            Row(f"its own code with timing claims, {label}",
                f"{spread([seconds / notebooks * 1e3 for seconds in own['claims']], 2)} ms/nb",
                f"{spread([seconds / notebooks * 1e3 for seconds in own[reference]], 2)} "
                f"ms/nb ({says})", spread(ratios(own["claims"], own[reference]), 3) +
                f"; {per_notebook:+.2f} ms/nb", "a small part of the build"),
        ]
    return rows


def cache_hit_rebuilds(books: CacheHitBooks, repeats: int,
                       before: Path | None = None) -> list[Row]:
    """``-E`` rebuilds where every notebook is a cache hit, with / without, and the
    time spent in the extension's own code in the builds with it (a ratio of whole
    builds moves by a few percent from build to build on a shared machine; that
    time does not, and says whether the cost per notebook grows with the book).
    With ``before`` (another checkout), the same book built by it too, in the same
    rounds: this checkout's change in one run."""
    folder, notebooks, cells = books.folder, books.notebooks, books.cells
    own: list[dict[str, Any]] = []
    cpu: dict[str, list[float]] = {"with": [], "without": []}

    def timed(name: str, own_time: Path) -> float:
        build = books.build(name, own_time=own_time)
        cpu[name].append(build.cpu)
        return build.wall

    def with_extension() -> float:
        # both books are built by timed_sphinx.py (the same start-up); this one's
        # file says how much of the build was the extension's own code
        seconds = timed("with", folder / "own.json")
        own.append(json.loads((folder / "own.json").read_text(encoding="utf-8")))
        return seconds

    reference: list[dict[str, Any]] = []

    def without_extension() -> float:
        seconds = timed("without", folder / "reference.json")
        reference.append(json.loads((folder / "reference.json").read_text(encoding="utf-8")))
        return seconds

    earlier: list[dict[str, Any]] = []
    runs = {"with": with_extension, "without": without_extension}
    if before is not None:
        books.add_before(before)

        def before_change() -> float:
            build = books.build("before", own_time=folder / "before.json", package=before)
            earlier.append(json.loads((folder / "before.json").read_text(encoding="utf-8")))
            return build.wall

        runs["before"] = before_change
    times = interleaved(runs, repeats)
    per_notebook = (median(times["with"]) - median(times["without"])) / notebooks * 1e3
    label = f"{notebooks} nb x {cells} {books.code} cells"
    own_per_notebook = [(run["total"] - run["by"].get(SET_UP, 0.0)) / notebooks * 1e3
                        for run in own]
    # the ratio the extension's own time alone would make
    own_ratio = [1 + run["total"] / seconds for run, seconds in zip(own, times["without"],
                                                                    strict=True)]
    # the same from the CPU time of its code against the reference build's CPU time
    # (what other load on the machine moves less)
    own_cpu_ratio = [1 + run.get("cpu_total", 0.0) / seconds
                     for run, seconds in zip(own, cpu["without"], strict=True)]
    rows = [
        Row(f"all-cache-hit -E rebuild, {label}",
            f"{median(times['with']):.2f} s", f"{median(times['without']):.2f} s",
            spread(ratios(times["with"], times["without"]), 3) +
            f"; {per_notebook:+.1f} ms/nb", "<= 1.01; same ms/nb at any size"),
        Row(f"all-cache-hit -E rebuild, {label}, CPU time of the build",
            f"{median(cpu['with']):.2f} s", f"{median(cpu['without']):.2f} s",
            spread(ratios(cpu["with"], cpu["without"]), 3), "<= 1.01"),
        Row(f"its own code in that rebuild, {label}",
            f"{spread(own_per_notebook, 2)} ms/nb",
            f"+ {median([run['by'].get(SET_UP, 0.0) for run in own]) * 1e3:.0f} ms "
            "import and set-up", spread(own_ratio, 3) + "; CPU " + spread(own_cpu_ratio, 3),
            "same ms/nb at any size"),
        # the collector's pauses are left out of the extension's own time (where a
        # full collection starts is chance): whether its objects make more of them
        collector_row(f"garbage collector's pauses in that rebuild, {label}", own, reference,
                      "about 1"),
    ]
    if before is not None:
        status = folder / "before" / "_build" / "html" / "execution-status.json"
        generator = json.loads(status.read_text(encoding="utf-8"))["build"]["generator"]
        rows += before_rows(f"{label}, --before checkout ({generator})", notebooks, times,
                            own, earlier)
    return rows


def totals(runs: list[dict[str, Any]], key: str) -> list[float]:
    """``key`` of each build's ``timed_sphinx.py`` file (0 where it has none)."""
    return [run.get(key, 0.0) for run in runs]


def collector_row(measure: str, own: list[dict[str, Any]], other: list[dict[str, Any]],
                  target: str) -> Row:
    """The collector's pauses in the builds ``own`` against those in ``other`` (the same
    rounds), with their collections."""
    return Row(measure,
               f"{median(totals(own, 'gc_total')) * 1e3:.0f} ms ({collections(own)})",
               f"{median(totals(other, 'gc_total')) * 1e3:.0f} ms ({collections(other)})",
               spread([a / b for a, b in zip(totals(own, "gc_total"), totals(other, "gc_total"),
                                             strict=True) if b > 0], 3), target)


def collections(runs: list[dict[str, Any]]) -> str:
    """The collector's collections in each build (medians), the full ones apart: a full
    collection walks every object of the build (50 to 100 ms in these books), a young
    one only the newest, so one full collection more or less is most of a difference
    in the pauses."""
    return (f"{median(totals(runs, 'gc_collections')):.0f} collections, "
            f"{median(totals(runs, 'gc_full_collections')):.0f} full")


def before_rows(label: str, notebooks: int, times: dict[str, list[float]],
                own: list[dict[str, Any]], earlier: list[dict[str, Any]]) -> list[Row]:
    """``--before``: the same rebuilds by the other checkout, against the book without
    the extension (the whole build) and against this checkout (its own code, the
    collector's pauses), each from the same rounds."""
    per_notebook = (median(times["before"]) - median(times["without"])) / notebooks * 1e3
    return [
        Row(f"all-cache-hit -E rebuild, {label}",
            f"{median(times['before']):.2f} s", f"{median(times['without']):.2f} s",
            spread(ratios(times["before"], times["without"]), 3) +
            f"; {per_notebook:+.1f} ms/nb", "what this checkout changed"),
        Row(f"its own code in that rebuild, {label}: this checkout against it",
            f"{median(totals(own, 'total')) * 1e3:.0f} ms",
            f"{median(totals(earlier, 'total')) * 1e3:.0f} ms",
            spread(ratios(totals(own, "total"), totals(earlier, "total")), 3), "<= 1"),
        collector_row(f"garbage collector's pauses in that rebuild, {label}: this checkout "
                      "against it", own, earlier, "<= 1"),
    ]


def instructions(command: list[str]) -> int:
    """Instructions the command executes (Valgrind's cachegrind, without simulating
    caches), with hash randomisation and address-space randomisation off."""
    setarch = ["setarch", platform.machine(), "-R"] if shutil.which("setarch") else []
    done = subprocess.run([*setarch, "valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *command],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"valgrind failed: {' '.join(command)}\n{done.stderr[-3000:]}")
    return int(found.group(1).replace(",", ""))


def cache_hit_instructions(books: CacheHitBooks, repeats: int) -> Row:
    """The cache-hit rebuilds again, counting instructions instead of seconds.

    On a shared machine a build's time moves by about 5 % from run to run, more
    than the whole extension costs there; the instructions it executes move by
    about 0.1 % (what remains: times and paths the build reads).  Each build runs
    about 30x slower under Valgrind.  The calibration sampler, which samples a page
    only once its kernel started, takes no sample here either: a cache hit starts
    no kernel.
    """
    commands = {name: sphinx_command(*books.arguments(name)) for name in ("with", "without")}
    counts = interleaved({name: functools.partial(instructions, command)
                          for name, command in commands.items()}, repeats)
    label = f"{books.notebooks} nb x {books.cells} cells"
    return Row(f"all-cache-hit -E rebuild, {label}, instructions (Valgrind)",
               f"{median(counts['with']) / 1e9:.3f} G", f"{median(counts['without']) / 1e9:.3f} G",
               spread(ratios(counts["with"], counts["without"]), 4), "<= 1.02")


def hit_lookups(folder: Path, records: int) -> Row:
    """Finding the cache record of every hit of a book of ``records`` notebooks: the
    extension's index (the cache read once per build, then a dictionary lookup per
    hit) against listing every record per notebook (what it did before)."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from sphinx_gpu_admonition.ext import _mystnb

    cache = get_cache(str(folder / "cache"))
    for n in range(records):
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x = {n}")])
        cache.cache_notebook_bundle(CacheBundleIn(notebook, f"/book/nb{n}.ipynb"),
                                    check_validity=False)
    created = [r.created.timestamp() for r in cache.list_cache_records()]

    def indexed() -> float:
        # a new build in a new process: the cache read once, then a lookup per hit
        _mystnb._CACHE_DATABASES.clear()
        _mystnb._HIT_INDEXES.clear()
        start = time.perf_counter()
        _mystnb.index_cache_hits(folder / "cache")
        for timestamp in created:
            _mystnb.hit_record_key(folder / "cache", timestamp)
        return (time.perf_counter() - start) / records

    def listing() -> float:
        start = time.perf_counter()
        for timestamp in created:
            next(r.hashkey for r in get_cache(str(folder / "cache")).list_cache_records()
                 if abs(r.created.timestamp() - timestamp) < 1e-6)
        return (time.perf_counter() - start) / records

    times = interleaved({"indexed": indexed, "listing": listing}, 3)
    return Row(f"cache-hit record lookup per notebook, {records} records",
               f"{median(times['indexed']) * 1e3:.3f} ms",
               f"{median(times['listing']) * 1e3:.2f} ms (listing all, before)",
               spread(ratios(times["indexed"], times["listing"]), 4), "flat in book size")


@contextlib.contextmanager
def serving(folder: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

SORT_SCRIPT = """() => {
    const button = document.querySelector('th[data-sort-key="name"] button');
    const t0 = performance.now();
    button.click();
    document.body.offsetHeight;  // include the layout the new order needs
    return performance.now() - t0;
}"""

#: what the browser fetched until the page's ``load`` event: the page and every
#: resource it started before then (not a row's cell data, fetched when it opens)
FETCHED_SCRIPT = """() => {
    const [navigation] = performance.getEntriesByType('navigation');
    return performance.getEntriesByType('resource')
        .filter(entry => entry.startTime < navigation.loadEventEnd)
        .reduce((sum, entry) => sum + entry.encodedBodySize, navigation.encodedBodySize);
}"""

#: two frames rendered: the work that follows the load event is done
SETTLED_SCRIPT = """() => new Promise(done => requestAnimationFrame(() =>
    requestAnimationFrame(() => setTimeout(done, 50))))"""

#: a filter typed (``part3/``: one notebook in ten; ``""`` clears it) until the rows
#: left are laid out
FILTER_SCRIPT = """(query) => {
    const input = document.querySelector('input[data-gpu-status-filter]');
    const t0 = performance.now();
    input.value = query;
    input.dispatchEvent(new Event('input', {bubbles: true}));
    document.body.offsetHeight;
    const typed = performance.now() - t0;
    return [typed, document.querySelectorAll('tbody.gpu-status-notebook:not([hidden])').length];
}"""
FILTER_QUERY = "part3/"


def renderer_cpu(session: Any) -> tuple[float, float]:
    """The CPU seconds of the page's renderer main thread so far (Chromium's own
    count: what the page cost, little moved by other load on the machine), and the
    page's DOM nodes."""
    metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
    return metrics["ThreadTime"], metrics["Nodes"]


def page_times(browser: object, url: str, details: bool) -> dict[str, float]:
    """One load of ``url`` (its time and the bytes the browser fetched until its
    ``load`` event), one sort, one filter typed, and (``details``) the first
    details opened."""
    page = browser.new_page()
    session = page.context.new_cdp_session(page)
    session.send("Performance.enable")
    try:
        start = time.perf_counter()
        page.goto(url, wait_until="load")
        loaded = time.perf_counter() - start
        cpu, nodes = renderer_cpu(session)
        times = {"load": loaded, "load_cpu": cpu, "nodes": nodes,
                 "bytes": float(page.evaluate(FETCHED_SCRIPT))}
        page.evaluate(SETTLED_SCRIPT)  # the first frames after load are not the sort's
        cpu = renderer_cpu(session)[0]
        times["sort"] = page.evaluate(SORT_SCRIPT) / 1e3
        times["sort_cpu"] = renderer_cpu(session)[0] - cpu
        cpu = renderer_cpu(session)[0]
        typed, shown = page.evaluate(FILTER_SCRIPT, FILTER_QUERY)
        times["filter_cpu"] = renderer_cpu(session)[0] - cpu
        if not shown:
            raise RuntimeError(f"the filter {FILTER_QUERY!r} left no row on {url}")
        times["filter"] = typed / 1e3
        page.evaluate(FILTER_SCRIPT, "")
        if details:
            start = time.perf_counter()
            page.locator("tbody.gpu-status-notebook details > summary").first.click()
            page.locator("table.gpu-status-cell-table").first.wait_for()
            times["details"] = time.perf_counter() - start
        return times
    finally:
        page.close()


def status_page_rows(folder: Path, sizes: Sizes, repeats: int,
                     reference: Path | None = None) -> list[Row]:
    """The status page of ``sizes.page_notebooks`` x ``sizes.page_cells`` against the
    same table with ``:cells: no``, or against ``reference``: the same page written
    by another checkout (``bench_status_page.py --write``), to compare two versions
    in one run."""
    records = bench_status_page.synthetic_records(sizes.page_notebooks, sizes.page_cells)
    label = f"{sizes.page_notebooks:,} nb x {sizes.page_cells} cells"
    html_bytes, data_bytes, file_bytes = bench_status_page.write_site(folder / "cells", records)
    if reference is None:
        plain_bytes, _, _ = bench_status_page.write_site(folder / "plain", records, cells=False)
        sites = {"cells": folder / "cells", "plain": folder / "plain"}
        against = ":cells: no"
    else:
        plain_bytes = (reference / bench_status_page.PAGE).stat().st_size
        sites = {"cells": folder / "cells", "plain": reference}
        against = "before"
    rows = [Row(f"status page HTML, {label}", f"{html_bytes / 1e6:.2f} MB",
                f"{plain_bytes / 1e6:.2f} MB ({against})", f"{html_bytes / plain_bytes:.2f}",
                f"<= 2 MB (cell data {data_bytes / 1e6:.1f} MB in files of at most "
                f"{file_bytes / 1e6:.2f} MB, one read per opened row's file)")]
    if shutil.which("chromium") is None:
        rows.append(Row("status page in Chromium", "no chromium", "–", "–", "–"))
        return rows
    from playwright.sync_api import sync_playwright

    runs: dict[str, list[dict[str, float]]] = {"cells": [], "plain": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                    args=CHROMIUM_ARGS)
        try:
            with contextlib.ExitStack() as stack:
                urls = {name: stack.enter_context(serving(site)) + "/" + bench_status_page.PAGE
                        for name, site in sites.items()}
                for round_ in range(repeats):  # interleaved, the order swapped every round
                    for name in (("cells", "plain") if round_ % 2 == 0 else ("plain", "cells")):
                        runs[name].append(page_times(browser, urls[name],
                                                     name == "cells" or reference is not None))
        finally:
            browser.close()
    with_cells = {key: [run[key] for run in runs["cells"]] for key in runs["cells"][0]}
    plain = {key: [run[key] for run in runs["plain"]] for key in runs["plain"][0]}
    reference_text = "" if reference is None else " (before)"

    def timed(measure: str, key: str, target: str) -> Row:
        return Row(f"status page, {measure}, {label}",
                   f"{median(with_cells[key]) * 1e3:.0f} ms",
                   f"{median(plain[key]) * 1e3:.0f} ms{reference_text}",
                   spread(ratios(with_cells[key], plain[key])), target)

    rows += [
        Row(f"status page, fetched until loaded, {label}",
            f"{median(with_cells['bytes']) / 1e6:.2f} MB",
            f"{median(plain['bytes']) / 1e6:.2f} MB ({against})",
            f"{median(with_cells['bytes']) / median(plain['bytes']):.2f}", "<= 2 MB"),
        Row(f"status page, DOM nodes when loaded, {label}", f"{median(with_cells['nodes']):,.0f}",
            f"{median(plain['nodes']):,.0f}{reference_text}",
            f"{median(with_cells['nodes']) / median(plain['nodes']):.2f}", "–"),
        Row(f"status page load in Chromium, {label}", f"{median(with_cells['load']):.2f} s",
            f"{median(plain['load']):.2f} s{reference_text}",
            spread(ratios(with_cells["load"], plain["load"])), "<= 1 s"),
        timed("renderer CPU until loaded", "load_cpu", "–"),
        timed("one sort", "sort", "<= 300 ms"),
        timed("one sort, renderer CPU", "sort_cpu", "–"),
        timed(f"one filter typed ({FILTER_QUERY!r})", "filter", "<= 300 ms"),
        timed("one filter typed, renderer CPU", "filter_cpu", "–"),
        Row("status page, first details opened (fetch + render)",
            f"{median(with_cells['details']) * 1e3:.0f} ms",
            (f"{median(plain['details']) * 1e3:.0f} ms (before)"
             if "details" in plain else "–"),
            (spread(ratios(with_cells["details"], plain["details"])) if "details" in plain
             else "–"), "–"),
    ]
    return rows


def probe_benchmark(quick: bool) -> str:
    """The probe's own benchmark (another module), when it exists."""
    script = HERE / "bench_probe.py"
    if not script.is_file():
        return "probe per-cell cost: benchmarks/bench_probe.py not found (not run)"
    done = subprocess.run([sys.executable, str(script), *(["--smoke"] if quick else [])],
                          capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip()[-2000:]


# -- output ------------------------------------------------------------------------------
HEADERS = ("measure", "with the extension", "reference (without)", "ratio median (min-max)",
           "target")


def table(rows: list[Row]) -> str:
    """A Markdown table (it goes into docs/performance.md as it is)."""
    cells = [HEADERS] + [dataclasses.astuple(row) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADERS))]
    lines = ["| " + " | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) + " |"
             for row in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def machine() -> str:
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    import importlib.util

    import sphinx

    line = (f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
            f"Sphinx {sphinx.__version__}, {time.strftime('%Y-%m-%d', time.gmtime())}")
    if importlib.util.find_spec("rfc3987_syntax") is not None:
        # jsonschema, which nbformat and jupyter_server import, builds its parsers at
        # import: both books' builds pay it alike, which shrinks every ratio
        line += ("; rfc3987-syntax is installed: every build here takes about 1.8 s "
                 "longer, with and without the extension, and the ratios come out "
                 "smaller (scripts/_venv.sh removes it: drop_iri_checker)")
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="a smoke test: tiny sizes")
    size.add_argument("--full", action="store_true",
                      help="also the cache-hit rebuild of a 500-notebook book (slow)")
    parser.add_argument("--repeats", type=int, help="rounds of each measure")
    parser.add_argument("--json", type=Path, help="also save the rows as JSON")
    parser.add_argument("--forced-only", action="store_true",
                        help="only the forced builds (the measure a busy host disturbs "
                             "most, to run again with more rounds)")
    parser.add_argument("--page-only", action="store_true",
                        help="only the status page rows")
    parser.add_argument("--hits-only", action="store_true",
                        help="only the all-cache-hit rebuilds, of the one-line book and "
                             "of the code-heavy one (12 nb x 60 lecture-like cells)")
    parser.add_argument("--lectures", type=Path, metavar="FOLDER",
                        help="with --hits-only, also the all-cache-hit rebuilds of a book of "
                             "the MyST notebooks in FOLDER (real lectures; the Python running "
                             "this needs their packages)")
    parser.add_argument("--before", type=Path, metavar="FOLDER",
                        help="also build each cache-hit book with the package of another "
                             "checkout in FOLDER (a git worktree of an earlier commit), in the "
                             "same rounds")
    parser.add_argument("--page-reference", type=Path, metavar="FOLDER",
                        help="compare the status page with the one in FOLDER (written by "
                             "another checkout's bench_status_page.py --cells 100 --write "
                             "FOLDER) instead of the same table with :cells: no")
    parser.add_argument("--claims-only", action="store_true",
                        help="only the cache-hit rebuilds with and without timing claims")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the instructions of the cache-hit rebuilds "
                             "(Valgrind; about 30x slower than a build, steadier than time)")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else DEFAULT
    if args.full:
        sizes = dataclasses.replace(sizes, big_book=500)
    if args.repeats:
        sizes = dataclasses.replace(sizes, repeats=args.repeats)

    compile_extension(args.before)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gpu-bench-") as tmp:
        folder = Path(tmp)
        if args.claims_only:
            rows = claims_rebuilds(folder / "claims", sizes.notebooks, sizes.cells,
                                   max(sizes.repeats, 3 if not args.quick else 1))
            print(machine())
            print(table(rows))
            return 0
        if not (args.page_only or args.hits_only):
            forced, builds = forced_builds(folder / "forced", sizes)
            rows += forced
            rows.append(environment_bytes_per_cell(builds, sizes))
        if not (args.forced_only or args.page_only):
            books = cache_hit_books(folder / "hits", sizes.notebooks, sizes.cells)
            rows += cache_hit_rebuilds(books, max(sizes.repeats, 3 if not args.quick else 1),
                                       args.before)
            rows += claims_rebuilds(folder / "claims", sizes.notebooks, sizes.cells,
                                    max(sizes.repeats, 3 if not args.quick else 1),
                                    filled=books.folder / "with" / "cache")
            if args.instructions:
                rows.append(cache_hit_instructions(books, sizes.repeats))
            if args.hits_only:
                heavy = cache_hit_books(folder / "hits-heavy", *CODE_HEAVY, "code-heavy")
                rows += cache_hit_rebuilds(heavy, max(sizes.repeats, 3 if not args.quick else 1),
                                           args.before)
                if args.lectures:
                    real = lecture_books(folder / "hits-lectures", args.lectures)
                    rows += cache_hit_rebuilds(real, max(sizes.repeats,
                                                         3 if not args.quick else 1),
                                               args.before)
        if not (args.forced_only or args.page_only or args.hits_only):
            for records in (sizes.notebooks, sizes.big_cache):
                rows.append(hit_lookups(folder / f"lookups-{records}", records))
            if sizes.big_book:
                big = cache_hit_books(folder / "hits-big", sizes.big_book, sizes.cells)
                rows += cache_hit_rebuilds(big, sizes.repeats)
        if not (args.forced_only or args.hits_only):
            rows += status_page_rows(folder / "page", sizes, max(sizes.repeats, 1),
                                     args.page_reference)
    print(machine())
    print(table(rows))
    if not (args.forced_only or args.page_only or args.hits_only):
        print(probe_benchmark(args.quick))
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
