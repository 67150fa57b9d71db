"""``mystmd/warnings.py``: the plugin's warnings are safe lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_commands import forged_commands


def test_the_plugins_warnings_are_safe_lines(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """What the plugin prints (stderr, ``--debug``) and what mystmd prints for it (the
    cross-reference's text in its log): one line each, no command of either syntax."""
    from sphinx_gpu_admonition.mystmd import warnings

    items = [warnings.warning("capture", message) for message in
             ("E##[error]X in cell 2", "::error::x\n##[add-mask]s", "a\u202eb #\u200b#[x]")]
    tree: dict = {"type": "root", "children": []}
    warnings.emit(items, [], tmp_path, tree, project_stage=True)
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 3 and forged_commands(err) == []
    assert "E%23#[error]X" in err
    shown = "\n".join(node["urlSource"] for node in plugin_nodes(tree))
    assert len(shown.splitlines()) == 3 and forged_commands(shown) == []


def plugin_nodes(tree: dict) -> list[dict]:
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        if node.get("type") == "crossReference":
            found.append(node)
        todo += node.get("children") or []
    return found
