"""Shared fixtures.

Building test projects
    ``tests/roots/<name>/`` holds tiny Sphinx projects.  :func:`build_project`
    copies one to a temporary folder (optionally adding or replacing files) and
    builds it with :func:`sphinx_build`, the one helper that runs Sphinx
    in-process (again on the same folder for incremental builds, ``-j N``,
    ``-W`` or a build that raises); it returns a :class:`ProjectBuild` with the
    app, the output folder and the warnings.  Use the ``build_root`` fixture (one
    build per test) or ``build_root_module`` (builds shared by the tests of a
    module).  Several builds that differ only in configuration can share one
    jupyter-cache (``nb_execution_mode = 'cache'``), so that their notebooks
    execute once (``tests/integration/test_page_info.py``).

Notebook pages
    :data:`MYST_HEADER` (:func:`myst_header` with more metadata) starts a MyST
    Markdown page that MyST-NB executes.

Comparing doctrees
    ``normalise_pseudoxml`` turns a node's pseudo-XML into a form that is stable
    between Sphinx / docutils versions (regression files under tests/regressions/);
    :func:`assert_matches_regression` compares with one (``REGENERATE_REGRESSIONS=1``
    writes them).

Kernels
    Every kernel the suite starts uses the ipc transport (:func:`kernels_on_unix_sockets`,
    ``tests/kernel_transport/``): a subprocess that starts kernels and sets its own
    ``PYTHONPATH`` takes :func:`pythonpath`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import http.server
import io
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

#: this folder (tests/) and the project's root: test modules name files by these, not by
#: their own ``__file__``, which depends on where in tests/ they lie
TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
ROOTS = TESTS / "roots"
REGRESSIONS = TESTS / "regressions"
#: the kernel provisioner that starts the suite's kernels on Unix sockets: its folder,
#: and its name (its entry point there, in sga_test_kernels-0.dist-info)
KERNEL_TRANSPORT = TESTS / "kernel_transport"
KERNEL_PROVISIONER = "sga-ipc-provisioner"

_ANSI = re.compile(r"\x1b\[[0-9;]*m")



def myst_header(metadata: str = "") -> str:
    """The front matter that makes a Markdown page a MyST notebook MyST-NB executes;
    ``metadata``: more YAML lines (``"mystnb:\\n  execution_timeout: 2\\n"``)."""
    return ("---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n"
            f"  name: python3\n  display_name: Python 3\n{metadata}---\n")


MYST_HEADER = myst_header()


@dataclasses.dataclass
class ProjectBuild:
    """The result of building one test project with one builder."""

    app: Any
    srcdir: Path
    outdir: Path
    warnings: str
    status: str
    #: what the build raised, with ``sphinx_build(..., raising=False)``
    raised: BaseException | None = None

    @property
    def warning_lines(self) -> list[str]:
        return [line for line in self.warnings.splitlines() if line.strip()]

    def read(self, relative: str) -> str:
        return (self.outdir / relative).read_text(encoding="utf-8")


def build_project(
    root: str,
    dest: Path,
    builder: str = "html",
    confoverrides: dict[str, Any] | None = None,
    files: dict[str, str] | None = None,
    conf_append: str = "",
) -> ProjectBuild:
    """Copy ``tests/roots/<root>`` to ``dest/src`` and build it.

    ``files`` adds or replaces source files; ``conf_append`` is Python appended
    to ``conf.py`` (for values ``confoverrides`` cannot express, e.g. lists).
    """
    srcdir = dest / "src"
    shutil.copytree(ROOTS / root, srcdir)
    for name, text in (files or {}).items():
        (srcdir / name).parent.mkdir(parents=True, exist_ok=True)
        (srcdir / name).write_text(text, encoding="utf-8")
    if conf_append:
        conf = srcdir / "conf.py"
        conf.write_text(conf.read_text(encoding="utf-8") + "\n" + conf_append + "\n",
                        encoding="utf-8")
    return sphinx_build(srcdir, dest / "_build", builder, confoverrides, freshenv=True,
                        show_warning_types=False)


def pytest_configure(config: pytest.Config) -> None:
    kernels_on_unix_sockets()


def kernels_on_unix_sockets() -> None:
    """Every kernel the suite starts, in this process or in the builds, servers and
    commands it runs, uses the ipc transport: a kernel on TCP ports can lose them to
    another process between jupyter_client choosing them and the kernel binding them
    (``tests/kernel_transport/sga_test_kernels.py``)."""
    if str(KERNEL_TRANSPORT) not in sys.path:
        sys.path.insert(0, str(KERNEL_TRANSPORT))
    os.environ["PYTHONPATH"] = pythonpath()
    os.environ["JUPYTER_DEFAULT_PROVISIONER_NAME"] = KERNEL_PROVISIONER


def pythonpath(*first: str | Path) -> str:
    """A ``PYTHONPATH`` for a subprocess: ``first``, then the kernel provisioner's folder
    (a process that starts kernels must find it), then this process's ``PYTHONPATH``."""
    folders = [str(folder) for folder in first] + [str(KERNEL_TRANSPORT)]
    folders += os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return os.pathsep.join(dict.fromkeys(folder for folder in folders if folder))


@pytest.fixture(scope="session", autouse=True)
def _outside_github_actions() -> Any:
    """The suite's builds never write annotations or summaries into the GitHub Actions
    run that tests them (tests that want GitHub output set the variables themselves),
    and are not CI builds (``CI``: ``build.ci``, the compilation-cache finding) unless a
    test says so: the suite behaves the same on a laptop and in CI."""
    patch = pytest.MonkeyPatch()
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_WORKSPACE",
                 "CI"):
        patch.delenv(name, raising=False)
    yield
    patch.undo()


@pytest.fixture
def build_root(tmp_path: Path) -> Callable[..., ProjectBuild]:
    """``build_root(root, builder="html", confoverrides=None, files=None, conf_append="")``."""
    count = 0

    def build(root: str, builder: str = "html", **kwargs: Any) -> ProjectBuild:
        nonlocal count
        count += 1
        return build_project(root, tmp_path / f"{root}-{builder}-{count}", builder, **kwargs)

    return build


@pytest.fixture(scope="module")
def build_root_module(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., ProjectBuild]:
    """Like ``build_root``; the same arguments give the same (cached) build in a module."""
    cache: dict[str, ProjectBuild] = {}

    def build(root: str, builder: str = "html", **kwargs: Any) -> ProjectBuild:
        key = repr((root, builder, sorted(kwargs.items(), key=lambda kv: kv[0])))
        if key not in cache:
            dest = tmp_path_factory.mktemp(f"{root}-{builder}")
            cache[key] = build_project(root, dest, builder, **kwargs)
        return cache[key]

    return build


def _normalise_pseudoxml(text: str) -> str:
    """Pseudo-XML without version noise: sorted attributes, no source paths."""
    lines = []
    for line in text.splitlines():
        match = re.match(r"^(\s*)<(\S+)(.*?)(/?)>$", line)
        if match:
            indent, tag, attrs, close = match.groups()
            pairs = re.findall(r'(\S+?)="(.*?)"', attrs)
            pairs = [(k, v) for k, v in pairs if k not in {"source", "line"}]
            attrs = "".join(f' {k}="{v}"' for k, v in sorted(pairs))
            line = f"{indent}<{tag}{attrs}{close}>"
        lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"


@pytest.fixture
def normalise_pseudoxml() -> Callable[[str], str]:
    return _normalise_pseudoxml


@pytest.fixture
def language() -> Iterator[Callable[[str | None], None]]:
    """Switch the extension's catalog to a language for in-process wording tests
    (``language("zh_CN")``; tests/unit/ext/test_runtime.py and
    tests/integration/test_runtime.py)."""
    import sphinx.locale
    from sphinx.locale import translators

    from sphinx_gpu_admonition.ext import i18n

    def use(name: str | None) -> None:
        translators.pop(("general", i18n.CATALOG), None)
        sphinx.locale.init([str(i18n.LOCALE_DIR)], name, i18n.CATALOG)

    use(None)
    yield use
    translators.pop(("general", i18n.CATALOG), None)


#: ``REGENERATE_REGRESSIONS=1 pytest ...`` writes the regression files anew
REGENERATE = "REGENERATE_REGRESSIONS"


def assert_matches_regression(actual: str, path: Path) -> None:
    """``actual`` equals the regression file ``path``.  A missing file fails (a test
    that writes its own expectation would pass on anything); with
    ``REGENERATE_REGRESSIONS=1`` the file is written and the test skips, to be
    reviewed in the diff."""
    if os.environ.get(REGENERATE):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        pytest.skip(f"{REGENERATE}: wrote {path.name}")
    if not path.is_file():
        pytest.fail(f"no regression file {path}: run with {REGENERATE}=1 to write it, "
                    "then review and commit it", pytrace=False)
    assert actual == path.read_text(encoding="utf-8")


# -- status page books (tests/integration/: test_status_page.py, test_environment_table.py,
#    test_browser.py) -----------------------------------------------------------------------
#
# The root ``status`` is executed once per test session (real kernels, real JAX)
# and then rendered with the html (sphinx-book-theme), text and latex builders from
# the same doctrees; the tests of three modules read the outputs.

#: A previous build on a GPU runner, written by hand as a baseline: "slow" was much
#: faster, "fast" much slower, "retired" is gone, the other notebooks are new.
GPU_ENVIRONMENT = {
    "host": {"cpu": "Intel(R) Xeon(R) CPU @ 2.20GHz", "cores": 4, "memory_gb": 15.6,
             "os": "Linux 6.1.0", "machine": "x86_64"},
    "python": "3.12.3",
    "jax": {"backend": "gpu", "version": "0.4.35", "jaxlib_version": "0.4.35",
            "plugins": {"jax-cuda12-plugin": "0.4.35"},
            "devices": [{"platform": "gpu", "kind": "Tesla T4", "count": 1}]},
    "gpus": [{"name": "Tesla T4", "memory_mb": 15360.0, "driver": "535.104.05",
              "cuda": "12.2", "source": "nvml"}],
    "libraries": {"numpy": "2.1.3", "jax": "0.4.35", "jaxlib": "0.4.35"},
}


def _baseline_notebook(docname: str, title: str, runtime: float,
                       cells: list[tuple[int, float, str]]) -> dict[str, Any]:
    return {
        "docname": docname, "status": "ok", "title": title, "provenance": "executed",
        "method": "cache", "executed_at": "2026-01-05T03:00:00+00:00",
        # a copy: tests mutate these documents (bad values), never the shared constant
        "runtime_seconds": runtime, "error": None, "environment": copy.deepcopy(GPU_ENVIRONMENT),
        "cells": [{"index": index, "execution_count": n + 1, "seconds": seconds,
                   "first_line": line} for n, (index, seconds, line) in enumerate(cells)],
        "capture": "ok",
    }


def gpu_baseline() -> dict[str, Any]:
    """An execution-status document recorded (by hand) on a Tesla T4 runner."""
    from sphinx_gpu_admonition.model.record import SCHEMA_ID, SCHEMA_VERSION

    return {
        "schema": SCHEMA_ID, "schema_version": SCHEMA_VERSION,
        "build": {"finished_at": "2026-01-05T03:10:00+00:00"},
        "notebooks": [
            _baseline_notebook("slow", "Slow notebook", 0.05, [
                (1, 0.001, "import time"), (3, 0.01, "time.sleep(0.01)"),
                (4, 0.001, 'print("done")'), (9, 0.02, "removed_cell()")]),
            _baseline_notebook("fast", "Fast notebook", 100.0, [
                (1, 40.0, "x = 6 * 7"), (2, 40.0, "print(x)")]),
            _baseline_notebook("retired", "Retired notebook", 3.0, [(1, 2.0, "old()")]),
        ],
        "analysis": {},
    }


@dataclasses.dataclass
class StatusBook:
    """The ``status`` root built once: html (sphinx-book-theme), text and latex."""

    srcdir: Path
    builddir: Path
    html: ProjectBuild
    text: ProjectBuild
    latex: ProjectBuild


def sphinx_build(srcdir: Path, builddir: Path, builder: str = "html",
                 confoverrides: dict[str, Any] | None = None, freshenv: bool = False, *,
                 parallel: int = 0, warningiserror: bool = False,
                 show_warning_types: bool = True, raising: bool = True) -> ProjectBuild:
    """Build ``srcdir`` in place (doctrees shared by builders, incremental by default):
    the one way the tests run Sphinx in-process.

    ``show_warning_types``: "[type.subtype]" in warnings on Sphinx 7.4 too (the
    default from Sphinx 8); ``raising=False``: what the build raised is kept in
    :attr:`ProjectBuild.raised` instead of raised.
    """
    import gc
    import warnings

    from sphinx.testing.util import SphinxTestApp

    status, warning = io.StringIO(), io.StringIO()
    raised = None
    collector_on = gc.isenabled()
    with warnings.catch_warnings():
        # sphinx-book-theme still calls importlib.resources.contents() and
        # Node.traverse(); not ours to fix
        warnings.filterwarnings("ignore", message="contents is deprecated",
                                category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=r"nodes\.Node\.traverse\(\) is obsoleted")
        overrides = dict(confoverrides or {})
        if show_warning_types:
            overrides = {"show_warning_types": True, **overrides}
        app = SphinxTestApp(builder, srcdir=srcdir, builddir=builddir, freshenv=freshenv,
                            confoverrides=overrides, status=status, warning=warning,
                            parallel=parallel, warningiserror=warningiserror)
        try:
            app.build()
        except SystemExit as exit_:
            # sphinx-tojupyter's builder calls exit(status) at the end of finish();
            # its output is written by then.  Only a failure status is an error.
            if exit_.code not in (0, None):
                if raising:
                    raise
                raised = exit_
        except BaseException as error:
            if raising:
                raise
            raised = error
        finally:
            app.cleanup()
    # the extension pauses the collector for its bursts of work (model/gc_pauses.py);
    # a build, even one that failed, leaves the user's process as it found it
    assert gc.isenabled() == collector_on, "the build left the garbage collector switched"
    return ProjectBuild(app=app, srcdir=srcdir, outdir=Path(app.outdir),
                        warnings=_ANSI.sub("", warning.getvalue()),
                        status=_ANSI.sub("", status.getvalue()), raised=raised)


STATUS_BOOK_CONFIG = {
    "html_theme": "sphinx_book_theme",
    "gpu_status_baseline": "baseline.json",
    "gpu_cell_badges": True,
    "gpu_warn_slow_cells": True,
    "gpu_warn_regressions": True,
}


@pytest.fixture(scope="session")
def status_book(tmp_path_factory: pytest.TempPathFactory) -> StatusBook:
    import json

    dest = tmp_path_factory.mktemp("status-book")
    srcdir = dest / "src"
    shutil.copytree(ROOTS / "status", srcdir)
    (srcdir / "baseline.json").write_text(json.dumps(gpu_baseline()), encoding="utf-8")
    builddir = dest / "_build"
    html = sphinx_build(srcdir, builddir, "html", STATUS_BOOK_CONFIG, freshenv=True)
    text = sphinx_build(srcdir, builddir, "text", STATUS_BOOK_CONFIG)
    latex = sphinx_build(srcdir, builddir, "latex", STATUS_BOOK_CONFIG)
    return StatusBook(srcdir, builddir, html, text, latex)


# -- the QuantEcon-style book (tests/integration/: test_migrate.py, test_public_pages.py) ---


@dataclasses.dataclass
class QuantEconBook:
    """tests/roots/quantecon migrated by the real command, built on this machine's CPU
    with ``gpu_expected_backend: cpu`` (see tests/quantecon_book.py); ``cache`` is its
    jupyter-cache, so further builds of ``book`` reuse the executions."""

    book: Path
    cache: Path
    html: ProjectBuild


@pytest.fixture(scope="session")
def quantecon_book(tmp_path_factory: pytest.TempPathFactory) -> QuantEconBook:
    import quantecon_book as helpers

    dest = tmp_path_factory.mktemp("quantecon")
    book = helpers.migrated_copy(dest / "copy")
    cache = dest / "cache"
    html = helpers.build(book, dest / "cpu", cache, gpu_expected_backend="cpu")
    return QuantEconBook(book, cache, html)


# -- the browser tests (tests/integration/: test_browser.py, test_public_pages.py) ---------
CHROMIUM = "/usr/bin/chromium"  # Debian's; Playwright's own download does not work here
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """A built site over http://127.0.0.1 (the status page fetches its cell data,
    which a file:// page cannot)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through Playwright (skipped where either is missing)."""
    playwright_sync = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with playwright_sync.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()



# -- unit and integration tests ----------------------------------------------------------
#: where a test lies says what it is (README, "Tests"); no test lies at the top of tests/
UNIT = TESTS / "unit"
INTEGRATION = TESTS / "integration"
#: the Sphinx adapter's unit tests, the ones under tests/unit/ that import Sphinx or docutils
UNIT_SPHINX_ADAPTER = UNIT / "ext"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test by where it lies: under tests/unit/ ``unit`` (pytest -m unit, or
    pytest tests/unit, runs in seconds), and ``sphinx_free`` too outside tests/unit/ext/
    (the same on every Sphinx version: scripts/test runs those with the newest Sphinx
    only); under tests/integration/ ``integration``.

    Here, by path, and not by a conftest.py in each folder: tests/ is no package, so those
    would be top-level modules named ``conftest`` too, and pytest drops ``conftest`` from
    sys.modules when it imports another one, which breaks the test modules'
    ``from conftest import ...``.
    """
    for item in items:
        path = Path(item.path).resolve()
        if path.is_relative_to(UNIT):
            item.add_marker(pytest.mark.unit)
            if not path.is_relative_to(UNIT_SPHINX_ADAPTER):
                item.add_marker(pytest.mark.sphinx_free)
        elif path.is_relative_to(INTEGRATION):
            item.add_marker(pytest.mark.integration)
