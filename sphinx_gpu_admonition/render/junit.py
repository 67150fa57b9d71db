"""JUnit XML of a build: one test case per notebook and one per flagged cell, for CI
dashboards."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple
from xml.etree import ElementTree

from ..model.analysis import BuildAnalysis
from ..model.findings import BudgetFinding, Finding, budget_findings, findings
from ..model.formatting import format_seconds, one_line, safe_line, safe_text
from ..model.record import (
    BUILD_FAILED,
    CACHE,
    EARLIER_BUILD,
    EXECUTED,
    NotebookRecord,
    StatusReport,
)
from ..model.timing_record import FAILS, NOT_CHECKED, Claim
from .claims_text import check_text, claim_warning, problem_warning
from .finding_text import ENGLISH as WORDS


@functools.cache
def _not_xml() -> re.Pattern[str]:
    """Characters XML 1.0 cannot hold, even escaped: the controls but tab, newline and
    carriage return, lone surrogates, U+FFFE and U+FFFF (the complement of XML's
    ``Char`` production, written as what it excludes: the negated class of what it
    allows took ten times as long to compile, 4 ms of a build that wrote a multi-line
    output); compiled when first needed."""
    return re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_characters(text: str | None) -> str | None:
    """``text`` without characters that make an XML file invalid (ElementTree keeps them)."""
    if not text or text.isprintable():  # printable characters are all XML characters
        return text
    return _not_xml().sub("", text)


def _attribute(text: str) -> str:
    """An attribute value as every output line is written (:func:`safe_line`): a CI
    step that prints a test case's name or message prints no workflow command."""
    return safe_line(one_line(text))


def _body(text: str | None) -> str | None:
    """A failure's or an output's text: each of its lines a :func:`safe_line`."""
    return safe_text(text) if text else text


class FailOn(NamedTuple):
    """Which findings fail their test case: those whose warning fails the build
    (``gpu_warn_slow_cells`` / ``gpu_warn_regressions`` / a time budget in a build with
    ``-W``), so that the JUnit file is red exactly when the build is."""

    #: every flagged cell but the notes (its ``gpu_admonition.slow_cell`` warning is an
    #: error; ``slow-ok`` and import cells never warn, so never fail)
    slow_cells: bool = False
    #: regression cells and regressed notebooks (``gpu_admonition.regression``)
    regressions: bool = False
    #: the notebooks over their time budget (``gpu_admonition.budget``, always warned)
    budget: bool = False


#: no finding fails: the build's warnings do not fail it
NEVER_FAIL = FailOn()


def fail_on(warn_slow_cells: bool, warn_regressions: bool, fails_on_warnings: bool) -> FailOn:
    """The findings whose warning fails a build (``-W``, ``--strict``: ``fails_on_warnings``)
    with these rule settings: the budget's always (the budget is the opt-in)."""
    if not fails_on_warnings:
        return NEVER_FAIL
    return FailOn(slow_cells=warn_slow_cells, regressions=warn_regressions, budget=True)


def _executed_now(nb: NotebookRecord) -> bool:
    return nb.executed and nb.provenance == EXECUTED


def _cell_case(suite: ElementTree.Element, finding: Finding, fail_on: FailOn) -> bool:
    """A flagged cell as a test case of its own (classname its notebook, name the cell's
    name: "cell 3"), passing with its reason and action in its output, or failing when
    its warning fails the build; returns whether it fails."""
    nb = finding.notebook
    # a cell's time, like its notebook's, is what this build spent executing it
    seconds = finding.seconds if _executed_now(nb) else 0.0
    case = ElementTree.SubElement(suite, "testcase", classname=nb.docname,
                                  name=finding.name.label, time=f"{seconds:.3f}")
    # where the cell is, for the reporters that link a case to the source
    if nb.source:
        case.set("file", nb.source)
        line = finding.source_line  # the work's line, else the cell's fence
        if line is not None:
            case.set("line", str(line))
    reason = WORDS.finding_reason(finding)
    text = f"{finding.name.full} ({format_seconds(finding.seconds)}): flagged: {reason}"
    action = WORDS.finding_action(finding)
    if action:  # a slow-ok cell has none
        text += f"\nwhat to do: {action}"
    if finding.code:  # the console's lines, in its order
        text += f"\ncode: {finding.code}"
    timing = WORDS.timing(finding)
    if timing:
        text += f"\n{timing}"
    # a note (slow-ok, imports) is never warned about, so its case passes like the build
    slow_cell = fail_on.slow_cells and not finding.is_note
    failing = slow_cell or (fail_on.regressions and finding.is_regression)
    if failing:
        rule = "slow_cell" if slow_cell else "regression"
        failure = ElementTree.SubElement(
            case, "failure", type=rule,
            message=f"{finding.name.label} ({format_seconds(finding.seconds)}): {reason}")
        failure.text = text
    else:
        ElementTree.SubElement(case, "system-out").text = text
    return failing


def _claim_case(suite: ElementTree.Element, claim: Claim) -> str:
    """A timing claim as a test case (classname its page, name the claim as written):
    a failure when it fails on any build, skipped when no build could check it (why
    in the message), else passing; each build's verdict in its output."""
    case = ElementTree.SubElement(suite, "testcase", classname=claim.page,
                                  name=f"timing claim {claim.expression}", time="0.000")
    if claim.source:
        case.set("file", claim.source)
        if claim.line is not None:
            case.set("line", str(claim.line))
    text = "\n".join([claim.sentence, *(check_text(check) for check in claim.checks)]
                     ).strip()
    if claim.verdict == FAILS:
        failure = ElementTree.SubElement(case, "failure", type="claim",
                                         message=claim_warning(claim) or "")
        failure.text = text
    elif claim.verdict == NOT_CHECKED:
        ElementTree.SubElement(case, "skipped", message=problem_warning(claim) or (
            check_text(claim.checks[0]) if claim.checks else "not checked"))
        ElementTree.SubElement(case, "system-out").text = text
    else:
        ElementTree.SubElement(case, "system-out").text = text
    return claim.verdict


def _budget_text(row: BudgetFinding) -> str:
    return f"over its time budget: {WORDS.budget(row.seconds, row.budget_seconds)}"


def junit_xml(report: StatusReport, analysis: BuildAnalysis | None = None,
              fail_on: FailOn = NEVER_FAIL) -> str:
    """One test case per notebook, one per flagged cell of ``analysis`` (the build's)
    and one per timing claim; errors, timeouts, dead kernels and claims that fail are
    failures.

    A test case's time is what this build spent executing it: outputs reused from
    the jupyter-cache or from an earlier build cost nothing now (their original time
    is in the case's output).  A flagged cell's case (after its notebook's, slowest
    first) passes, its reason and action in its output, unless ``fail_on`` says that
    its warning fails the build; so does a notebook's case when the notebook is over its
    time budget and warnings fail the build (else the excess is in its output).  A
    build that stopped adds an error case, so a CI gate reading this file fails with
    the build.
    """
    over_budget: dict[str, BudgetFinding] = ({
        row.notebook.docname: row for row in budget_findings(analysis)}
        if analysis is not None else {})
    flagged: dict[str, list[Finding]] = {}
    for finding in findings(analysis) if analysis is not None else []:
        flagged.setdefault(finding.notebook.docname, []).append(finding)
    regressed = ({result.notebook.docname: result for result in analysis.regressed}
                 if analysis is not None and fail_on.regressions else {})
    suite = ElementTree.Element("testsuite", name="notebooks")
    tests = failures = skipped = errors = 0
    total = 0.0
    for nb in report.notebooks:
        # the ``time`` attributes are JUnit's: seconds as a plain number
        seconds = nb.seconds if _executed_now(nb) else 0.0
        total += seconds
        tests += 1
        case = ElementTree.SubElement(suite, "testcase", classname="notebooks",
                                      name=nb.docname, time=f"{seconds:.3f}")
        # one failure per case: an error or a regression is the news, not the budget
        budget_fails = (nb.docname in over_budget and fail_on.budget and not nb.failed
                        and nb.docname not in regressed)
        if nb.failed:
            failures += 1
            error = nb.error
            message = f"{nb.status}: {error.type}" if error else nb.status
            failing = nb.error_cell()
            if failing is not None:
                message += f" in {nb.cell_name(failing).label}"
            failure = ElementTree.SubElement(case, "failure", message=message,
                                             type=error.type if error else nb.status)
            failure.text = error.message if error else ""  # cleaned by capture
        elif nb.docname in regressed:
            failures += 1
            comparison = regressed[nb.docname].comparison
            assert comparison is not None and comparison.ratio is not None
            ElementTree.SubElement(
                case, "failure", type="regression",
                message=f"regressed: {format_seconds(nb.seconds)}, {comparison.ratio:.1f}x "
                        f"the baseline ({format_seconds(comparison.baseline_seconds)})")
        elif budget_fails:
            failures += 1
            ElementTree.SubElement(case, "failure", type="budget",
                                   message=_budget_text(over_budget[nb.docname]))
        elif not nb.executed:
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=nb.status.replace("_", " "))
        output = []
        if nb.executed and nb.capture == "failed":  # it ran, but nothing of it is measured
            output.append(f"capture failed: {nb.capture_message or 'no reason given'}")
        if nb.docname in over_budget and not budget_fails:
            output.append(_budget_text(over_budget[nb.docname]))
        expected = [f"{nb.cell_name(c).label} raised {c.error} (expected)"
                    for c in nb.cells if c.error and c.error_expected]
        if expected:  # allowed to raise: not a failure, but said where it happened
            ElementTree.SubElement(case, "system-err").text = "; ".join(expected)
        if nb.provenance in (CACHE, EARLIER_BUILD):
            where = ("the jupyter-cache" if nb.provenance == CACHE
                     else "an earlier build (the page was not read again)")
            output.append(f"outputs reused from {where}; executed {nb.executed_at} "
                          f"in {format_seconds(nb.seconds)}")
        if output:  # JUnit readers show one system-out per case
            ElementTree.SubElement(case, "system-out").text = "\n".join(output)
        for finding in flagged.get(nb.docname, []):
            tests += 1
            failures += _cell_case(suite, finding, fail_on)
    for claim in analysis.claims if analysis is not None else report.claims:
        tests += 1
        verdict = _claim_case(suite, claim)
        failures += verdict == FAILS
        skipped += verdict == NOT_CHECKED
    if report.build.get("outcome") == BUILD_FAILED:
        errors += 1
        case = ElementTree.SubElement(suite, "testcase", classname="build",
                                      name="sphinx-build", time="0.000")
        ElementTree.SubElement(case, "error", message="the build stopped before it finished",
                               type="BuildFailed").text = str(report.build.get("failure") or "")
    suite.set("tests", str(tests + errors))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", str(errors))
    suite.set("time", f"{total:.3f}")
    for element in suite.iter():
        element.text = _xml_characters(_body(element.text))
        for name, value in element.attrib.items():
            element.set(name, _xml_characters(_attribute(value)))
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
