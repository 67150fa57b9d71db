"""The probe's file is its own (issue 33, item 2), in real kernels of a real Sphinx build:
a notebook that closes the probe's descriptor, puts its own file on that number or
reuses it keeps every cell in its record, and its own file gets nothing of the probe's;
a record with cells the probe could not write says ``capture: partial``, with one
warning naming them, and every view still shows where the notebook ran.

The reader's side (the kernel's counts, nested runs, lost lines) is tested on its own
lines in tests/unit/model/test_probe_output_counts.py.
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


