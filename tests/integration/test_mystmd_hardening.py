"""mystmd, hardened as the Sphinx build is (issue 33, items 1 and 7), in real builds:
files the plugin cannot write (a full disk, a folder where its file goes, a file where
its folder goes) are warnings and the build goes on, failing only with ``--strict``;
and what a notebook puts in its names, lines and exceptions becomes no workflow command
in the plugin's warnings or its JUnit file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest
from mystmd_builds import ROOT, myst_build, requires_mystmd
from runner_commands import forged_commands

HEADER = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"
HOSTILE = (HEADER + "# Hostile \u202eTITLE ##[error]T\n\n"
           "```{code-cell} python\nx = 1  # ##[add-mask]secret \u2066iso\u2069\n```\n\n"
           "```{code-cell} python\nraise type(\"E##[error]X\", (Exception,), {})("
           "\"##[stop-commands]tok \u202egnp.live\")\n```\n")
PLAIN = HEADER + "# Plain\n\n```{code-cell} python\ny = 2\n```\n"
CONFIG = """version: 1
project:
  title: Hardened
  plugins:
    - gpu_admonition.mjs
  toc:
    - file: index.md
    - file: plain.md
    - file: hostile.md
    - file: status.md
site:
  template: ./template
"""


class Builds(NamedTuple):
    book: Path
    first: subprocess.CompletedProcess[str]
    strict: subprocess.CompletedProcess[str]
    junit: str


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Builds:
    """A book whose status file's place is taken by a folder and whose capture folder's
    ``sidecars`` is a file, built, then built again with ``--strict``."""
    requires_mystmd()
    book = tmp_path_factory.mktemp("mystmd-writes") / "book"
    book.mkdir()
    shutil.copytree(ROOT / "template", book / "template")
    for name, text in {"myst.yml": CONFIG, "index.md": "# Hardened\n\nA book.\n",
                       "plain.md": PLAIN, "hostile.md": HOSTILE,
                       "status.md": "# Status\n\n```{execution-status}\n```\n"}.items():
        (book / name).write_text(text, encoding="utf-8")
    (book / "_build" / "execution-status.json").mkdir(parents=True)  # a folder: no file
    capture = book / "_build" / "sphinx-gpu-admonition"
    capture.mkdir()
    (capture / "sidecars").write_text("not a folder\n", encoding="utf-8")  # not a folder
    first = myst_build(book)
    junit = book / "_build" / "execution-status.junit.xml"
    text = junit.read_text(encoding="utf-8") if junit.is_file() else ""
    strict = myst_build(book, "--strict")
    return Builds(book, first, strict, text)


@pytest.mark.mystmd
def test_files_that_cannot_be_written_are_warnings_and_the_build_goes_on(builds) -> None:
    log = builds.first.stdout + builds.first.stderr
    assert builds.first.returncode == 0, log
    # the cell's own traceback is mystmd's output; none comes from the plugin
    assert "sphinx_gpu_admonition/" not in log
    assert (builds.book / "_build" / "execution-status.json").is_dir()  # left as it was
    assert builds.junit.startswith("<?xml")  # the file that could be written was
    # the strict build fails on the warning, with one line and no traceback
    strict = builds.strict.stdout + builds.strict.stderr
    assert builds.strict.returncode != 0
    assert "sphinx_gpu_admonition/" not in strict
    said = [line for line in strict.splitlines() if "sphinx-gpu-admonition [output]: could "
            "not write" in line]
    assert said and all("_build/sphinx-gpu-admonition/sidecars/" in line
                        or "_build/execution-status.json" in line for line in said), said


@pytest.mark.mystmd
def test_a_notebooks_commands_reach_no_output_of_the_plugin(builds) -> None:
    """The hostile page's exception class ``E##[error]X``, its first line and its
    title: in the JUnit file and the plugin's lines of the build's log, no command (the
    cell's traceback, which mystmd prints itself, is mystmd's)."""
    assert "E%23#[error]X" in builds.junit and forged_commands(builds.junit) == []
    for completed in (builds.first, builds.strict):
        ours = [line for line in (completed.stdout + completed.stderr).splitlines()
                if "sphinx-gpu-admonition:" in line]
        assert forged_commands("\n".join(ours)) == [], ours
