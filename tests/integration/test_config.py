"""Every option validates: a wrong value is reported by name and replaced by its default."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT

from sphinx_gpu_admonition.ext.config import GpuConfig, options, validate

# one wrong value per option, of the kinds users get wrong
WRONG = {
    "admonition_title": 42,
    "admonition_body": ["not", "text"],
    "admonition_required_body": 3.5,
    "admonition_class": 7,
    "admonition_runtime": "yes",
    "execution_info": "sideways",
    "expected_backend": "quantum",
    "colab_url": "https://colab.research.google.com/github/o/r/blob/main/lecture.ipynb",
    "capture": "yes",
    "explain_recompilations": "on",
    "slow_cell_seconds": -1,
    "slow_cell_share": 1.5,
    "slow_cell_min_seconds": "1 s",
    "compile_share": 0,
    "recompile_threshold": 0,
    "regression_ratio": 0.9,
    "status_baseline": 12,
    "runtime_sources": [3],
    "status_json": "out/status.json",
    "status_junit": True,
    "status_console": 1,
    "publish_interpreter_path": "no",
    "github_annotations": "yes",
    "warn_slow_cells": "false",
    "cell_badges": "on",
    "warn_regressions": None,
    "notebook_budget_seconds": 0,
    "claim_much_factor": 1,
    "claim_similar_factor": "about 2",
    "claim_margin": 1.5,
}


def test_every_option_has_a_wrong_value_here() -> None:
    assert set(WRONG) == set(options())


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_value_warns_and_uses_the_default(name: str) -> None:
    reports: list[str] = []
    config = validate({name: WRONG[name]}, reports.append)
    assert len(reports) == 1
    assert f"gpu_{name}" in reports[0] and repr(WRONG[name]) in reports[0]
    assert getattr(config, name) == getattr(GpuConfig(), name)


def test_defaults_are_valid_and_good_values_are_kept() -> None:
    reports: list[str] = []
    assert validate({}, reports.append) == GpuConfig() and reports == []
    config = validate({"admonition_class": "warning lecture-gpu", "slow_cell_seconds": 30,
                       "status_junit": None, "expected_backend": "gpu"}, reports.append)
    assert reports == []
    assert config.admonition_class == ("warning", "lecture-gpu")
    assert config.slow_cell_seconds == 30.0
    assert config.status_junit is None and config.expected_backend == "gpu"


@pytest.mark.parametrize("name, value", [
    ("slow_cell_seconds", float("nan")),
    ("slow_cell_min_seconds", float("nan")),
    ("regression_ratio", float("nan")),
    ("slow_cell_seconds", float("inf")),
    ("status_json", "index.html"),  # would replace the home page
    ("status_junit", "index.html"),
    ("status_json", "."),
    ("status_json", ".."),
    ("status_json", "_static"),
    ("status_json", ".json"),
    ("status_junit", ".hidden.xml"),
    ("status_junit", "status.json"),
    ("notebook_budget_seconds", "a minute"),
    ("notebook_budget_seconds", float("inf")),
])
def test_values_that_would_misbehave_are_refused(name: str, value: object) -> None:
    reports: list[str] = []
    config = validate({name: value}, reports.append)
    assert len(reports) == 1 and f"gpu_{name}" in reports[0]
    assert getattr(config, name) == getattr(GpuConfig(), name)



# -- every option from the command line (``sphinx-build -D``) ----------------------------------
# Sphinx passes -D values as text and converts them only for some default types (7.4
# printed "cannot override config setting 'gpu_slow_cell_seconds' with unsupported type,
# ignoring" and kept the default). Each option's text, and the value the build uses.
COLAB = "https://colab.research.google.com/github/o/r/blob/main/{path}.ipynb"
FROM_THE_COMMAND_LINE = {
    "admonition_title": ("Needs a GPU", "Needs a GPU"),
    "admonition_body": ("Run it on Colab.", "Run it on Colab."),
    "admonition_required_body": ("You need a GPU.", "You need a GPU."),
    "admonition_class": ("warning,lecture-gpu", ("warning", "lecture-gpu")),
    "admonition_runtime": ("1", True),
    "execution_info": ("top", "top"),
    "expected_backend": ("", None),  # empty: the check off
    "colab_url": (COLAB, COLAB),
    "capture": ("0", False),
    "explain_recompilations": ("1", True),
    "slow_cell_seconds": ("30", 30.0),
    "slow_cell_share": ("0.25", 0.25),
    "slow_cell_min_seconds": ("0.5", 0.5),
    "compile_share": ("0.9", 0.9),
    "recompile_threshold": ("7", 7),
    "regression_ratio": ("2.5", 2.5),
    "status_baseline": ("old.json", "old.json"),
    "runtime_sources": ("gpu.json,cpu.json", ("gpu.json", "cpu.json")),
    "status_json": ("status.json", "status.json"),
    "status_junit": ("", None),
    "status_console": ("0", False),
    "publish_interpreter_path": ("0", False),
    "github_annotations": ("0", False),
    "cell_badges": ("1", True),
    "warn_slow_cells": ("1", True),
    "warn_regressions": ("1", True),
    "notebook_budget_seconds": ("60", 60.0),
    "claim_much_factor": ("10", 10.0),
    "claim_similar_factor": ("1.5", 1.5),
    "claim_margin": ("0.2", 0.2),
}

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


def test_every_option_has_command_line_text_here() -> None:
    assert set(FROM_THE_COMMAND_LINE) == set(options())
    for name, (_text, value) in FROM_THE_COMMAND_LINE.items():
        assert value != getattr(GpuConfig(), name), name  # each one a visible change


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
