"""model/speed_statements.py: the review list of a lecture's timing statements, with the
timed cells before each and their values on every build."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lecture_text import LECTURE, lecture_record

from sphinx_gpu_admonition.model.claims import Build
from sphinx_gpu_admonition.model.page_text import Place, Sentence, TextBlock, sentences
from sphinx_gpu_admonition.model.speed_statements import (
    EVIDENCE_CELLS,
    evidence_places,
    is_statement,
    speed_cues,
    statements_to_review,
)
from sphinx_gpu_admonition.model.speed_words import (
    COUNTS,
    MODIFIERS,
    PHRASES,
    UNITS,
    WORDS,
    may_have_cues,
)
from sphinx_gpu_admonition.model.timing_record import TIMER, Timing

PAGE = "lectures/numpy_vs_numba_vs_jax"


@pytest.mark.parametrize(("sentence", "cues"), [
    # the four statements
    ("JAX meshgrid is significantly faster than NumPy.", ["faster"]),
    ("Both JAX and Numba deliver strong performance.", ["performance"]),
    ("The execution time is similar to the mesh operation.", ["execution time", "similar"]),
    ("We don't get much speed gain.", ["speed", "gain"]),
    # the real lecture's
    ("Once compiled, JAX is significantly faster than NumPy due to GPU acceleration.",
     ["faster", "acceleration"]),
    ("When run on a CPU, its runtime is similar to that of the meshgrid version.",
     ["runtime", "similar"]),
    ("If you are running this on a GPU, as we are, you should see another nontrivial speed "
     "gain.", ["speed", "gain"]),
    ("Numba handles this sequential operation very efficiently.", ["efficiently"]),
    ("If you have multiple cores, you should see at least some benefits from "
     "parallelization here.", ["benefits from"]),
    # amounts and units
    ("It is 13x quicker on the T4.", ["13x", "quicker"]),
    ("It runs 2.4 times as fast.", ["2.4 times", "fast"]),
    ("The GPU takes 0.46 ms, the CPU 12ms.", ["0.46 ms", "12ms"]),
    ("That is an order of magnitude less, at about the same cost.",
     ["order of magnitude", "about the same"]),
    ("Version 2 is barely better.", ["barely better"]),
    ("They take the same time when run on CPU.", ["same time"]),
    ("A speed-up of three is a speedup.", ["speed-up", "speedup"]),
])
def test_sentences_about_speed_have_cues(sentence, cues):
    assert speed_cues(sentence) == cues


@pytest.mark.parametrize("sentence", [
    "In the vectorized version, all the looping takes place in compiled code.",
    "The Numba version is straightforward and natural to read.",
    "By avoiding the large input arrays, this vmap version uses far less memory.",
    "We can be still more memory efficient using vmap.",
    "This lecture addresses that question, at least partially.",
    "Here f_vec_x_max computes the max along any given row.",
    "Notice that the second run uses the same grid.",  # "second" is no unit here
])
def test_other_sentences_have_none(sentence):
    assert speed_cues(sentence) == []


@pytest.mark.parametrize(("sentence", "statement"), [
    ("Let's run again to eliminate compile time.", False),
    ("Now let's see if we can achieve better performance using Numba.", False),
    ("Here's the timing.", False),
    ("Let's see the timing:", False),
    ("Is it faster?", False),
    ("It is faster.", True),
    ("Letting it run is faster.", True),
])
def test_leading_to_code_is_no_statement(sentence, statement):
    assert is_statement(sentence) is statement


VOCABULARY = sorted(WORDS | MODIFIERS | COUNTS | UNITS | set(PHRASES)
                    | {w for rests in PHRASES.values() for rest in rests for w in rest}
                    | {"times", "better", "improvement", "memory", "code", "the", "GPU", "3",
                       "2.4", "13x", "is", "a"})


@settings(deadline=None, database=None, derandomize=True)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=8),
       st.sampled_from([" ", ", ", "  ", " - "]))
def test_the_quick_test_never_hides_a_cue(words, separator):
    sentence = separator.join(words)
    if not may_have_cues(sentence):
        assert speed_cues(sentence) == []
    for cue in speed_cues(sentence):  # each cue is the sentence's own words
        assert cue.lower() in " ".join(sentence.split()).lower()


def _builds() -> list[Build]:
    cpu = lecture_record("cpu")
    gpu = lecture_record("Tesla T4")
    return [Build({PAGE: cpu}), Build({PAGE: gpu}, "_static/gpu-status.json")]


def _review() -> list:
    found, headings = sentences([TextBlock(LECTURE)])
    return statements_to_review(PAGE, found, headings, _builds(),
                                "lectures/numpy_vs_numba_vs_jax.md")


def test_the_lecture_review_list():
    review = _review()
    assert [s.sentence for s in review] == [
        "If we switch to NumPy-style vectorization we can use a much larger grid and the code "
        "executes relatively quickly.",
        "On the surface, vectorized code in JAX is similar to NumPy code.",
        "Once compiled, JAX is significantly faster than NumPy due to GPU acceleration.",
        "The execution time is similar to the mesh operation.",
        "When run on a GPU, it is usually significantly faster.",
        "The timing above excludes compilation, e.g. the first call.",
    ]
    # not listed: sentences with a claim or a ratio, instructions, code, math, tables
    lines = LECTURE.splitlines()
    for statement in review:
        assert statement.page == PAGE and statement.source.endswith(".md")
        assert statement.sentence.split()[0] in lines[statement.line - 1]


def test_each_statement_shows_the_timed_cells_before_it_with_each_builds_value():
    review = {s.sentence: s for s in _review()}
    similar = review["The execution time is similar to the mesh operation."]
    assert [e.name for e in similar.evidence] == ["mesh-first", "mesh", None, "vmap-v1"]
    vmap = similar.evidence[-1]
    assert [(v.build, v.device_kind, v.device_name, v.seconds, v.source) for v in vmap.values] \
        == [(None, "CPU", "AMD EPYC 7763", 0.012, TIMER),
            ("_static/gpu-status.json", "GPU", "Tesla T4", 0.0011, TIMER)]
    # the unnamed timed cell (vmap's first run) is matched by its place on the other build
    assert [v.seconds for v in similar.evidence[2].values] == [0.3, 0.2]
    # a sentence before any timed cell of its section shows the one after it
    quickly = review["If we switch to NumPy-style vectorization we can use a much larger "
                     "grid and the code executes relatively quickly."]
    assert [e.name for e in quickly.evidence] == ["numpy"]


def test_a_stale_build_keeps_named_values_only():
    builds = _builds()
    builds[1] = builds[1]._replace(stale_pages=frozenset({PAGE}))
    found, headings = sentences([TextBlock(LECTURE)])
    review = {s.sentence: s for s in statements_to_review(PAGE, found, headings, builds)}
    evidence = review["The execution time is similar to the mesh operation."].evidence
    assert [len(e.values) for e in evidence] == [2, 2, 1, 2]
    assert all(v.stale for v in evidence[1].values if v.build)


def test_the_nearest_cells_come_first_up_to_the_limit():
    timed = [Timing(name=f"t{n}", seconds=1.0, line=10 * n) for n in range(1, 8)]
    sentence = Sentence("It is faster.", Place(None, 65), section=0)
    assert [t.name for t in evidence_places(sentence, [], timed)] == \
        ["t3", "t4", "t5", "t6"][-EVIDENCE_CELLS:]
    # a heading at line 45 starts the sentence's section: only t5 and t6 are in it, but
    # the nearest before it count whatever their section
    section = Sentence("It is faster.", Place(None, 65), section=1)
    assert [t.name for t in evidence_places(section, [Place(None, 45)], timed)] == \
        ["t3", "t4", "t5", "t6"]
    # before the first cell of its section: the first cell after it in the section
    first = Sentence("It is faster.", Place(None, 47), section=1)
    assert [t.name for t in evidence_places(first, [Place(None, 45)], timed)] == \
        ["t2", "t3", "t4", "t5"]


def test_notebook_cells_are_ordered_by_position():
    timed = [Timing(name="a", seconds=1.0, position=1), Timing(name="b", seconds=1.0,
                                                                position=5)]
    sentence = Sentence("Faster.", Place(3, None), section=0)
    assert [t.name for t in evidence_places(sentence, [], timed)] == ["a"]


def test_a_page_without_a_record_lists_its_statements_without_evidence():
    found, headings = sentences([TextBlock("JAX is faster.\n\nNothing here.")])
    (statement,) = statements_to_review("intro", found, headings, [Build({})])
    assert statement.evidence == [] and statement.cues == ["faster"]
