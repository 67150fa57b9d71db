"""Building a MyST book with mystmd (from .mystmd/, skipped where it is not installed) and
reading its pages' mdast: the mystmd adapter's root (ROOT), myst_build, requires_mystmd,
walk, text_of and status_table; and what the plugin reads, made by hand for its in-process
tests: a page's mdast (page_tree, code_block), a kernel's capture file (write_kernel) and
myst.yml's settings (write_settings).  Used by the mystmd adapter's tests (unit and
integration), the claims books' and the parity book's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import pythonpath

from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli
from sphinx_gpu_admonition.mystmd import capture

PROJECT = Path(__file__).resolve().parents[1]
ROOT = Path(__file__).parent / "roots" / "mystmd"
MYST = PROJECT / ".mystmd" / "node_modules" / ".bin" / "myst"


def walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children") or []:
        yield from walk(child)


def text_of(node: dict[str, Any]) -> str:
    return "".join(n.get("value", "") for n in walk(node) if n.get("type") in ("text",
                                                                                 "inlineCode"))


# -- a real mystmd build ----------------------------------------------------------------
def servers_of(book: Path) -> list[int]:
    """The Jupyter servers mystmd started for ``book`` (it leaves them running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"jupyter_server" in args and str(book).encode() in args \
                and _running(int(entry.name)):
            found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited (its parent, mystmd, is gone)


def stop_servers(book: Path) -> None:
    """Stop the servers mystmd left running for ``book``: SIGTERM (the server shuts its
    kernels down), then SIGKILL after 20 s."""
    pids = servers_of(book)
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


def myst_build(book: Path, *options: str, user_startup: str | None = None,
               command: tuple[str, ...] = (str(MYST), "build")
               ) -> subprocess.CompletedProcess[str]:
    config = book / "jupyter-config"
    config.mkdir(exist_ok=True)
    # mystmd starts `jupyter server`, which refuses to run as root without this
    (config / "jupyter_server_config.py").write_text("c.ServerApp.allow_root = True\n")
    # the kernels' provisioner too (conftest.pythonpath): the server starts them
    environment = {**os.environ, "PYTHONPATH": pythonpath(PROJECT),
                   "JUPYTER_CONFIG_DIR": str(config),
                   # mystmd runs `python -m jupyter_server` and the plugin's `python3`
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    if user_startup:
        environment["PYTHONSTARTUP"] = user_startup
    for line in mystmd_cli.env_lines(book, environment):  # what the docs tell CI to export
        name, _, value = line.removeprefix("export ").partition("=")
        environment[name] = value.strip("'")
    if not (book / mystmd_cli.MJS_FILE).exists():  # init, as the docs say (this Python)
        mystmd_cli.write_plugin(book)
    try:
        return subprocess.run([*command, "--execute", "--site", *options], cwd=book,
                              env=environment, capture_output=True, text=True, timeout=300,
                              check=False)
    finally:
        stop_servers(book)


def requires_mystmd() -> None:
    if not MYST.exists():
        pytest.skip("mystmd is not installed in .mystmd/ (scripts/test installs it with npm)")
    pytest.importorskip("jupyter_server", reason="myst build --execute needs jupyter_server")


def status_table(page: dict[str, Any], css: str = "gpu-status-table") -> list[list[str]]:
    table = next(n for n in walk(page) if n.get("type") == "table"
                 and css in n.get("class", "").split())
    return [[text_of(cell) for cell in row["children"]] for row in table["children"]]


# -- the capture's reading, without mystmd ----------------------------------------------
def code_block(code: str, tags: list[str] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "block", "kind": "notebook-code", "children": [
        {"type": "code", "executable": True, "value": code}, {"type": "outputs", "children": []}]}
    if tags:
        block["data"] = {"tags": tags}
    return block


def page_tree(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "root", "children": [{"type": "block", "children": [
        {"type": "paragraph", "children": [{"type": "text", "value": "intro"}]}]}, *blocks]}


def write_kernel(folder: Path, page: Path, cells: list[dict[str, Any]],
                 backend: str | None = "cpu") -> Path:
    from sphinx_gpu_admonition.probe import protocol

    path = folder / capture.KERNELS_FOLDER / capture.page_file_name(str(page))
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"kind": capture.KIND_PAGE, "page": str(page), "pid": 7},
             {"kind": "start", "probe_version": protocol.PROBE_VERSION, "pid": 7,
              "time": 1_780_000_000.0, "python": "3.11.7", "gpus": [],
              "host": {"cpu": "Test CPU", "cores": 2}}]
    if backend:
        lines.append({"kind": "jax", "pid": 7, "jax": {"backend": backend, "version": "0.10.2",
                      "devices": [{"platform": backend, "kind": "Test device"}]}})
    lines += [{"kind": "cell", "pid": 7, "execution_count": n, **cell}
              for n, cell in enumerate(cells, 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# -- settings: project: options: gpu_admonition: in myst.yml ---------------------------------
def write_settings(folder: Path, text: str) -> None:
    (folder / "myst.yml").write_text("version: 1\nproject:\n  title: T\n  options:\n"
                                     "    gpu_admonition:\n" + text)
