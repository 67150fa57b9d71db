"""Every option validates: a wrong value is reported by name and replaced by its default."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT
from unit.ext.test_config import FROM_THE_COMMAND_LINE

from sphinx_gpu_admonition.ext.config import GpuConfig

#: conf.py of the project: the extension alone, and a hook that writes the values the
#: build uses (after the extension's validation, priority 400) for the test to read
CONF = """\
import json
import os
extensions = ["sphinx_gpu_admonition"]
show_warning_types = True


def _record(app, config):
    import dataclasses
    from sphinx_gpu_admonition.ext.config import get_config
    values = dataclasses.asdict(get_config(app))
    with open(os.path.join(app.confdir, "used.json"), "w", encoding="utf-8") as stream:
        json.dump(values, stream)


def setup(app):
    app.connect("config-inited", _record, priority=900)
"""


def _project(folder: Path) -> Path:
    baseline = PROJECT / "docs" / "_static" / "baseline-status.json"
    folder.mkdir()
    (folder / "conf.py").write_text(CONF, encoding="utf-8")
    (folder / "index.rst").write_text("Lectures\n========\n\nText.\n", encoding="utf-8")
    for name in ("old.json", "gpu.json", "cpu.json"):
        shutil.copyfile(baseline, folder / name)
    return folder


def _used(folder: Path) -> dict:
    values = json.loads((folder / "used.json").read_text(encoding="utf-8"))
    return {name: tuple(value) if isinstance(value, list) else value
            for name, value in values.items()}


def test_every_option_can_be_overridden_with_text(tmp_path) -> None:
    from conftest import sphinx_build

    source = _project(tmp_path / "src")
    build = sphinx_build(source, tmp_path / "_build", "html", freshenv=True, confoverrides={
        f"gpu_{name}": text for name, (text, _value) in FROM_THE_COMMAND_LINE.items()})
    assert build.warning_lines == [], build.warnings
    assert _used(source) == {name: value for name, (_text, value)
                             in FROM_THE_COMMAND_LINE.items()}


def test_bad_command_line_text_warns_and_uses_the_default(tmp_path) -> None:
    from conftest import sphinx_build

    source = _project(tmp_path / "src")
    build = sphinx_build(source, tmp_path / "_build", "html", freshenv=True, confoverrides={
        "gpu_slow_cell_seconds": "thirty", "gpu_recompile_threshold": "2.5",
        "gpu_capture": "false"})
    assert sorted(build.warning_lines) == [
        "WARNING: invalid value '2.5' for gpu_recompile_threshold: must be an integer >= 1;"
        f" using the default {GpuConfig().recompile_threshold!r} [gpu_admonition.config]",
        "WARNING: invalid value 'false' for gpu_capture: must be True or False (0 or 1 with -D);"
        " using the default True [gpu_admonition.config]",
        "WARNING: invalid value 'thirty' for gpu_slow_cell_seconds: must be a finite number "
        f">= 0; using the default {GpuConfig().slow_cell_seconds!r} [gpu_admonition.config]",
    ], build.warnings
    used = _used(source)
    assert used["slow_cell_seconds"] == GpuConfig().slow_cell_seconds and used["capture"]


def test_sphinx_build_dash_d_sets_the_float_options(tmp_path) -> None:
    source = _project(tmp_path / "src")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", str(source),
         str(tmp_path / "_build"), "-D", "gpu_slow_cell_seconds=30",
         "-D", "gpu_regression_ratio=1.25", "-D", "gpu_warn_slow_cells=1",
         "-D", "gpu_admonition_class=warning lecture-gpu"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "cannot override" not in result.stderr and result.stderr == ""
    used = _used(source)
    assert used["slow_cell_seconds"] == 30.0 and used["regression_ratio"] == 1.25
    assert used["warn_slow_cells"] is True
    assert used["admonition_class"] == ("warning", "lecture-gpu")


def test_a_new_flagging_limit_rewrites_the_judged_pages_without_reading_any(tmp_path):
    """The thresholds change how the records are judged, not the records: a rebuild
    with another ``gpu_slow_cell_seconds`` reads (and executes) no page again, and
    still shows the new findings on the status page and in the cell badges."""
    from bs4 import BeautifulSoup
    from conftest import ROOTS, sphinx_build

    shutil.copytree(ROOTS / "cellrules", tmp_path / "src")
    lenient = {"gpu_slow_cell_seconds": 100.0, "gpu_slow_cell_min_seconds": 100.0,
               "gpu_cell_badges": True, "gpu_warn_slow_cells": False}
    first = sphinx_build(tmp_path / "src", tmp_path / "_build", confoverrides=lenient,
                         freshenv=True)
    assert "No flagged cells." in first.read("status.html")
    second = sphinx_build(tmp_path / "src", tmp_path / "_build", confoverrides={
        **lenient, "gpu_slow_cell_seconds": 0.3, "gpu_slow_cell_min_seconds": 0.25})
    assert "0 added, 0 changed, 0 removed" in second.status, second.status
    page = BeautifulSoup(second.read("status.html"), "html.parser")
    assert page.select("li.gpu-status-finding"), "the new limit flags no cell"
    lecture = BeautifulSoup(second.read("lecture.html"), "html.parser")
    assert lecture.select(".gpu-cell-badge"), "no badge on the rewritten notebook page"
