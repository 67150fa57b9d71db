"""How public files and the command line name paths (issue 26, item 9): relative to
the repository or the book, never by the build machine's absolute path."""

from __future__ import annotations

from pathlib import Path

import pytest

from sphinx_gpu_admonition.model.files import public_path, repository_path
from sphinx_gpu_admonition.render.summary import shown_path


@pytest.fixture
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    source = tmp_path / "repo" / "lectures" / "intro.md"
    source.parent.mkdir(parents=True)
    source.write_text("# Intro\n")
    (tmp_path / "elsewhere").mkdir()
    return source.parent


def test_a_source_inside_the_repository_is_relative_to_it(book, monkeypatch):
    monkeypatch.chdir(book.parent)
    assert repository_path(book / "intro.md", book) == "lectures/intro.md"
    monkeypatch.setenv("GITHUB_WORKSPACE", str(book.parent))
    monkeypatch.chdir(book.parent.parent / "elsewhere")
    assert repository_path(book / "intro.md", book) == "lectures/intro.md"


def test_a_source_outside_the_repository_is_relative_to_the_book(book, monkeypatch):
    # sphinx-build /abs/repo/lectures /abs/out, run from another folder
    monkeypatch.chdir(book.parent.parent / "elsewhere")
    assert repository_path(book / "intro.md", book) == "intro.md"
    nested = book / "part" / "a.md"
    assert repository_path(nested, book) == "part/a.md"
    # a build output (the step outputs a later step reads) stays absolute
    assert repository_path(book / "out.json") == (book / "out.json").resolve().as_posix()


def test_the_command_line_shows_a_path_inside_the_current_folder_relative_to_it(book):
    status = book / "_build" / "html" / "execution-status.json"
    assert shown_path(str(status), cwd=str(book)) == "_build/html/execution-status.json"
    assert shown_path("_build/html", cwd=str(book)) == "_build/html"
    assert shown_path(str(book), cwd=str(book)) == "."


def test_the_command_line_shows_only_the_name_of_a_path_elsewhere(book):
    elsewhere = str(book.parent.parent / "elsewhere")
    status = book / "_build" / "html" / "execution-status.json"
    assert shown_path(str(status), cwd=elsewhere) == "execution-status.json"
    assert shown_path("../repo/lectures/intro.md", cwd=elsewhere) == "intro.md"


def test_the_kernels_python_is_named_without_the_machines_folders(tmp_path, monkeypatch):
    # the package list names the kernel's Python, as ``!conda list`` names its environment
    workspace, home = tmp_path / "workspace", tmp_path / "home" / "runner"
    workspace.mkdir()
    home.mkdir(parents=True)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    monkeypatch.setenv("HOME", str(home))
    assert public_path(str(workspace / ".venv" / "bin" / "python")) == ".venv/bin/python"
    assert public_path(str(home / "miniconda3" / "bin" / "python")) == \
        "~/miniconda3/bin/python"
    # a shared place says where the environment is, and names nobody
    assert public_path("/opt/conda/envs/lectures/bin/python") == \
        "/opt/conda/envs/lectures/bin/python"
