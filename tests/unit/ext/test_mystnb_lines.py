"""The source lines of a text notebook's code cells (``ext/_mystnb.cell_start_lines``):
each cell starts at the nearest ``{code-cell}`` fence above its closing fence."""

from __future__ import annotations

from pathlib import Path

from sphinx_gpu_admonition.ext._mystnb import RenderedCell, cell_start_lines

PAGE = """\
# A page

```{code-cell} ipython3
a = 1
```

Text that mentions {code-cell} in a sentence.

~~~{code-cell} ipython3
:tags: [hide-input]
b = 2
~~~

:::{code-cell}
---
tags: [slow-ok]
---
c = 3
:::
"""


def _cell(index: int, source: str, end_line: int | None) -> RenderedCell:
    return RenderedCell(index, index, source, (), "", end_line)


def test_each_cell_starts_at_its_fence_and_its_code_after_the_options(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    cells = [_cell(1, "a = 1", 5), _cell(3, "b = 2", 12), _cell(5, "c = 3", 19)]
    assert cell_start_lines(cells, page) == {1: (3, 4), 3: (9, 11), 5: (14, 18)}


def test_a_cell_above_every_fence_keeps_its_line_and_a_notebook_has_none(
        tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    assert cell_start_lines([_cell(0, "x", 1)], page)[0][0] == 1
    assert cell_start_lines([_cell(0, "x", 99)], page)[0][0] == 14  # past the end
    assert cell_start_lines([_cell(0, "x", 3)], tmp_path / "page.ipynb") == {}
    assert cell_start_lines([_cell(0, "x", 3)], tmp_path / "missing.md") == {0: (3, None)}
