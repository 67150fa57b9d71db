"""The jupyter-book 1.x path: `_config.yml` with `sphinx: extra_extensions:`.

Runs the real `jupyter-book build` command line; skipped where jupyter-book is
not installed (scripts/test runs it in the jupyter-book 1.0.4 environment).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import TESTS

pytest.importorskip("jupyter_book")

ROOT = TESTS / "roots" / "jupyter_book"
BOOK_TITLE = "Tiny lecture book"  # _config.yml's title


def jb_build(book: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(book), "-n", "-W",
               "--keep-going"]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.jupyter_book
def test_jupyter_book_build_with_cache_then_reuse(tmp_path: Path) -> None:
    book = tmp_path / "book"
    shutil.copytree(ROOT, book)
    first = jb_build(book)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    html = book / "_build" / "html"
    page = BeautifulSoup((html / "lecture.html").read_text(encoding="utf-8"), "html.parser")
    admonition = page.select_one(".gpu-admonition")
    assert admonition.select_one(".admonition-title").get_text() == "GPU"
    assert "executed on CPU" in admonition.get_text()
    assert page.select_one("details.gpu-execution-info") is not None
    status = json.loads((html / "execution-status.json").read_text(encoding="utf-8"))
    (lecture,) = status["notebooks"]
    assert lecture["provenance"] == "executed"
    assert lecture["environment"]["jax"]["backend"] == "cpu"
    # Jupyter Book sets html_title from _config.yml's title, not Sphinx's project
    assert status["build"]["project"] == BOOK_TITLE
    assert "execution: 1 notebooks" in first.stdout

    # the weekly-cache workflow: a clean build reusing the jupyter-cache
    shutil.rmtree(html)
    shutil.rmtree(book / "_build" / ".doctrees")
    second = jb_build(book)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    reused = json.loads((html / "execution-status.json").read_text(encoding="utf-8"))
    assert reused["notebooks"][0]["provenance"] == "cache"
    assert reused["notebooks"][0]["cells"] == lecture["cells"]
