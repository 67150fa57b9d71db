"""The in-kernel capture, in every execution mode, on real kernels and real JAX (CPU).

Timing values are never asserted, only relations (the 0.5 s sleep cell is the
slowest; the probe's time for it is at least what the cell measured itself, and
what the probe adds is less than the cell's own work).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bs4 import BeautifulSoup
from capture_builds import SCHEMA, build_again, forget_environment, notebooks, only, status_json
from conftest import MYST_HEADER, ProjectBuild, build_project, myst_header

from sphinx_gpu_admonition.model.record import StatusReport


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without values that differ between two executions (times, memory)."""
    return {
        "docname": record["docname"], "status": record["status"], "title": record["title"],
        "provenance": record["provenance"], "backend": record["environment"]["jax"]["backend"],
        "error": (record["error"] or {}).get("type"),
        "cells": [(c["index"], c["execution_count"], c["first_line"], c["error"], c["loops"],
                   sorted(c["compilations"])) for c in record["cells"]],
    }


@pytest.fixture(scope="module")
def force_build(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    return build_project("capture", tmp_path_factory.mktemp("force"))


def test_status_json_lists_every_notebook_with_its_status(force_build: ProjectBuild) -> None:
    records = notebooks(force_build)
    assert set(records) == {"timing", "jax_compile", "jax_unused", "fails",
                            "nested/deeper/page", "excluded", "prefilled"}
    assert "index" not in records  # a plain page is not a notebook
    assert records["timing"]["status"] == "ok"
    assert records["excluded"]["status"] == "excluded"
    assert records["excluded"]["provenance"] == "none"
    assert records["nested/deeper/page"]["status"] == "ok"
    assert all(r["provenance"] == "executed" for name, r in records.items()
               if name != "excluded")


def test_sleep_cell_is_the_slowest_and_measured_like_the_cell_itself(
        force_build: ProjectBuild) -> None:
    timing = notebooks(force_build)["timing"]
    cells = timing["cells"]
    assert [c["index"] for c in cells] == [1, 2, 3]
    assert [c["execution_count"] for c in cells] == [1, 2, 3]
    slowest = max(cells, key=lambda c: c["seconds"])
    assert slowest["first_line"] == "started = time.perf_counter()"
    # the cell printed its own measurement of the sleep in the next cell's output
    html = BeautifulSoup(force_build.read("timing.html"), "html.parser")
    printed = html.select("div.cell_output")[-1].get_text()
    inside = float(printed.split()[0])
    assert inside <= slowest["seconds"] < 2 * inside
    assert timing["runtime_seconds"] >= sum(c["seconds"] for c in cells)


def test_capture_leaves_the_user_namespace_alone(force_build: ProjectBuild) -> None:
    html = BeautifulSoup(force_build.read("timing.html"), "html.parser")
    printed = html.select("div.cell_output")[-1].get_text()
    names = eval(printed.split(" ", 1)[1])  # noqa: S307 - our own test output
    assert set(names) == {"In", "Out", "exit", "get_ipython", "inside", "open", "quit",
                          "started", "time", "x"}


def test_jax_backend_devices_compilations_and_loops(force_build: ProjectBuild) -> None:
    record = notebooks(force_build)["jax_compile"]
    jax = record["environment"]["jax"]
    assert jax["backend"] == "cpu"
    assert jax["devices"][0]["platform"] == "cpu"
    assert jax["version"] and jax["jaxlib_version"]
    first, second = record["cells"]
    # compiled in the very cell that imports JAX: one compilation per new shape
    assert first["compilations"]["jit(double)"] == 3
    assert first["compile_seconds"] > 0
    assert second["loops"] == ["lax.scan"]
    assert "numpy" in record["environment"]["libraries"]


def test_importing_jax_without_using_it_reports_no_backend(force_build: ProjectBuild) -> None:
    record = notebooks(force_build)["jax_unused"]
    assert record["environment"]["jax"]["backend"] is None
    assert record["cells"][0]["compilations"] == {}
    assert "jax" in record["environment"]["libraries"]


def test_plain_notebooks_report_no_backend_but_the_host(force_build: ProjectBuild) -> None:
    environment = notebooks(force_build)["timing"]["environment"]
    assert environment["jax"]["backend"] is None
    assert environment["host"]["cores"] >= 1
    assert environment["python"].count(".") == 2


def test_a_cell_that_raises(force_build: ProjectBuild) -> None:
    record = notebooks(force_build)["fails"]
    assert record["status"] == "error"
    assert record["error"]["type"] == "ValueError"
    assert record["error"]["cell_index"] == 2
    assert [c["error"] for c in record["cells"]] == [None, "ValueError"]


def test_the_executed_page_says_where_it_ran(force_build: ProjectBuild) -> None:
    html = BeautifulSoup(force_build.read("jax_compile.html"), "html.parser")
    info = html.select_one("details.gpu-execution-info")
    assert info.summary.get_text().startswith("Executed on CPU: ")
    assert "JAX" in info.summary.get_text()
    rows = {th.get_text(): td.get_text() for th, td in
            zip(info.select("th"), info.select("td"), strict=True)}
    assert rows["JAX backend"] == "cpu"
    meta = {m["name"]: m["content"] for m in html.select("meta[name^='gpu-execution:']")}
    assert meta["gpu-execution:backend"] == "cpu"
    assert meta["gpu-execution:status"] == "ok"
    assert force_build.app.env.metadata["jax_compile"]["gpu_execution_backend"] == "cpu"


def test_junit_has_a_case_per_notebook_and_the_failure(force_build: ProjectBuild) -> None:
    from xml.etree import ElementTree

    suite = ElementTree.fromstring(force_build.read("execution-status.junit.xml"))
    cases = {case.get("name"): case for case in suite.iter("testcase")
             if case.get("classname") == "notebooks"}  # the others: flagged cells
    assert set(cases) == set(notebooks(force_build))
    assert cases["fails"].find("failure").get("type") == "ValueError"
    assert cases["excluded"].find("skipped") is not None
    assert suite.get("failures") == "1"


def test_console_summary_names_the_slowest_notebooks(force_build: ProjectBuild) -> None:
    assert "execution: 7 notebooks, 6 executed, 0 from the cache, 1 failed" in force_build.status
    assert "FAILED fails: error ValueError" in force_build.status


def test_capture_does_not_change_outputs(tmp_path: Path, force_build: ProjectBuild) -> None:
    compared = ("timing", "jax_compile", "fails")
    plain = build_project("capture", tmp_path, confoverrides={"gpu_capture": False},
                          **only(*compared))
    for name in compared:
        with_capture = json.loads((force_build.outdir.parent / "jupyter_execute"
                                   / f"{name}.ipynb").read_text())
        without = json.loads((plain.outdir.parent / "jupyter_execute"
                              / f"{name}.ipynb").read_text())
        assert [c.get("metadata") for c in with_capture["cells"]] == \
            [c.get("metadata") for c in without["cells"]]
        assert [len(c.get("outputs", [])) for c in with_capture["cells"]] == \
            [len(c.get("outputs", [])) for c in without["cells"]]
    # without capture the status still lists the notebook, with no device data
    assert notebooks(plain)["timing"]["capture"] == "missing"
    assert plain.app.env.metadata["timing"]["gpu_execution_device"] is None


def _small_project(tmp_path: Path, **kwargs: Any) -> ProjectBuild:
    return build_project("capture", tmp_path, **only("timing", "nested/deeper/page"), **kwargs)


def test_cache_miss_then_hit_from_a_copied_build_folder(tmp_path: Path) -> None:
    first = _small_project(tmp_path / "a", confoverrides={"nb_execution_mode": "cache"})
    executed = notebooks(first)["timing"]
    assert executed["provenance"] == "executed"
    # a CI job restores _build elsewhere: the cache (and our data beside it) comes along
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    forget_environment(tmp_path / "b" / "_build")
    second = build_again(ProjectBuild(None, tmp_path / "b" / "src", tmp_path / "b", "", ""),
                         confoverrides={"nb_execution_mode": "cache"})
    reused = notebooks(second)["timing"]
    assert reused["provenance"] == "cache"
    assert reused["executed_at"] == executed["executed_at"]
    assert reused["cells"] == executed["cells"]
    assert reused["environment"] == executed["environment"]
    from sphinx_gpu_admonition.ext.capture import get_record
    from sphinx_gpu_admonition.model.record import NotebookRecord

    # the record the pages read is the one the JSON holds
    assert get_record(second.app.env, "timing") == NotebookRecord.from_dict(reused)
    html = BeautifulSoup(second.read("timing.html"), "html.parser")
    assert "execution cache" in html.select_one("details.gpu-execution-info summary").get_text()


def test_cache_built_without_the_extension_is_still_hit(tmp_path: Path) -> None:
    """Capture never changes the notebook or the jupyter-cache hash."""
    first = _small_project(tmp_path / "a", confoverrides={"nb_execution_mode": "cache",
                                                          "gpu_capture": False})
    assert notebooks(first)["timing"]["capture"] == "missing"
    assert notebooks(first)["timing"]["provenance"] == "executed"  # a miss, not a hit
    forget_environment(tmp_path / "a" / "_build")
    second = build_again(ProjectBuild(None, tmp_path / "a" / "src", tmp_path / "a", "", ""),
                         confoverrides={"nb_execution_mode": "cache"})
    record = notebooks(second)["timing"]
    assert record["provenance"] == "cache"  # a hit: no re-execution
    assert record["capture"] == "missing"


def test_auto_mode_lists_notebooks_with_outputs_as_not_executed(tmp_path: Path) -> None:
    build = build_project("capture", tmp_path, confoverrides={"nb_execution_mode": "auto"},
                          **only("prefilled", "timing"))
    records = notebooks(build)
    assert records["prefilled"]["status"] == "outputs_present"
    assert records["prefilled"]["cells"] == []
    assert records["timing"]["status"] == "ok"


def test_execution_off(tmp_path: Path) -> None:
    build = _small_project(tmp_path, confoverrides={"nb_execution_mode": "off"})
    assert {r["status"] for r in notebooks(build).values()} == {"execution_off"}


def test_inline_mode_and_execution_in_temp(tmp_path: Path) -> None:
    build = _small_project(tmp_path, confoverrides={"nb_execution_mode": "inline"})
    timing = notebooks(build)["timing"]
    assert timing["status"] == "ok"
    assert [c["index"] for c in timing["cells"]] == [1, 2, 3]
    in_temp = _small_project(tmp_path / "temp", confoverrides={"nb_execution_in_temp": True})
    assert [c["index"] for c in notebooks(in_temp)["timing"]["cells"]] == [1, 2, 3]


def test_parallel_build_gives_the_same_records_as_a_serial_one(
        tmp_path: Path, force_build: ProjectBuild) -> None:
    # the serial build is the module's: its sources built again with -j 2
    shutil.copytree(force_build.srcdir, tmp_path / "parallel" / "src")
    parallel = build_again(
        ProjectBuild(None, tmp_path / "parallel" / "src", tmp_path / "parallel", "", ""),
        parallel=2)
    assert {k: comparable(v) for k, v in notebooks(parallel).items()} == \
        {k: comparable(v) for k, v in notebooks(force_build).items()}


def test_incremental_rebuild_reexecutes_only_changed_and_forgets_deleted(
        tmp_path: Path) -> None:
    first = build_project("capture", tmp_path, **only("timing", "nested/deeper/page",
                                                      "jax_unused"))
    before = notebooks(first)
    page = first.srcdir / "nested" / "deeper" / "page.md"
    page.write_text(page.read_text().replace("range(10)", "range(20)"))
    (first.srcdir / "jax_unused.md").unlink()
    (first.srcdir / "index.md").write_text("# I\n\n```{toctree}\ntiming\nnested/deeper/page\n```\n")
    second = build_again(first)
    after = notebooks(second)
    assert set(after) == {"timing", "nested/deeper/page"}
    # not re-executed: the first build's record, marked as such
    assert after["timing"] == {**before["timing"], "provenance": "earlier_build"}
    assert after["nested/deeper/page"]["runtime_seconds"] != \
        before["nested/deeper/page"]["runtime_seconds"]
    pickled = second.app.env.gpu_execution_records
    assert set(pickled) == {"timing", "nested/deeper/page"}


def test_a_cell_that_times_out(tmp_path: Path) -> None:
    files = {
        "index.md": "# T\n\n```{toctree}\nhangs\n```\n",
        "hangs.md": myst_header("mystnb:\n  execution_timeout: 2\n") + "# Hangs\n\n"
                    "```{code-cell} ipython3\nb = 2\n```\n\n```{code-cell} ipython3\n"
                    "import time\ntime.sleep(60)\n```\n",
    }
    build = build_project("capture", tmp_path, files=files, conf_append=only()["conf_append"])
    record = notebooks(build)["hangs"]
    assert record["status"] == "timeout"
    assert record["error"]["type"] == "CellTimeoutError"
    assert record["error"]["cell_index"] == 2
    assert record["cells"][-1]["error"] == "KeyboardInterrupt"  # nbclient interrupted it
    # nbclient's own words, not the "-----" line that ends its message
    assert "A cell timed out while it was being executed, after 2 seconds" in \
        record["error"]["message"]


def test_a_kernel_that_dies_is_reported_although_myst_nb_stops_the_build(
        tmp_path: Path) -> None:
    files = {
        "index.md": "# K\n\n```{toctree}\ndies\n```\n",
        "dies.md": MYST_HEADER + "# Dies\n\n```{code-cell} ipython3\nimport os\n"
                   "a = 1\n```\n\n```{code-cell} ipython3\nos._exit(1)\n```\n",
    }
    with pytest.raises(Exception, match="Kernel died"):
        build_project("capture", tmp_path, files=files, conf_append=only()["conf_append"])
    data = json.loads((tmp_path / "_build" / "html" / "execution-status.json").read_text())
    jsonschema.validate(data, SCHEMA)
    (record,) = data["notebooks"]
    assert record["docname"] == "dies"
    assert record["status"] == "kernel_died"
    # the finished cell, and the cell it died in (its cell_start line), named by its error
    assert [(c["first_line"], c["error"]) for c in record["cells"]] == [
        ("import os", None), ("os._exit(1)", "DeadKernelError")]
    assert record["error"]["execution_count"] == 2
    assert record["error"]["signal"] is None  # an exit, not a signal: no stack either


def test_user_pythonstartup_still_runs_and_its_errors_are_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    startup = tmp_path / "startup.py"
    startup.write_text("FROM_USER_STARTUP = 42\nSEEN_FILE = __file__\n"
                       "raise RuntimeError('broken startup')\n")
    monkeypatch.setenv("PYTHONSTARTUP", str(startup))
    files = {"index.md": "# U\n\n```{toctree}\nuser\n```\n",
             "user.md": MYST_HEADER + "# U\n\n"
                        "```{code-cell} ipython3\nprint(FROM_USER_STARTUP, SEEN_FILE)\n```\n"}
    build = build_project("capture", tmp_path / "p", files=files,
                          conf_append=only()["conf_append"],
                          confoverrides={"show_warning_types": True})
    record = notebooks(build)["user"]
    assert record["status"] == "ok" and record["capture"] == "ok"
    html = BeautifulSoup(build.read("user.html"), "html.parser")
    assert html.select_one("div.cell_output").get_text().strip() == f"42 {startup}"
    (warning,) = [line for line in build.warning_lines if "user.md" in line]
    assert "RuntimeError: broken startup" in warning and "gpu_admonition.capture" in warning
    import os

    assert os.environ["PYTHONSTARTUP"] == str(startup)  # restored after the build


def test_status_report_round_trips_through_the_model(force_build: ProjectBuild) -> None:
    data = status_json(force_build)
    assert StatusReport.from_dict(data).to_dict() == data


def test_an_error_inside_the_probe_warns_once_and_the_notebook_runs(tmp_path: Path) -> None:
    files = {
        "index.md": "# B\n\n```{toctree}\nbreaks\n```\n",
        # a fake "jax" module makes the probe's compile listener fail to register
        "breaks.md": MYST_HEADER + "# Breaks the probe\n\n```{code-cell} ipython3\n"
                     "import sys, types\nsys.modules['jax'] = types.ModuleType('jax')\n```\n\n"
                     "```{code-cell} ipython3\nprint('still running')\n```\n",
    }
    build = build_project("capture", tmp_path, files=files, conf_append=only()["conf_append"])
    record = notebooks(build)["breaks"]
    assert record["status"] == "ok"
    assert record["capture"] == "failed"
    assert len(record["cells"]) == 2
    warnings = [line for line in build.warning_lines if "gpu_admonition.capture" in line
                or "in-kernel capture failed" in line]
    assert len(warnings) == 1
    assert "breaks" in warnings[0]
    html = BeautifulSoup(build.read("breaks.html"), "html.parser")
    assert html.select("div.cell_output")[-1].get_text().strip() == "still running"


def test_a_corrupt_sidecar_warns_and_the_build_goes_on(tmp_path: Path) -> None:
    first = build_project("capture", tmp_path, confoverrides={"nb_execution_mode": "cache"},
                          **only("timing"))
    assert notebooks(first)["timing"]["provenance"] == "executed"
    (sidecar,) = (tmp_path / "_build" / ".jupyter_cache" / "sphinx-gpu-admonition").glob("*.json")
    sidecar.write_text("{not json", encoding="utf-8")
    forget_environment(tmp_path / "_build")
    second = build_again(first, confoverrides={"nb_execution_mode": "cache"})
    record = notebooks(second)["timing"]
    assert record["provenance"] == "cache" and record["capture"] == "missing"
    warnings = [w for w in second.warnings.splitlines() if "unreadable capture data" in w]
    assert len(warnings) == 1 and "timing" in warnings[0]


def test_pages_read_the_record_the_json_holds(force_build: ProjectBuild) -> None:
    """The environment keeps the record objects every page, table and report reads;
    each is the record its JSON entry describes."""
    from sphinx_gpu_admonition.ext.capture import get_record, stored_records
    from sphinx_gpu_admonition.model.record import NotebookRecord

    env = force_build.app.env
    written = {nb["docname"]: nb for nb in status_json(force_build)["notebooks"]}
    assert stored_records(env) and set(stored_records(env)) == set(written)
    for docname, record in stored_records(env).items():
        assert get_record(env, docname) is record
        assert record == NotebookRecord.from_dict(written[docname])


def test_the_json_holds_each_record_as_the_model_writes_it(force_build: ProjectBuild) -> None:
    """The JSON is written from the dicts the build stored: the same as converting
    each record again."""
    from sphinx_gpu_admonition.ext.capture import all_records

    written = {nb["docname"]: nb for nb in status_json(force_build)["notebooks"]}
    assert written == {r.docname: r.to_dict() for r in all_records(force_build.app.env)}
