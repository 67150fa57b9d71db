"""render/finding_text.py: the findings' sentences from the flags' facts, written once,
in English for the logs, JUnit, GitHub and the JSON, and through the book's catalog
for its pages (zh_CN here, the package's own catalog)."""

from __future__ import annotations

import json
import re

import pytest

from sphinx_gpu_admonition.model.rules import HINT_RULES, NOTE_RULES, Flag, Rule
from sphinx_gpu_admonition.mystmd import settings
from sphinx_gpu_admonition.render.finding_text import ENGLISH, FindingText

#: one flag of every rule, with the facts its rule in model/analysis.py gives
FLAGS = {
    Rule.SLOW: Flag(Rule.SLOW, {"seconds": 12.5, "limit": 10.0}),
    Rule.SHARE: Flag(Rule.SHARE, {"share": 0.69}),
    Rule.REGRESSION: Flag(Rule.REGRESSION, {"ratio": 3.0, "baseline_seconds": 4.0,
                                            "relative": 2.5, "machine_factor": 1.2}),
    Rule.COMPILE: Flag(Rule.COMPILE, {"compile_seconds": 4.6, "share": 0.6,
                                      "run_seconds": 3.0}),
    Rule.RECOMPILE: Flag(Rule.RECOMPILE, {
        "functions": [{"name": "jit(f)", "count": 4}, {"name": "jit(step)", "count": 3}],
        "internal": 3, "jax_says": [], "explained": False}),
    Rule.COMPILED_AGAIN: Flag(Rule.COMPILED_AGAIN, {
        "functions": [{"name": "jit(q)", "first_cell": 9}], "compile_seconds": 2.0,
        "jax_says": [{"function": "jit(q)", "reason": "seen another function"}],
        "explained": True}),
    Rule.SEQUENTIAL_LOOP: Flag(Rule.SEQUENTIAL_LOOP, {
        "runs": [{"primitive": "lax.scan", "steps": 20000, "function": "qm_jax",
                  "loop_function": None, "module": None, "defined_cell": 2,
                  "defined_earlier": False, "step_seconds": 8.2e-6}],
        "library": [{"function": "jit(sample)", "loops": 1, "steps": 1000,
                     "step_seconds": None}]}),
    Rule.DISPATCH_LOOP: Flag(Rule.DISPATCH_LOOP, {"loops": [{
        "loop": "for", "code": "for _ in range(calls):", "line": 3, "function": None,
        "loop_function": None, "defined_cell": 3, "module": None, "calls": ["step"],
        "operations": [], "iterations": 200_000, "iteration_seconds": 1.2e-5, "syncs": [],
        "guarded": 0}]}),
    Rule.HOST_SYNC: Flag(Rule.HOST_SYNC, {"loops": [{
        "loop": "while", "code": "while error > tol:", "line": 4, "function": "vfi",
        "loop_function": None, "defined_cell": 4, "module": None, "calls": ["T"],
        "operations": ["jnp.max", "jnp.abs"], "iterations": None, "iteration_seconds": None,
        "syncs": [{"kind": "float", "code": "error = float(jnp.max(jnp.abs(v_new - v)))",
                   "line": 6}], "guarded": 0}]}),
    Rule.FLOAT64: Flag(Rule.FLOAT64, {}),
    Rule.COMPILATION_CACHE: Flag(Rule.COMPILATION_CACHE, {
        "compile_seconds": 60.0, "share": 0.6, "notebooks": 2}),
    Rule.SLOW_OK: Flag(Rule.SLOW_OK, {"seconds": 30.0, "tag": "slow-ok"}),
    Rule.IMPORTS: Flag(Rule.IMPORTS, {"seconds": 12.0, "limit": 10.0}),
}
FLAGS[Rule.PYTHON_LOOP] = Flag(Rule.PYTHON_LOOP, {
    "dispatch": FLAGS[Rule.DISPATCH_LOOP].facts["loops"], "sync": []})

ENGLISH_REASONS = {
    Rule.SLOW: "took 12.5 s (limit 10.0 s)",
    Rule.SHARE: "69% of the notebook's cell time",
    Rule.REGRESSION: "3.0x slower than the baseline (4.00 s); 2.5x beyond the machine's 1.2x",
    Rule.COMPILE: "JAX compilation took 4.60 s (60% of the cell), running 3.00 s",
    Rule.RECOMPILE: "recompiled in this cell: jit(f) (4x), jit(step) (3x), +3 JAX-internal "
                    "— new shapes, dtypes or static arguments trigger a new compilation "
                    "each time",
    Rule.COMPILED_AGAIN: "compiled again: jit(q) (first in cell 9), 2.00 s of compilation — "
                         "JAX says for jit(q): seen another function",
    Rule.SEQUENTIAL_LOOP: "runs `qm_jax` (defined in cell 2), a `lax.scan` of 20,000 steps: "
                          "about 8.2 µs per step on the GPU; runs a while loop of 1,000 steps "
                          "compiled in `jit(sample)` (library code) — on the GPU every "
                          "iteration launches device kernels, so long sequential loops can "
                          "be far slower than on the CPU",
    Rule.DISPATCH_LOOP: "its `for` loop (line 3) calls `step` 200,000 times, about 12 µs "
                        "per call — every call is dispatched from Python and, on a GPU, "
                        "launches device kernels of its own: many small calls take far "
                        "longer than one program",
    Rule.HOST_SYNC: "the `while` loop of `vfi` (defined in cell 4, line 4), which calls `T`, "
                    "copies a device value to the host on every iteration: "
                    "`error = float(jnp.max(jnp.abs(v_new - v)))` (line 6) — each copy waits "
                    "for the device to finish, so JAX cannot queue the next steps while "
                    "Python runs",
    Rule.PYTHON_LOOP: "a Python loop around JAX: its `for` loop (line 3) calls `step` 200,000 "
                      "times, about 12 µs per call; this build ran on a CPU, where on a GPU "
                      "every call would also launch device kernels and every copy wait for "
                      "the device",
    Rule.FLOAT64: "float64 is enabled (jax_enable_x64) on the GPU",
    Rule.COMPILATION_CACHE: "JAX compilation took 60.0 s (60% of the executed cells' time) "
                            "in 2 notebooks run on CI without a persistent compilation cache",
    Rule.SLOW_OK: "slow on purpose (tagged slow-ok), took 30.0 s",
    Rule.IMPORTS: "only imports: took 12.0 s (limit 10.0 s)",
}


def chinese() -> FindingText:
    catalog = settings.translator("zh_CN")
    return FindingText(catalog.gettext, catalog.ngettext)


def test_every_rule_has_a_flag_here() -> None:
    assert set(FLAGS) == set(Rule)


@pytest.mark.parametrize("rule", list(Rule), ids=str)
def test_the_english_reasons_are_the_ones_the_json_always_had(rule: Rule) -> None:
    assert ENGLISH.reason(FLAGS[rule]) == ENGLISH_REASONS[rule]


def test_every_rule_but_a_slow_ok_cell_says_what_to_do() -> None:
    without = [rule for rule in Rule if not ENGLISH.rule_action(FLAGS[rule])]
    assert without == [Rule.SLOW_OK]


def test_a_hint_reads_with_its_action_and_a_recompilation_says_how_to_learn_why() -> None:
    recompile = FLAGS[Rule.RECOMPILE]
    assert ENGLISH.text(recompile) == (ENGLISH.reason(recompile) + "; "
                                       + ENGLISH.rule_action(recompile))
    assert ENGLISH.text(FLAGS[Rule.SLOW]) == ENGLISH.reason(FLAGS[Rule.SLOW])  # no hint
    # the most specific rule's action; the kernel did not record JAX's explanations
    assert ENGLISH.action([FLAGS[Rule.SLOW], recompile]) == (
        ENGLISH.rule_action(recompile) + ENGLISH.explain_advice())
    again = FLAGS[Rule.COMPILED_AGAIN]  # recorded: no advice
    assert ENGLISH.action([again]) == ENGLISH.rule_action(again)
    # the cell's compiled_again knows the cause (a new input shape): no advice either
    shape = Flag(Rule.COMPILED_AGAIN, {
        "functions": [{"name": "jit(step)", "first_cell": 3, "cause": "inputs",
                       "change": "shape", "now": "f32[10,4]", "before": "f32[4]"}],
        "compile_seconds": 0.6, "jax_says": [], "explained": False})
    assert ENGLISH.action([recompile, shape]) == ENGLISH.rule_action(recompile)


def test_the_regression_states_the_machine_only_when_it_differs() -> None:
    same = Flag(Rule.REGRESSION, {"ratio": 2.0, "baseline_seconds": 1.0, "relative": 2.0,
                                  "machine_factor": 1.02})
    assert ENGLISH.reason(same) == "2.0x slower than the baseline (1.00 s)"


CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("rule", list(Rule), ids=str)
def test_a_chinese_page_gets_every_reason_and_action_in_chinese(rule: Rule) -> None:
    words = chinese()
    flag = FLAGS[rule]
    reason, action = words.reason(flag), words.rule_action(flag)
    assert reason != ENGLISH.reason(flag) and CJK.search(reason), reason
    if ENGLISH.rule_action(flag):
        assert CJK.search(action) and action != ENGLISH.rule_action(flag), action
    # the facts' own words stay: function names, numbers, JAX's text
    if rule == Rule.COMPILED_AGAIN:
        assert "jit(q)" in reason and "单元格 9" in reason and "seen another function" in reason


def test_the_rule_is_a_plain_string_wherever_it_is_written() -> None:
    assert f"{Rule.COMPILED_AGAIN}" == str(Rule.COMPILED_AGAIN) == "compiled_again"
    assert json.dumps({"rule": Rule.SLOW}) == '{"rule": "slow"}'
    assert Rule("slow") is Rule.SLOW and Rule.SLOW == "slow"
    assert set(HINT_RULES).isdisjoint(NOTE_RULES)


def test_code_in_a_sentence_is_code_on_every_page_and_in_markdown() -> None:
    from sphinx_gpu_admonition.render.finding_text import code_spans
    from sphinx_gpu_admonition.render.markdown import md_prose
    from sphinx_gpu_admonition.render.status_html import code_markup

    sentence = "runs `qm_jax` (defined in cell 2), a `lax.scan` of 10 steps"
    assert code_spans(sentence) == [("runs ", False), ("qm_jax", True),
                                    (" (defined in cell 2), a ", False), ("lax.scan", True),
                                    (" of 10 steps", False)]
    assert str(code_markup(sentence)) == (
        "runs <code>qm_jax</code> (defined in cell 2), a <code>lax.scan</code> of 10 steps")
    # untrusted text stays text: escaped in the code and around it
    assert str(code_markup("a <b> `x<y|z` @here")) == (
        "a &lt;b&gt; <code>x&lt;y|z</code> @here")
    # Markdown table cells: code spans (their | escaped), the rest escaped, no mention
    assert md_prose("a *b* `x|y` @here") == "a \\*b\\* `x\\|y` &#64;here"
    assert md_prose(sentence).startswith("runs `qm_jax` (defined in cell 2), a `lax.scan`")
    # an unpaired backtick is no code
    assert code_spans("it's `odd") == [("it's `odd", False)]
