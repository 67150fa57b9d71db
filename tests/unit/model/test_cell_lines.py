"""Where a text notebook's code cells lie in its source (``model/cell_lines.py``): the
lines both engines' warnings point at."""

from __future__ import annotations

from sphinx_gpu_admonition.model.cell_lines import code_start_line, fence_at_or_above, fence_lines

PAGE = ["# A lecture", "", "```{code-cell} ipython3", ":tags: [hide-output]", "",
        "%%time", "x = qm(0.1, n)", "```", "", "````{code-cell} python", "---",
        "tags: [slow-ok]", "---", "with qe.Timer():", "    x = qm(0.1, n)", "````",
        "```{code-cell} ipython3", "y = 1", "```"]


def test_a_cells_code_starts_after_its_fence_and_options() -> None:
    assert code_start_line(PAGE, 3, "%%time\nx = qm(0.1, n)") == 6
    assert code_start_line(PAGE, 10, "with qe.Timer():\n    x = qm(0.1, n)") == 14
    assert code_start_line(PAGE, 17, "y = 1") == 18
    # a cell whose code is not there (an {include}d file's) points nowhere, as does a
    # code starting with an empty line or a fence out of the page
    assert code_start_line(PAGE, 17, "z = 2") is None
    assert code_start_line(PAGE, 3, "\nx = 1") is None and code_start_line(PAGE, 40, "y") is None


def test_an_indented_cells_code_line_is_found_without_its_indentation() -> None:
    """A cell inside a list item or a solution block is indented in the source, and the
    engines hand its code over without that indentation (QuantEcon's solutions)."""
    page = ["::::{solution} ex1", ":class: dropdown", "", "  :::{code-cell} ipython3",
            "  :tags: [slow-ok]", "", "  for i in range(3):", "      total += i", "  :::",
            "::::", "", "1. a step", "", "   ```{code-cell} ipython3", "   y = 1", "   ```"]
    assert fence_lines(page) == [4, 14]
    assert code_start_line(page, 4, "for i in range(3):\n    total += i") == 7
    assert code_start_line(page, 14, "y = 1") == 15
    # a line indented less than its fence is not the cell's
    assert code_start_line(["  ```{code-cell}", "x", "y = 1", "  ```"], 1, "y = 1") is None


def test_fences_are_the_code_cells_openings_and_a_line_finds_its_cell() -> None:
    page = [*PAGE, "", "~~~{code-cell}", "z", "~~~", "```{code-block} python", "```python",
            "text about {code-cell}"]
    fences = fence_lines(page)
    assert fences == [3, 10, 17, 21]
    assert [fence_at_or_above(fences, line) for line in (3, 8, 15, 19, 23)] == [3, 3, 10, 17, 21]
    # above the first cell: the line itself
    assert fence_at_or_above(fences, 1) == 1 and fence_at_or_above([], 5) == 5
