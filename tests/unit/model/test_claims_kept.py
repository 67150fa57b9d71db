"""Claims, the review list and the quoting roles' values: kept by the status file (valid
against the strict schema, read back the same), by merges (a claim checked again on the
merged records), and stated per device."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from lecture_text import LECTURE, lecture_record

from sphinx_gpu_admonition.model import files
from sphinx_gpu_admonition.model.claims import Build, check_claims, claim_sites
from sphinx_gpu_admonition.model.merge import merge_reports
from sphinx_gpu_admonition.model.page_text import RATIO_ROLE, TIMING_ROLE, TextBlock, sentences
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from sphinx_gpu_admonition.model.speed_statements import statements_to_review
from sphinx_gpu_admonition.model.timing_quotes import (
    Quotes,
    parse_ratio,
    ratio_checks,
    timing_values,
)
from sphinx_gpu_admonition.model.timing_record import (
    FAILS,
    HOLDS,
    NOT_CHECKED,
    OTHER_DEVICE,
    PAGE_NOT_EXECUTED,
    PARSE,
    UNKNOWN_NAME,
    ClaimRules,
)
from sphinx_gpu_admonition.model.timings import Reference

PAGE = "lectures/numpy_vs_numba_vs_jax"
SCHEMA = json.loads((Path(files.__file__).parents[1] / "schema"
                     / "execution-status.schema.json").read_text(encoding="utf-8"))


def builds() -> list[Build]:
    return [Build({PAGE: lecture_record("cpu")}),
            Build({PAGE: lecture_record("Tesla T4")}, "_static/gpu-status.json")]


def report(of: list[Build]) -> StatusReport:
    found, headings = sentences([TextBlock(LECTURE)])
    sites = claim_sites(PAGE, found, "lectures/numpy_vs_numba_vs_jax.md")
    return StatusReport(notebooks=list(of[0].records.values()), build={},
                        claims=check_claims(sites, of, ClaimRules()),
                        timing_statements=statements_to_review(PAGE, found, headings, of))


def test_the_lectures_claims():
    claims = report(builds()).claims
    assert [(c.expression, c.line, c.verdict) for c in claims] == [
        ("mesh << numpy", 52, FAILS),  # 13x on the GPU, 2.1x on the CPU
        ("vmap-v2 ~ vmap-v1", 86, FAILS),  # 2.4x on the GPU
        ("jax-scan ~ numba on cpu", 114, HOLDS),
    ]
    mesh, vmap, scan = claims
    assert [c.verdict for c in mesh.checks] == [FAILS, HOLDS]
    assert [c.verdict for c in vmap.checks] == [HOLDS, FAILS]
    assert [(c.verdict, c.reason) for c in scan.checks] == [(HOLDS, ""),
                                                           (NOT_CHECKED, OTHER_DEVICE)]
    assert mesh.sentence == "JAX meshgrid is significantly faster than NumPy."


def test_claims_and_statements_round_trip_through_the_status_file(tmp_path):
    written = report(builds())
    path = tmp_path / "execution-status.json"
    path.write_text(files.status_json_text(written), encoding="utf-8")
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)
    read = files.read_status(path)
    assert read.claims == written.claims
    assert read.timing_statements == written.timing_statements
    assert read.notebooks[0].timings == written.notebooks[0].timings
    # a file of an earlier release (no claims) still reads
    del data["claims"], data["timing_statements"]
    assert StatusReport.from_dict(data).claims == []


def test_a_bad_claim_in_a_file_is_one_clear_error():
    from sphinx_gpu_admonition.model.schema import SchemaError

    data = report(builds()).to_dict()
    data["claims"][1]["checks"][1]["verdict"] = "maybe"
    with pytest.raises(SchemaError, match=r"claims\[1\]\.checks\[1\]\.verdict: 'maybe'"):
        StatusReport.from_dict(data)


def test_a_merge_keeps_each_pages_claims_and_checks_them_on_the_merged_records():
    numba = NotebookRecord(docname="lectures/numba", status="excluded", provenance="none")
    executed = lecture_record("cpu")
    executed.docname = "lectures/numba"
    executed.provenance = "executed"
    # job 1 executed the lecture, not lectures/numba; job 2 the other way round
    first = Build({PAGE: lecture_record("cpu"), "lectures/numba": numba})
    second = Build({PAGE: NotebookRecord(docname=PAGE, status="excluded",
                                         provenance="none"), "lectures/numba": executed})
    sites = [claim_sites(PAGE, sentences([TextBlock(LECTURE)])[0])[0]._replace(
        expression="numba:numba < mesh")]
    one = StatusReport(notebooks=list(first.records.values()),
                       claims=check_claims(sites, [first], ClaimRules()))
    two = StatusReport(notebooks=list(second.records.values()),
                       claims=check_claims(sites, [second], ClaimRules()))
    assert one.claims[0].checks[0].reason == PAGE_NOT_EXECUTED
    assert two.claims[0].checks[0].reason == PAGE_NOT_EXECUTED
    merged, _conflicts = merge_reports([("one.json", one), ("two.json", two)])
    (claim,) = merged.claims  # once: from the job whose record of the page counts
    assert claim.verdict == HOLDS and claim.checks[0].left.seconds == 0.07


def test_a_merge_keeps_the_review_list_of_pages_without_records():
    plain = StatusReport(notebooks=[], timing_statements=report(builds()).timing_statements)
    plain.timing_statements[0].page = "intro"
    merged, _ = merge_reports([("a.json", plain), ("b.json", plain)])
    assert [s.page for s in merged.timing_statements].count("intro") == 1


# -- the quoting roles' values ----------------------------------------------------------------
def test_timing_states_this_build_and_each_other_device():
    values, missing = timing_values("vmap-v2", PAGE, builds())
    assert missing is None
    assert [(v.build, v.device_kind, v.seconds) for v in values] == [
        (None, "CPU", 0.011), ("_static/gpu-status.json", "GPU", 0.00046)]
    values, missing = timing_values("/lectures/numpy_vs_numba_vs_jax.md:mesh", "intro",
                                    builds())
    assert [v.seconds for v in values] == [0.12, 0.019]


def test_timing_says_why_this_build_has_no_value():
    values, missing = timing_values("vmap-v3", PAGE, builds())
    assert values == [] and missing.reason == UNKNOWN_NAME and missing.subject == "vmap-v3"
    _values, missing = timing_values("vmap v3", PAGE, builds())
    assert missing.reason == PARSE
    # only another build has it: its value is stated, and this build's absence said
    only_gpu = [Build({}), builds()[1]]
    values, missing = timing_values("mesh", PAGE, only_gpu)
    assert [v.device_kind for v in values] == ["GPU"] and missing is not None


@pytest.mark.parametrize(("text", "parsed"), [
    ("vmap-v2 / vmap-v1", (Reference("vmap-v2"), Reference("vmap-v1"))),
    ("a/b", (Reference("a"), Reference("b"))),
    ("lectures/jax:a / b", (Reference("a", "lectures/jax"), Reference("b"))),
    ("a / lectures/jax:b", (Reference("a"), Reference("b", "lectures/jax"))),
])
def test_ratio_targets(text, parsed):
    assert parse_ratio(text) == parsed


@pytest.mark.parametrize("text", ["a", "a b", "lectures/jax:a/b", "a / b / c", "a < b"])
def test_bad_ratio_targets(text):
    (check,) = ratio_checks(text, PAGE, builds(), ClaimRules())
    assert check.reason == PARSE and check.ratio is None


def test_ratio_per_device():
    checks = ratio_checks("vmap-v2 / vmap-v1", PAGE, builds(), ClaimRules())
    assert [(c.device_kind, round(c.ratio, 3)) for c in checks] == [("CPU", 0.917),
                                                                   ("GPU", 0.418)]


def test_a_quote_is_warned_about_and_shown_from_one_answer():
    """``Quotes``: the warning of a ``{timing}`` or ``{timing-ratio}`` and its text read
    the same values, worked out once a build (the same objects on every ask), and they
    are the module functions' values."""
    quotes = Quotes(builds(), ClaimRules())
    checks = quotes.ratios("vmap-v2 / vmap-v1", PAGE)
    assert checks == ratio_checks("vmap-v2 / vmap-v1", PAGE, builds(), ClaimRules())
    assert quotes.ratios("vmap-v2 / vmap-v1", PAGE) is checks
    assert quotes.problem(RATIO_ROLE, "vmap-v2 / vmap-v1", PAGE) is None  # it has a value
    values = quotes.values("vmap-v2", PAGE)
    assert values == timing_values("vmap-v2", PAGE, builds())
    assert quotes.values("vmap-v2", PAGE) is values
    unknown = quotes.problem(TIMING_ROLE, "vmap-v3", PAGE)
    assert unknown is not None and unknown.reason == UNKNOWN_NAME
    bad = quotes.problem(RATIO_ROLE, "a / b / c", PAGE)
    assert bad is not None and bad.reason == PARSE
    assert quotes.problem("timing-claim", "a < b", PAGE) is None  # claims are checked apart
