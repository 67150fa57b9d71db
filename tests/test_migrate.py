"""``sphinx-gpu-admonition migrate BOOK`` on a QuantEcon-style book, and the book after it.

The rewriting rules are tested as pure functions; the command runs on copies of
tests/roots/quantecon; the migrated book (``quantecon_book`` in conftest, built
once per session on this machine's CPU) builds warning-free with
``gpu_expected_backend: cpu`` and, with the default settings, warns only that
the GPU lecture ran without a GPU (so ``-W`` fails there, by design).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import ROOTS, QuantEconBook

from sphinx_gpu_admonition.cli import main
from sphinx_gpu_admonition.cli.migrate_rules import add_extension, rewrite_source

QUANTECON = ROOTS / "quantecon"


def rewrite(text: str, name: str = "lecture.md", book: Path = Path("/nonexistent")) -> str:
    return rewrite_source(text, book, book / name)[0]


# -- the rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(("before", "after"), [
    ("# L\n\n```{include} _admonition/gpu.md\n```\n\ntext\n", "# L\n\n```{gpu}\n```\n\ntext\n"),
    # any relative path, options of the include dropped, longer fences and tildes kept
    ("````{include} ../_admonition/gpu.md\n:start-line: 2\n````\n", "````{gpu}\n````\n"),
    ("~~~{include} ./_admonition/gpu.md\n~~~\n", "~~~{gpu}\n~~~\n"),
    ("```{nb-exec-table}\n:class: big\n```\n", "```{execution-status}\n:class: big\n```\n"),
    # other includes, and an unclosed fence, stay as they are
    ("```{include} _admonition/other.md\n```\n", "```{include} _admonition/other.md\n```\n"),
    ("```{include} _admonition/gpu.md\n", "```{include} _admonition/gpu.md\n"),
])
def test_myst_rules(before, after):
    assert rewrite(before) == after


def test_rst_rules():
    before = ("Title\n=====\n\n.. include:: ../_admonition/gpu.md\n   :parser: myst_parser.sphinx_"
              "\n\nText.\n\n.. nb-exec-table::\n")
    assert rewrite(before, "lecture.rst") == (
        "Title\n=====\n\n.. gpu::\n\nText.\n\n.. execution-status::\n")


def test_a_notice_that_needs_a_gpu_becomes_required(tmp_path):
    (tmp_path / "_admonition").mkdir()
    (tmp_path / "_admonition" / "gpu.md").write_text(
        "This lecture was built using a machine with access to a GPU and needs one.\n")
    text, changes = rewrite_source("```{include} _admonition/gpu.md\n```\n", tmp_path,
                                   tmp_path / "lecture.md")
    assert text == "```{gpu}\n:required:\n```\n"
    assert changes == ["line 1: {include} _admonition/gpu.md -> {gpu} (:required:)"]


CONFIG_WITH_LIST = """\
title: Lectures
sphinx:
  extra_extensions:
    # keep this comment
    - sphinx_exercise
    - sphinx_togglebutton
  config:
    html_theme: quantecon_book_theme
"""


@pytest.mark.parametrize(("before", "expected_tail"), [
    (CONFIG_WITH_LIST, "    - sphinx_togglebutton\n    - sphinx_gpu_admonition\n  config:\n"),
    ("title: L\nsphinx:\n  config:\n    x: 1\n",
     "sphinx:\n  extra_extensions:\n    - sphinx_gpu_admonition\n  config:\n"),
    ("title: L  # no sphinx key\n",
     "sphinx:\n  extra_extensions:\n    - sphinx_gpu_admonition\n"),
])
def test_config_text_edit_keeps_comments(before, expected_tail):
    after = add_extension(before)
    assert expected_tail in after
    assert [line for line in before.splitlines() if "#" in line] == [
        line for line in after.splitlines() if "#" in line]
    assert "sphinx_gpu_admonition" in yaml.safe_load(after)["sphinx"]["extra_extensions"]


def test_config_it_cannot_edit_is_left_with_a_note(tmp_path, capsys):
    book = tmp_path / "book"
    book.mkdir()
    flow = "sphinx:\n  extra_extensions: [sphinx_exercise]\n"
    (book / "_config.yml").write_text(flow)
    assert main(["migrate", str(book)]) == 0
    assert (book / "_config.yml").read_text() == flow
    out = capsys.readouterr().out
    assert "to do by hand: _config.yml: add 'sphinx_gpu_admonition'" in out


# -- the command on a copy of the book ---------------------------------------------------


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def copy(tmp_path) -> Path:
    """The root with an old build and a file outside the book that include the notice."""
    root = tmp_path / "repo"
    shutil.copytree(QUANTECON, root)
    include = "```{include} _admonition/gpu.md\n```\n"
    (root / "lectures" / "_build" / "html").mkdir(parents=True)
    (root / "lectures" / "_build" / "html" / "old.md").write_text(include)
    (root / "other.md").write_text(include)
    (root / "lectures" / "linked.md").symlink_to(root / "other.md")
    (root / "lectures" / "autodiff.ipynb").write_text(
        '{"cells": [{"cell_type": "markdown", "source": ["```{include} _admonition/gpu.md\\n",'
        ' "```"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    return root


def test_dry_run_prints_diffs_and_changes_nothing(copy, capsys):
    before = digests(copy)
    assert main(["migrate", "--dry-run", str(copy / "lectures")]) == 0
    out = capsys.readouterr().out
    assert digests(copy) == before
    assert "--- a/jax_intro.md\n+++ b/jax_intro.md\n" in out
    assert "-```{include} _admonition/gpu.md\n+```{gpu}\n" in out
    assert "-```{nb-exec-table}\n+```{execution-status}\n" in out
    assert "+    - sphinx_gpu_admonition\n" in out
    assert "would change jax_intro.md:\n  line 16: {include} _admonition/gpu.md -> {gpu}" in out


def test_migrate_reports_per_file_and_touches_only_the_book(copy, capsys):
    before = digests(copy)
    assert main(["migrate", str(copy / "lectures")]) == 0
    out = capsys.readouterr().out
    changed = {name for name, digest in digests(copy).items() if before[name] != digest}
    assert changed == {"lectures/jax_intro.md", "lectures/status.md", "lectures/_config.yml"}
    assert "changed jax_intro.md:" in out and "changed status.md:" in out
    assert "changed _config.yml:\n  added sphinx_gpu_admonition" in out
    # QuantEcon's status page has front matter but no code: the report says what to do
    assert "status.md has no code cells: remove its jupytext / kernelspec front matter" in out
    # notebooks are JSON: named, never rewritten
    assert "to do by hand: autodiff.ipynb: a notebook that includes _admonition/gpu.md" in out
    # a second run finds nothing left to do
    assert main(["migrate", str(copy / "lectures")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "nothing to change"


def test_a_book_that_is_not_a_folder_is_a_usage_error(tmp_path, capsys):
    from sphinx_gpu_admonition.cli.output import EXIT_USAGE

    assert main(["migrate", str(tmp_path / "missing")]) == EXIT_USAGE
    assert "not a folder" in capsys.readouterr().err


# -- the migrated book builds --------------------------------------------------------------


def test_migrated_book_builds_warning_free_with_a_cpu_expectation(quantecon_book: QuantEconBook):
    assert quantecon_book.html.warning_lines == [], quantecon_book.html.warnings
    page = BeautifulSoup(quantecon_book.html.read("jax_intro.html"), "html.parser")
    (notice,) = page.select("div.gpu-admonition")
    text = " ".join(notice.get_text(" ").split())
    assert text.startswith("GPU This lecture was written for a GPU")
    # sphinx-book-theme shows the Colab launch button: its steps, and the direct link
    assert 'Click on the "launch" icon (a rocket) top right' in text.replace("“", '"').replace(
        "”", '"')
    link = notice.select_one("a.gpu-colab-link")
    assert link["href"] == ("https://colab.research.google.com/github/QuantEcon/"
                            "lecture-tiny.notebooks/blob/main/jax_intro.ipynb")
    # the lecture without {gpu} has no notice; the status page lists only notebooks
    numpy_page = BeautifulSoup(quantecon_book.html.read("numpy_intro.html"), "html.parser")
    assert numpy_page.select("div.gpu-admonition") == []
    status = BeautifulSoup(quantecon_book.html.read("status.html"), "html.parser")
    names = [n.get_text(strip=True) for n in status.select(".gpu-status-docname")]
    assert sorted(names) == ["jax_intro", "numpy_intro"]
    # the !conda list replacement: every installed distribution, collapsed
    (packages,) = status.select("details.gpu-environment-packages")
    assert packages.get("open") is None
    installed = {tr.td.get_text(): tr.select("td")[1].get_text() for tr in packages.select("tr")}
    import jax
    import sphinx

    assert installed["jax"] == jax.__version__ and installed["Sphinx"] == sphinx.__version__
    assert f"({len(installed)})" in packages.summary.get_text()


def test_default_settings_warn_only_that_the_gpu_lecture_ran_without_a_gpu(
        quantecon_book: QuantEconBook, tmp_path):
    import quantecon_book as helpers

    build = helpers.build(quantecon_book.book, tmp_path, quantecon_book.cache)
    (warning,) = build.warning_lines
    assert "jax_intro.md:16:" in warning and "[gpu_admonition.backend]" in warning
    assert "'cpu' backend" in warning and "gpu_expected_backend is 'gpu'" in warning
    # -W therefore fails the default build; silencing the documented subtype passes it
    quiet = helpers.build(quantecon_book.book, tmp_path / "quiet", quantecon_book.cache,
                          suppress_warnings=["gpu_admonition.backend"])
    assert quiet.warning_lines == [], quiet.warnings
