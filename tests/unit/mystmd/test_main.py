"""The mystmd adapter's command line (``mystmd/__main__.py``): ``env`` prints the kernel
environment and chains the user's PYTHONSTARTUP, ``init`` writes the plugin file."""

from __future__ import annotations

from mystmd_builds import (
    ROOT,
    write_settings,
)

from sphinx_gpu_admonition.mystmd import __main__ as mystmd_cli
from sphinx_gpu_admonition.mystmd import capture


def test_env_prints_the_kernel_environment(tmp_path):
    lines = mystmd_cli.env_lines(tmp_path)
    assert f"export PYTHONSTARTUP={mystmd_cli.KERNEL_STARTUP}" in lines
    assert any(line.startswith(f"export {capture.ENV_CAPTURE}=") for line in lines)
    assert mystmd_cli.main(["env", str(tmp_path / "missing")]) == 2


def test_env_asks_the_kernels_for_jaxs_explanations_when_the_book_does(tmp_path):
    from sphinx_gpu_admonition.probe import ENV_EXPLAIN_RECOMPILATIONS

    assert not any(ENV_EXPLAIN_RECOMPILATIONS in line for line in mystmd_cli.env_lines(tmp_path))
    write_settings(tmp_path, "      explain_recompilations: true\n")
    assert f"export {ENV_EXPLAIN_RECOMPILATIONS}=1" in mystmd_cli.env_lines(tmp_path)


def test_env_chains_the_users_own_pythonstartup(tmp_path, monkeypatch):
    from sphinx_gpu_admonition.probe import ENV_USER_STARTUP

    monkeypatch.setenv("PYTHONSTARTUP", "/home/me/startup.py")
    lines = mystmd_cli.env_lines(tmp_path)
    assert f"export {ENV_USER_STARTUP}=/home/me/startup.py" in lines
    assert f"export PYTHONSTARTUP={mystmd_cli.KERNEL_STARTUP}" in lines


def test_init_writes_the_plugin_file(tmp_path):
    from sphinx_gpu_admonition.mystmd.plugin_file import PLUGIN_TEXT, mjs_text

    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    written = tmp_path / mystmd_cli.MJS_FILE
    assert written.read_text() == mjs_text()  # this interpreter's (test_mystmd_server)
    # the executable plugin the root keeps (a book may still name it) is this release's
    assert (ROOT / "gpu_admonition.py").read_text() == PLUGIN_TEXT


def test_help_prints_the_usage_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """``init --help`` is asked for, not a folder named ``--help``: the usage on stdout,
    exit 0, no file; a wrong command still gets it on stderr with exit 2."""
    monkeypatch.chdir(tmp_path)
    for argv in (["--help"], ["init", "--help"], ["env", "-h"]):
        assert mystmd_cli.main(argv) == 0
        out = capsys.readouterr()
        assert out.out.startswith("usage: ") and "init [BOOK] [--force]" in out.out
        assert out.err == ""
    assert list(tmp_path.iterdir()) == []
    assert mystmd_cli.main(["dance"]) == 2
    assert capsys.readouterr().err.startswith("usage: ")


def test_init_says_when_myst_yml_still_names_the_executable_plugin(tmp_path, capsys):
    """A book moving from the executable plugin: ``init`` writes the ``.mjs`` and says
    that ``myst.yml`` must name it (mystmd would go on running ``gpu_admonition.py``);
    nothing is said when it names the ``.mjs`` or no myst.yml is there yet."""
    from sphinx_gpu_admonition.mystmd.plugin_file import MJS_FILE, MOVE_NOTE

    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    assert "note:" not in capsys.readouterr().out  # no myst.yml yet
    config = tmp_path / "myst.yml"
    config.write_text("version: 1\nproject:\n  plugins:\n    - type: executable\n"
                      "      path: gpu_admonition.py\n", encoding="utf-8")
    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    assert f"note: {MOVE_NOTE}" in capsys.readouterr().out.splitlines()
    config.write_text(f"version: 1\nproject:\n  plugins:\n    - {MJS_FILE}\n", encoding="utf-8")
    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    assert "note:" not in capsys.readouterr().out
    config.write_text("project: [not: {valid\n", encoding="utf-8")  # mystmd says so itself
    assert mystmd_cli.main(["init", str(tmp_path)]) == 0
    assert "note:" not in capsys.readouterr().out
