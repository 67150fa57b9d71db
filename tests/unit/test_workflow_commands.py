"""Untrusted text never becomes a GitHub workflow command (issues 25 and 33, item 1): a rule
across the layers.

A runner reads a line of a step's output as a command with two parsers: a line that
starts, after whitespace, with ``::`` (``::error``, ``::stop-commands::``), and the
older syntax, ``##[`` anywhere in a line (``##[error]``, ``##[add-mask]``,
``##[stop-commands]``).  Every string field of a real status file (exception types and
messages, docnames, titles, sources, device names, OS strings, the host, compilations,
the build's project ...) and every label of the command line is set to commands of
both syntaxes behind line breaks of every kind, bidirectional controls and invisible
characters; then no printed line of the console summary, ``report`` (text, Markdown,
JSON, ``--github``), ``compare``, ``check``, ``merge``, the command line's error
messages, JUnit or the extension's warnings (tests/unit/ext/test_warnings.py), split as
the runner splits (CR, LF) and as Python's ``splitlines`` does, is a command for either
parser or holds a bidirectional control, except the extension's own annotations, escaped
by GitHub's rules (a real build's output: tests/integration/test_workflow_commands.py).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runner_commands import forged_commands, run, runner_lines
from status_documents import BASE

from sphinx_gpu_admonition.cli import main as cli_main
from sphinx_gpu_admonition.cli.check import render_check_text
from sphinx_gpu_admonition.cli.output import Style, emit
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.formatting import one_line, safe_line, safe_text
from sphinx_gpu_admonition.model.record import StatusReport
from sphinx_gpu_admonition.model.schema import SchemaError
from sphinx_gpu_admonition.render import github
from sphinx_gpu_admonition.render.console import summary_lines

#: what a hostile status file or label holds: commands behind every kind of line break
PAYLOAD = ("::stop-commands::x{n}\n::error file=evil.py,line=1::INJECTED\r"
           "::error file=evil.py::CR\u2028::warning file=evil.py::LS\x85::notice "
           "file=evil.py::NEL\v::error file=evil.py::VT\x1e::error file=evil.py::RS @octocat"
           " E##[error]X ##[add-mask]secret ##[stop-commands]tok \u202eRLO\u202c \u2066iso\u2069"
           " #\u200b#[warning]ZWSP\n\u200b::error::ZW")


def _string_paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, str):
        yield prefix
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _string_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _string_paths(value, (*prefix, index))


def poisoned_document() -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """BASE with every string field the schema accepts any text in set to PAYLOAD
    (fields with fixed values, such as a status, keep theirs); the fields set."""
    data = copy.deepcopy(BASE)
    data["build"]["outcome"] = "failed"
    data["build"]["failure"] = "x"
    poisoned = []
    for number, path in enumerate(list(_string_paths(data))):
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        before = parent[path[-1]]
        parent[path[-1]] = PAYLOAD.format(n=number)
        try:
            StatusReport.from_dict(data)
        except SchemaError:
            parent[path[-1]] = before
        else:
            poisoned.append(path)
    return data, poisoned


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:

    folder = tmp_path_factory.mktemp("commands")
    data, poisoned = poisoned_document()
    (folder / "bad.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / "good.json").write_text(json.dumps(BASE), encoding="utf-8")
    other = copy.deepcopy(data)  # the same notebooks, other times: merge conflicts
    for notebook in other["notebooks"]:
        notebook["runtime_seconds"] = (notebook.get("runtime_seconds") or 0) + 1
    (folder / "other.json").write_text(json.dumps(other), encoding="utf-8")
    return {"folder": folder, "data": data, "poisoned": poisoned}


def test_every_kind_of_field_is_poisoned(files) -> None:
    fields = {path[-1] for path in files["poisoned"] if isinstance(path[-1], str)}
    assert {"docname", "title", "type", "message", "first_line", "name", "os", "machine",
            "platform", "backend", "builder", "failure"} <= fields, sorted(fields)


def test_safe_line_and_one_line() -> None:
    assert one_line("a\nb\r\u2028c\x85d\x1ee") == "a b  c d e"
    assert safe_line("  ::stop-commands::x") == "  %3A:stop-commands::x"
    assert safe_line("\x1b[1m::error::x\x1b[0m").startswith("\x1b[1m%3A:")
    assert safe_line("a\n::error::x") == "a ::error::x"
    assert safe_line("Build status  ::x") == "Build status  ::x"  # not at a line start
    # the older syntax, anywhere in a line: its first ``#`` percent-encoded
    assert safe_line("E##[error]X") == "E%23#[error]X"
    assert safe_line("###[add-mask]") == "#%23#[add-mask]"
    assert safe_line("a # [b] #[c]") == "a # [b] #[c]"  # nothing to read
    # invisible characters go first, so that nothing they hid is left behind
    assert safe_line("#\u200b#[error]x") == "%23#[error]x"
    assert safe_line("\u200b\ufeff::error::x") == "%3A:error::x"
    assert one_line("a\u202eb\u2066c\u2069\U000e0041d") == "abcd"
    assert one_line("x\ud800") == "x\ufffd"
    visible = "caf\u00e9 \u00a0 \u4e2d\u6587 \U0001f600 \u2764\ufe0f"  # kept as they are
    assert one_line(visible) == visible
    assert safe_text("a\r\n##[error]x\n  ::y") == "a\n%23#[error]x\n  %3A:y"


def test_forged_commands_reads_lines_as_the_runner_does() -> None:
    """The test's own parser (guards against a toothless check)."""
    for line in ("::error::x", "  ::warning::x", "a ##[error]b", "#\u200b#[add-mask]s",
                 "\u200b::error::x", "a\u202eb", "ok\n##[stop-commands]t"):
        assert forged_commands(line), line
    assert forged_commands("a ::b #[c] %23#[d]") == []


@pytest.mark.parametrize("argv", [
    ["report", "--top", "##[error]x"], ["compare", "a", "b", "--fail-above", "##[add-mask]s"],
    ["report", "no-such-##[error]-file\u202e.json"], ["merge", "::error::out.json", "##[x].json"],
    ["migrate", "##[error]no-such-book"], ["report", "x.json", "--no-such-##[error]-option"]])
def test_error_messages_echo_the_value_safely(argv) -> None:
    """The command line's errors (its own and argparse's) name the offending value
    without printing a command."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = cli_main(argv)
        except SystemExit as stop:  # argparse's own errors
            code = stop.code
    out, err = stdout.getvalue(), stderr.getvalue()
    assert code == 2 and err.strip(), (argv, out, err)
    assert forged_commands(out + err) == [], err
    assert "error" in err


def test_a_schema_error_quoting_a_value_is_a_safe_line(tmp_path) -> None:

    data = copy.deepcopy(BASE)
    data["notebooks"] = "x ##[add-mask]secret \u202e ::error::y"
    (tmp_path / "bad.json").write_text(json.dumps(data), encoding="utf-8")
    code, out, err = run("report", str(tmp_path / "bad.json"))
    assert code == 2 and "not" in err
    assert forged_commands(err) == [] and len(err.splitlines()) == 1


def test_junit_holds_no_command(files) -> None:
    from xml.etree import ElementTree

    from sphinx_gpu_admonition.render.junit import FailOn, junit_xml

    report = StatusReport.from_dict(files["data"])
    analysis = analyse(report, Thresholds(slow_cell_seconds=0, slow_cell_min_seconds=0))
    text = junit_xml(report, analysis, FailOn(slow_cells=True, regressions=True, budget=True))
    suite = ElementTree.fromstring(text.encode())
    values = [value for element in suite.iter() for value in element.attrib.values()]
    values += [element.text or "" for element in suite.iter()]
    assert any("%23#[error]X" in value for value in values)  # the payload is there, defused
    assert forged_commands(text) == []
    assert forged_commands("\n".join(values)) == []
    for element in suite.iter():
        for value in element.attrib.values():
            assert len(list(runner_lines(value))) == 1, value


@pytest.mark.parametrize("form", [[], ["--markdown"], ["--json"]])
def test_report_prints_no_command(files, form) -> None:
    bad = str(files["folder"] / "bad.json")
    code, out, err = run("report", bad, "--slow-cell-seconds", "0", "--min-seconds", "0",
                         *form)
    assert code in (0, 1) and out.strip()
    assert forged_commands(out + err) == []


def test_report_and_compare_for_github_write_only_escaped_annotations(files, monkeypatch):
    folder: Path = files["folder"]
    summary, outputs = folder / "summary.md", folder / "outputs"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    bad, good = str(folder / "bad.json"), str(folder / "good.json")
    code, out, err = run("report", bad, "--github", "--slow-cell-seconds", "0",
                         "--min-seconds", "0")
    assert err.count("::error ") >= 1 and "::warning " in err
    assert forged_commands(out) == [] and forged_commands(err, annotations=True) == []
    code, out, err = run("compare", good, bad, "--github", "--min-seconds", "0",
                         "--label-a", PAYLOAD.format(n="a"), "--label-b", PAYLOAD.format(n="b"))
    assert forged_commands(out) == [] and forged_commands(err, annotations=True) == []
    markdown = summary.read_text("utf-8")
    # no mention: an ``@`` outside code spans (GitHub mentions no one from one) is an entity
    outside_code = re.sub(r"(`+).*?\1", "", markdown)
    assert "@octocat" not in outside_code and "&#64;octocat" in outside_code


@pytest.mark.parametrize("form", [[], ["--markdown"], ["--json"]])
def test_compare_prints_no_command(files, form) -> None:
    bad, good = str(files["folder"] / "bad.json"), str(files["folder"] / "good.json")
    for a, b in ((good, bad), (bad, good), (bad, bad)):
        code, out, err = run("compare", a, b, "--top", "0", "--fail-above", "1",
                             "--min-seconds", "0", "--label-a", PAYLOAD.format(n="a"),
                             "--label-b", PAYLOAD.format(n="b"), *form)
        assert code in (0, 1) and out.strip(), err
        assert forged_commands(out + err) == []


def test_merge_prints_no_command(files, monkeypatch) -> None:
    folder: Path = files["folder"]
    monkeypatch.chdir(folder)
    code, out, err = run("merge", "::stop-commands::merged.json", "bad.json", "other.json")
    assert code == 0 and "conflict" in err, err
    assert forged_commands(out + err) == []


def test_the_console_summary_prints_no_command(files) -> None:
    report = StatusReport.from_dict(files["data"])
    lines = summary_lines(report, analyse(report, Thresholds(slow_cell_seconds=0,
                                                             slow_cell_min_seconds=0)))
    assert any(line.startswith("flagged cells") for line in lines)
    assert forged_commands("\n".join(lines)) == []


def _poison(node: Any) -> Any:
    if isinstance(node, str):
        return PAYLOAD
    if isinstance(node, dict):
        return {key: _poison(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_poison(value) for value in node]
    return node


def test_check_prints_no_command() -> None:
    """What ``check`` prints of the machine (names, versions, errors) with every text
    the machine reports set to commands."""
    from sphinx_gpu_admonition.cli import bench

    data = dict(bench.inspect_machine(), requirement=None, bench=None, problems=[PAYLOAD],
                ok=False)
    data["device_tests"] = [{"device": "cpu", "compile_seconds": 1.0,
                             "first_run_seconds": 1.0, "run_seconds": 1.0, "ok": False,
                             "error": "x"}]
    data = _poison(data)
    data["requirement"] = {"backend": PAYLOAD, "ok": False, "reasons": [PAYLOAD]}
    if isinstance(data["jax"].get("backends"), dict):  # names the machine reports
        data["jax"]["backends"][PAYLOAD] = {"usable": False, "error": PAYLOAD, "devices": 0}
        data["jax"]["distributions"] = {PAYLOAD: PAYLOAD}
    lines = render_check_text(data, Style(False))
    stream = io.StringIO()
    emit(lines, stream)
    assert forged_commands(stream.getvalue()) == []


def test_annotations_escape_every_untrusted_field(files) -> None:
    report = StatusReport.from_dict(files["data"])
    analysis = analyse(report, Thresholds(slow_cell_seconds=0, slow_cell_min_seconds=0))
    lines = github.annotations(report, analysis)
    assert lines and all(len(list(runner_lines(line))) == 1 for line in lines)
    assert forged_commands("\n".join(lines), annotations=True) == []


def test_the_job_summary_is_capped_and_counts_what_it_leaves_out() -> None:
    from sphinx_gpu_admonition.model.record import ErrorInfo, NotebookRecord
    from sphinx_gpu_admonition.render.markdown import MAX_MARKDOWN_BYTES

    notebooks = [NotebookRecord(docname=f"lectures/n{i:04d}" + "x" * 150, status="error",
                                provenance="executed",
                                error=ErrorInfo("ValueError", "bad " * 60, None, None))
                 for i in range(5000)]
    report = StatusReport(notebooks)
    markdown = github.job_summary(report, analyse(report, Thresholds()), Thresholds())
    text = "\n".join(markdown)
    assert len(text.encode("utf-8")) < MAX_MARKDOWN_BYTES
    assert "4900 more not shown" in text


def test_step_outputs_are_written_when_the_summary_cannot_be(tmp_path, monkeypatch) -> None:
    report = StatusReport.from_dict(copy.deepcopy(BASE))
    outputs = tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing" / "summary.md"))
    analysis = analyse(report, Thresholds())
    with pytest.raises(OSError):
        github.write_github(report, analysis, ["# x"], "status.json", stream=io.StringIO())
    assert "status-json=status.json" in outputs.read_text("utf-8").splitlines()
