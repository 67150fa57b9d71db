"""JUnit XML of a build: one test case per notebook, for CI dashboards."""

from __future__ import annotations

import functools
import re
from xml.etree import ElementTree

from ..model.analysis import BuildAnalysis
from ..model.findings import Finding, findings
from ..model.formatting import format_seconds
from ..model.record import BUILD_FAILED, CACHE, EARLIER_BUILD, EXECUTED, StatusReport


@functools.cache
def _not_xml() -> re.Pattern[str]:
    """Characters XML 1.0 cannot hold, even escaped (control characters, lone
    surrogates); compiled when first needed (it takes 4 ms)."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_characters(text: str | None) -> str | None:
    """``text`` without characters that make an XML file invalid (ElementTree keeps them)."""
    if not text or text.isprintable():  # printable characters are all XML characters
        return text
    return _not_xml().sub("", text)


def _flagged_text(finding: Finding) -> str:
    return (f"flagged {finding.name.full}: {finding.reason}; what to do: {finding.action}")


def junit_xml(report: StatusReport, analysis: BuildAnalysis | None = None) -> str:
    """One test case per notebook; errors, timeouts and dead kernels are failures.

    A test case's time is what this build spent executing it: outputs reused from
    the jupyter-cache or from an earlier build cost nothing now (their original time
    is in the case's output).  The flagged cells of ``analysis`` (the build's) are in
    their notebook's output, without failing it.  A build that stopped adds an error
    case, so a CI gate reading this file fails with the build.
    """
    flagged: dict[str, list[str]] = {}
    for finding in findings(analysis) if analysis is not None else []:
        flagged.setdefault(finding.notebook.docname, []).append(_flagged_text(finding))
    suite = ElementTree.Element("testsuite", name="notebooks")
    failures = skipped = errors = 0
    total = 0.0
    for nb in report.notebooks:
        # the ``time`` attributes are JUnit's: seconds as a plain number
        seconds = nb.seconds if nb.executed and nb.provenance == EXECUTED else 0.0
        total += seconds
        case = ElementTree.SubElement(suite, "testcase", classname="notebooks",
                                      name=nb.docname, time=f"{seconds:.3f}")
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
        elif not nb.executed:
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=nb.status.replace("_", " "))
        expected = [f"{nb.cell_name(c).label} raised {c.error} (expected)"
                    for c in nb.cells if c.error and c.error_expected]
        if expected:  # allowed to raise: not a failure, but said where it happened
            ElementTree.SubElement(case, "system-err").text = "; ".join(expected)
        output = list(flagged.get(nb.docname, []))
        if nb.provenance in (CACHE, EARLIER_BUILD):
            where = ("the jupyter-cache" if nb.provenance == CACHE
                     else "an earlier build (the page was not read again)")
            output.insert(0, f"outputs reused from {where}; executed {nb.executed_at} "
                             f"in {format_seconds(nb.seconds)}")
        if output:
            ElementTree.SubElement(case, "system-out").text = "\n".join(output)
    if report.build.get("outcome") == BUILD_FAILED:
        errors += 1
        case = ElementTree.SubElement(suite, "testcase", classname="build",
                                      name="sphinx-build", time="0.000")
        ElementTree.SubElement(case, "error", message="the build stopped before it finished",
                               type="BuildFailed").text = str(report.build.get("failure") or "")
    suite.set("tests", str(len(report.notebooks) + errors))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", str(errors))
    suite.set("time", f"{total:.3f}")
    for element in suite.iter():
        element.text = _xml_characters(element.text)
        for name, value in element.attrib.items():
            element.set(name, _xml_characters(value))
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
