"""Records that cannot lie (issue 25, item 2), on real kernels and real Sphinx builds:
an exception class not named ``...Error``, a type named across lines, a lone surrogate
in a message, a forked child, a tracer that breaks the probe, and a cache hit's sidecar
that is not the page's (a status file whose ``notebooks`` is null:
tests/unit/cli/test_report.py)."""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from bs4 import BeautifulSoup
from capture_builds import build_again, forget_environment, notebooks
from conftest import MYST_HEADER, ProjectBuild, build_project


def notebook(title: str, *cells: str) -> str:
    return MYST_HEADER + f"# {title}\n\n" + "".join(
        f"```{{code-cell}} ipython3\n{cell}\n```\n\n" for cell in cells)


PAGES = {
    "boom": notebook("Boom", "x = 1", "class Boom(Exception):\n    pass\n\n"
                     "raise Boom('it went bang')"),
    "inject": notebook("Inject", "raise type('Boom\\n::error file=evil.py,line=1::INJECTED', "
                       "(Exception,), {})('x')"),
    # ipykernel cannot send this traceback: IPython reports the run with a new result
    "surrogate": notebook("Surrogate", "x = 1", "raise ValueError('bad \\ud800 text')"),
    # the child runs the cell to its end (its post_run_cell too), then leaves
    "fork": notebook("Fork", "import os", "pid = os.fork()\nif pid == 0:\n"
                     "    get_ipython().events.register('post_run_cell', "
                     "lambda result: os._exit(0))\nelse:\n    os.waitpid(pid, 0)", "y = 2"),
    "tracer": notebook("Tracer", "import sys\n\ndef tracer(frame, event, arg):\n"
                       "    if 'kernel_probe' in frame.f_code.co_filename:\n"
                       "        raise RuntimeError('no probe here')\n\nsys.settrace(tracer)",
                       "y = 2", "z = 3"),
}


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    files = {"index.md": "# Book\n\n```{toctree}\nstatus\n" + "\n".join(PAGES) + "\n```\n",
             "status.md": "# Build status\n\n```{execution-status}\n```\n",
             **{f"{name}.md": text for name, text in PAGES.items()}}
    return build_project("outcomes", tmp_path_factory.mktemp("records"), files=files,
                         confoverrides={"show_warning_types": True})


def junit_failures(build: ProjectBuild) -> dict[str, ElementTree.Element]:
    suite = ElementTree.fromstring(build.read("execution-status.junit.xml").encode())
    return {case.get("name"): case.find("failure") for case in suite.iter("testcase")}


def test_an_exception_not_named_error_is_recorded_with_its_own_line(
        build: ProjectBuild, capsys: pytest.CaptureFixture[str]) -> None:
    record = notebooks(build)["boom"]
    assert record["error"]["type"] == "Boom"
    assert record["error"]["message"] == "Boom: it went bang"
    assert record["error"]["cell_index"] == 2
    failure = junit_failures(build)["boom"]
    assert failure.get("type") == "Boom" and "nbclient" not in (failure.text or "")
    from sphinx_gpu_admonition.cli import main

    main(["report", str(build.outdir), "--no-color", "--github"])
    printed = capsys.readouterr()
    assert "Boom: it went bang" in printed.out
    assert "An error occurred while executing" not in printed.out + printed.err
    (annotation,) = [line for line in printed.err.splitlines()  # the workflow commands
                     if line.startswith("::error") and "boom.md" in line]
    assert annotation.endswith("error in cell 2: Boom: it went bang")
    page = BeautifulSoup(build.read("status.html"), "html.parser")
    messages = [p.get_text() for p in page.select("p.gpu-status-error-message")]
    assert any("Boom: it went bang" in text for text in messages)
    assert not any("An error occurred" in text for text in messages)


def test_without_capture_data_the_exception_is_read_from_the_kernels_traceback(
        tmp_path: Path) -> None:
    files = {"index.md": "# Book\n\n```{toctree}\nboom\n```\n", "boom.md": PAGES["boom"]}
    build = build_project("outcomes", tmp_path, files=files,
                          confoverrides={"gpu_capture": False})
    record = notebooks(build)["boom"]
    assert record["capture"] == "missing"
    assert (record["error"]["type"], record["error"]["message"]) == ("Boom", "Boom: it went bang")


def test_exception_types_and_messages_are_recorded_as_one_line(build: ProjectBuild) -> None:
    record = notebooks(build)["inject"]
    name = "Boom ::error file=evil.py,line=1::INJECTED"
    assert record["error"]["type"] == name
    assert record["error"]["message"] == f"{name}: x"
    assert record["cells"][0]["error"] == name


def test_a_lone_surrogate_in_a_message_costs_neither_the_type_nor_the_cell(
        build: ProjectBuild) -> None:
    record = notebooks(build)["surrogate"]
    assert [(c["execution_count"], c["error"]) for c in record["cells"]] == [
        (1, None), (2, "ValueError")]
    assert record["error"]["type"] == "ValueError"
    assert record["error"]["cell_index"] == 2 and record["error"]["execution_count"] == 2
    assert "An error occurred" not in record["error"]["message"]  # nbclient's header


def test_a_forked_child_writes_nothing_for_the_notebook(build: ProjectBuild) -> None:
    record = notebooks(build)["fork"]
    assert [c["execution_count"] for c in record["cells"]] == [1, 2, 3]
    assert record["capture"] == "ok"


def test_a_tracer_that_breaks_the_probe_means_capture_failed_with_a_warning(
        build: ProjectBuild) -> None:
    record = notebooks(build)["tracer"]
    assert record["status"] == "ok" and record["cells"] == []
    assert record["capture"] == "failed"
    assert "recorded none" in record["capture_message"]
    warnings = [line for line in build.warning_lines if "tracer.md" in line]
    assert len(warnings) == 1 and "gpu_admonition.capture" in warnings[0]


# -- a cache hit's sidecar must be the page's -----------------------------------------
TWO_CELLS = notebook("Two cells", "a = 1", "b = a + 1")


def _phantoms(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**cells[0], "index": None, "execution_count": n} for n in range(3, 20_003)]


@dataclasses.dataclass
class TwoCells:
    """The two-cell page executed once into a jupyter-cache, with its capture beside
    it; each test rebuilds a copy of the folder (cache hits: no kernel)."""

    folder: Path
    record: dict[str, Any]

    def copy_to(self, dest: Path) -> ProjectBuild:
        shutil.copytree(self.folder, dest, dirs_exist_ok=True)
        return ProjectBuild(None, dest / "src", dest / "_build" / "html", "", "")


@pytest.fixture(scope="module")
def two_cells(tmp_path_factory: pytest.TempPathFactory) -> TwoCells:
    folder = tmp_path_factory.mktemp("two-cells")
    files = {"index.md": "# B\n\n```{toctree}\ntwo\n```\n", "two.md": TWO_CELLS}
    first = build_project("outcomes", folder, files=files, confoverrides={
        "nb_execution_mode": "cache", "show_warning_types": True})
    record = notebooks(first)["two"]
    assert record["capture"] == "ok" and record["provenance"] == "executed"
    return TwoCells(folder, record)


@pytest.mark.parametrize("change, reason", [
    # another notebook's cells
    (lambda cells: [{**c, "first_line": f"other_{n} = 0"} for n, c in enumerate(cells)],
     "starts with 'other_0 = 0'"),
    # index 99 (and a count the page does not have) in a 2-cell notebook
    (lambda cells: [*cells, {**cells[0], "index": 99, "execution_count": 99}],
     "3 cells for a notebook of 2 code cells"),
    (lambda cells: [cells[0], {**cells[1], "execution_count": 1}], "recorded twice"),
    (lambda cells: [*cells, *_phantoms(cells)], "20002 cells for a notebook of 2"),
])
def test_a_sidecar_that_is_not_the_pages_is_dropped_with_a_warning(
        tmp_path: Path, two_cells: TwoCells, change: Any, reason: str) -> None:
    cache = {"nb_execution_mode": "cache", "show_warning_types": True}
    first = two_cells.copy_to(tmp_path)
    (sidecar,) = (tmp_path / "_build" / ".jupyter_cache" / "sphinx-gpu-admonition").glob("*.json")
    saved = json.loads(sidecar.read_text(encoding="utf-8"))
    changed = copy.deepcopy(saved)
    changed["record"]["cells"] = change(changed["record"]["cells"])
    changed["record"]["docname"] = "another"
    sidecar.write_text(json.dumps(changed), encoding="utf-8")
    forget_environment(tmp_path / "_build")
    hit = build_again(first, confoverrides=cache)
    record = notebooks(hit)["two"]
    assert record["provenance"] == "cache"
    assert record["capture"] == "missing" and record["cells"] == []
    assert reason in record["capture_message"] and "'another'" in record["capture_message"]
    warnings = [w for w in hit.warnings.splitlines() if "gpu_admonition.capture" in w]
    assert len(warnings) == 1 and reason in warnings[0] and "two" in warnings[0]


def test_a_sidecar_of_the_same_code_is_reconciled_with_the_page(
        tmp_path: Path, two_cells: TwoCells) -> None:
    """Markdown added above the cells keeps the jupyter-cache hash: the hit is this
    page's execution, its cells take their places on the page as it is now."""
    cache = {"nb_execution_mode": "cache"}
    first = two_cells.copy_to(tmp_path)
    executed = two_cells.record
    (first.srcdir / "two.md").write_text(
        TWO_CELLS.replace("# Two cells\n", "# Two cells\n\nA new paragraph.\n\n+++\n\nMore.\n"),
        encoding="utf-8")
    forget_environment(tmp_path / "_build")
    hit = build_again(first, confoverrides=cache)
    record = notebooks(hit)["two"]
    assert record["provenance"] == "cache" and record["capture"] == "ok"
    assert [c["first_line"] for c in record["cells"]] == ["a = 1", "b = a + 1"]
    assert [c["index"] for c in record["cells"]] == [c["index"] + 1 for c in executed["cells"]]
    assert not [w for w in hit.warnings.splitlines() if "gpu_admonition" in w]


