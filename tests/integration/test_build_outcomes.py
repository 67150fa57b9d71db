"""Reports say what *this* build did, whatever its outcome (real builds, real kernels).

A build that stops (raise-on-error, ``-W``, a dead kernel in a ``-j`` worker, an
interrupt) must never leave the previous build's green JSON and JUnit behind; a
rebuild that executes nothing must not claim it executed anything; pages that are
not notebooks are not listed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest
from conftest import MYST_HEADER, PROJECT, ProjectBuild, build_project, sphinx_build

from sphinx_gpu_admonition.model.record import SCHEMA_ID
from sphinx_gpu_admonition.probe import ENV_OUTPUT, ENV_PROBE, STARTUP_FILE

SCHEMA = json.loads(
    (PROJECT / "sphinx_gpu_admonition" / "schema"
     / "execution-status.schema.json").read_text(encoding="utf-8"))

def notebook(title: str, *cells: str) -> str:
    return MYST_HEADER + f"# {title}\n\n" + "".join(
        f"```{{code-cell}} ipython3\n{cell}\n```\n\n" for cell in cells)


def index(*pages: str) -> str:
    toctree = "\n".join(pages)
    return f"# Book\n\n```{{toctree}}\n{toctree}\n```\n"


def book(pages: dict[str, str]) -> dict[str, str]:
    """Source files: the pages (name without .md -> text) and an index listing them."""
    return {"index.md": index(*pages), **{f"{name}.md": text for name, text in pages.items()}}


def rebuild(first: ProjectBuild, pages: dict[str, str] | None = None, *,
            parallel: int = 0, freshenv: bool = False, warningiserror: bool = False,
            confoverrides: dict[str, Any] | None = None
            ) -> tuple[ProjectBuild, BaseException | None]:
    """Build ``first``'s source folder again (after adding ``pages``); the exception
    the build raised, if any, instead of raising it."""
    if pages:
        existing = sorted(p.stem for p in first.srcdir.glob("*.md") if p.stem != "index")
        for name, text in pages.items():
            (first.srcdir / f"{name}.md").write_text(text, encoding="utf-8")
        (first.srcdir / "index.md").write_text(index(*sorted({*existing, *pages})),
                                               encoding="utf-8")
    build = sphinx_build(first.srcdir, first.srcdir.parent / "_build", "html", confoverrides,
                         freshenv, parallel=parallel, warningiserror=warningiserror,
                         show_warning_types=False, raising=False)
    return build, build.raised


def status_of(build: ProjectBuild) -> dict[str, Any]:
    data = json.loads(build.read("execution-status.json"))
    jsonschema.validate(data, SCHEMA)
    assert data["schema"] == SCHEMA_ID
    return data


def by_docname(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {nb["docname"]: nb for nb in data["notebooks"]}


def junit_of(build: ProjectBuild) -> ElementTree.Element:
    return ElementTree.fromstring(build.read("execution-status.junit.xml").encode())


def cases(suite: ElementTree.Element) -> dict[str, ElementTree.Element]:
    return {case.get("name"): case for case in suite.iter("testcase")}


STATUS_PAGE = MYST_HEADER + "# Status\n\nA page with notebook front matter and no code.\n"
KERNELSPEC_ONLY = ("---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n"
                   "# Not a notebook\n\nMyST-NB neither executes nor renders this page's code.\n")
FAILS = notebook("Fails", "x = 1", "1 / 0")


def test_pages_that_are_not_notebooks_are_not_listed_and_a_stopped_build_reports_its_failure(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    green = build_project("outcomes", tmp_path, files=book({
        "good": notebook("Good", "y = 2"), "status": STATUS_PAGE, "plain": KERNELSPEC_ONLY}))
    assert set(by_docname(status_of(green))) == {"good"}
    assert junit_of(green).get("failures") == "0"

    stopped, raised = rebuild(green, {"fails": FAILS},
                              confoverrides={"nb_execution_raise_on_error": True})
    assert raised is not None  # MyST-NB stopped the build
    data = status_of(stopped)
    assert data["build"]["outcome"] == "failed"
    assert data["build"]["failure"]
    notebooks = by_docname(data)
    assert notebooks["fails"]["status"] == "error"
    assert notebooks["fails"]["error"]["type"] == "ZeroDivisionError"
    assert [c["first_line"] for c in notebooks["fails"]["cells"]] == ["x = 1", "1 / 0"]
    # "good" was not read again: its record is the first build's, and says so
    assert notebooks["good"]["provenance"] == "earlier_build"
    suite = junit_of(stopped)
    assert suite.get("failures") == "1" and suite.get("errors") == "1"
    build_case = cases(suite)["sphinx-build"]
    assert build_case.find("error") is not None
    assert cases(suite)["fails"].find("failure").get("type") == "ZeroDivisionError"
    assert "the build stopped" in stopped.status
    # the command line agrees: the report of a stopped build fails
    from sphinx_gpu_admonition.cli import main

    assert main(["report", str(stopped.outdir), "--no-color"]) == 1
    assert "The build stopped before it finished" in capsys.readouterr().out


def test_warnings_as_errors_never_leave_a_green_report(tmp_path: Path) -> None:
    first = build_project("outcomes", tmp_path, files=book({"good": notebook("Good", "y = 2")}))
    assert junit_of(first).get("failures") == "0"
    second, raised = rebuild(first, {"fails": FAILS}, warningiserror=True)
    data = status_of(second)
    assert by_docname(data)["fails"]["status"] == "error"
    assert junit_of(second).get("failures") == "1"
    # Sphinx 7.4 stops at the first warning; Sphinx 8.1+ goes on and fails at the end
    assert data["build"]["outcome"] == ("failed" if raised is not None else "succeeded")


PLAIN_PAGES = {f"page{n}": f"# Page {n}\n\nText.\n" for n in range(5)}


def test_a_kernel_dying_in_a_parallel_worker_is_reported(tmp_path: Path) -> None:
    # more than five documents, so that Sphinx 7.4 reads in parallel too.  Both
    # notebooks sort into the first of the two chunks (alpha, index, lecture, page0 |
    # page1-4), so their kernels start one after the other in one worker (two
    # starting at once can pick the same port); alpha is read before lecture fails,
    # and its record is lost with the worker's environment unless its backup is read
    pages = {**PLAIN_PAGES, "alpha": notebook("Alpha", "z = 3"),
             "lecture": notebook("Lecture", "y = 2")}
    first = build_project("outcomes", tmp_path, files=book(pages))
    assert by_docname(status_of(first))["lecture"]["status"] == "ok"
    dies = notebook("Lecture", "import os\na = 1", "os._exit(1)")
    second, raised = rebuild(first, {"lecture": dies}, parallel=2, freshenv=True)
    assert raised is not None
    data = status_of(second)
    assert data["build"]["outcome"] == "failed"
    records = by_docname(data)
    assert set(records) == {"alpha", "lecture"}
    alpha = records["alpha"]
    assert (alpha["status"], alpha["provenance"]) == ("ok", "executed")
    assert [c["first_line"] for c in alpha["cells"]] == ["z = 3"]
    record = records["lecture"]
    assert record["status"] == "kernel_died"
    assert [c["first_line"] for c in record["cells"]] == ["import os", "os._exit(1)"]
    assert record["error"]["execution_count"] == 2
    assert junit_of(second).get("errors") == "1"


def test_a_rebuild_that_executes_nothing_says_so_and_an_interrupted_build_leaves_no_report(
        tmp_path: Path) -> None:
    first = build_project("outcomes", tmp_path, files=book({"good": notebook("Good", "y = 2")}))
    assert by_docname(status_of(first))["good"]["provenance"] == "executed"

    unchanged, raised = rebuild(first)
    assert raised is None
    record = by_docname(status_of(unchanged))["good"]
    assert record["provenance"] == "earlier_build"
    assert record["status"] == "ok"
    case = cases(junit_of(unchanged))["good"]
    assert float(case.get("time")) == 0.0  # nothing was executed by this build
    assert "earlier build" in case.find("system-out").text
    assert "0 executed" in unchanged.status and "1 unchanged since an earlier build" in \
        unchanged.status

    # an interrupt skips build-finished: the reports of the previous build must go
    conf = first.srcdir / "conf.py"
    plain_conf = conf.read_text()
    conf.write_text(plain_conf + (
        "\ndef setup(app):\n"
        "    def stop(app, docname, source):\n"
        "        raise KeyboardInterrupt\n"
        "    app.connect('source-read', stop)\n"), encoding="utf-8")
    interrupted, raised = rebuild(first, freshenv=True)
    assert isinstance(raised, KeyboardInterrupt)
    assert not (interrupted.outdir / "execution-status.json").exists()
    assert not (interrupted.outdir / "execution-status.junit.xml").exists()

    # ... and it leaves the kernels' environment set: the next build in this process,
    # with capture off, neither measures its notebooks nor keeps that environment
    assert os.environ.get("PYTHONSTARTUP") == str(STARTUP_FILE)
    conf.write_text(plain_conf, encoding="utf-8")
    off, raised = rebuild(first, freshenv=True, confoverrides={"gpu_capture": False})
    assert raised is None
    assert by_docname(status_of(off))["good"]["capture"] == "missing"
    assert os.environ.get("PYTHONSTARTUP") != str(STARTUP_FILE)
    assert ENV_PROBE not in os.environ and ENV_OUTPUT not in os.environ


def test_checks_that_cannot_be_made_say_so(tmp_path: Path) -> None:
    page = MYST_HEADER + "# GPU page\n\n```{gpu}\n```\n\n```{code-cell} ipython3\nx = 1\n```\n"
    build = build_project("outcomes", tmp_path, files=book({"gpu_page": page}), confoverrides={
        "gpu_capture": False, "gpu_expected_backend": "gpu",
        # the build's own output: it would change every page on every build
        "gpu_status_baseline": "../_build/html/execution-status.json"})
    lines = [line for line in build.warning_lines if "gpu_expected_backend" in line]
    assert len(lines) == 1
    assert "cannot check" in lines[0] and "gpu_page.md" in lines[0]
    baseline = [line for line in build.warning_lines if "gpu_status_baseline" in line]
    assert len(baseline) == 1 and "this build's own output" in baseline[0]


