"""model/page_text.py: a page's sentences from its Markdown, with their lines and roles;
code, headings, math, tables, comments and front matter are no sentences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lecture_text import LECTURE

from sphinx_gpu_admonition.model.page_text import (
    Place,
    Role,
    TextBlock,
    plain_text,
    sentences,
)

PROPERTY = settings(deadline=None, database=None, derandomize=True)


def texts(markdown: str, **block) -> list[str]:
    return [s.text for s in sentences([TextBlock(markdown, **block)])[0]]


def test_the_lecture_gives_its_prose_only():
    found, headings = sentences([TextBlock(LECTURE)])
    text = [s.text for s in found]
    assert text[0] == "In the preceding lectures, we've discussed three core libraries."
    assert "JAX meshgrid is significantly faster than NumPy." in text
    assert "The timing above excludes compilation, e.g. the first call." in text  # a note
    for line in text:
        for code in ("qe.Timer", "import", "jupytext", "np_vs_numba_vs_jax", "| ---", "max_",
                     "comment"):
            assert code not in line, line
    # headings start sections: "# NumPy vs ...", "## Vectorized", "### NumPy ...", ...
    assert len(headings) == 7
    assert [s.section for s in found if "preceding" in s.text] == [1]


def test_each_sentence_has_the_line_it_starts_on():
    found, headings = sentences([TextBlock(LECTURE)])
    lines = LECTURE.splitlines()
    for sentence in found:
        words = sentence.text.split()[0].strip("(")
        assert words in lines[sentence.place.line - 1], (sentence, lines[sentence.place.line - 1])
    assert [lines[h.line - 1].split()[0] for h in headings] == ["#", "##", "###", "###", "###",
                                                                "###", "##"]


def test_sentences_split_where_readers_end_them():
    assert texts("NumPy is fast. Numba is faster! Is JAX fastest? (Yes.) \"Quoted.\" Done") == [
        "NumPy is fast.", "Numba is faster!", "Is JAX fastest?", "(Yes.)", "\"Quoted.\"", "Done"]
    assert texts("Use e.g. NumPy, i.e. arrays, etc. Then Numba vs. JAX.") == [
        "Use e.g. NumPy, i.e. arrays, etc. Then Numba vs. JAX."]
    assert texts("It took 0.46 s. Then 1.1 ms.") == ["It took 0.46 s.", "Then 1.1 ms."]
    assert texts("J. Smith wrote it. `np.max` is next.") == ["J. Smith wrote it.",
                                                          "np.max is next."]
    assert texts("A line\ncontinues here.\n\nA new paragraph") == ["A line continues here.",
                                                                  "A new paragraph"]


def test_markup_becomes_its_text():
    assert plain_text("**JAX** is *much* faster than `np.max` ([docs](https://x.org)), "
                      "see {doc}`the Numba lecture <numba>` and {ref}`jit`[^1]<br>") == (
        "JAX is much faster than np.max (docs), see the Numba lecture and jit")
    assert plain_text("It runs in {timing}`vmap-v2`.{timing-claim}`a < b`") == \
        "It runs in vmap-v2."
    assert plain_text("snake_case_name and x_1 stay; _emphasis_ goes") == \
        "snake_case_name and x_1 stay; emphasis goes"
    assert plain_text(r"\*not emphasis\*, $x_1 < y$") == "*not emphasis*, $x_1 < y$"


@pytest.mark.parametrize("markdown", [
    "```python\nThis is faster.\n```",
    "````{code-cell} ipython3\n```\nnested\n```\nThis is faster.\n````",
    ":::{code-block} python\nThis is faster.\n:::",
    "$$\nx \\text{ faster}\n$$",
    "$$ x $$",
    "| a | b |\n| --- | --- |\n| faster | slower |",
    "% a comment: faster\n<!-- a comment\nfaster -->",
    "(target)=",
    "# A heading is faster\n\nSetext heading\n==============",
    "---\n\n***",
    "```{toctree}\nintro\n```",
    "+++ {\"tags\": []}",
])
def test_what_is_not_prose(markdown):
    assert texts(markdown, line=3) == []


def test_directives_that_hold_text_are_prose_without_their_options():
    markdown = ("```{admonition} Speed\n:class: tip\nJAX is faster.\n```\n\n"
                ":::{note}\n---\nclass: dropdown\n---\nNumba is faster.\n:::\n\n"
                "````{exercise}\nTry it.\n```python\ncode = 'slower'\n```\nThen compare.\n````")
    assert texts(markdown) == ["JAX is faster.", "Numba is faster.", "Try it.",
                               "Then compare."]


def test_lists_and_quotes_are_paragraphs():
    assert texts("* `f_vec_x_max` computes the max\n* the second item\n  continues\n\n"
                 "1. first\n2) second\n\n> Quoted is faster.") == [
        "f_vec_x_max computes the max", "the second item continues", "first", "second",
        "Quoted is faster."]


def test_front_matter_is_skipped_only_at_the_start_of_a_page():
    assert texts("---\ntitle: x\n---\nText.") == ["Text."]
    # a notebook's Markdown cell that starts with a rule keeps what follows
    assert texts("---\nText.", position=3, line=None) == ["Text."]


def test_claim_roles_join_the_sentence_they_follow():
    found, _ = sentences([TextBlock(
        "It is faster. {timing-claim}`a < b` Next one.\nAnd a claim {timing-claim}`c ~ d` "
        "inside.\n\n{timing-claim}`e < f`", line=20)])
    assert [(s.text, s.roles) for s in found] == [
        ("It is faster.", (Role("timing-claim", "a < b", 20),)),
        ("Next one.", ()),
        ("And a claim inside.", (Role("timing-claim", "c ~ d", 21),)),
        ("", (Role("timing-claim", "e < f", 23),)),  # alone in its paragraph
    ]
    rst, _ = sentences([TextBlock("Faster. :timing-claim:`a < b`")])
    assert rst[0].roles == (Role("timing-claim", "a < b", 1),)


def test_notebook_cells_give_places_without_lines():
    found, headings = sentences([TextBlock("# Title\n\nIt is faster.", line=None, position=0),
                                 TextBlock("Slower here.", line=None, position=2)])
    assert [s.place for s in found] == [Place(0, None), Place(2, None)]
    assert headings == [Place(0, None)]
    assert [s.section for s in found] == [1, 1]


@PROPERTY
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300))
def test_any_text_gives_sentences_on_one_line_with_lines_inside_it(text):
    found, headings = sentences([TextBlock(text, line=5)])
    count = max(len(text.splitlines()), 1)
    for sentence in found:
        assert "\n" not in sentence.text
        assert 5 <= sentence.place.line < 5 + count
    for heading in headings:
        assert 5 <= heading.line < 5 + count
