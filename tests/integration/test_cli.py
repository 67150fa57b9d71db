"""The ``sphinx-gpu-admonition`` command line on real builds.

A tiny book (``tests/roots/cli``) is built twice per module with sphinx-build:
build A as it is, build B with a cell that sleeps longer, one page removed
(``gone``) and one added (``new``).  Both have a failing page.  ``report`` and
``compare`` read the ``execution-status.json`` those builds wrote; ``check``
runs on this machine (a CPU one: the GPU requirement must fail with reasons).
Commands run in-process through :func:`cli.main` (:func:`run_cli`); a few
tests run the console script and ``python -m`` as subprocesses for the entry
points, exit codes and environment variables.  Malformed documents (the kinds
of tests/test_validation.py) are one error line with exit code 2.  Timing
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
PREFIX = "sphinx-gpu-admonition: error: "
SCRIPT = Path(sys.executable).with_name("sphinx-gpu-admonition")
STATUS_JSON = "execution-status.json"
DATA = TESTS / "data"


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


# -- helpers (in-process) ----------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("x = 1", "`x = 1`"),
    ("a | b", "`a \\| b`"),
    ("use `jit` here", "``use `jit` here``"),
    ("`start", "`` `start ``"),
    ("a ``b`` c", "```a ``b`` c```"),
])
def test_md_code(text, expected):
    assert cli.md_code(text) == expected


# -- renderers, in-process on tests/data (the GPU incident, hand-made) --------------------------
def _incident(name: str) -> StatusReport:
    from sphinx_gpu_admonition.model.files import read_status

    return read_status(DATA / f"incident-{name}-status.json")


def test_report_renderers_name_the_flagged_cell_its_device_and_the_action():
    """``report`` names a flagged cell as the console summary does, with its file:line,
    and gives the action the console and the status page give (issue 26, item 3)."""
    from sphinx_gpu_admonition.cli.report import render_report_markdown, render_report_text
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.render.console import summary_lines

    report = _incident("gpu-t4")
    (notebook,) = report.notebooks
    notebook.source = "lectures/ar1_turningpts.md"  # a text notebook: cells have lines
    notebook.cells[1].line = 42
    analysis = analyse(report, Thresholds())
    summary = cli.summarise_report(report, analysis, Thresholds(), "gpu.json", 5)
    (flagged,) = summary["flagged_cells"]
    assert (flagged["docname"], flagged["cell"]) == ("ar1_turningpts", "cell 2")
    assert flagged["rules"] == ["slow", "share", "sequential_loop"]
    assert flagged["location"] == "lectures/ar1_turningpts.md:42"
    assert flagged["action"].startswith("run the loop on the CPU: jit its function for the CPU")
    text = render_report_text(summary, cli.Style(False), 5)
    assert "\x1b[" not in "".join(text)  # no colour unless asked
    name = "ar1_turningpts cell 2 (lectures/ar1_turningpts.md:42)"
    where = next(i for i, line in enumerate(text) if f"{name}:" in line)
    assert text[where - 1] == "Flagged cells (1)"
    # its JAX compilation against the rest of its time, then the reasons, hints, action
    assert text[where + 1].startswith("      compile ") and ", run " in text[where + 1]
    assert text[where + 4].startswith("      hint: runs lax.scan on the GPU")
    assert text[where + 5] == f"      what to do: {flagged['action']}"
    # the console summary names it and advises the same
    console = summary_lines(report, analysis)
    assert any(f"{name}:" in line for line in console)
    assert f"{'':13}what to do: {flagged['action']}" in console
    assert any(line.split()[:3] == ["Device", "GPU:", "Tesla"] for line in text)
    markdown = render_report_markdown(summary, 5)
    rows = markdown[markdown.index("#### Flagged cells (1)") + 2:]
    assert rows[0] == ("| Time | Notebook | Cell | Where | Code | Compile, run | Why | "
                       "What to do |")
    assert rows[1] == "| ---: | --- | --- | --- | --- | --- | --- | --- |"
    assert rows[2].startswith("| 82.0 s | ar1\\_turningpts | cell 2 | "
                              "`lectures/ar1_turningpts.md:42` | `_, path = jax.lax.scan(")
    assert f" | {cli.md_text(flagged['timing'])} | " in rows[2]
    # the action's code as code spans, not escaped backticks
    assert rows[2].endswith(" | run the loop on the CPU: jit its function for the CPU "
                            '(`jax.jit(f, device=jax.devices("cpu")[0])`) or call it inside '
                            '`with jax.default_device(jax.devices("cpu")[0]):`; on the GPU, '
                            "`unroll=k` (`lax.scan`, `lax.fori_loop`) runs k steps per "
                            "iteration, or restructure the loop (vectorise it, "
                            "`lax.associative_scan`) |")
    assert rows[3] == ""  # one row: one flagged cell
    # an .ipynb notebook (no lines): the file
    notebook.source, notebook.cells[1].line = "lectures/ar1.ipynb", None
    summary = cli.summarise_report(report, analyse(report, Thresholds()), Thresholds(),
                                   "gpu.json", 5)
    assert summary["flagged_cells"][0]["location"] == "lectures/ar1.ipynb"



def test_report_lists_the_notebooks_over_their_budget_after_the_flagged_cells():
    """The notebooks of the build's ``gpu_admonition.budget`` warnings, in every form of
    ``report`` and in the build's console summary; a book without budgets has no such
    section."""
    from sphinx_gpu_admonition.cli.report import render_report_markdown, render_report_text
    from sphinx_gpu_admonition.model.analysis import Thresholds, analyse
    from sphinx_gpu_admonition.render.console import summary_lines

    report = _incident("gpu-t4")
    (notebook,) = report.notebooks
    summary = cli.summarise_report(report, analyse(report, Thresholds()), Thresholds(),
                                   "gpu.json", 5)
    assert summary["over_budget"] == []
    assert not any("budget" in line for line in summary_lines(report, analyse(report,
                                                                              Thresholds())))
    assert not any("budget" in line for line in render_report_text(summary, cli.Style(False), 5))
    notebook.source, notebook.budget_seconds = "lectures/ar1_turningpts.md", 60.0
    summary = cli.summarise_report(report, analyse(report, Thresholds()), Thresholds(),
                                   "gpu.json", 5)
    (row,) = summary["over_budget"]
    assert (row["docname"], row["location"], row["budget_seconds"]) == (
        "ar1_turningpts", "lectures/ar1_turningpts.md", 60.0)
    text = render_report_text(summary, cli.Style(False), 5)
    where = text.index("Over their time budget (1)")
    assert text[where - 1] == "" and text.index("Failures (0)") == where + 3
    assert text[where + 1].endswith(
        f"ar1_turningpts (lectures/ar1_turningpts.md): {row['reason']}")
    assert row["reason"].startswith("took ") and row["reason"].endswith(", budget 60.0 s")
    markdown = render_report_markdown(summary, 5)
    rows = markdown[markdown.index("#### Over their time budget (1)") + 2:]
    assert rows[0] == "| Time | Notebook | Where | Budget |"
    assert rows[2].startswith("| ") and rows[2].endswith(
        " | ar1\\_turningpts | `lectures/ar1_turningpts.md` | 60.0 s |")
    # the build's console summary lists it after its flagged cells, as report does
    console = summary_lines(report, analyse(report, Thresholds()))
    where = console.index("over their time budget (1):")
    assert console[where + 1].endswith(
        f"  ar1_turningpts (lectures/ar1_turningpts.md): {row['reason']}")

def test_compare_renderers_show_the_device_change_cell_by_cell():
    from sphinx_gpu_admonition.cli.compare import render_compare_markdown, render_compare_text

    data = cli.summarise_compare(_incident("cpu"), _incident("gpu-t4"),
                                 cli.CompareOptions("cpu.json", "gpu.json"))
    assert data["summary"]["text"].startswith("GPU build is ")
    assert " slower than CPU build overall" in data["summary"]["text"]
    assert [row["cell"] for row in data["cells"]] == ["cell 2", "cell 1"]  # largest change
    (notebook,) = data["notebooks"]
    assert (notebook["a_device"], notebook["b_device"]) == ("CPU: unknown CPU", "GPU: Tesla T4")
    text = render_compare_text(data, cli.Style(True))
    assert text[0] == "\x1b[1mCompare\x1b[0m"  # colour when asked
    machines = text[text.index("\x1b[1mMachines\x1b[0m") + 1]
    assert "A " in machines and "B " in machines  # both builds' machines, named
    markdown = render_compare_markdown(data)
    assert markdown[0] == "### " + cli.md_text(data["summary"]["text"])
    assert "<details><summary>Machines</summary>" in markdown


def test_md_text_escapes_table_syntax():
    assert cli.md_text("a|b *c* <d>") == "a\\|b \\*c\\* \\<d\\>"


class _Stream:
    def __init__(self, tty: bool):
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert cli.colour_enabled(False, _Stream(True))
    assert not cli.colour_enabled(False, _Stream(False))
    assert not cli.colour_enabled(True, _Stream(True))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cli.colour_enabled(False, _Stream(True))
    style = cli.Style(True)
    lines = cli.text_table(["a", "bb"], [[("x", ("red",)), "1"]], style, right=(1,))
    assert lines[1] == "  \x1b[31mx\x1b[0m   1"


def test_summary_sentence():
    assert cli.summary_sentence("CPU build", "GPU build", 1 / 3.2, 4, 40.0, 12.5) == (
        "GPU build is 3.2x faster than CPU build overall (12.5 s vs 40.0 s, 4 notebooks in both)")
    assert "slower" in cli.summary_sentence("A", "B", 2.0, 1, 1.0, 2.0)
    assert "about as long" in cli.summary_sentence("A", "B", 1.01, 1, 1.0, 1.01)


# -- the machine factor (noise-aware comparison) -----------------------------------------------
def _timed_report(seconds: dict[str, float], calibration: float | None = None,
                  backend: str | None = None) -> StatusReport:
    from sphinx_gpu_admonition.model.record import Environment, JaxInfo

    build = {} if calibration is None else {"calibration": {"seconds": calibration,
                                                            "workload": 1}}
    return StatusReport([NotebookRecord(
        docname=name, status="ok", provenance="executed", runtime_seconds=time,
        capture="ok", environment=Environment(jax=JaxInfo(backend=backend)))
        for name, time in seconds.items()], build)


def _compare(a: StatusReport, b: StatusReport, **options) -> dict:
    return cli.summarise_compare(a, b, cli.CompareOptions(
        "a.json", "b.json", fail_above=options.get("fail_above"), min_seconds=1.0, top=0))


def test_fail_above_is_the_regression_ratio_of_the_analysis():
    """Exactly RATIO times slower is a regression, for the gate as for the status page
    (``slower_notebooks``, the analysis); just below is neither."""
    a = _timed_report({"x": 2.0})
    exactly = _compare(a, _timed_report({"x": 3.0}), fail_above=1.5)
    assert exactly["slower_notebooks"] == ["x"]
    assert [row["docname"] for row in exactly["notebooks"] if row["regression"]] == ["x"]
    below = _compare(a, _timed_report({"x": 2.998046875}), fail_above=1.5)
    assert below["slower_notebooks"] == [] and below["regressions"] == []


def test_a_uniformly_slower_machine_is_not_a_regression():
    a = _timed_report({"x": 10.0, "y": 20.0, "z": 5.0}, calibration=0.02)
    b = _timed_report({"x": 19.0, "y": 41.0, "z": 9.5}, calibration=0.04)
    data = _compare(a, b, fail_above=1.5)
    # the notebooks' own median, the calibration beside it as the check
    assert data["machine"]["source"] == "notebooks"
    assert data["machine"]["text"] == (
        "The machine of the new build was 1.9x slower overall (the median of 3 notebooks' "
        "ratios, 1.90x to 2.05x; the calibration agrees); 0 notebooks slower beyond that")
    assert data["slower_notebooks"] == [] and data["regressions"] == []
    # the same times on a machine the calibration finds as fast: the sentence says so
    same_speed = _compare(a, _timed_report({"x": 19.0, "y": 41.0, "z": 9.5}, 0.02),
                          fail_above=1.5)
    assert "the calibration said about as fast" in same_speed["machine"]["text"]
    # twice as slow or more than the calibration says: the notebooks as a whole got
    # slower (a dependency that slows them all), and they are regressions
    slower = _compare(a, _timed_report({"x": 25.0, "y": 52.0, "z": 12.0}, 0.02),
                      fail_above=1.5)
    assert slower["slower_notebooks"] == ["x", "y", "z"]
    assert slower["machine"]["source"] == "calibration"
    assert "so the notebooks as a whole got slower" in slower["machine"]["text"]


def test_a_notebook_slower_beyond_the_machine_is_a_regression():
    a = _timed_report({"x": 10.0, "y": 20.0, "z": 5.0}, calibration=0.02)
    b = _timed_report({"x": 20.0, "y": 40.0, "z": 30.0}, calibration=0.04)
    data = _compare(a, b, fail_above=1.5)
    assert data["slower_notebooks"] == ["z"]
    assert data["machine"]["text"].endswith("; 1 notebook slower beyond that (1.5x or more): z.")
    assert [row["docname"] for row in data["notebooks"] if row["regression"]] == ["z"]


def test_compare_names_the_notebooks_slower_beyond_the_machine_and_what_they_are():
    """Issue 26, item 6: which notebooks, and that ``compare`` calls them regressions
    only with ``--fail-above`` (a build's own comparison: they are its regressions)."""
    from sphinx_gpu_admonition.cli.compare import render_compare_text
    from sphinx_gpu_admonition.render.markdown import render_compare_markdown

    a = _timed_report({"w": 10.0, "x": 10.0, "y": 10.0, "z": 10.0}, calibration=0.02)
    b = _timed_report({"w": 10.0, "x": 10.0, "y": 30.0, "z": 40.0}, calibration=0.02)
    data = _compare(a, b)
    text = data["machine"]["text"]
    assert text.startswith("The machine of the new build was about as fast as the baseline's "
                           "(the median of 4 notebooks' ratios, 1.00x to 4.00x; the "
                           "calibration agrees); 2 notebooks slower beyond that (1.5x or more): "
                           "y, z. Not regressions: compare judges regressions only with "
                           "--fail-above")
    assert data["regressions"] == []
    assert any(text in line for line in render_compare_text(data, cli.Style(False)))
    assert f"**{cli.md_text(text)}**" in render_compare_markdown(data)
    # with --fail-above they are judged: the regressions block lists them
    judged = _compare(a, b, fail_above=2.0)
    assert judged["machine"]["text"].endswith("; 2 notebooks slower beyond that (2x or more): "
                                              "y, z.")
    assert [line.split(":")[0] for line in judged["regressions"]] == ["z", "y"]
    # a build's own comparison with its baseline (the job summary)
    build = cli.summarise_compare(a, b, cli.CompareOptions(
        "the baseline", "this build", regression_ratio=1.5, build_baseline=True))
    assert build["machine"]["text"].endswith(": y, z: regressions of this build "
                                             "(gpu_regression_ratio).")
    # many: the first five by name
    many = {f"n{i}": 10.0 for i in range(8)}
    data = _compare(_timed_report(many, 0.02), _timed_report(
        {name: 40.0 for name in many}, 0.02))
    assert ": n0, n1, n2, n3, n4 and 3 more. Not regressions" in data["machine"]["text"]


def _celled_report(seconds: list[float]) -> StatusReport:
    from sphinx_gpu_admonition.model.record import CellRecord

    return StatusReport([NotebookRecord(
        docname="nb", status="ok", provenance="executed", runtime_seconds=sum(seconds),
        capture="ok", cells=[CellRecord(index=n, execution_count=n, seconds=value,
                                        first_line=f"cell_{n}()")
                             for n, value in enumerate(seconds, 1)])])


def test_compare_says_no_cell_changed_instead_of_listing_zero_changes():
    """Issue 26, item 6: a change under 1 ms or under 1 % is no change."""
    from sphinx_gpu_admonition.cli.compare import render_compare_text
    from sphinx_gpu_admonition.render.markdown import render_compare_markdown

    a = _celled_report([0.5, 2.0, 100.0])
    same = _compare(a, a)
    assert same["cells"] == [] and same["cells_total"] == 0 and same["cells_unchanged"] == 3
    text = render_compare_text(same, cli.Style(False))
    heading = text.index("Cells")
    assert text[heading + 1] == ("  No cell changed (each of 3 cells within 1 ms or 1% of its "
                                 "time in A).")
    assert "+0.00" not in "\n".join(text[heading:text.index("Machines")])
    markdown = render_compare_markdown(same)
    assert "No cell changed (each of 3 cells within 1 ms or 1% of its time in A)." in markdown
    # 0.5 ms more (under 1 ms), 15 ms more on 2 s (under 1 %), 0.5 s more on 100 s (under
    # 1 %): none changed; 5 ms more on 0.2 s (over both) did
    noise = _compare(_celled_report([0.2, 0.5, 2.0, 100.0]),
                     _celled_report([0.205, 0.5005, 2.015, 100.5]))
    assert [row["cell"] for row in noise["cells"]] == ["cell 1"]
    assert noise["cells_unchanged"] == 3
    assert "1 of 1; 3 unchanged not shown" in "\n".join(
        render_compare_text(noise, cli.Style(False)))


def test_without_calibration_the_median_notebook_is_the_machine():
    a = _timed_report({"w": 10.0, "x": 10.0, "y": 10.0, "z": 10.0})
    b = _timed_report({"w": 18.0, "x": 20.0, "y": 22.0, "z": 60.0})
    data = _compare(a, b)
    assert data["machine"]["source"] == "notebooks"
    assert data["slower_notebooks"] == ["z"]
    # with fewer than three notebooks in both, one slow notebook cannot excuse itself
    few = _compare(_timed_report({"z": 10.0, "w": 10.0}), _timed_report({"z": 60.0, "w": 10.0}))
    assert few["machine"]["factor"] is None
    assert few["slower_notebooks"] == ["z"]
    assert "unknown" in few["machine"]["text"]


def test_the_machine_factor_never_excuses_a_change_of_backend():
    a = _timed_report({"x": 10.0, "y": 10.0, "z": 10.0}, calibration=0.02, backend="gpu")
    b = _timed_report({"x": 40.0, "y": 40.0, "z": 40.0}, calibration=0.04, backend="cpu")
    data = _compare(a, b)
    # a GPU to CPU change is hardware: judged without a factor, as the device change's
    assert data["slower_notebooks"] == [] and data["slower_on_other_device"] == ["x", "y", "z"]
    assert data["machine"]["text"].startswith("The device changed for 3 notebooks")


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
