"""The ``sphinx-gpu-admonition`` command line on real builds (its renderers and rules on
recorded files: tests/unit/cli/).

A tiny book (``tests/roots/cli``) is built twice per module with sphinx-build:
build A as it is, build B with a cell that sleeps longer, one page removed
(``gone``) and one added (``new``).  Both have a failing page.  ``report`` and
``compare`` read the ``execution-status.json`` those builds wrote; ``check``
runs on this machine (a CPU one: the GPU requirement must fail with reasons).
Commands run in-process through :func:`cli.main` (:func:`run_cli`); a few
tests run the console script and ``python -m`` as subprocesses for the entry
points, exit codes and environment variables.  Malformed documents (the kinds
of tests/status_documents.py) are one error line with exit code 2.  Timing
values are never asserted, only their presence; the ``--fail-above`` test
relies on a 0.05 s -> 0.8 s sleep being more than 2x slower.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import TESTS
from status_documents import BAD_DOCUMENTS, valid_document

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.record import ErrorInfo, NotebookRecord, StatusReport

ROOT = TESTS / "roots" / "cli"
DATA = TESTS / "data"
PREFIX = "sphinx-gpu-admonition: error: "
SCRIPT = Path(sys.executable).with_name("sphinx-gpu-admonition")
STATUS_JSON = "execution-status.json"


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]
            ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run_cli(*args)``: ``cli.main(args)`` in this process, with its exit code and output."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        try:
            code = cli.main(list(args))
        except SystemExit as exit_:  # argparse: --help, usage errors
            code = exit_.code if isinstance(exit_.code, int) else 2
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["sphinx-gpu-admonition", *args], code, out, err)

    return run


def run_process(*args: str, env: dict[str, str] | None = None, script: bool = False,
                timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``python -m sphinx_gpu_admonition ARGS`` (or the console script), captured."""
    command = [str(SCRIPT)] if script else [sys.executable, "-m", "sphinx_gpu_admonition"]
    environment = dict(os.environ)
    environment.pop("NO_COLOR", None)
    environment.update(env or {})
    return subprocess.run([*command, *args], capture_output=True, text=True, env=environment,
                          timeout=timeout, check=False)


def _sources(dest: Path, variant: str) -> Path:
    src = dest / variant
    shutil.copytree(ROOT, src)
    if variant == "b":
        (src / "gone.md").unlink()
        sleepy = src / "sleepy.md"
        sleepy.write_text(sleepy.read_text().replace("time.sleep(0.05)", "time.sleep(0.8)"))
        (src / "new.md").write_text(
            (ROOT / "gone.md").read_text().replace("only in the first", "only in the second"))
    return src


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Output folders of builds A and B (made in parallel with sphinx-build)."""
    dest = tmp_path_factory.mktemp("cli-builds")
    processes = {}
    for variant in ("a", "b"):
        src = _sources(dest, variant)
        outdir = src / "_build" / "html"
        processes[variant] = (outdir, subprocess.Popen(
            [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(outdir)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    result = {}
    for variant, (outdir, process) in processes.items():
        output, _ = process.communicate(timeout=600)
        assert process.returncode == 0, output
        if not (outdir / STATUS_JSON).is_file():
            pytest.fail(f"build {variant} wrote no {STATUS_JSON} (reports.py):\n{output}")
        result[variant] = outdir
    return result


def _one_error_line(completed: subprocess.CompletedProcess[str], *expected: str) -> str:
    assert completed.returncode == 2, completed
    assert "Traceback" not in completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith(PREFIX), lines[0]
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def markdown_tables(text: str) -> list[list[str]]:
    tables: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def assert_table_shape(table: list[str]) -> None:
    """Every row has the header's column count (``\\|`` is an escaped pipe, not a column)."""
    columns = [len(re.findall(r"(?<!\\)\|", row)) for row in table]
    assert len(set(columns)) == 1, table
    assert re.fullmatch(r"\|( ---:? \|)+", table[1]), table[1]
    assert all(row.endswith("|") for row in table)


# -- entry points and exit codes (subprocesses) ------------------------------------------
def test_help_of_console_script():
    if not SCRIPT.exists():
        pytest.skip(f"no console script at {SCRIPT}")
    completed = run_process("--help", script=True)
    assert completed.returncode == 0
    assert completed.stdout.startswith("usage: sphinx-gpu-admonition")


def test_module_entry_point_exit_codes(builds, tmp_path):
    assert run_process("report", str(builds["a"])).returncode == 1  # a failed notebook
    assert run_process("report", str(builds["a"]), "--exit-zero").returncode == 0
    _one_error_line(run_process("report", str(tmp_path / "nope.json")), "no such file")
    usage = run_process("frobnicate")
    assert usage.returncode == 2 and PREFIX in usage.stderr
    assert "Traceback" not in usage.stderr


# -- usage and bad input -----------------------------------------------------------------
@pytest.mark.parametrize("command", [[], ["check"], ["report"], ["compare"]])
def test_help(run_cli, command):
    completed = run_cli(*command, "--help")
    assert completed.returncode == 0
    assert "exit codes:" in completed.stdout
    assert "bad input or usage" in completed.stdout


def test_usage_error_exits_2(run_cli):
    completed = run_cli("frobnicate")
    assert completed.returncode == 2
    assert PREFIX in completed.stderr
    completed = run_cli("report")
    assert completed.returncode == 2
    completed = run_cli("compare", "--fail-above", "much", "a", "b")
    assert completed.returncode == 2
    assert "not a number" in completed.stderr


@pytest.fixture
def bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path, text the error line must contain)."""
    not_json = tmp_path / "not-json.json"
    not_json.write_text("{ this is not JSON")
    version = tmp_path / "future.json"
    version.write_text(json.dumps({"schema": "sphinx-gpu-admonition/execution-status",
                                   "schema_version": 99, "notebooks": []}))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    folder = tmp_path / "html"
    folder.mkdir()
    (folder / "index.html").write_text("<html></html>")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 10_000 + "]" * 10_000)
    line_break = tmp_path / "line\nbreak.json"
    line_break.write_text("[]")
    return {
        "missing": (tmp_path / "nope" / STATUS_JSON, "no such file"),
        "not_json": (not_json, "not JSON"),
        "schema_version": (version, "schema version 99"),
        "not_a_status_document": (other, "not an execution-status document"),
        "binary": (binary, "not a text file (invalid start byte)"),
        "folder_without_status": (folder, "build folder without execution-status.json"),
        "deep_nesting": (deep, "nested too deeply"),
        "line_break_in_the_name": (line_break, "line\\nbreak.json"),
    }


@pytest.mark.parametrize("kind", ["missing", "not_json", "schema_version",
                                  "not_a_status_document", "binary",
                                  "folder_without_status", "deep_nesting",
                                  "line_break_in_the_name"])
def test_report_bad_input(run_cli, bad_inputs, kind):
    path, reason = bad_inputs[kind]
    completed = run_cli("report", str(path))
    _one_error_line(completed, str(path).replace("\n", "\\n"), reason)
    assert completed.stdout == ""


@pytest.mark.parametrize("kind", ["missing", "schema_version", "folder_without_status",
                                  "deep_nesting"])
def test_compare_bad_input(run_cli, bad_inputs, kind):
    path, reason = bad_inputs[kind]
    good = str(DATA / "incident-cpu-status.json")
    _one_error_line(run_cli("compare", good, str(path)), str(path), reason)
    _one_error_line(run_cli("compare", str(path), good, "--markdown"), str(path), reason)


def _commands(good: str, bad: str) -> list[list[str]]:
    """Every command that reads a document, with ``bad`` in each position."""
    return [["report", bad], ["report", bad, "--json"], ["report", bad, "--markdown"],
            ["compare", good, bad], ["compare", bad, good, "--json"],
            ["compare", bad, bad, "--markdown", "--fail-above", "1"]]


@pytest.mark.parametrize("kind", BAD_DOCUMENTS)
def test_malformed_document_is_one_error_line(run_cli, tmp_path, kind):
    """Wrong types, NaN, infinities, null messages, lists for objects: exit 2, no traceback."""
    mutate, message = BAD_DOCUMENTS[kind]
    data = valid_document()
    mutate(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")  # NaN / Infinity as Python writes them
    for command in _commands(str(DATA / "incident-cpu-status.json"), str(bad)):
        completed = run_cli(*command)
        line = _one_error_line(completed, f"{bad}: ", message)
        assert completed.stdout == "", (command, line)


def test_a_kernel_that_died_in_its_first_cell(run_cli, builds, tmp_path):
    """The extension's record of it (no cells, no cell index) in every command;
    ``compare`` with the build before, where the notebook ran, divided by zero."""
    before = json.loads((builds["a"] / STATUS_JSON).read_text(encoding="utf-8"))
    before["notebooks"] = [nb for nb in before["notebooks"] if nb["docname"] == "sleepy"]
    died = NotebookRecord(docname="sleepy", status="kernel_died", provenance="executed",
                          method="force", error=ErrorInfo(type="DeadKernelError",
                                                          message="Kernel died",
                                                          execution_count=1))
    after = StatusReport([died], build=before["build"]).to_dict()
    a, b = tmp_path / "before.json", tmp_path / "after.json"
    a.write_text(json.dumps(before), encoding="utf-8")
    b.write_text(json.dumps(after), encoding="utf-8")
    report = run_cli("report", str(b))
    assert report.returncode == 1 and report.stderr == ""
    assert "DeadKernelError" in report.stdout.split("Failures (1)")[1]
    for output in ("--json", "--markdown", "--no-color"):
        completed = run_cli("compare", str(a), str(b), output)
        assert completed.returncode == 0 and completed.stderr == "", completed.stderr
        assert "took no measurable time" in completed.stdout
    data = json.loads(run_cli("compare", str(a), str(b), "--json").stdout)
    assert data["summary"]["b_seconds"] == 0 and data["notebooks"][0]["b_status"] == "kernel_died"


def test_json_output_is_strict_when_a_ratio_overflows(run_cli, tmp_path):
    """Valid times whose ratio is too large for a float: null, never Infinity."""
    def with_cell_seconds(seconds: float) -> Path:
        data = valid_document()
        data["notebooks"][0]["runtime_seconds"] = seconds
        data["notebooks"][0]["cells"][0]["seconds"] = seconds
        path = tmp_path / f"{seconds}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    tiny, huge = with_cell_seconds(5e-324), with_cell_seconds(1e15)
    completed = run_cli("compare", str(tiny), str(huge), "--json")
    assert completed.returncode == 0, completed.stderr
    data = json.loads(completed.stdout, parse_constant=lambda name: pytest.fail(name))
    assert data["notebooks"][0]["ratio"] is None
    assert run_cli("compare", str(tiny), str(huge)).returncode == 0


# -- report --------------------------------------------------------------------------------
def test_report_text(run_cli, builds):
    completed = run_cli("report", str(builds["a"]), "--top", "3")
    assert completed.returncode == 1, completed.stderr  # build A has a failed notebook
    out = completed.stdout
    assert "\x1b[" not in out  # not a terminal: no colour
    assert "4 notebooks: 3 ok, 1 failed, 0 not executed" in out
    for heading in ("Slowest notebooks (top 3)", "Slowest cells (top 3)", "Flagged cells",
                    "Failures (1)", "Machines (1)"):
        assert heading in out
    failures = out.split("Failures (1)")[1].split("Machines")[0]
    assert "failing" in failures and "ValueError" in failures and "cell 2" in failures
    assert "CPU: " in out  # the device label of this machine
    slowest = out.split("Slowest notebooks (top 3)")[1].split("Slowest cells")[0]
    assert len([line for line in slowest.splitlines() if line.strip()]) == 4  # header + 3


def test_report_exit_zero_and_build_file(run_cli, builds):
    completed = run_cli("report", str(builds["a"] / STATUS_JSON), "--exit-zero")
    assert completed.returncode == 0
    assert "Failures (1)" in completed.stdout


def test_report_json(run_cli, builds):
    completed = run_cli("report", str(builds["b"]), "--json", "--top", "2", "--min-seconds",
                        "0.5")
    assert completed.returncode == 1
    data = json.loads(completed.stdout)
    assert data["totals"]["notebooks"] == 4
    assert data["totals"]["failed"] == 1
    assert data["totals"]["executed_now"] == 4
    assert isinstance(data["totals"]["seconds"], float)
    assert len(data["slowest_notebooks"]) == 2
    assert len(data["slowest_cells"]) == 2
    (failure,) = data["failures"]
    assert failure["docname"] == "failing"
    assert failure["error_type"] == "ValueError"
    assert failure["cell_index"] == 2
    (machine,) = data["machines"]
    assert machine["backend"] == "cpu"
    assert sorted(machine["notebooks"]) == ["failing", "jaxpage", "new", "sleepy"]
    # the 0.8 s sleep (over --min-seconds) is most of its notebook's cell time: flagged
    sleepy = [c for c in data["flagged_cells"] if c["docname"] == "sleepy"]
    assert sleepy and sleepy[0]["rules"][0] == "share"
    assert "cell time" in sleepy[0]["reasons"][0]


def test_report_thresholds_change_flags(run_cli, builds):
    completed = run_cli("report", str(builds["b"]), "--json", "--slow-cell-seconds", "0",
                        "--min-seconds", "0")
    data = json.loads(completed.stdout)
    # every cell is flagged or a note (an import cell: never counted as flagged)
    assert len(data["flagged_cells"]) + len(data["notes"]) == sum(
        1 for nb in json.loads((builds["b"] / STATUS_JSON).read_text())["notebooks"]
        for _ in nb["cells"])
    assert all(set(c["rules"]) <= {"imports", "slow_ok"} for c in data["notes"])
    assert not any(set(c["rules"]) <= {"imports", "slow_ok"} for c in data["flagged_cells"])


def test_report_markdown(run_cli, builds):
    completed = run_cli("report", str(builds["a"]), "--markdown")
    assert completed.returncode == 1
    out = completed.stdout
    assert out.startswith("### ❌ Notebook execution: 4 notebooks")
    tables = markdown_tables(out)
    assert len(tables) >= 4  # failures, slowest notebooks, slowest cells, machines
    for table in tables:
        assert_table_shape(table)
    assert "#### Failures" in out
    # a first line with a pipe and backticks stays one cell, as a code span
    # a first line with a pipe and backticks never breaks the table: escaped in a code
    # span where it is listed (a cell whose time did not change is not listed)
    assert "flags = 1 | 2 # a `pipe`" not in out
    assert ("``flags = 1 \\| 2 # a `pipe` and backticks in the first line``" in out
            or "unchanged not shown" in out or "No cell changed" in out)


# -- compare ---------------------------------------------------------------------------------
def test_compare_fail_above(run_cli, builds):
    a, b = str(builds["a"]), str(builds["b"])
    regressed = run_cli("compare", a, b, "--fail-above", "2", "--min-seconds", "0.5")
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "Regressions: " in regressed.stdout
    assert "sleepy cell 2" in regressed.stdout.split("Regressions:")[1]
    assert run_cli("compare", a, b, "--fail-above", "1000").returncode == 0
    assert run_cli("compare", a, b).returncode == 0  # no --fail-above: informational
    # the sleepy cell is under the floor: not a regression
    floor = run_cli("compare", a, b, "--fail-above", "2", "--min-seconds", "60")
    assert floor.returncode == 0
    assert "No regression" in floor.stdout
    same = run_cli("compare", a, a, "--fail-above", "1.01", "--min-seconds", "0")
    assert same.returncode == 0


def test_compare_text(run_cli, builds):
    completed = run_cli("compare", str(builds["a"]), str(builds["b"]), "--no-color")
    assert completed.returncode == 0
    out = completed.stdout
    assert "\x1b[" not in out
    assert "overall" in out.splitlines()[4]
    assert "New in B: new" in out and "Gone from B: gone" in out
    cells = out.split("Cells (")[1].split("\n\n")[0]
    assert "time.sleep(0.8)" in cells
    machines = out.split("Machines")[1]
    assert "A " in machines and "B " in machines and "JAX backend" in machines


def test_compare_json(run_cli, builds):
    completed = run_cli("compare", str(builds["a"]), str(builds["b"] / STATUS_JSON), "--json",
                        "--top", "0")
    assert completed.returncode == 0
    data = json.loads(completed.stdout)
    assert data["new_notebooks"] == ["new"]
    assert data["gone_notebooks"] == ["gone"]
    assert data["summary"]["common_notebooks"] == 3
    assert "overall" in data["summary"]["text"]
    states = {row["docname"]: row["state"] for row in data["notebooks"]}
    assert states == {"failing": "compared", "jaxpage": "compared", "sleepy": "compared",
                      "new": "new", "gone": "gone"}
    for row in data["notebooks"]:
        if row["state"] == "compared":
            assert row["a_device"].startswith("CPU") and row["b_device"].startswith("CPU")
            # the JAX backend is known where the page used JAX
            expected = "cpu" if row["docname"] == "jaxpage" else None
            assert row["a_backend"] == row["b_backend"] == expected
    sleepy = next(c for c in data["cells"] if c["docname"] == "sleepy" and c["index"] == 2)
    assert sleepy["a_seconds"] < sleepy["b_seconds"]
    assert sleepy["ratio"] == pytest.approx(sleepy["b_seconds"] / sleepy["a_seconds"])
    assert data["cells_total"] == len(data["cells"])  # --top 0: all cells
    changes = [abs(c["change_seconds"]) for c in data["cells"] if c["change_seconds"] is not None]
    assert changes == sorted(changes, reverse=True)  # largest change first
    assert [c["state"] for c in data["cells"]][-1] == "new"  # then new (and gone) cells
    assert data["machines"]["a"][0]["backend"] == "cpu"
    assert data["regressions"] == []  # no --fail-above


def test_compare_markdown(run_cli, builds):
    completed = run_cli("compare", str(builds["a"]), str(builds["b"]), "--markdown",
                        "--fail-above", "2", "--min-seconds", "0.5")
    assert completed.returncode == 1
    out = completed.stdout
    first = out.splitlines()[0]
    # faster, slower or "about as long" depends on the machine's load: not asserted
    assert first.startswith("### The new build ") and "the baseline overall" in first
    assert re.search(r"❌ \*\*\d+ regressions?\*\*", out)
    assert "- sleepy cell 2: " in out
    tables = markdown_tables(out)
    assert len(tables) == 3  # notebooks, cells, machines
    for table in tables:
        assert_table_shape(table)
    assert tables[0][0] == "| Notebook | A | B | B/A | Change | A device | B device | State |"
    # a first line with a pipe and backticks never breaks the table: escaped in a code
    # span where it is listed (a cell whose time did not change is not listed)
    assert "flags = 1 | 2 # a `pipe`" not in out
    assert ("``flags = 1 \\| 2 # a `pipe` and backticks in the first line``" in out
            or "unchanged not shown" in out or "No cell changed" in out)
    assert "<details><summary>Machines</summary>" in out


def test_compare_labels(run_cli, builds):
    completed = run_cli("compare", str(builds["a"]), str(builds["b"]), "--markdown",
                        "--label-a", "CPU runner", "--label-b", "GPU runner")
    assert completed.stdout.startswith("### GPU runner ")
    assert "CPU runner overall" in completed.stdout.splitlines()[0]


# -- check -------------------------------------------------------------------------------------
def _has_gpu() -> bool:
    return os.path.exists("/proc/driver/nvidia/version")


def test_check_json_on_this_machine(run_cli):
    completed = run_cli("check", "--json")
    assert completed.returncode == 0, completed.stderr
    data = json.loads(completed.stdout)
    jax = data["jax"]
    assert jax["installed"] and jax["version"]
    assert jax["backends"]["cpu"]["usable"]
    assert any(d["platform"] == "cpu" for d in jax["devices"])
    cpu = [t for t in data["device_tests"] if t["platform"] == "cpu"]
    assert cpu and cpu[0]["ok"]
    for key in ("compile_seconds", "first_run_seconds", "run_seconds"):
        assert isinstance(cpu[0][key], float)
    assert data["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert data["host"]["cores"]
    if not _has_gpu():
        assert jax["default_backend"] == "cpu"


def test_check_text(run_cli):
    completed = run_cli("check", "--require-backend", "cpu")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    for text in ("Python", "JAX", "Backend cpu", "Devices", "Device test", "compile",
                 "Backend cpu is usable."):
        assert text in out
    assert "\x1b[" not in out


@pytest.mark.skipif(_has_gpu(), reason="this machine has an NVIDIA driver")
def test_check_require_gpu_fails_with_reasons(run_cli):
    completed = run_cli("check", "--require-gpu")
    assert completed.returncode == 1
    out = completed.stdout
    assert "Backend gpu is required but not usable:" in out
    assert "no CUDA plugin for jaxlib is installed" in out
    assert "NVIDIA driver not found" in out
    data = json.loads(run_cli("check", "--require-backend", "gpu", "--json").stdout)
    assert data["ok"] is False
    assert data["requirement"]["backend"] == "gpu"
    assert any("CUDA plugin" in reason for reason in data["requirement"]["reasons"])


def test_check_jax_platforms_excludes_gpu():
    completed = run_process("check", "--require-gpu", "--json", env={"JAX_PLATFORMS": "cpu"})
    assert completed.returncode == 1
    reasons = json.loads(completed.stdout)["requirement"]["reasons"]
    assert "JAX_PLATFORMS='cpu' excludes the gpu backend" in reasons


# JAX neither importable nor installed (its dist-info hidden too)
_NO_JAX = ("import sys; sys.modules['jax'] = None; "
           "import sphinx_gpu_admonition.cli.bench as bench; bench.jax_distributions = dict; "
           "from sphinx_gpu_admonition.cli import main; raise SystemExit(main(sys.argv[1:]))")


def test_check_fails_when_jax_platforms_selects_nothing():
    completed = run_process("check", "--json", env={"JAX_PLATFORMS": "bogus"})
    assert completed.returncode == 1
    data = json.loads(completed.stdout)
    assert data["ok"] is False
    (problem,) = data["problems"]
    assert "no usable backend with JAX_PLATFORMS='bogus'" in problem
    text = run_process("check", env={"JAX_PLATFORMS": "bogus"})
    assert text.returncode == 1 and "JAX has no usable backend" in text.stdout
    assert "\nOK" not in text.stdout


def test_check_without_jax():
    environment = dict(os.environ)
    completed = subprocess.run([sys.executable, "-c", _NO_JAX, "check"], capture_output=True,
                               text=True, env=environment, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert "JAX            not installed" in completed.stdout
    assert "no device was tested" in completed.stdout
    required = subprocess.run([sys.executable, "-c", _NO_JAX, "check", "--require-gpu"],
                              capture_output=True, text=True, env=environment, timeout=120,
                              check=False)
    assert required.returncode == 1
    assert "JAX is not installed" in required.stdout


def test_check_when_installed_jax_cannot_be_imported_console_script(tmp_path):
    if not SCRIPT.exists():
        pytest.skip(f"no console script at {SCRIPT}")
    fake = tmp_path / "jax"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('a bad setting broke the import')\n")
    env = {"PYTHONPATH": str(tmp_path)}
    completed = run_process("check", "--json", "--bench", "--bench-size", "small", env=env,
                            script=True)
    # JAX is installed here, so a failing import is a broken setup, not "not installed"
    assert completed.returncode == 1, completed.stderr
    data = json.loads(completed.stdout)
    assert data["jax"]["installed"] is False
    assert "a bad setting broke the import" in data["jax"]["import_error"]
    assert data["problems"] == [
        f"JAX is installed but cannot be imported ({data['jax']['import_error']})"]
    assert "cannot be imported" in run_process("check", env=env, script=True).stdout
    assert data["device_tests"] == []
    assert {r["name"] for r in data["bench"]["results"]} == {
        "python-loop", "numpy-matmul", "numpy-elementwise"}
    assert "JAX is not installed" in data["bench"]["note"]
    assert run_process("check", "--require-backend", "cpu", env=env,
                       script=True).returncode == 1


def test_check_bench(run_cli):
    completed = run_cli("check", "--bench", "--bench-size", "small", "--json")
    assert completed.returncode == 0, completed.stderr
    bench = json.loads(completed.stdout)["bench"]
    assert bench["size"] == "small"
    results = {r["name"]: r for r in bench["results"]}
    assert set(results) == {"python-loop", "numpy-matmul", "numpy-elementwise", "jax-matmul",
                            "jax-elementwise"}
    for result in results.values():
        assert isinstance(result["seconds"], float) and result["repeats"] >= 3
        assert result["rate"] > 0 and result["unit"]
    for name in ("jax-matmul", "jax-elementwise"):
        assert isinstance(results[name]["first_call_seconds"], float)
    assert "first_call_seconds" not in results["numpy-matmul"]


def test_report_and_compare_write_github_output_from_the_json(run_cli, builds, tmp_path,
                                                              monkeypatch):
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    quiet = run_cli("report", str(builds["a"]))  # not on GitHub: nothing written
    assert "::" not in quiet.stderr and not summary.exists()
    completed = run_cli("report", str(builds["a"]), "--github")
    assert completed.returncode == 1
    errors = [line for line in completed.stderr.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and ",title=Notebook failed%3A failing::" in errors[0]
    assert "file=" in errors[0] and "failing.md" in errors[0]
    assert summary.read_text().startswith("### ❌ Notebook execution: 4 notebooks")
    assert "failed=1" in outputs.read_text().splitlines()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    compared = run_cli("compare", str(builds["a"]), str(builds["b"]), "--markdown")
    assert "::error " in compared.stderr and "::" not in compared.stdout  # stdout: the comment
    assert "slower beyond that" in summary.read_text().split("### ❌ Notebook execution")[1]
    assert "::" not in run_cli("compare", str(builds["a"]), str(builds["b"]),
                               "--no-github").stderr
