"""``migrate`` on a Sphinx book (``cli/migrate.py``, ``cli/migrate_rules.py``): the MyST and rST
rules, conf.py edits that keep comments, encodings and line endings, refusals before anything
is written, dry runs."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from conftest import ROOTS

from sphinx_gpu_admonition.cli import main
from sphinx_gpu_admonition.cli.migrate_rules import add_extension, rewrite_source

QUANTECON = ROOTS / "quantecon"


# -- the rules ---------------------------------------------------------------------------
def rewrite(text: str, name: str = "lecture.md", book: Path = Path("/nonexistent")) -> str:
    return rewrite_source(text, book, book / name)[0]


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
    # a flow list over several lines: this text edit does not guess its layout
    flow = "sphinx:\n  extra_extensions: [sphinx_exercise,\n    sphinx_togglebutton]\n"
    (book / "_config.yml").write_text(flow)
    assert main(["migrate", str(book)]) == 0
    assert (book / "_config.yml").read_text() == flow
    out = capsys.readouterr().out
    assert "to do by hand: _config.yml: add 'sphinx_gpu_admonition'" in out


QUANTECON_CONFIG = """\
title: Python Programming for Economics and Finance
execute:
  execute_notebooks: "cache"
sphinx:
  extra_extensions: [sphinx_multitoc_numbering, sphinxext.rediraffe, sphinx_exercise]  # ours
  config:
    html_theme: quantecon_book_theme  # the theme
"""


@pytest.mark.parametrize(("before", "expected"), [
    # QuantEcon's real shape: a one-line flow list, comment and order kept
    (QUANTECON_CONFIG, "  extra_extensions: [sphinx_multitoc_numbering, sphinxext.rediraffe, "
                       "sphinx_exercise, sphinx_gpu_admonition]  # ours\n"),
    ("sphinx:\n  extra_extensions: []\n  config: {}\n",
     "sphinx:\n  extra_extensions: [sphinx_gpu_admonition]\n  config: {}\n"),
    ("sphinx:\n  extra_extensions: [ a, b, ]\n",
     "  extra_extensions: [ a, b, sphinx_gpu_admonition ]\n"),
    # the key missing under sphinx:, and a block list at the key's own indent
    ("sphinx:\n  config:\n    x: 1\n",
     "sphinx:\n  extra_extensions:\n    - sphinx_gpu_admonition\n  config:\n"),
    ("sphinx:\n  extra_extensions:\n  - a\n  - b\n  config:\n    x: 1\n",
     "sphinx:\n  extra_extensions:\n  - a\n  - b\n  - sphinx_gpu_admonition\n  config:\n"),
    ("sphinx:\n  extra_extensions:\n  # a comment\n  - a\n",
     "  - a\n  - sphinx_gpu_admonition\n"),
])
def test_config_shapes_quantecon_uses(before, expected):
    after = add_extension(before)
    assert after is not None and expected in after
    assert [line.split("#", 1)[1] for line in before.splitlines() if "#" in line] == [
        line.split("#", 1)[1] for line in after.splitlines() if "#" in line]
    old, new = yaml.safe_load(before), yaml.safe_load(after)
    assert new["sphinx"]["extra_extensions"] == [
        *(old["sphinx"].get("extra_extensions") or []), "sphinx_gpu_admonition"]
    old["sphinx"].pop("extra_extensions", None)
    new["sphinx"].pop("extra_extensions")
    assert old == new


# -- the command on a copy of the book ---------------------------------------------------
def test_quantecon_config_is_migrated_by_the_command(tmp_path, capsys):
    (tmp_path / "_config.yml").write_text(QUANTECON_CONFIG)
    assert main(["migrate", str(tmp_path)]) == 0
    assert "changed _config.yml:\n  added sphinx_gpu_admonition" in capsys.readouterr().out
    assert yaml.safe_load((tmp_path / "_config.yml").read_text())["sphinx"][
        "extra_extensions"][-1] == "sphinx_gpu_admonition"


# -- encodings, line endings, links, examples ------------------------------------------------
BOM = b"\xef\xbb\xbf"


def test_a_config_with_a_byte_order_mark_keeps_its_sphinx_block(tmp_path, capsys):
    config = "sphinx:\n  config:\n    html_theme: quantecon_book_theme\n"
    (tmp_path / "_config.yml").write_bytes(BOM + config.encode())
    assert main(["migrate", str(tmp_path)]) == 0
    data = (tmp_path / "_config.yml").read_bytes()
    assert data.startswith(BOM) and data.count(b"sphinx:") == 1
    loaded = yaml.safe_load(data.decode("utf-8-sig"))
    assert loaded["sphinx"] == {"extra_extensions": ["sphinx_gpu_admonition"],
                                "config": {"html_theme": "quantecon_book_theme"}}


def test_crlf_files_keep_crlf_and_bom_pages_are_migrated(tmp_path, capsys):
    (tmp_path / "_config.yml").write_bytes(b"title: L\r\nsphinx:\r\n  config:\r\n    x: 1\r\n")
    (tmp_path / "lecture.md").write_bytes(
        BOM + b"```{include} _admonition/gpu.md\r\n```\r\n\r\n```{nb-exec-table}\r\n```\r\n")
    (tmp_path / "page.rst").write_bytes(b"T\r\n=\r\n\r\n.. include:: _admonition/gpu.md\r\n")
    assert main(["migrate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "lecture.md").read_bytes() == (
        BOM + b"```{gpu}\r\n```\r\n\r\n```{execution-status}\r\n```\r\n")
    assert (tmp_path / "page.rst").read_bytes() == b"T\r\n=\r\n\r\n.. gpu::\r\n"
    config = (tmp_path / "_config.yml").read_bytes()
    assert b"\n" not in config.replace(b"\r\n", b"")
    assert b"  extra_extensions:\r\n    - sphinx_gpu_admonition\r\n" in config
    assert "changed lecture.md:\n  line 1: {include} _admonition/gpu.md -> {gpu}" in out
    assert "_admonition/gpu.md can be deleted once nothing else includes it." in out


def test_a_page_that_is_not_utf8_is_refused_and_nothing_is_written(tmp_path, capsys):
    (tmp_path / "_config.yml").write_text("sphinx:\n  config: {}\n")
    (tmp_path / "a.md").write_text("```{include} _admonition/gpu.md\n```\n")
    (tmp_path / "b.md").write_bytes("# Économie\n```{nb-exec-table}\n```\n".encode("latin-1"))
    before = digests(tmp_path)
    assert main(["migrate", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("sphinx-gpu-admonition: error: b.md: not UTF-8 (byte 0xc9 at "
                            "offset 2); convert it to UTF-8 and run migrate again (nothing "
                            "was changed)\n")
    assert digests(tmp_path) == before


def shared_tmp() -> str:
    """A folder every user can enter: scripts/test's TMPDIR is a private ``mktemp -d``
    (mode 700), where nobody could not reach the book."""
    return "/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()


@contextlib.contextmanager
def unprivileged(folder: Path):
    """Run as nobody when the tests run as root (who writes read-only files anyway): the
    book in a folder nobody can enter, and the command's lazy imports done before."""
    if os.geteuid() != 0:
        yield
        return
    if not all(os.stat(parent).st_mode & 0o001 for parent in folder.parents):
        pytest.skip(f"nobody cannot enter {folder.parent} (TMPDIR is private to root)")
    import yaml  # noqa: F401 - imported while the interpreter's files can be read

    for path in (folder, *folder.rglob("*")):
        os.chown(path, 65534, 65534, follow_symlinks=False)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


def test_an_unwritable_page_is_refused_before_anything_is_written(capsys):
    folder = Path(tempfile.mkdtemp(prefix="migrate-", dir=shared_tmp()))
    try:
        folder.chmod(0o755)
        (folder / "a.md").write_text("```{include} _admonition/gpu.md\n```\n")
        (folder / "b.md").write_text("```{nb-exec-table}\n```\n")
        before = digests(folder)
        with unprivileged(folder):
            (folder / "b.md").chmod(0o444)
            assert main(["migrate", str(folder)]) == 2
        assert capsys.readouterr().err == ("sphinx-gpu-admonition: error: b.md: not writable "
                                           "(nothing was changed)\n")
        assert digests(folder) == before
    finally:
        shutil.rmtree(folder)


def test_a_config_linking_out_of_the_book_is_not_edited(tmp_path, capsys):
    outside = tmp_path / "shared.yml"
    outside.write_text("sphinx:\n  config: {}\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "_config.yml").symlink_to(outside)
    assert main(["migrate", str(tmp_path / "book")]) == 0
    assert outside.read_text() == "sphinx:\n  config: {}\n"
    assert ("to do by hand: _config.yml: a link to a file outside the book, not edited: add "
            "'sphinx_gpu_admonition'") in capsys.readouterr().out


FENCED_EXAMPLES = """\
# Migrating

Before:

````md
```{include} _admonition/gpu.md
```
```{nb-exec-table}
```
````

~~~
```{nb-exec-table}
```
~~~

```{code-block} md
```{include} ../_admonition/gpu.md
```

````{note}
A real one, inside an admonition:
```{include} _admonition/gpu.md
```
````

```{note}
A directive's closing fence is no code fence:
```

```{include} _admonition/gpu.md
```
"""


def test_examples_in_code_fences_are_left_as_they_are():
    text, changes = rewrite_source(FENCED_EXAMPLES, Path("/nonexistent"),
                                   Path("/nonexistent/migrating.md"))
    assert changes == ["line 23: {include} _admonition/gpu.md -> {gpu}",
                       "line 31: {include} _admonition/gpu.md -> {gpu}"]
    examples, real = FENCED_EXAMPLES.split("````{note}")
    assert text == examples + "````{note}" + real.replace(
        "```{include} _admonition/gpu.md\n```\n", "```{gpu}\n```\n")


def test_rst_literal_blocks_are_left_as_they_are():
    before = ("Title\n=====\n\nThe old way::\n\n   .. include:: _admonition/gpu.md\n"
              "   .. nb-exec-table::\n\n.. code-block:: rst\n\n   .. nb-exec-table::\n\n"
              ".. nb-exec-table::\n")
    assert rewrite(before, "lecture.rst") == before.rsplit(".. nb-exec-table::", 1)[0] + (
        ".. execution-status::\n")


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


# -- a mystmd (Jupyter Book 2) book: myst.yml ------------------------------------------------
QUANTECON_MYSTMD = ROOTS / "quantecon_mystmd" / "lectures"


def test_a_jupyter_book_1_status_page_gets_its_machine_cells_replaced(copy, capsys):
    """Issue 33, item 8: on a Jupyter Book 1 book, as on mystmd, the status page's
    ``!python --version`` / ``!conda list`` / ``jax.devices()`` / ``!nvidia-smi`` cells
    become one ``{execution-environment}``, and the text that introduced them is named."""
    book = copy / "lectures"
    status = (QUANTECON_MYSTMD / "status.md").read_text(encoding="utf-8")
    (book / "status.md").write_text(status, encoding="utf-8")
    assert not (book / "myst.yml").exists()  # a Jupyter Book 1 book
    assert main(["migrate", str(book)]) == 0
    out = capsys.readouterr().out
    page = (book / "status.md").read_text(encoding="utf-8")
    # the page listed its packages (!conda list): :packages: keeps that list
    assert page.count("```{execution-environment}\n:packages:\n```") == 1
    assert "{code-cell}" not in page and "nvidia-smi" not in page and "conda list" not in page
    assert "```{execution-status}\n```" in page
    assert out.count("machine cells -> {execution-environment}") == 4
    assert "the text before a removed machine cell introduced its output" in out
    # the page has no code cell left: MyST-NB need not start a kernel for it
    assert "status.md has no code cells: remove its jupytext / kernelspec front matter" in out
