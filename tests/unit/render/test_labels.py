"""render/labels.py: the status page's texts from a translator passed in."""

from __future__ import annotations

from sphinx_gpu_admonition.model.record import CELL_LABEL, CellName
from sphinx_gpu_admonition.render.labels import Labels, english_plural


def test_english_without_a_translator():
    labels = Labels.load()
    assert labels.notebook == "Notebook"
    assert labels.cell_name == CELL_LABEL == "cell {number}"
    assert labels.cell_label(CellName("x", 3, 5)) == CellName("x", 3, 5).label == "cell 3"
    assert labels.in_total.format(time="2.00 s") == "2.00 s in total"
    assert labels.ngettext("%d cell", "%d cells", 1) == "%d cell"
    assert english_plural("%d cell", "%d cells", 2) == "%d cells"


def test_every_text_goes_through_the_translator():
    seen: list[str] = []

    def translate(text: str) -> str:
        seen.append(text)
        return f"<{text}>"

    labels = Labels.load(translate, english_plural)
    assert "cell {number}" in seen and "{time} in total" in seen
    assert labels.cell_label(CellName("x", 2, 2)) == "<cell 2>"
    assert labels.flag_names(["slow", "unknown"]) == "<slow>, unknown"
    texts = [value for value in labels if isinstance(value, str)]
    assert all(text.startswith("<") for text in texts)


def test_the_catalog_has_the_cell_name_and_the_total():
    """Both are extracted into the message catalog, and translated into Chinese."""
    from pathlib import Path

    import sphinx_gpu_admonition

    locale = Path(sphinx_gpu_admonition.__file__).parent / "locale"
    pot = (locale / "sphinx_gpu_admonition.pot").read_text(encoding="utf-8")
    po = (locale / "zh_CN/LC_MESSAGES/sphinx_gpu_admonition.po").read_text(encoding="utf-8")
    for msgid in ("cell {number}", "{time} in total"):
        assert f'msgid "{msgid}"' in pot
        assert f'msgid "{msgid}"\nmsgstr ""' not in po
