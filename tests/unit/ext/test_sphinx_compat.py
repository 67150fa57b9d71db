"""The two readings of Sphinx's private API (``ext/_sphinx.py``), pinned with real
applications on the Sphinx this environment has (the suite runs on Sphinx 7.4, as
jupyter-book 1.0.4 pins it, and on the newest): when one fails, Sphinx changed, and
this is the one file to adapt."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import sphinx
from sphinx.testing.util import SphinxTestApp

from sphinx_gpu_admonition.ext import _sphinx

CONF = ('extensions = ["sphinx_gpu_admonition"]\n'
        'gpu_expected_backend = "cpu"\n')


def app(tmp_path: Path, **options) -> SphinxTestApp:
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(CONF, encoding="utf-8")
    (source / "index.rst").write_text("Title\n=====\n", encoding="utf-8")
    return SphinxTestApp("html", srcdir=source, builddir=tmp_path / "_build",
                         status=io.StringIO(), warning=io.StringIO(), **options)


def test_an_option_the_book_set_is_told_from_a_default(tmp_path) -> None:
    built = app(tmp_path, confoverrides={"gpu_colab_url": "https://colab.example/{path}"})
    try:
        assert _sphinx.user_set(built.config, "gpu_expected_backend")  # conf.py
        assert _sphinx.user_set(built.config, "gpu_colab_url")  # -D
        assert not _sphinx.user_set(built.config, "gpu_cell_badges")  # its default
    finally:
        built.cleanup()


@pytest.mark.parametrize(("options", "fails"), [
    ({}, False),
    ({"warningiserror": True}, True),
    # --keep-going means something on Sphinx 7.4 only (8.1 always goes on)
    ({"warningiserror": True, "keep_going": True}, True),
], ids=["no -W", "-W", "-W --keep-going"])
def test_whether_a_warning_fails_the_build(tmp_path, options, fails) -> None:
    if "keep_going" in options and sphinx.version_info >= (8, 1):
        options = {"warningiserror": True}
    built = app(tmp_path, **options)
    try:
        assert _sphinx.fails_on_warnings(built) is fails
    finally:
        built.cleanup()
