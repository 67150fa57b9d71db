"""``migrate`` on a mystmd book (``cli/migrate_mystmd.py``): myst.yml edited as the mystmd page
says, its BOM and CRLF kept, a bad or unwritable one refused before anything is written, the
plugin file never written through a link or over a file that is not ours."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT

from sphinx_gpu_admonition.cli import main
from sphinx_gpu_admonition.mystmd.plugin_file import PLUGIN_TEXT, mjs_template, mjs_text
from unit.cli.test_migrate import BOM, QUANTECON_MYSTMD, digests, shared_tmp, unprivileged

DOCS_MYSTMD = PROJECT / "docs" / "mystmd.md"


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
    folder = Path(tempfile.mkdtemp(prefix="migrate-", dir=shared_tmp()))
    try:
        folder.chmod(0o755)
        book = folder / "lectures"
        shutil.copytree(QUANTECON_MYSTMD, book)
        before = digests(folder)
        # the package's template read as its owner: in a checkout under a private
        # folder (mktemp -d) the unprivileged user could not read it at all
        mjs_template()
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
