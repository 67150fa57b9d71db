"""``sphinx-gpu-admonition migrate BOOK`` on a QuantEcon-style book, and the book after it.

The rewriting rules are tested as pure functions; the command runs on copies of
tests/roots/quantecon; the migrated book (``quantecon_book`` in conftest, built
once per session on this machine's CPU) builds warning-free with
``gpu_expected_backend: cpu`` and, with the default settings, warns only that
the GPU lecture ran without a GPU (so ``-W`` fails there, by design).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import ROOTS, QuantEconBook

from sphinx_gpu_admonition.cli import main
from sphinx_gpu_admonition.cli.migrate_rules import add_extension, rewrite_source
from sphinx_gpu_admonition.mystmd.plugin_file import PLUGIN_TEXT, mjs_text

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


def _shared_tmp() -> str:
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
    folder = Path(tempfile.mkdtemp(prefix="migrate-", dir=_shared_tmp()))
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
    # the table's rows (a flagged cell's line in the findings list names its source)
    names = [n.get_text(strip=True) for n in status.select(".gpu-status-docname")
             if n.find_parent("li", class_="gpu-status-finding") is None]
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


# -- a mystmd (Jupyter Book 2) book: myst.yml ------------------------------------------------
QUANTECON_MYSTMD = ROOTS / "quantecon_mystmd" / "lectures"
DOCS_MYSTMD = Path(__file__).resolve().parents[1] / "docs" / "mystmd.md"


def fenced_blocks(text: str, info: str) -> list[str]:
    """The bodies of the fences of ``info`` (``yaml``, ``md``) in a docs page."""
    import re

    return [match[2] for match in re.finditer(
        rf"^(`{{3,}}){re.escape(info)}\n(.*?)^\1$", text, re.MULTILINE | re.DOTALL)]


@pytest.fixture
def mystmd_book(tmp_path) -> Path:
    book = tmp_path / "lectures"
    shutil.copytree(QUANTECON_MYSTMD, book)
    return book


def test_a_mystmd_book_is_migrated_as_the_mystmd_page_says(mystmd_book, capsys):
    """QuantEcon's jb2 shape: myst.yml gets the plugin, the book the plugin file that
    ``mystmd init`` writes, the status page the two directives (its machine cells gone),
    exactly as docs/mystmd.md tells users to write them."""
    from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli

    before = (mystmd_book / "myst.yml").read_text()
    assert main(["migrate", str(mystmd_book)]) == 0
    out = capsys.readouterr().out
    docs = DOCS_MYSTMD.read_text(encoding="utf-8")
    config = (mystmd_book / "myst.yml").read_text()
    [plugins_block] = [block for block in fenced_blocks(docs, "yaml") if "plugins:" in block]
    assert yaml.safe_load(config)["project"]["plugins"] == yaml.safe_load(plugins_block)[
        "project"]["plugins"]
    assert [line for line in before.splitlines() if "#" in line] == [
        line for line in config.splitlines() if "#" in line]
    plugin_file = mystmd_book / mystmd_cli.MJS_FILE
    assert plugin_file.read_text() == mjs_text()  # this interpreter written in
    assert not (mystmd_book / "gpu_admonition.py").exists()
    status = (mystmd_book / "status.md").read_text()
    [status_page] = [block for block in fenced_blocks(docs, "md")
                     if "{execution-environment}" in block]
    # the page's !conda list becomes the package list of :packages:
    for directive in ("```{execution-status}\n```\n",
                      "```{execution-environment}\n:packages:\n```\n"):
        assert directive in status_page and status.count(directive) == 1
    assert "{code-cell}" not in status and "nb-exec-table" not in status
    # a lecture's own jax.devices() is the lecture's: only the status page loses its cells
    lecture = (mystmd_book / "jax_intro.md").read_text()
    assert "```{gpu}\n```\n" in lecture and "jax.devices()[0].platform" in lecture
    assert "changed myst.yml:\n  added the plugin gpu_admonition.mjs to project: plugins" in out
    assert ("to do by hand: status.md: lines 23, 29, 31, 33: the text before a removed "
            "machine cell introduced its output") in out
    assert [status.splitlines()[n - 1] for n in (23, 33)] == [
        "These lectures are using the following python version",
        "and this lecture series also has access to the following GPU"]
    assert 'eval "$(python -m sphinx_gpu_admonition.mystmd env)"' in out
    assert "MyST-NB" not in out  # no _config.yml: the Sphinx notes do not apply
    assert main(["migrate", str(mystmd_book)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "nothing to change"


def test_a_mystmd_dry_run_shows_every_diff_and_writes_nothing(mystmd_book, capsys):
    before = digests(mystmd_book)
    assert main(["migrate", "--dry-run", str(mystmd_book)]) == 0
    out = capsys.readouterr().out
    assert digests(mystmd_book) == before
    for name in ("jax_intro.md", "status.md", "myst.yml", "gpu_admonition.mjs"):
        assert f"+++ b/{name}\n" in out and f"would change {name}:" in out
    assert "-!nvidia-smi\n" in out and "+```{execution-environment}\n" in out
    assert "+  plugins:\n+    - gpu_admonition.mjs\n" in out


@pytest.mark.parametrize(("before", "expected"), [
    # a block list of mappings (another plugin), and one of paths
    ("project:\n  plugins:\n    - type: executable\n      path: other.py\n  toc: []\n",
     "      path: other.py\n    - gpu_admonition.mjs\n  toc: []\n"),
    ("project:\n  plugins:\n  - theme.mjs  # ours\n",
     "  - theme.mjs  # ours\n  - gpu_admonition.mjs\n"),
    # one-line lists, the key missing, the project missing
    ("project:\n  plugins: [theme.mjs]  # ours\n",
     "  plugins: [theme.mjs, gpu_admonition.mjs]  # ours\n"),
    ("project:\n  plugins: []\n", "  plugins: [gpu_admonition.mjs]\n"),
    ("version: 1\nproject:\n  title: L\n# end\nsite: {}\n",
     "  title: L\n  plugins:\n    - gpu_admonition.mjs\n# end\n"),
    ("version: 1\n",
     "project:\n  plugins:\n    - gpu_admonition.mjs\n"),
])
def test_myst_yml_shapes(before, expected):
    from sphinx_gpu_admonition.cli.migrate_mystmd import _only_adds_plugin, add_plugin

    after = add_plugin(before)
    assert after is not None and expected in after
    assert _only_adds_plugin(before, after)


def test_a_myst_yml_it_cannot_edit_is_left_with_a_note(mystmd_book, capsys):
    (mystmd_book / "myst.yml").write_text("version: 1\nproject: {title: L}\n")
    assert main(["migrate", str(mystmd_book)]) == 0
    assert (mystmd_book / "myst.yml").read_text() == "version: 1\nproject: {title: L}\n"
    assert ("to do by hand: myst.yml: add '- gpu_admonition.mjs' under 'project: plugins:'"
            ) in capsys.readouterr().out


def test_a_myst_yml_keeps_its_bom_and_crlf(mystmd_book, capsys):
    (mystmd_book / "myst.yml").write_bytes(BOM + b"version: 1\r\nproject:\r\n  title: L\r\n")
    assert main(["migrate", str(mystmd_book)]) == 0
    assert (mystmd_book / "myst.yml").read_bytes() == BOM + (
        b"version: 1\r\nproject:\r\n  title: L\r\n  plugins:\r\n    - gpu_admonition.mjs\r\n")


def test_a_myst_yml_that_is_not_utf8_is_refused_and_nothing_is_written(mystmd_book, capsys):
    (mystmd_book / "myst.yml").write_bytes("project:\n  title: Économie\n".encode("latin-1"))
    before = digests(mystmd_book)
    assert main(["migrate", str(mystmd_book)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("sphinx-gpu-admonition: error: myst.yml: not UTF-8")
    assert digests(mystmd_book) == before


def test_an_unwritable_myst_yml_is_refused_before_anything_is_written(capsys):
    folder = Path(tempfile.mkdtemp(prefix="migrate-", dir=_shared_tmp()))
    try:
        folder.chmod(0o755)
        book = folder / "lectures"
        shutil.copytree(QUANTECON_MYSTMD, book)
        before = digests(folder)
        with unprivileged(folder):
            (book / "myst.yml").chmod(0o444)
            assert main(["migrate", str(book)]) == 2
        assert capsys.readouterr().err == ("sphinx-gpu-admonition: error: myst.yml: not "
                                           "writable (nothing was changed)\n")
        assert digests(folder) == before
    finally:
        shutil.rmtree(folder)


# -- the plugin file: nothing written outside the book, nothing of the user's overwritten --
def _plugin_command(command: str, book: Path, *options: str) -> int:
    """``migrate BOOK`` or ``python -m sphinx_gpu_admonition.mystmd init BOOK``: the two
    commands that write the plugin file, under one rule."""
    from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli

    if command == "migrate":
        return main(["migrate", str(book), *options])
    return mystmd_cli.main(["init", str(book), *options])


def _outside_and_link(book: Path, dangling: bool) -> tuple[Path, Path]:
    outside = book.parent / "outside.py"
    if not dangling:
        outside.write_text("print('not the book')\n")
    link = book / "gpu_admonition.mjs"
    link.symlink_to(os.path.relpath(outside, book))
    return outside, link


@pytest.mark.parametrize("command", ["migrate", "init"])
@pytest.mark.parametrize("dangling", [True, False])
def test_a_link_of_the_plugins_name_is_never_written_through(mystmd_book, capsys, command,
                                                             dangling):
    outside, link = _outside_and_link(mystmd_book, dangling)
    before = digests(mystmd_book.parent)
    assert _plugin_command(command, mystmd_book) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "gpu_admonition.mjs: a symbolic link" in err
    assert "--force" in err and "nothing was" in err
    assert digests(mystmd_book.parent) == before and link.is_symlink()
    assert outside.exists() is not dangling  # nothing written outside the book
    # --force replaces the link with the plugin file, and still writes nothing outside
    assert _plugin_command(command, mystmd_book, "--force") == 0
    assert not link.is_symlink() and link.read_text() == mjs_text()
    assert outside.exists() is not dangling
    if not dangling:
        assert outside.read_text() == "print('not the book')\n"


@pytest.mark.parametrize("command", ["migrate", "init"])
def test_a_file_of_the_plugins_name_that_is_not_ours_is_refused(mystmd_book, capsys, command):
    mine = mystmd_book / "gpu_admonition.mjs"
    mine.write_text("export default {};\n")
    mine.chmod(0o644)
    before = digests(mystmd_book)
    assert _plugin_command(command, mystmd_book) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert "gpu_admonition.mjs: a file of that name that is not the plugin file" in err
    assert digests(mystmd_book) == before and not os.access(mine, os.X_OK)  # not made executable
    assert _plugin_command(command, mystmd_book, "--force") == 0
    assert mine.read_text() == mjs_text()


@pytest.mark.parametrize("command", ["migrate", "init"])
def test_the_plugin_file_of_an_earlier_release_is_replaced_and_this_ones_left_alone(
        mystmd_book, capsys, command):
    plugin = mystmd_book / "gpu_admonition.mjs"  # another interpreter's: an earlier one
    plugin.write_text(mjs_text("/elsewhere/bin/python").replace("\n", "\r\n"))  # CRLF too
    assert _plugin_command(command, mystmd_book) == 0
    out = capsys.readouterr().out
    assert "replaced" in out and plugin.read_text() == mjs_text()
    written = plugin.stat().st_mtime_ns
    assert _plugin_command(command, mystmd_book) == 0  # up to date: left as it is
    out = capsys.readouterr().out
    assert plugin.stat().st_mtime_ns == written
    assert "changed gpu_admonition.mjs" not in out


def test_a_book_that_names_the_executable_plugin_keeps_it_and_is_told_how_to_move(
        mystmd_book, capsys):
    """The executable plugin still works: migrate refreshes an earlier release's
    ``gpu_admonition.py`` where myst.yml names it, and says the one line to change."""
    from sphinx_gpu_admonition.mystmd.plugin_file import EARLIER_TEXTS

    config = mystmd_book / "myst.yml"
    config.write_text(config.read_text().replace(
        "project:\n", "project:\n  plugins:\n    - type: executable\n"
        "      path: gpu_admonition.py\n", 1))
    plugin = mystmd_book / "gpu_admonition.py"
    plugin.write_text(EARLIER_TEXTS[0])
    assert main(["migrate", str(mystmd_book)]) == 0
    out = capsys.readouterr().out
    assert plugin.read_text() == PLUGIN_TEXT and os.access(plugin, os.X_OK)
    assert not (mystmd_book / "gpu_admonition.mjs").exists()
    assert "name gpu_admonition.mjs instead (project: plugins: - gpu_admonition.mjs)" in out


@pytest.mark.parametrize("command", ["migrate", "init"])
def test_a_folder_of_the_plugins_name_is_refused_even_with_force(mystmd_book, capsys, command):
    (mystmd_book / "gpu_admonition.mjs").mkdir()
    before = digests(mystmd_book)
    assert _plugin_command(command, mystmd_book, "--force") == 2
    assert "gpu_admonition.mjs: not a file" in capsys.readouterr().err
    assert digests(mystmd_book) == before


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
