"""The Sphinx adapter's configuration (``ext/config.py``): a wrong value warns and the default
applies, the defaults are valid, values that would misbehave are refused, every option has
command-line text; the analysis, device and GitHub settings read from it."""

from __future__ import annotations

import pytest

from sphinx_gpu_admonition.ext.config import GpuConfig, options, validate
from sphinx_gpu_admonition.model import device
from sphinx_gpu_admonition.model.analysis import Thresholds
from unit.model.test_analysis import DEFAULTS

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


def test_every_option_has_command_line_text_here() -> None:
    assert set(FROM_THE_COMMAND_LINE) == set(options())
    for name, (_text, value) in FROM_THE_COMMAND_LINE.items():
        assert value != getattr(GpuConfig(), name), name  # each one a visible change


def test_the_defaults_are_the_configuration_defaults():
    from sphinx_gpu_admonition.ext.config import GpuConfig

    assert Thresholds.from_config(GpuConfig()) == DEFAULTS


def test_every_configured_backend_is_known():
    from sphinx_gpu_admonition.ext.config import BACKENDS

    assert BACKENDS is device.BACKENDS
    assert set(device.GPU_BACKENDS) < set(device.BACKENDS)


@pytest.mark.parametrize(("value", "expected"), [
    ("auto", "auto"), (True, True), (False, False),
    ("0", False), ("1", True),  # -D gpu_github_annotations=0 (Sphinx 7.4 passes the text)
])
def test_the_config_switch_takes_command_line_values(value, expected) -> None:
    from sphinx_gpu_admonition.ext.config import validate

    reports: list[str] = []
    setting = validate({"github_annotations": value}, reports.append).github_annotations
    assert setting == expected and type(setting) is type(expected)
    assert reports == []
