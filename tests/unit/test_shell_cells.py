"""ext/build_analysis.py: the cells that only run shell commands, noted at read time
from the doctree (MyST-NB's node shape, pinned by tests/test_mystnb_compat.py)."""

from __future__ import annotations

from types import SimpleNamespace

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from sphinx_gpu_admonition.ext.build_analysis import ShellCellsCollector, shell_cells


def code_cell(index: int, source: str) -> nodes.container:
    cell = nodes.container(nb_element="cell_code", cell_index=index)
    cell += nodes.literal_block(source, source)
    return cell


def test_the_collector_notes_shell_cells_and_forgets_them():
    document = new_document("page", get_default_settings(Parser))
    document += code_cell(0, "!pip install quantecon")
    document += code_cell(2, "%matplotlib inline\nimport jax")
    document += code_cell(4, "%%bash\nnvidia-smi")
    env = SimpleNamespace(docname="lecture")
    collector = ShellCellsCollector()
    collector.process_doc(SimpleNamespace(env=env), document)
    assert shell_cells(env) == {"lecture": [0, 4]}
    other = SimpleNamespace()
    shell_cells(other)["other"] = [1]
    collector.merge_other(None, env, {"other"}, other)
    assert shell_cells(env) == {"lecture": [0, 4], "other": [1]}
    collector.clear_doc(None, env, "lecture")
    assert shell_cells(env) == {"other": [1]}
