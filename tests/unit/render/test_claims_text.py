"""render/claims_text.py: the words of {timing}, {timing-ratio}, a claim's mark, hover and
warning, the reasons a claim is not checked and the status page's sections; every text
through the engine's translator."""

from __future__ import annotations

import dataclasses
import re

import pytest
from lecture_text import lecture_record

from sphinx_gpu_admonition.model import claims as claim_rules
from sphinx_gpu_admonition.model import timing_record as tr
from sphinx_gpu_admonition.model.claims import Build, ClaimSite, check_claim
from sphinx_gpu_admonition.model.page_text import RATIO_ROLE, TIMING_ROLE
from sphinx_gpu_admonition.model.timing_quotes import Quotes, ratio_checks, timing_values
from sphinx_gpu_admonition.model.timing_record import ClaimCheck, ClaimRules
from sphinx_gpu_admonition.model.timings import BAD_NAME, TagProblem
from sphinx_gpu_admonition.render import claims_text as text
from sphinx_gpu_admonition.render.runtime_text import device_phrase, kind_phrase

PAGE = "lectures/numpy_vs_numba_vs_jax"
BUILDS = [Build({PAGE: lecture_record("cpu")}),
          Build({PAGE: lecture_record("Tesla T4")}, "_static/gpu-status.json")]


def claim(expression: str) -> tr.Claim:
    return check_claim(ClaimSite(PAGE, expression, 86, "lectures/x.md", "No gain."), BUILDS,
                       ClaimRules())


@pytest.mark.parametrize(("seconds", "words"), [
    (0.00046, "0.46 ms"), (0.0011, "1.1 ms"), (0.012, "12 ms"), (0.019, "19 ms"),
    (0.065, "65 ms"), (0.25, "250 ms"), (0.9997, "1 s"), (1.234, "1.2 s"), (12.5, "13 s"),
    (59.7, "1 min"), (90, "1.5 min"), (5400, "1.5 h"), (9.99e-5, "0.1 ms"), (4.6e-5, "46 µs"),
    (3e-8, "30 ns"), (0, "0 s"), (0.0125, "13 ms"), (0.00045, "0.45 ms"),
])
def test_times_read_with_two_significant_digits(seconds, words):
    assert text.reader_seconds(seconds) == words


@pytest.mark.parametrize(("ratio", "words"), [
    (0.00046 / 0.0011, "2.4 times faster"), (0.0011 / 0.019, "17 times faster"),
    (3.1, "3.1 times slower"), (1.05, "about the same"), (1 / 1.08, "about the same"),
    (1.2, "1.2 times slower"), (0.001, "1000 times faster"),
])
def test_ratios_read_as_readers_say_them(ratio, words):
    assert text.ratio_words(ratio) == words


def test_timing_names_this_build_and_each_other_device():
    values, _ = timing_values("vmap-v2", PAGE, BUILDS)
    assert text.timing_text(values) == \
        "11 ms on a CPU (AMD EPYC 7763), 0.46 ms on a GPU (Tesla T4)"
    assert text.timing_text(values[1:]) == "0.46 ms on a GPU (Tesla T4)"
    assert text.timing_text([]) == "an unknown time (not measured yet)"
    stale = dataclasses.replace(values[1], stale=True)
    assert text.value_phrase(stale) == "0.46 ms on a GPU (Tesla T4), measured on an " \
                                       "earlier version"


def test_the_device_phrase_is_the_runtime_roles():
    record = lecture_record("Tesla T4")
    assert kind_phrase("GPU", "Tesla T4") == device_phrase(record) == "a GPU (Tesla T4)"
    assert kind_phrase("CPU", None) == "a CPU"
    assert text.device_words("GPU", "Tesla T4") == "GPU (Tesla T4)"
    assert text.device_words(None, None) == "an unknown device"


def test_ratio_names_devices_when_there_are_several():
    checks = ratio_checks("vmap-v2 / vmap-v1", PAGE, BUILDS, ClaimRules())
    assert text.ratio_text(checks) == ("about the same on a CPU (AMD EPYC 7763), 2.4 times "
                                       "faster on a GPU (Tesla T4)")
    assert text.ratio_text(checks[1:]) == "2.4 times faster"
    assert text.ratio_text([ClaimCheck(reason=tr.PARSE)]) == \
        "an unknown ratio (not measured yet)"


def test_both_engines_quote_a_role_in_the_same_words():
    """``quoted_text``, which Sphinx's and mystmd's roles both call: the text and the
    hover of each role from the build's answers, "unknown" before anything is measured."""
    quotes = Quotes(BUILDS, ClaimRules())
    shown, hover = text.quoted_text(TIMING_ROLE, "vmap-v2", PAGE, quotes)
    assert shown == "11 ms on a CPU (AMD EPYC 7763), 0.46 ms on a GPU (Tesla T4)"
    assert "Tesla T4" in hover and "0.46" in hover
    shown, hover = text.quoted_text(RATIO_ROLE, "vmap-v2 / vmap-v1", PAGE, quotes)
    assert shown == ("about the same on a CPU (AMD EPYC 7763), 2.4 times faster on a GPU "
                     "(Tesla T4)")
    assert " = " in hover
    assert text.quoted_text(TIMING_ROLE, "vmap-v2", PAGE, None) == (
        "an unknown time (not measured yet)", "")
    assert text.quoted_text(RATIO_ROLE, "a / b", PAGE, None) == (
        "an unknown ratio (not measured yet)", "")


def test_a_failing_claims_warning_names_the_device_and_the_figures():
    failing = claim("vmap-v2 ~ vmap-v1")
    assert text.claim_warning(failing) == ("claim `vmap-v2 ~ vmap-v1` fails on GPU (Tesla "
                                           "T4): 0.46 ms vs 1.1 ms, 2.4 times faster")
    # holds on the GPU, too close to call on the CPU: no failure, no warning
    assert text.claim_warning(claim("vmap-v2 < vmap-v1")) is None
    both = claim("vmap-v1 > mesh")
    assert text.claim_warning(both) == (
        "claim `vmap-v1 > mesh` fails on CPU (AMD EPYC 7763): 12 ms vs 120 ms, 10 times "
        "faster; GPU (Tesla T4): 1.1 ms vs 19 ms, 17 times faster")


def test_a_claim_this_build_cannot_check_warns_why():
    assert text.problem_warning(claim("vmap-v3 < vmap-v1")) == (
        "claim `vmap-v3 < vmap-v1` is not checked: no timing is named 'vmap-v3' (did you "
        "mean 'vmap-v2'?)")
    assert text.problem_warning(claim("vmap-v2 <= vmap-v1")) == (
        "claim `vmap-v2 <= vmap-v1` is not checked: '<=' is not a comparison of timings "
        "(they are never exactly equal); a claim reads A < B, A > B, A << B, A >> B or A ~ B")
    assert text.problem_warning(claim("vmap-v2 < vmap-v1 on gpu")) is None


def test_every_check_reads_as_one_line():
    scoped = claim("vmap-v2 < vmap-v1 / 2 on gpu")
    assert [text.check_text(check) for check in scoped.checks] == [
        "not checked on CPU (AMD EPYC 7763): the claim is about the GPU",
        "holds on GPU (Tesla T4): 0.46 ms vs 1.1 ms, 2.4 times faster",
    ]
    assert text.mark_label(scoped) == "timing claim: holds"
    assert text.VERDICT_MARKS[scoped.verdict] == "✓"


def test_the_hover_gives_the_exact_figures_and_where_they_come_from():
    hover = text.hover_text(claim("vmap-v2 ~ vmap-v1"))
    assert hover == (
        "this build, CPU (AMD EPYC 7763): 11 ms (qe.Timer) vs 12 ms (qe.Timer), ratio "
        "0.917, bound 2 ± 10%: holds · gpu-status.json, GPU (Tesla T4): 0.46 ms (qe.Timer) "
        "vs 1.1 ms (qe.Timer), ratio 0.418, bound 2 ± 10%: fails")
    assert "\n" not in text.hover_text(claim("a b"))


REASONS = {
    tr.PARSE: ClaimCheck(reason=tr.PARSE, subject="a b", detail=claim_rules.NO_COMPARISON),
    tr.UNKNOWN_PAGE: ClaimCheck(reason=tr.UNKNOWN_PAGE, subject="lectures/numba"),
    tr.PAGE_NOT_EXECUTED: ClaimCheck(reason=tr.PAGE_NOT_EXECUTED, subject="lectures/off",
                                     detail="execution_off"),
    tr.UNKNOWN_NAME: ClaimCheck(reason=tr.UNKNOWN_NAME, subject="v3"),
    tr.NOT_UNIQUE: ClaimCheck(reason=tr.NOT_UNIQUE, subject="v1"),
    tr.NOT_EXECUTED: ClaimCheck(reason=tr.NOT_EXECUTED, subject="v1"),
    tr.NOT_RUN: ClaimCheck(reason=tr.NOT_RUN, subject="v1"),
    tr.CELL_FAILED: ClaimCheck(reason=tr.CELL_FAILED, subject="v1"),
    tr.TIMER_VALUES: ClaimCheck(reason=tr.TIMER_VALUES, subject="v1", detail="3"),
    tr.NOT_MEASURED: ClaimCheck(reason=tr.NOT_MEASURED, subject="v1"),
    tr.ZERO_TIME: ClaimCheck(reason=tr.ZERO_TIME, subject="v1"),
    tr.OTHER_DEVICE: ClaimCheck(reason=tr.OTHER_DEVICE, subject="gpu"),
    tr.NO_DEVICE: ClaimCheck(reason=tr.NO_DEVICE, subject="gpu"),
    tr.MIXED_DEVICES: ClaimCheck(reason=tr.MIXED_DEVICES, device_kind="CPU", device_name="X",
                                 subject="Tesla T4", detail="GPU"),
}


def test_every_reason_has_words():
    assert set(REASONS) == set(tr.REASONS) - {""}
    texts = {reason: text.reason_text(check) for reason, check in REASONS.items()}
    assert texts[tr.PAGE_NOT_EXECUTED] == \
        "'lectures/off' was not executed: not executed (execution off)"
    assert texts[tr.TIMER_VALUES] == "the cell of 'v1' printed 3 timer values"
    assert texts[tr.MIXED_DEVICES] == \
        "the two timings ran on different devices (CPU (X) and GPU (Tesla T4))"
    for reason, words in texts.items():
        assert words and not re.search(r"\b[a-z]+_[a-z_]+\b", words) and "%(" not in words, (
            reason, words)


@pytest.mark.parametrize("problem", claim_rules.SYNTAX_PROBLEMS)
def test_every_syntax_problem_has_words(problem):
    words = text.syntax_text(problem, "x")
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", words) and "%(" not in words
    assert words.endswith("a claim reads A < B, A > B, A << B, A >> B or A ~ B")


def test_tag_problems():
    assert text.tag_problem_text(TagProblem(BAD_NAME, "time:a.b", 1, 3)) == (
        "the tag 'time:a.b' names no timing: a timing name is letters, digits, - and _")
    assert "more than one cell" in text.tag_problem_text(TagProblem("not_unique", "time:a",
                                                                    1, 3))


def test_the_status_page_sections():
    found = [claim("vmap-v2 ~ vmap-v1"), claim("vmap-v2 < vmap-v1"), claim("vmap-v3 < a"),
             claim("mesh < numpy")]
    assert text.claims_summary(found) == \
        "4 timing claims: 1 fails, 1 too close to call, 1 holds, 1 not checked"
    assert text.claims_summary([]) == "0 timing claims"
    assert text.review_summary(6, 2) == "Timing statements to review: 6 on 2 pages"
    assert text.review_summary(1, 1) == "Timing statements to review: 1 on 1 page"
    assert set(text.column_texts()) >= {"claim", "sentence", "page", "verdict", "cells"}


# -- every word through the translator ---------------------------------------------------------
def marked(message: str) -> str:
    return f"«{message}»"


def marked_plural(singular: str, plural: str, count: int) -> str:
    return f"«{singular if count == 1 else plural}»"


def test_every_text_comes_through_the_translator():
    failing = claim("vmap-v2 ~ vmap-v1")
    values, _ = timing_values("vmap-v2", PAGE, BUILDS)
    outputs = [
        text.claim_warning(failing, marked, marked_plural),
        text.problem_warning(claim("vmap-v3 < a"), marked, marked_plural),
        text.timing_text(values, marked),
        text.ratio_text(ratio_checks("vmap-v2 / vmap-v1", PAGE, BUILDS, ClaimRules()),
                        translate=marked),
        text.hover_text(failing, marked),
        text.claims_summary([failing], marked_plural, marked),
        text.review_summary(6, 2, marked_plural, marked),
        *(text.check_text(check, marked, marked_plural) for check in failing.checks),
        *(text.reason_text(check, marked, marked_plural) for check in REASONS.values()),
    ]
    for output in outputs:
        # outside the translated texts only data: names, numbers, devices, separators
        outside = re.sub(r"«[^«»]*»", "", output)
        while "«" in outside:
            outside = re.sub(r"«[^«»]*»", "", outside)
        assert not re.search(r"\b(?:on|vs|times|claim|fails|holds|checked|the|a|and)\b",
                             outside), (output, outside)


def test_the_roles_read_in_the_books_language():
    """The shipped zh_CN catalog: what docs/claims.md says a Chinese page reads."""
    import gettext
    from pathlib import Path

    import sphinx_gpu_admonition

    catalog = gettext.translation("sphinx_gpu_admonition",
                                  Path(sphinx_gpu_admonition.__file__).parent / "locale",
                                  ["zh_CN"])
    checks = ratio_checks("vmap-v2 / vmap-v1", PAGE, BUILDS, ClaimRules())
    assert text.ratio_text(checks[1:], translate=catalog.gettext) == "快 2.4 倍"
    values, _ = timing_values("vmap-v2", PAGE, BUILDS)
    assert text.timing_text(values[1:], catalog.gettext) == "在 GPU（Tesla T4）上 0.46 毫秒"
