"""Property-based: malformed status documents never crash the loader or the command line.

Mutations of a real document (wrong types, NaN and infinities, missing keys, deep
nesting, huge strings and numbers, denormals) are written to a file and thrown
at the baseline loader (:func:`.record.read_status` followed by the analysis the
status page runs with a baseline) and at every command that reads a document,
in-process through :func:`.cli.main`.  The rules: no traceback and no internal
error; no printed line a GitHub runner would read as a workflow command; a
document the validator refuses exits 2 with one ``error:`` line on stderr and
nothing on stdout; one it accepts exits 0 or 1 with its output, and
``--json`` output is strict JSON.  The number of documents tried (and refused)
is printed at the end of the module.

How many documents: :data:`EXAMPLES`, 100 unless ``SGA_FUZZ_EXAMPLES`` says otherwise.
``scripts/test`` (and so CI) asks for 500, about 15 s on a 2-core machine; a
contributor's ``pytest tests/unit`` gets 100, about 3 s of its run.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_commands import TRIED, forged_commands, run
from status_documents import BASE

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.model.record import StatusReport
from sphinx_gpu_admonition.model.schema import MAX_STRING_CHARS, SchemaError

PREFIX = f"{cli.PROG}: error: "


def _examples(value: str) -> int:
    if not (value.isascii() and value.isdigit()) or not int(value):
        raise pytest.UsageError(f"SGA_FUZZ_EXAMPLES={value!r}: not a number of documents "
                                "(1, 2, ...)")
    return int(value)


#: documents the fuzz tries: few for the contributor's loop, many in scripts/test
EXAMPLES = _examples(os.environ.get("SGA_FUZZ_EXAMPLES", "100"))
#: a marker string that _to_json replaces by JSON that Python cannot write
_RAW = "__raw:{}:{}__"
_RAW_PATTERN = re.compile(r'"__raw:(deep|digits):(\d+)__"')

#: the workflow-command rule (issues 25 and 33): what a hostile writer puts in a string
#: field: both of the runner's syntaxes, behind line breaks, bidirectional controls and
#: characters a culture-sensitive comparison skips
COMMANDS = ["::stop-commands::x", "\n::error file=evil.py,line=1::INJECTED",
            "a\r::warning file=evil.py::CR", "b\u2028::notice::LS", "c\x85  ::error::NEL",
            "@octocat ::x", "E##[error]X", "x ##[add-mask]secret", "##[stop-commands]tok",
            "#\u200b#[warning]ZWSP", "\u202e##[error]RLO\u202c", "\u2067evil\u2069",
            "\u200b::error::ZW", "#\ufe0f#[error]VS", "##\u00ad[error]SHY"]


GOOD = StatusReport.from_dict(BASE)

junk = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),  # NaN, infinities, denormals, -0.0, 1e308
    st.sampled_from([0.0, 5e-324, 1e15, 1e16, -1.0, 2**63]),
    st.text(max_size=12),
    st.sampled_from(["x" * MAX_STRING_CHARS, "y" * (MAX_STRING_CHARS + 1), "\ud800", "\x00\x1b[31m",
                     "ok", "kernel_died", "cache", "12", "NaN"]),
    st.sampled_from(COMMANDS),
    st.lists(st.integers(min_value=0, max_value=3), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(min_value=0, max_value=3), max_size=3),
    st.integers(min_value=30, max_value=20_000).map(lambda depth: _RAW.format("deep", depth)),
    st.sampled_from([_RAW.format("digits", 4301), _RAW.format("digits", 20)]),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value in the document."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


PATHS = [path for path in _paths(BASE) if path]


@st.composite
def malformed_documents(draw: st.DrawFn) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(PATHS))
        parent: Any = data
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced it
        if not isinstance(parent, (dict, list)):
            continue  # replaced by a string, whose characters can be read but not set
        action = draw(st.sampled_from(["replace", "replace", "delete", "wrap"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        else:
            parent[path[-1]] = draw(junk)
    return data


def _raw_json(match: re.Match[str]) -> str:
    kind, size = match.group(1), int(match.group(2))
    return "[" * size + "]" * size if kind == "deep" else "9" * size


def _to_json(data: Any) -> str:
    """JSON as a hostile writer makes it: NaN, deep nesting and 4301-digit numbers too."""
    return _RAW_PATTERN.sub(_raw_json, json.dumps(data))  # ASCII: a lone surrogate as an escape


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in --json output")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "good.json").write_text(json.dumps(BASE), encoding="utf-8")
    yield folder
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is not None and capture is not None and TRIED["documents"]:
        with capture.global_and_fixture_disabled():
            reporter.write_line(
                f"test_fuzz: {TRIED['documents']} malformed documents tried "
                f"({TRIED['refused']} refused as bad input), {TRIED['commands']} commands run")


# derandomize: the same documents on every run, so that a result in CI can be
# reproduced anywhere
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(document=malformed_documents())
def test_malformed_documents_never_crash(folder: Path, document: dict[str, Any]) -> None:
    bad = folder / "bad.json"
    bad.write_text(_to_json(document), encoding="utf-8")
    good = str(folder / "good.json")
    TRIED["documents"] += 1

    # the baseline loader: only SchemaError, and what it accepts analyses
    try:
        baseline = read_status(bad)
    except SchemaError as error:
        refused = str(error)
        assert "\n" not in refused
    else:
        refused = None
        analyse(GOOD, Thresholds(), baseline)
        analyse(baseline, Thresholds(slow_cell_seconds=0, slow_cell_min_seconds=0), baseline)
    TRIED["refused"] += refused is not None

    for argv in (["report", str(bad)], ["report", str(bad), "--json"],
                 ["report", str(bad), "--markdown", "--slow-cell-seconds", "0",
                  "--min-seconds", "0"],
                 ["compare", good, str(bad), "--fail-above", "1", "--min-seconds", "0"],
                 ["compare", str(bad), good, "--json"],
                 ["compare", str(bad), str(bad), "--markdown", "--top", "0"]):
        code, out, err = run(*argv)
        assert "Traceback" not in out + err
        if refused is not None:
            assert (code, out) == (2, ""), (argv, err)
            (line,) = err.splitlines()
            assert line.startswith(PREFIX) and str(bad) in line, line
        else:
            assert code in (0, 1) and err == "", (argv, err)
            assert out.strip()
            assert forged_commands(out) == [], argv  # no line a runner reads as a command
            if "--json" in argv:
                _strict_json(out)


def test_the_junk_is_refused(folder: Path) -> None:
    """Each kind of junk the fuzz writes is bad input (guards against a toothless fuzz)."""
    for value in (float("nan"), float("inf"), -1.0, "12", 2**63, _RAW.format("digits", 4301),
                  _RAW.format("deep", 20_000), "y" * (MAX_STRING_CHARS + 1), "\ud800"):
        data = copy.deepcopy(BASE)
        data["notebooks"][0]["runtime_seconds"] = value
        bad = folder / "junk.json"
        bad.write_text(_to_json(data), encoding="utf-8")
        with pytest.raises(SchemaError):
            read_status(bad)
