"""The rules a lecture lives with, in-process on hand-made records: import cells,
cells tagged ``slow-ok``, a notebook's time budget, and how the status page's
first screen and texts show them (no kernel, no Sphinx build)."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from sphinx_gpu_admonition.model.analysis import (
    Thresholds,
    analyse,
    is_imports_only,
    over_budget,
)
from sphinx_gpu_admonition.model.findings import budget_findings, findings
from sphinx_gpu_admonition.model.record import CellRecord, NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.console import summary_lines
from sphinx_gpu_admonition.render.finding_text import ENGLISH as WORDS
from sphinx_gpu_admonition.render.github import annotations
from sphinx_gpu_admonition.render.labels import Labels
from sphinx_gpu_admonition.render.status_html import render_html
from sphinx_gpu_admonition.render.status_rows import StatusOptions, status_rows
from sphinx_gpu_admonition.render.summary import analysis_data

#: need_for_speed's cell 2, as the lecture has it
NEED_FOR_SPEED_IMPORTS = """\
import random
import numpy as np
import quantecon as qe
import matplotlib.pyplot as plt
%matplotlib inline
"""


@pytest.mark.parametrize("source", [
    NEED_FOR_SPEED_IMPORTS,
    "import jax\nimport jax.numpy as jnp  # the array library\nfrom jax import jit, vmap",
    "from numba import (jit,\n                   njit)\n",
    "# comments first\n\nimport os, sys\n",
    "!pip install quantecon\nimport quantecon as qe",
    "%%time\nimport jax",
    # JAX's start-up and definitions, paid with the imports (tests/roots/jax_loops)
    "import jax\njax.config.update('jax_enable_x64', True)\ncpu = jax.devices('cpu')[0]",
    "import time\nfrom contextlib import contextmanager\n\n@contextmanager\ndef Timer():\n"
    "    yield\n",
    "import numpy as np\nTOL = 1e-8",
])
def test_import_cells_are_recognised(source):
    assert is_imports_only(source)


@pytest.mark.parametrize("source", [
    "", "# nothing\n", "import numpy as np\nx = np.ones(3)", "%%bash\nimport x",
    "def f():\n    import os\n", "import (", "try:\n    import jax\nexcept ImportError:\n    pass",
    "import jax\nx = jax.numpy.ones(3)", "import jax\njax.devices()[0].platform",
    "import jax\njax.block_until_ready(x)",
    "from numba import vectorize\n@vectorize(['float64(float64)'])\ndef f(x):\n    return x",
])
def test_other_cells_are_not_import_cells(source):
    assert not is_imports_only(source)


def notebook(*cells: CellRecord, docname: str = "need_for_speed", runtime: float | None = None,
             budget: float | None = None, title: str = "") -> NotebookRecord:
    return NotebookRecord(docname=docname, status="ok", provenance="executed", capture="ok",
                          cells=list(cells), runtime_seconds=runtime, budget_seconds=budget,
                          source=f"lectures/{docname}.md", title=title)


def cell(index: int, seconds: float, **fields) -> CellRecord:
    return CellRecord(index=index, execution_count=index, seconds=seconds, line=index * 10,
                      **fields)


def flags_of(nb: NotebookRecord) -> list[list[str]]:
    (result,) = analyse(StatusReport([nb]), Thresholds()).notebooks
    return [[flag.rule for flag in flags] for flags in result.cell_flags]


def test_need_for_speed_imports_are_not_flagged_for_their_share():
    """Four imports, 1.23 s, 58 % of the notebook: the same cell untagged as imports is
    flagged "share" (profile the cell); as an import cell, nothing."""
    plain = notebook(cell(1, 0.05), cell(2, 1.23), cell(3, 0.84))
    assert flags_of(plain)[1] == ["share"]
    imports = notebook(cell(1, 0.05), cell(2, 1.23, imports_only=True), cell(3, 0.84))
    assert flags_of(imports) == [[], [], []]


def test_an_import_cell_past_the_limit_gets_its_own_note_and_action():
    nb = notebook(cell(1, 12.0, imports_only=True), cell(2, 0.5))
    (result,) = analyse(StatusReport([nb]), Thresholds()).notebooks
    (flag,) = result.cell_flags[0]
    assert flag.rule == "imports" and flag.is_note and "only imports" in WORDS.reason(flag)
    assert WORDS.rule_action(flag).startswith("imports are paid once per kernel")
    assert "profile" not in WORDS.text(flag)
    assert result.warned_cells == []  # shown, never a warning


def test_a_slow_ok_cell_is_shown_as_slow_on_purpose_without_hints():
    nb = notebook(cell(1, 30.0, slow_ok=True, compile_seconds=20.0), cell(2, 0.5))
    (result,) = analyse(StatusReport([nb]), Thresholds()).notebooks
    (flag,) = result.cell_flags[0]
    assert flag.rule == "slow_ok" and "slow on purpose" in WORDS.reason(flag)
    assert WORDS.rule_action(flag) == "" and result.warned_cells == []
    (finding,) = findings(analyse(StatusReport([nb]), Thresholds()))
    assert finding.is_note and WORDS.finding_action(finding) == ""


def test_a_slow_ok_cell_that_regressed_is_still_a_regression():
    before = notebook(cell(1, 10.0), cell(2, 0.5))
    now = notebook(cell(1, 30.0, slow_ok=True), cell(2, 0.5))
    (result,) = analyse(StatusReport([now]), Thresholds(), StatusReport([before])).notebooks
    assert [flag.rule for flag in result.cell_flags[0]] == ["slow_ok", "regression"]
    assert len(result.warned_cells) == 1


def test_notes_are_no_annotations_and_the_console_has_no_empty_action():
    nb = notebook(cell(1, 30.0, slow_ok=True), cell(2, 12.0, imports_only=True),
                  cell(3, 11.0))
    report = StatusReport([nb])
    analysis = analyse(report, Thresholds())
    lines = annotations(report, analysis)
    assert len(lines) == 1 and "Slow cell 3" in lines[0]
    console = "\n".join(summary_lines(report, analysis))
    assert "slow on purpose" in console and "what to do: \n" not in console + "\n"
    assert "imports are paid once per kernel" in console


def test_a_notebook_over_its_budget_is_a_finding_of_the_notebook():
    within = notebook(cell(1, 1.0), docname="a", runtime=50.0, budget=60.0)
    over = notebook(cell(1, 1.0), docname="b", runtime=80.0, budget=60.0)
    none = notebook(cell(1, 1.0), docname="c", runtime=500.0)
    assert over_budget(within) is None and over_budget(none) is None
    assert WORDS.budget(*over_budget(over)) == "took 80.0 s, budget 60.0 s"
    analysis = analyse(StatusReport([within, over, none]), Thresholds())
    assert [row.notebook.docname for row in budget_findings(analysis)] == ["b"]
    assert analysis_data(analysis)["b"]["budget"]["budget_seconds"] == 60.0
    assert "budget" not in analysis_data(analysis)["a"]
    html = render_html(analysis, StatusOptions(), lambda docname: f"{docname}.html")
    soup = BeautifulSoup(html, "lxml")
    assert soup.select_one(".gpu-status-budget-title").get_text() == \
        "1 notebook over its time budget"
    item = soup.select_one(".gpu-status-over-budget a")
    assert item.get_text() == "b: took 80.0 s, budget 60.0 s" and item["href"] == "b.html"


def test_the_first_screen_names_the_slowest_notebook_without_a_flagged_cell():
    """jax_intro: 53 s of a 140 s build, no flagged cell (many cells of a few seconds)."""
    jax_intro = notebook(*(cell(i, 2.0) for i in range(1, 26)), docname="jax_intro",
                         runtime=53.0, title="JAX")
    others = [notebook(cell(1, 1.0), docname=f"nb{i}", runtime=29.0) for i in range(3)]
    analysis = analyse(StatusReport([*others, jax_intro]), Thresholds())
    assert findings(analysis) == []
    rows = status_rows(analysis, StatusOptions(), Labels.load())
    assert rows.slowest == "Slowest: JAX, 53.0 s (38% of the build)."
    soup = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: None), "lxml")
    first = soup.select_one(".gpu-status > p:nth-of-type(2)")
    assert first["class"] == ["gpu-status-slowest"] and first.get_text() == rows.slowest
    alone = analyse(StatusReport([jax_intro]), Thresholds())
    assert status_rows(alone, StatusOptions(), Labels.load()).slowest == ""


def test_counts_with_nouns_go_through_ngettext():
    labels = Labels.load()
    assert labels.compilations_text(1) == "1 compilation"
    assert labels.compilations_text(3) == "3 compilations"
    assert labels.cells_summary(1, "A") == "1 code cell of A"
    assert labels.cells_summary(2, "A") == "2 code cells of A"
    assert labels.hidden_text(1, "1.00 s").startswith("1 notebook faster than 1.00 s is ")
    assert labels.budget_title(2) == "2 notebooks over their time budget"
    seen = []

    def ngettext(singular: str, plural: str, count: int) -> str:
        seen.append((singular, plural))
        return "<" + (singular if count == 1 else plural) + ">"

    labels = Labels.load(ngettext=ngettext)
    assert labels.compilations_text(1) == "<1 compilation>"
    assert ("{count} compilation", "{count} compilations") in seen


def test_one_compilation_in_the_cells_data():
    from sphinx_gpu_admonition.render.status_html import cells_data

    nb = notebook(cell(1, 0.5, compile_seconds=0.2, compilations={"jit(f)": 1}))
    analysis = analyse(StatusReport([nb]), Thresholds())
    entry = cells_data(analysis, Labels.load())["nb"][nb.docname]["c"][0]
    assert entry["n"] == "1 compilation: jit(f) 1×"
