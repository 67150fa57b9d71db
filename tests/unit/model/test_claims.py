"""model/claims.py: the grammar of timing claims, their verdicts on this build and other
builds, verdicts that noise cannot flip, and bad input that is never a false verdict."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from lecture_text import environment

from sphinx_gpu_admonition.model import claims
from sphinx_gpu_admonition.model.claims import (
    Build,
    ClaimRules,
    ClaimSite,
    ClaimSyntaxError,
    ParsedClaim,
    check_claim,
    judge,
    parse_claim,
    recheck,
    worst_verdict,
)
from sphinx_gpu_admonition.model.page_text import TextBlock, sentences
from sphinx_gpu_admonition.model.record import NotebookRecord
from sphinx_gpu_admonition.model.settings import GpuConfig, validate
from sphinx_gpu_admonition.model.timing_record import (
    CELL,
    FAILS,
    HOLDS,
    MIXED_DEVICES,
    NO_DEVICE,
    NOT_CHECKED,
    NOT_RUN,
    NOT_UNIQUE,
    OTHER_DEVICE,
    PAGE_NOT_EXECUTED,
    PARSE,
    TIMER,
    TIMER_VALUES,
    TIMING_OK,
    TOO_CLOSE,
    UNKNOWN_NAME,
    UNKNOWN_PAGE,
    ZERO_TIME,
    ClaimCheck,
    Timing,
)
from sphinx_gpu_admonition.model.timings import Reference

PROPERTY = settings(deadline=None, database=None, derandomize=True)
RULES = ClaimRules()


# -- the grammar ---------------------------------------------------------------------------
@pytest.mark.parametrize(("expression", "parsed"), [
    ("vmap-v2 < vmap-v1", ParsedClaim(Reference("vmap-v2"), "<", Reference("vmap-v1"))),
    ("a>b", ParsedClaim(Reference("a"), ">", Reference("b"))),
    ("a << b", ParsedClaim(Reference("a"), "<<", Reference("b"))),
    ("a >> b", ParsedClaim(Reference("a"), ">>", Reference("b"))),
    ("a ~ b", ParsedClaim(Reference("a"), "~", Reference("b"))),
    ("a ≈ b", ParsedClaim(Reference("a"), "~", Reference("b"))),
    ("a ≪ b", ParsedClaim(Reference("a"), "<<", Reference("b"))),
    ("a < b / 3", ParsedClaim(Reference("a"), "<", Reference("b"), 3.0, "/")),
    ("a<b/3", ParsedClaim(Reference("a"), "<", Reference("b"), 3.0, "/")),
    ("a > b * 2.5", ParsedClaim(Reference("a"), ">", Reference("b"), 2.5, "*")),
    ("a > b × 2", ParsedClaim(Reference("a"), ">", Reference("b"), 2.0, "*")),
    ("a < b * 0.5", ParsedClaim(Reference("a"), "<", Reference("b"), 0.5, "*")),
    ("a ~ b on gpu", ParsedClaim(Reference("a"), "~", Reference("b"), scope="gpu")),
    ("a < b / 3 on CPU", ParsedClaim(Reference("a"), "<", Reference("b"), 3.0, "/", "cpu")),
    ("  a   <\nb  ", ParsedClaim(Reference("a"), "<", Reference("b"))),
    ("jax < lectures/numba:loop", ParsedClaim(Reference("jax"), "<",
                                              Reference("loop", "lectures/numba"))),
    ("/a/b.md:x << ../c:y / 2", None),  # << takes no factor
    ("lectures/numba:x / 2 < y", None),  # the factor goes on the right
])
def test_claims_parse(expression, parsed):
    if parsed is None:
        with pytest.raises(ClaimSyntaxError):
            parse_claim(expression)
    else:
        assert parse_claim(expression) == parsed


@pytest.mark.parametrize(("expression", "problem", "subject"), [
    ("", claims.EMPTY, ""),
    ("   ", claims.EMPTY, ""),
    ("vmap-v2 vmap-v1", claims.NO_COMPARISON, "vmap-v2 vmap-v1"),
    ("a <= b", claims.EQUALITY, "<="),
    ("a ≥ b", claims.EQUALITY, ">="),
    ("a = b", claims.EQUALITY, "="),
    ("a == b", claims.EQUALITY, "=="),
    ("a < b < c", claims.TWO_COMPARISONS, "a < b < c"),
    ("a <", claims.MISSING_SIDE, ""),
    ("< b", claims.MISSING_SIDE, ""),
    ("vmap v2 < b", claims.BAD_REFERENCE, "vmap v2"),
    ("a < b.c", claims.BAD_REFERENCE, "b.c"),
    ("a < b / x", claims.BAD_REFERENCE, "b / x"),
    ("a ~ b * 2", claims.FACTOR_NOT_ALLOWED, "~"),
    ("a >> b / 2", claims.FACTOR_NOT_ALLOWED, ">>"),
    ("a * 3 < b", claims.FACTOR_ON_LEFT, "a * 3"),
    ("a < b / 0", claims.BAD_FACTOR, "0"),
    ("a < b on mac", claims.BAD_SCOPE, "mac"),
    ("a < a", claims.SAME_TIMING, "a"),
    ("p:a ~ p:a on gpu", claims.SAME_TIMING, "p:a"),
])
def test_bad_expressions_say_what_is_wrong(expression, problem, subject):
    with pytest.raises(ClaimSyntaxError) as raised:
        parse_claim(expression)
    assert (raised.value.problem, raised.value.subject) == (problem, subject)
    assert problem in claims.SYNTAX_PROBLEMS


NAMES = st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True)
REFERENCES = st.builds(Reference, NAMES, st.none() | st.from_regex(r"/?[a-z]{1,5}(/[a-z_]{1,5})?",
                                                                    fullmatch=True))


@PROPERTY
@given(REFERENCES, st.sampled_from(claims.RELATIONS), REFERENCES,
       st.none() | st.tuples(st.sampled_from("*/"), st.integers(1, 20)),
       st.none() | st.sampled_from(["gpu", "cpu", "GPU"]), st.sampled_from(["", " ", "  "]))
def test_every_claim_written_reads_back(left, relation, right, factor, scope, space):
    assume(left != right)
    if relation not in ("<", ">"):
        factor = None
    text = f"{left}{space}{relation}{space}{right}"
    if factor:
        text += f"{space}{factor[0]}{space}{factor[1]}"
    if scope:
        text += f" on {scope}"
    parsed = parse_claim(text)
    assert (parsed.left, parsed.relation, parsed.right) == (left, relation, right)
    assert (parsed.factor_operator, parsed.factor) == \
        ((factor[0], float(factor[1])) if factor else (None, None))
    assert parsed.scope == (scope.lower() if scope else None)


@PROPERTY
@given(st.text(max_size=40))
def test_any_text_parses_or_says_why(text):
    try:
        parsed = parse_claim(text)
    except ClaimSyntaxError as error:
        assert error.problem in claims.SYNTAX_PROBLEMS
    else:
        assert parsed.relation in claims.RELATIONS


# -- verdicts ---------------------------------------------------------------------------------
def verdict(expression: str, left: float, right: float, rules: ClaimRules = RULES) -> str:
    parsed = parse_claim(expression)
    return judge(parsed.relation, math.log(left) - math.log(right), parsed.log_bound(rules),
                 rules.margin)


@pytest.mark.parametrize(("expression", "left", "right", "expected"), [
    ("a < b", 1.0, 2.0, HOLDS), ("a < b", 2.0, 1.0, FAILS), ("a < b", 1.0, 1.05, TOO_CLOSE),
    ("a > b", 2.0, 1.0, HOLDS), ("a > b", 1.0, 2.0, FAILS),
    # the statements: meshgrid 13x slower than NumPy's ...
    ("jax << numpy", 0.0015, 0.019, HOLDS),
    # "the execution time of vmap v1 is similar to the mesh operation": 17x faster
    ("vmap-v1 ~ mesh", 0.0011, 0.019, FAILS),
    # "we don't get much speed gain with vmap v2": 2.4x on the GPU (similar: within 2x)
    ("vmap-v2 ~ vmap-v1", 0.00046, 0.0011, FAILS),
    ("vmap-v2 ~ vmap-v1", 0.0011, 0.0011, HOLDS),  # "the same times" on the CPU
    # "Both JAX and Numba deliver strong performance": 0.065 s vs 0.069 s
    ("jax ~ numba", 0.065, 0.069, HOLDS),
    ("a < b / 3", 1.0, 4.0, HOLDS), ("a < b / 3", 1.0, 2.0, FAILS),
    ("a < b / 3", 1.0, 3.1, TOO_CLOSE),
    ("a > b * 3", 4.0, 1.0, HOLDS), ("a > b * 3", 2.0, 1.0, FAILS),
    ("a < b * 2", 1.5, 1.0, HOLDS), ("a < b * 2", 3.0, 1.0, FAILS),
    ("a > b / 2", 0.8, 1.0, HOLDS), ("a > b / 2", 0.2, 1.0, FAILS),
    ("a << b", 1.0, 5.0, HOLDS), ("a << b", 1.0, 3.0, FAILS), ("a << b", 1.0, 4.2, TOO_CLOSE),
    ("a >> b", 5.0, 1.0, HOLDS), ("a >> b", 2.0, 1.0, FAILS),
    ("a ~ b", 1.5, 1.0, HOLDS), ("a ~ b", 1.0, 1.5, HOLDS), ("a ~ b", 3.0, 1.0, FAILS),
    ("a ~ b", 1.0, 2.1, TOO_CLOSE), ("a ~ b", 2.1, 1.0, TOO_CLOSE),
])
def test_verdicts(expression, left, right, expected):
    assert verdict(expression, left, right) == expected


def test_the_margin_is_inclusive_and_the_factors_are_the_settings():
    assert verdict("a < b", 1.0, 1.1) == TOO_CLOSE  # exactly 10 % away: too close
    assert verdict("a < b", 1.0, 1.1001) == HOLDS
    strict = ClaimRules(much_factor=10, similar_factor=1.5, margin=0.0)
    assert verdict("a << b", 1.0, 5.0, strict) == FAILS
    assert verdict("a ~ b", 1.0, 1.6, strict) == FAILS
    assert verdict("a < b", 1.0, 1.0001, strict) == HOLDS


RATIOS = st.floats(min_value=1e-6, max_value=1e6)
TIMES = st.floats(min_value=1e-7, max_value=1e4)
MARGINS = st.floats(min_value=0.0, max_value=0.9)


@PROPERTY
@given(TIMES, TIMES, st.integers(1, 20), MARGINS)
def test_a_claim_and_its_mirror_get_the_same_verdict(a, b, k, margin):
    rules = ClaimRules(margin=margin)
    pairs = [("a < b", "b > a"), ("a << b", "b >> a"), (f"a < b / {k}", f"b > a * {k}"),
             (f"a > b / {k}", f"b < a * {k}"), ("a ~ b", "b ~ a")]
    for claim, mirror in pairs:
        # the mirror's left-hand timing is b
        assert verdict(claim, a, b, rules) == verdict(mirror, b, a, rules), claim


@PROPERTY
@given(TIMES, TIMES, st.floats(min_value=-1, max_value=1), MARGINS,
       st.sampled_from(["a < b", "a > b", "a << b", "a >> b", "a ~ b", "a < b / 3",
                        "a > b * 2"]))
def test_noise_within_the_margin_never_flips_a_verdict(a, b, noise, margin, expression):
    """A runner whose times vary by up to the margin can move a verdict to "too close to
    call", never from holds to fails or back."""
    rules = ClaimRules(margin=margin)
    jitter = math.exp(noise * math.log1p(margin))  # a factor within 1 + margin either way
    first, second = verdict(expression, a, b, rules), verdict(expression, a * jitter, b, rules)
    assert {first, second} != {HOLDS, FAILS}


@PROPERTY
@given(st.floats(min_value=0.5, max_value=2.0), st.floats(min_value=0.01, max_value=0.5))
def test_ratios_within_the_margin_of_the_bound_are_too_close(position, margin):
    # position: where the ratio lies between bound / (1 + m) and bound * (1 + m)
    assume(position != 1.0)
    rules = ClaimRules(margin=margin)
    exponent = (position - 1.25) / 0.75  # from -1 to 1
    ratio = math.exp(exponent * math.log1p(margin) * 0.999)
    assert verdict("a < b", ratio, 1.0, rules) == TOO_CLOSE


def test_the_worst_verdict_is_the_claims():
    checks = [ClaimCheck(verdict=v) for v in (HOLDS, TOO_CLOSE, NOT_CHECKED)]
    assert worst_verdict(checks) == TOO_CLOSE
    assert worst_verdict([*checks, ClaimCheck(verdict=FAILS)]) == FAILS
    assert worst_verdict([ClaimCheck(verdict=HOLDS), ClaimCheck()]) == HOLDS
    assert worst_verdict([ClaimCheck()]) == worst_verdict([]) == NOT_CHECKED


# -- builds ------------------------------------------------------------------------------------
def timing(name: str, seconds: float | None, status: str = TIMING_OK,
           source: str = TIMER) -> Timing:
    return Timing(name=name, status=status, seconds=seconds, source=source,
                  timer="qe.Timer" if source == TIMER else None)


def notebook(docname: str, device: str, *timings: Timing, status: str = "ok",
             capture: str = "ok") -> NotebookRecord:
    return NotebookRecord(docname=docname, status=status, provenance="executed",
                          capture=capture, environment=environment(device),
                          timings=list(timings))


def lecture(device: str, v1: float, v2: float, mesh: float = 0.019) -> NotebookRecord:
    return notebook("lectures/jax", device, timing("mesh", mesh), timing("vmap-v1", v1),
                    timing("vmap-v2", v2))


CPU_BUILD = Build({"lectures/jax": lecture("cpu", 0.012, 0.011)})
GPU_BUILD = Build({"lectures/jax": lecture("Tesla T4", 0.0011, 0.00046)}, "gpu-status.json")


def check(expression: str, *builds: Build, page: str = "lectures/jax") -> claims.Claim:
    return check_claim(ClaimSite(page, expression, 12, "lectures/jax.md", "We don't get "
                                 "much speed gain."), builds or (CPU_BUILD, GPU_BUILD), RULES)


def test_a_claim_is_checked_on_this_build_and_on_each_other_device():
    claim = check("vmap-v2 ~ vmap-v1")
    assert (claim.page, claim.line, claim.source) == ("lectures/jax", 12, "lectures/jax.md")
    assert [(c.build, c.device_kind, c.device_name, c.verdict) for c in claim.checks] == [
        (None, "CPU", "AMD EPYC 7763", HOLDS), ("gpu-status.json", "GPU", "Tesla T4", FAILS)]
    assert claim.verdict == FAILS
    gpu = claim.checks[1]
    assert (gpu.left.seconds, gpu.right.seconds, gpu.left.source, gpu.left.timer) == (
        0.00046, 0.0011, TIMER, "qe.Timer")
    assert gpu.ratio == pytest.approx(0.00046 / 0.0011)
    assert (gpu.bound, gpu.margin) == (pytest.approx(2.0), 0.1)
    assert claims.failures(claim) == [gpu] and claims.problem(claim) is None


def test_a_scoped_claim_is_not_checked_on_another_device_and_says_where():
    claim = check("vmap-v2 < vmap-v1 / 2 on gpu")
    cpu, gpu = claim.checks
    assert (cpu.verdict, cpu.reason, cpu.subject, cpu.device_kind) == (
        NOT_CHECKED, OTHER_DEVICE, "gpu", "CPU")
    assert cpu.left is None and cpu.ratio is None
    assert gpu.verdict == HOLDS and claim.verdict == HOLDS
    assert claims.problem(claim) is None  # a claim about the GPU is no problem on a CPU


def test_a_device_already_checked_is_not_checked_again():
    again = Build(CPU_BUILD.records, "cpu-status.json")
    claim = check("vmap-v2 ~ vmap-v1", CPU_BUILD, again, GPU_BUILD)
    assert [c.build for c in claim.checks] == [None, "gpu-status.json"]


def test_other_builds_without_the_page_or_its_device_say_nothing():
    other = Build({"lectures/other": lecture("Tesla T4", 1, 1)}, "old.json")
    unknown = Build({"lectures/jax": notebook("lectures/jax", "Tesla T4", capture="missing")},
                    "nocapture.json")
    assert [c.build for c in check("vmap-v2 ~ vmap-v1", CPU_BUILD, other, unknown).checks] \
        == [None]


def test_this_build_is_always_checked_and_says_why_not():
    empty = Build({})
    (only,) = check("vmap-v2 ~ vmap-v1", empty).checks
    assert (only.build, only.reason, only.subject) == (None, UNKNOWN_PAGE, "lectures/jax")


def test_a_stale_build_is_labelled():
    stale = GPU_BUILD._replace(stale_pages=frozenset({"lectures/jax"}))
    assert check("vmap-v2 ~ vmap-v1", CPU_BUILD, stale).checks[1].stale


def test_timings_of_other_pages_resolve_like_doc_targets():
    numba = notebook("lectures/numba", "cpu", timing("loop", 0.069))
    build = Build({**CPU_BUILD.records, "lectures/numba": numba})
    for expression in ("mesh < numba:loop", "mesh < /lectures/numba.md:loop",
                       "mesh < ../lectures/numba:loop"):
        assert check(expression, build).checks[0].verdict == HOLDS, expression


BAD = {
    "vmap-v3 < vmap-v1": (UNKNOWN_NAME, "vmap-v3", "vmap-v2"),  # the nearest name
    "numba:loop < mesh": (UNKNOWN_PAGE, "lectures/numba", None),
    "off:x < mesh": (PAGE_NOT_EXECUTED, "lectures/off", "execution_off"),
    "dup < mesh": (NOT_UNIQUE, "dup", None),
    "later < mesh": (NOT_RUN, "later", None),
    "loop < mesh": (TIMER_VALUES, "loop", "3"),
    "zero < mesh": (ZERO_TIME, "zero", None),
    "mesh < gpu:fast": (MIXED_DEVICES, "Tesla T4", "GPU"),
    "mesh << vmap-v1 / 2": (PARSE, "<<", claims.FACTOR_NOT_ALLOWED),
}


@pytest.mark.parametrize("expression", sorted(BAD))
def test_bad_input_is_not_checked_with_its_reason_never_a_verdict(expression):
    jax = lecture("cpu", 0.012, 0.011)
    jax.timings += [timing("dup", None, NOT_UNIQUE), timing("later", None, NOT_RUN),
                    Timing(name="loop", status=TIMER_VALUES, printed=[0.1, 0.2, 0.3]),
                    timing("zero", 0.0)]
    build = Build({"lectures/jax": jax,
                   "lectures/off": notebook("lectures/off", "cpu", status="execution_off"),
                   "lectures/gpu": notebook("lectures/gpu", "Tesla T4", timing("fast", 1e-4))})
    claim = check(expression, build)
    (only,) = claim.checks
    assert claim.verdict == NOT_CHECKED and only.verdict == NOT_CHECKED
    assert (only.reason, only.subject, only.detail) == BAD[expression]
    assert claims.problem(claim) is only  # each one warns


def test_a_scope_on_a_build_without_its_device_is_not_checked_quietly():
    build = Build({"lectures/jax": notebook("lectures/jax", "cpu", timing("a", 1),
                                            timing("b", 2), capture="missing")})
    claim = check("a < b on gpu", build)
    assert claim.checks[0].reason == NO_DEVICE and claims.problem(claim) is None
    # without a scope, the same machine ran both: checked
    assert check("a < b", build).checks[0].verdict == HOLDS


def test_timer_and_cell_values_are_compared_alike():
    build = Build({"lectures/jax": notebook("lectures/jax", "cpu", timing("a", 1.0, source=CELL),
                                            timing("b", 2.0))})
    check_ = check("a < b", build).checks[0]
    assert (check_.left.source, check_.right.source, check_.verdict) == (CELL, TIMER, HOLDS)


# -- merges: a job's claim on a page another job executed ----------------------------------
def test_recheck_uses_the_merged_records_and_keeps_other_builds():
    numba = notebook("lectures/numba", "cpu", timing("loop", 0.069))
    shard = Build({"lectures/jax": CPU_BUILD.records["lectures/jax"],
                   "lectures/numba": notebook("lectures/numba", "cpu", status="excluded")})
    claim = check("mesh < numba:loop", shard, GPU_BUILD)
    assert claim.checks[0].reason == PAGE_NOT_EXECUTED
    merged = recheck(claim, {**shard.records, "lectures/numba": numba})
    assert merged.checks[0].verdict == HOLDS and merged.verdict == HOLDS
    assert merged.checks[1:] == claim.checks[1:]
    unparsed = check("a <= b", shard)
    assert recheck(unparsed, shard.records) == unparsed


# -- where claims are, and the settings ------------------------------------------------------------
def test_claims_are_found_in_the_text_with_their_sentence_and_line():
    text = ("# vmap\n\nWe don't get much speed gain.\n{timing-claim}`vmap-v2 ~ vmap-v1`\n"
            "When run on a GPU,\nit is usually {timing-claim}`vmap-v1 << mesh on gpu` "
            "significantly faster.\n")
    found, _headings = sentences([TextBlock(text, line=10)])
    sites = claims.claim_sites("lectures/jax", found, "lectures/jax.md")
    assert sites == [
        ClaimSite("lectures/jax", "vmap-v2 ~ vmap-v1", 13, "lectures/jax.md",
                  "We don't get much speed gain."),
        ClaimSite("lectures/jax", "vmap-v1 << mesh on gpu", 15, "lectures/jax.md",
                  "When run on a GPU, it is usually significantly faster."),
    ]


def test_the_rules_are_the_options_defaults():
    assert ClaimRules.from_config(GpuConfig()) == RULES == ClaimRules(4.0, 2.0, 0.1)
    reports: list[str] = []
    config = validate({"claim_much_factor": 1, "claim_similar_factor": "x",
                       "claim_margin": 1.0}, reports.append)
    assert ClaimRules.from_config(config) == RULES and len(reports) == 3
    assert "gpu_claim_margin" in reports[2] and "below 1" in reports[2]
    good = validate({"claim_much_factor": "10", "claim_similar_factor": 1.5,
                     "claim_margin": "0"}, reports.append)
    assert ClaimRules.from_config(good) == ClaimRules(10.0, 1.5, 0.0)
