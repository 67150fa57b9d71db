"""The probe's file is its own (issue 33, item 2), in real kernels of a real Sphinx build:
a notebook that closes the probe's descriptor, puts its own file on that number or
reuses it keeps every cell in its record, and its own file gets nothing of the probe's;
a record with cells the probe could not write says ``capture: partial``, with one
warning naming them, and every view still shows where the notebook ran.

The reader's side (the kernel's counts, nested runs, lost lines) is tested on its own
lines at the end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bs4 import BeautifulSoup
from capture_builds import notebooks, only
from conftest import MYST_HEADER, ProjectBuild, build_project

from sphinx_gpu_admonition.model import probe_output
from sphinx_gpu_admonition.model.files import read_status
from sphinx_gpu_admonition.probe import probe_file, protocol

SCHEMA = json.loads((Path(probe_output.__file__).parents[1] / "schema"
                     / "execution-status.schema.json").read_text(encoding="utf-8"))

#: finds the probe's descriptors as a notebook could: the open files named *.jsonl
FIND = ("import os\n\n"
        "def probe_descriptors():\n"
        "    found = []\n"
        "    for name in os.listdir('/proc/self/fd'):\n"
        "        try:\n"
        "            target = os.readlink(f'/proc/self/fd/{name}')\n"
        "        except OSError:\n"
        "            continue\n"
        "        if target.endswith('.jsonl'):\n"
        "            found.append(int(name))\n"
        "    return found")


def notebook(title: str, *cells: str) -> str:
    return MYST_HEADER + f"# {title}\n\n" + "".join(
        f"```{{code-cell}} ipython3\n{cell}\n```\n\n" for cell in cells)


PAGES = {
    # os.closerange and daemonising helpers close descriptors they did not open
    "closes": notebook("Closes", FIND, "[os.close(fd) for fd in probe_descriptors()]",
                       "x = 3", "y = 4", "print(len(probe_descriptors()))"),
    # the notebook's own file on the probe's number
    "replaces": notebook("Replaces", FIND,
                         "results = open('replaced.csv', 'w', buffering=1)\n"
                         "[fd] = probe_descriptors()\nos.dup2(results.fileno(), fd)",
                         "results.write('a,b\\n')", "y = 4",
                         "results.write('c,d\\n')\nresults.close()"),
    # closed, then the number taken by the notebook's next file
    "reuses": notebook("Reuses", FIND,
                       "[fd] = probe_descriptors()\nos.close(fd)\n"
                       "results = open('reused.csv', 'w', buffering=1)\n"
                       "os.dup2(results.fileno(), fd)\nresults.write('a,b\\n')",
                       "x = 3", "y = 4", "results.close()"),
    # the probe's file cannot be opened for two cells (its path a folder): their lines
    # are lost, the cells around them kept
    "unwritable": notebook("Unwritable", FIND,
                           "[fd] = probe_descriptors()\npath = os.readlink(f'/proc/self/fd/{fd}')"
                           "\nos.close(fd)\nos.rename(path, path + '.away')\nos.mkdir(path)",
                           "x = 3", "os.rmdir(path)\nos.rename(path + '.away', path)",
                           "y = 5"),
}


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    files = {**only()["files"], **{f"{name}.md": text for name, text in PAGES.items()},
             "status.md": "# Build status\n\n```{execution-status}\n```\n"}
    files["index.md"] = ("# Book\n\n```{toctree}\nstatus\n" + "\n".join(PAGES) + "\n```\n")
    return build_project("capture", tmp_path_factory.mktemp("probe-file"), files=files,
                         conf_append=only()["conf_append"],
                         confoverrides={"show_warning_types": True})


def first_lines(record: dict[str, Any]) -> list[str]:
    return [cell["first_line"] for cell in record["cells"]]


def capture_warnings(build: ProjectBuild, page: str) -> list[str]:
    return [line for line in build.warning_lines
            if f"{page}.md" in line and "gpu_admonition.capture" in line]


@pytest.mark.parametrize("page", ["closes", "replaces", "reuses"])
def test_a_notebook_that_takes_the_probes_descriptor_keeps_every_cell(
        build: ProjectBuild, page: str) -> None:
    record = notebooks(build)[page]
    assert (record["status"], record["capture"]) == ("ok", "ok")
    assert [c["execution_count"] for c in record["cells"]] == [1, 2, 3, 4, 5]
    assert [c["index"] for c in record["cells"]] == [1, 2, 3, 4, 5]
    assert not capture_warnings(build, page)


def test_the_probe_never_writes_into_the_notebooks_own_file(build: ProjectBuild) -> None:
    assert (build.srcdir / "replaced.csv").read_text(encoding="utf-8") == "a,b\nc,d\n"
    assert (build.srcdir / "reused.csv").read_text(encoding="utf-8") == "a,b\n"


def test_the_probes_descriptor_is_out_of_the_way(build: ProjectBuild) -> None:
    html = BeautifulSoup(build.read("closes.html"), "html.parser")
    outputs = [div.get_text().strip() for div in html.select("div.cell_output")]
    assert outputs[-1] == "1"  # closed, and open again: a new descriptor of the same file


def test_cells_the_probe_could_not_write_make_a_partial_record_with_one_warning(
        build: ProjectBuild) -> None:
    data = json.loads(build.read("execution-status.json"))
    jsonschema.validate(data, SCHEMA)
    record = notebooks(build)["unwritable"]
    assert (record["status"], record["capture"]) == ("ok", "partial")
    assert [c["execution_count"] for c in record["cells"]] == [1, 4, 5]
    assert [c["index"] for c in record["cells"]] == [1, 4, 5]  # at their own places
    message = record["capture_message"]
    assert message.startswith("the probe recorded 3 of the 5 cells the kernel ran "
                              "(not recorded: the cells with execution count 2 and 3)")
    assert message.endswith("; 4 lines could not be written (IsADirectoryError: Is a directory)")
    (warning,) = capture_warnings(build, "unwritable")
    assert "execution count 2 and 3" in warning
    # where it ran is still known: the environment is the kernel's, in every view
    assert record["environment"]["host"]["cores"] > 0 and record["environment"]["python"]
    report = read_status(build.outdir / "execution-status.json")
    assert len(report.machines()) == 1
    page = BeautifulSoup(build.read("status.html"), "html.parser")
    row = next(tr for tr in page.select("tr") if "unwritable" in tr.get_text())
    assert "some cells not measured" in row.get_text()


# -- the reader, on its own lines -------------------------------------------------------
START = {"kind": "start", "pid": 10, "probe_version": protocol.PROBE_VERSION,
         "time": 0.0, "python": "3.12.0", "host": {}, "gpus": []}


def cell(count: int, **more: Any) -> dict[str, Any]:
    return {"kind": "cell", "pid": 10, "execution_count": count, "seconds": 0.1,
            "first_line": f"cell {count}", **more}


def end(count: int) -> dict[str, Any]:
    return {"kind": "end", "pid": 10, "callbacks_registered": True, "execution_count": count}


def read(*lines: dict[str, Any]) -> probe_output.ProbeOutput:
    return probe_output.ProbeOutput(iter([START, *lines]))


def test_every_cell_the_kernel_ran_recorded_is_ok() -> None:
    output = read(cell(1), cell(2), end(2))
    assert output.capture_state() == ("ok", None)
    assert not output.warnings


def test_runs_nested_in_a_cell_took_counts_but_are_no_missing_cells() -> None:
    # cell 2 ran get_ipython().run_cell(..., store_history=True) twice: counts 3 and 4
    output = read(cell(1), cell(2, nested_runs=2), cell(5), end(5))
    assert output.capture_state() == ("ok", None)
    assert output.positions() == [0, 1, 2]


def test_a_gap_in_the_counts_is_partial_and_names_the_missing_cells() -> None:
    lost = {"kind": "lost", "pid": 10, "lines": 3, "message": "OSError: [Errno 28] disk full"}
    output = read(cell(1), lost, cell(4), end(4))
    state, message = output.capture_state()
    assert state == "partial"
    assert message == ("the probe recorded 2 of the 4 cells the kernel ran (not recorded: "
                       "the cells with execution count 2 and 3); 3 lines could not be "
                       "written (OSError: [Errno 28] disk full)")
    assert output.warnings == [f"{message}; the record has the others"]
    assert output.positions() == [0, 3]


def test_cells_lost_at_the_end_are_told_by_the_end_line_or_the_engine() -> None:
    assert read(cell(1), end(3)).capture_state()[0] == "partial"
    # no end line (its write failed too): the engine saw 3 cells run
    state, message = read(cell(1)).capture_state(ran=3)
    assert state == "partial" and message == "the probe recorded 1 of the 3 cells the kernel ran"


def test_the_cell_a_kernel_died_in_is_not_a_missing_cell() -> None:
    started = {"kind": "cell_start", "pid": 10, "execution_count": 3, "first_line": "boom",
               "time": 1.0}
    assert read(cell(1), cell(2), started).capture_state() == ("ok", None)
    # exited in the cell (sys.exit()): the end line still came
    assert read(cell(1), cell(2), started, end(3)).capture_state() == ("ok", None)
    # but its line lost with others: missing
    lost = {"kind": "lost", "pid": 10, "lines": 2, "message": "OSError: disk full"}
    assert read(cell(1), cell(2), started, lost, end(3)).capture_state()[0] == "partial"


def test_a_cell_dropped_as_unreadable_makes_the_record_partial() -> None:
    output = read(cell(1), {**cell(2), "seconds": -1.0}, cell(3), end(3))
    assert output.capture_state()[0] == "partial"
    assert len(output.warnings) == 2  # the dropped value, then the partial record


def test_a_probe_that_broke_is_failed_whatever_the_counts() -> None:
    error = {"kind": "probe_error", "pid": 10, "message": "post_run_cell: boom"}
    assert read(cell(1), error, end(3)).capture_state() == ("failed", "post_run_cell: boom")
    assert read().capture_state(ran=2) == (
        "failed", "the kernel ran 2 cells and the probe recorded none")


# -- the probe's file, in this process ---------------------------------------------------
def test_the_file_moves_high_and_reopens_when_closed_or_replaced(tmp_path: Path) -> None:
    import os

    path = tmp_path / "probe.jsonl"
    output = probe_file.ProbeFile(str(path))
    fd = output._fd
    assert fd > 100 and not os.get_inheritable(fd)
    assert output.write(b"one\n")
    os.close(fd)
    assert output.write(b"two\n")
    other = tmp_path / "user.csv"
    with open(other, "w") as user:
        os.dup2(user.fileno(), output._fd)
        assert output.write(b"three\n")
    assert path.read_text() == "one\ntwo\nthree\n" and other.read_text() == ""
    os.close(output._fd)
    os.rename(path, tmp_path / "away")
    os.mkdir(path)
    assert not output.write(b"lost\n")
    assert (output.lost_lines, output.lost_reason.split(":")[0]) == (1, "IsADirectoryError")
