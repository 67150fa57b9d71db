"""The GitHub Actions workflows of docs/workflow.md, run end to end.

The workflows are read from the docs page's code blocks (never copied here), and
each ``run:`` step is run in ``bash -eo pipefail`` as the runner would, in one
temporary workspace with ``GITHUB_ACTIONS``, ``GITHUB_WORKSPACE``,
``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT`` set; artifacts are copied between
jobs as ``upload-artifact`` / ``download-artifact`` would.  Only the steps that
need the network are left out (``uses:`` actions, installing, posting the
comment).  The scenario, run once for the module:

1. the main branch's sharded build: two shards of ``tests/roots/workflow``
   executed into their own jupyter-caches, merged (status and caches), the site
   built from the merged cache;
2. a pull request's build of the same book with the merged status as its
   baseline, under an artificial CPU load (busy-loop processes, always killed):
   the uniformly slower rebuild must be machine noise, not regressions;
3. the CPU job.

Timing values are never asserted, only the classification.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PROJECT, TESTS

from sphinx_gpu_admonition import cli

# the documented shell workflow: run with the newest Sphinx only, and by itself, after the
# other tests (its pull-request build runs under busy loops that would slow theirs)
pytestmark = [pytest.mark.tooling, pytest.mark.loads_machine]

DOCS_PAGE = PROJECT / "docs" / "workflow.md"
BOOK = TESTS / "roots" / "workflow"
BIN = Path(sys.executable).parent
#: steps that need the network or a package index
NETWORK_STEPS = {"Install", "Comment on the pull request"}
#: busy-loop processes started during the pull request's build (2 cores here)
LOAD_PROCESSES = 3
LOAD_LIMIT_SECONDS = 240
STEP_TIMEOUT = 300


def code_block(name: str) -> str:
    """The body of the docs page's ``{code-block}`` with ``:name: name``."""
    text = DOCS_PAGE.read_text(encoding="utf-8")
    match = re.search(r"```\{code-block\} \w+\n:name: " + re.escape(name)
                      + r"\n(?::\w+:[^\n]*\n)*\n(.*?)\n```\n", text, re.DOTALL)
    assert match, f"no code block named {name} in {DOCS_PAGE}"
    return match.group(1)


def workflow(name: str) -> dict[str, Any]:
    return yaml.safe_load(code_block(name))


def run_steps(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(job, step name) of every ``run:`` step the test must run."""
    return [(job, step["name"]) for job, spec in data["jobs"].items() for step in spec["steps"]
            if "run" in step and step["name"] not in NETWORK_STEPS]


_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


@dataclasses.dataclass
class StepResult:
    returncode: int
    stdout: str
    stderr: str
    summary: str
    outputs: str


class Runner:
    """Runs a workflow step's script as the GitHub runner does, in ``workspace``."""

    def __init__(self, workspace: Path):
        self.workspace = workspace
        self.ran: set[tuple[str, str, str]] = set()
        self.count = 0

    def run(self, workflow_name: str, job: str, step_name: str,
            expressions: dict[str, str] | None = None) -> StepResult:
        spec = workflow(workflow_name)["jobs"][job]
        step = next(s for s in spec["steps"] if s.get("name") == step_name)
        self.count += 1
        summary = self.workspace.parent / f"summary-{self.count}.md"
        outputs = self.workspace.parent / f"outputs-{self.count}.txt"
        summary.write_text("", encoding="utf-8")
        outputs.write_text("", encoding="utf-8")
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("GITHUB_", "SHARD", "NB_CACHE", "JAX_PLATFORMS"))}
        env.update({
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs),
        })
        for values in (spec.get("env") or {}, step.get("env") or {}):
            env.update({key: self._substitute(str(value), expressions or {})
                        for key, value in values.items()})
        script = self._substitute(step["run"], expressions or {})
        # its own session, as a job on its own runner: with the scheduler's autogroups,
        # builders of parallel jobs in one session would slow each other more than
        # their kernels (which jupyter_client starts in sessions of their own)
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=self.workspace, env=env, capture_output=True, text=True,
            timeout=STEP_TIMEOUT, check=False, start_new_session=True)
        self.ran.add((workflow_name, job, step_name))
        return StepResult(completed.returncode, completed.stdout, completed.stderr,
                          summary.read_text(encoding="utf-8"),
                          outputs.read_text(encoding="utf-8"))

    @staticmethod
    def _substitute(text: str, expressions: dict[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            assert match.group(1) in expressions, f"no test value for {match.group(0)}"
            return expressions[match.group(1)]

        return _EXPRESSION.sub(value, text)


class CpuLoad:
    """Busy-loop processes, each ending by itself after a while, always killed on exit."""

    def __enter__(self) -> CpuLoad:
        code = (f"import time\nend = time.monotonic() + {LOAD_LIMIT_SECONDS}\n"
                "while time.monotonic() < end:\n    pass\n")
        # each in its own session, like the kernels: with the scheduler's autogroups
        # a load in the builder's session would slow the builder but not a kernel
        self.processes = [subprocess.Popen([sys.executable, "-c", code],
                                           start_new_session=True)
                          for _ in range(LOAD_PROCESSES)]
        return self

    def __exit__(self, *exc_info: object) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()


@dataclasses.dataclass
class Scenario:
    #: the workspace of each job (a fresh checkout, as on GitHub)
    jobs: dict[str, Path]
    ran: set[tuple[str, str, str]]
    results: dict[str, StepResult]

    def status(self, job: str, relative: str) -> dict[str, Any]:
        return json.loads((self.jobs[job] / relative).read_text(encoding="utf-8"))


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    root = tmp_path_factory.mktemp("workflow")
    jobs: dict[str, Path] = {}
    ran: set[tuple[str, str, str]] = set()

    def checkout(job: str) -> Runner:
        workspace = jobs[job] = root / job / "repository"
        shutil.copytree(BOOK, workspace)
        conf = workspace / "lectures" / "conf.py"
        conf.write_text(conf.read_text(encoding="utf-8") + "\n"
                        + code_block("workflow-shard-conf") + "\n", encoding="utf-8")
        runner = Runner(workspace)
        runner.ran = ran
        return runner

    results: dict[str, StepResult] = {}

    # 1. the main branch, sharded: one shard after the other (a matrix runs them on
    # separate runners; two at once on this machine would slow each other unevenly)
    for number in (1, 2):
        results[f"shard-{number}"] = checkout(f"shard-{number}").run(
            "workflow-sharded", "execute", "Execute this shard", {"matrix.shard": str(number)})
    site = checkout("site")
    for number in (1, 2):  # upload-artifact, then download-artifact into shard-N/
        shard_workspace, artifact = jobs[f"shard-{number}"], site.workspace / f"shard-{number}"
        _copy(shard_workspace / f"status-{number}", artifact / f"status-{number}")
        _copy(shard_workspace / "lectures" / "_build" / f"cache-{number}",
              artifact / "lectures" / "_build" / f"cache-{number}")
    for step in ("Merge the shards", "Report the merged status",
                 "Build the site from the merged cache"):
        results[step] = site.run("workflow-sharded", "site", step)

    # 2. a pull request: the merged status is the main branch's (download-artifact)
    gpu = checkout("gpu")
    (gpu.workspace / "baseline").mkdir()
    shutil.copyfile(site.workspace / "execution-status.json",
                    gpu.workspace / "baseline" / "execution-status.json")
    with CpuLoad():
        results["Build"] = gpu.run("workflow-build", "gpu", "Build")
    for step in ("Compare with the main branch", "Fail on failed notebooks"):
        results[step] = gpu.run("workflow-build", "gpu", step)

    # 3. the CPU job, and the GPU check (on this machine without a GPU)
    cpu = checkout("cpu")
    for step in ("Build on the CPU", "Report the CPU build"):
        results[step] = cpu.run("workflow-build", "cpu", step)
    results["Check the GPU"] = gpu.run("workflow-build", "gpu", "Check the GPU")
    ran.add(("workflow-sharded", "execute", "Check the GPU"))  # the same command
    return Scenario(jobs, ran, results)


def _code_cells(path: Path) -> list[range]:
    """The 1-based lines of each ``{code-cell}`` of a MyST notebook, fences included."""
    cells, start = [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```{code-cell}"):
            start = number
        elif line.startswith("```") and start is not None:
            cells.append(range(start, number + 1))
            start = None
    return cells


_LINE = re.compile(r"^::\w+ file=([^,:]+),line=(\d+),")


def _annotated_line(annotation: str) -> tuple[str, int]:
    match = _LINE.match(annotation)
    assert match, annotation
    return match.group(1), int(match.group(2))


def _annotations(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("::")]


# -- the docs page and the test agree -----------------------------------------------------
def test_every_run_step_of_the_docs_page_is_run(scenario: Scenario) -> None:
    expected = {(name, job, step) for name in ("workflow-build", "workflow-sharded")
                for job, step in run_steps(workflow(name))}
    assert scenario.ran == expected


# -- sharded execution and merging ----------------------------------------------------------
def test_each_shard_executes_its_share(scenario: Scenario) -> None:
    executed = {}
    for number in (1, 2):
        result = scenario.results[f"shard-{number}"]
        assert result.returncode == 0, result.stderr
        status = scenario.status(f"shard-{number}", f"status-{number}/execution-status.json")
        executed[number] = {nb["docname"] for nb in status["notebooks"]
                            if nb["provenance"] == "executed"}
    assert executed[1] and executed[2] and not executed[1] & executed[2]
    assert executed[1] | executed[2] == {"broken", "loops", "sleeps"}


def test_merge_takes_each_notebook_from_the_job_that_executed_it(scenario: Scenario) -> None:
    result = scenario.results["Merge the shards"]
    assert result.returncode == 0, result.stderr
    assert "conflict" not in result.stderr
    merged = scenario.status("site", "execution-status.json")
    assert {nb["docname"]: nb["provenance"] for nb in merged["notebooks"]} == {
        "broken": "executed", "loops": "executed", "sleeps": "executed"}
    assert [m["source"] for m in merged["build"]["merged_from"]] == [
        "shard-1/status-1/execution-status.json", "shard-2/status-2/execution-status.json"]
    for number, part in enumerate(merged["build"]["merged_from"], 1):
        shard = scenario.status(f"shard-{number}", f"status-{number}/execution-status.json")
        mine = {nb["docname"]: nb for nb in shard["notebooks"] if nb["provenance"] == "executed"}
        assert set(part["notebooks"]) == set(mine)
        for nb in merged["notebooks"]:  # each notebook keeps its job's machine and speed
            if nb["docname"] in mine:
                assert nb["calibration_seconds"] == mine[nb["docname"]]["calibration_seconds"]
                assert nb["environment"] == mine[nb["docname"]]["environment"]
    assert result.stdout.startswith(
        "execution-status.json: 3 notebooks from shard-1/status-1/execution-status.json (")


def test_the_site_renders_every_notebook_from_the_merged_cache(scenario: Scenario) -> None:
    result = scenario.results["Build the site from the merged cache"]
    assert result.returncode == 0, result.stderr
    site = scenario.status("site", "_build/html/execution-status.json")
    merged = {nb["docname"]: nb
              for nb in scenario.status("site", "execution-status.json")["notebooks"]}
    provenance = {nb["docname"]: nb["provenance"] for nb in site["notebooks"]}
    # jupyter-cache never stores a failed run, so only the failing notebook runs again
    assert provenance == {"broken": "executed", "loops": "cache", "sleeps": "cache"}
    for nb in site["notebooks"]:
        if nb["provenance"] == "cache":
            assert nb["capture"] == "ok"
            assert nb["environment"] == merged[nb["docname"]]["environment"]
            assert nb["calibration_seconds"] == merged[nb["docname"]]["calibration_seconds"]
    page = (scenario.jobs["site"] / "_build" / "html" / "index.html").read_text(encoding="utf-8")
    assert page.count("CPU: ") >= 2  # the status table names the machine of each notebook


def test_report_of_the_merged_status_annotates_the_failure(scenario: Scenario) -> None:
    result = scenario.results["Report the merged status"]
    assert result.returncode == 0  # --exit-zero
    errors = [a for a in _annotations(result.stderr) if a.startswith("::error ")]
    assert len(errors) == 1 and "file=lectures/broken.md," in errors[0]
    assert "failed=1" in result.outputs.splitlines()
    assert result.summary.startswith("### ❌ Notebook execution: 3 notebooks")


# -- the pull request's build --------------------------------------------------------------
def test_the_build_annotates_failed_and_flagged_cells_at_file_and_line(
        scenario: Scenario) -> None:
    result = scenario.results["Build"]
    assert result.returncode == 0, result.stderr
    annotations = _annotations(result.stderr)
    (error,) = [a for a in annotations if a.startswith("::error ")]
    file, line = _annotated_line(error)
    assert file == "lectures/broken.md"
    assert line in _code_cells(BOOK / "lectures" / "broken.md")[1]  # ratio / 0
    assert error.endswith(",title=Notebook failed%3A broken"
                          "::error in cell 2: ZeroDivisionError: division by zero")
    (slow_loop,) = [a for a in annotations if a.startswith("::warning file=lectures/loops.md,")]
    file, line = _annotated_line(slow_loop)
    assert line in _code_cells(BOOK / "lectures" / "loops.md")[0]
    assert ",title=Slow cell 1 of loops (" in slow_loop
    # the reasons (a regression too, where the machine was slower), then the statement
    # doing the cell's work (its loop, not its first line)
    assert "of the notebook's cell time" in slow_loop and slow_loop.endswith(
        "%0Acode: for i in range(12_000_000):")


def test_the_build_writes_the_job_summary_and_outputs(scenario: Scenario) -> None:
    result = scenario.results["Build"]
    summary = result.summary
    assert summary.startswith("### ❌ Notebook execution: 3 notebooks: 2 ok, 1 failed")
    assert "#### Failures" in summary and "#### Flagged cells" in summary
    assert "`ratio / 0`" in summary
    # the comparison with the baseline, with the machine factor
    assert "the baseline overall" in summary and "slower beyond that" in summary
    outputs = dict(line.split("=", 1) for line in result.outputs.splitlines())
    assert outputs["status-json"] == "_build/html/execution-status.json"
    assert outputs["junit"] == "_build/html/execution-status.junit.xml"
    assert outputs["failed"] == "1" and int(outputs["flagged"]) >= 1
    assert outputs["regressed"] == "0"
    assert float(outputs["machine-factor"]) > 0


def test_a_uniformly_slower_rebuild_is_machine_noise(scenario: Scenario, capsys) -> None:
    comment = (scenario.jobs["gpu"] / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith("### This pull request ")
    assert "**The machine of this pull request was " in comment
    assert "; 0 notebooks slower beyond that**" in comment
    # the same data as JSON: no notebook regressed beyond the machine factor
    assert cli.main(["compare", str(scenario.jobs["gpu"] / "baseline"),
                     str(scenario.jobs["gpu"] / "_build" / "html"), "--json", "--no-github",
                     "--fail-above", "1.5"]) == 0
    data = json.loads(capsys.readouterr().out)
    # two of the book's three notebooks are start-up and sleeps (under a second of cell
    # time): too few notebooks to take the factor from, the calibration is it
    assert data["machine"]["source"] == "calibration"
    assert data["slower_notebooks"] == [] and data["regressions"] == []
    # the build's own analysis (the status page's baseline columns) agrees
    status = scenario.status("gpu", "_build/html/execution-status.json")
    assert not any(entry["baseline"]["regression"] for entry in status["analysis"].values())


def test_the_job_fails_on_the_failed_notebook_after_everything_is_written(
        scenario: Scenario) -> None:
    assert scenario.results["Compare with the main branch"].returncode == 0
    assert scenario.results["Fail on failed notebooks"].returncode == 1


# -- the CPU job and the GPU check ------------------------------------------------------------
def test_the_cpu_job_annotates_from_the_json(scenario: Scenario) -> None:
    build = scenario.results["Build on the CPU"]
    assert build.returncode == 0, build.stderr
    assert _annotations(build.stderr) == [] and build.summary == ""  # turned off
    report = scenario.results["Report the CPU build"]
    assert report.returncode == 0
    (error,) = [a for a in _annotations(report.stderr) if a.startswith("::error ")]
    assert _annotated_line(error)[0] == "lectures/broken.md"
    assert _annotated_line(error)[1] in _code_cells(
        BOOK / "lectures" / "broken.md")[1]
    assert "status-json=_build/cpu" in report.outputs


def test_check_require_gpu_fails_without_a_gpu(scenario: Scenario) -> None:
    result = scenario.results["Check the GPU"]
    assert result.returncode == 1
    assert "Backend gpu is required but not usable" in result.stdout
