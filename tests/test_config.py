"""Every option validates: a wrong value is reported by name and replaced by its default."""

from __future__ import annotations

import pytest

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
    "slow_cell_seconds": -1,
    "slow_cell_share": 1.5,
    "slow_cell_min_seconds": "1",
    "compile_share": 0,
    "recompile_threshold": 0,
    "regression_ratio": 0.9,
    "status_baseline": 12,
    "runtime_sources": [3],
    "status_json": "out/status.json",
    "status_junit": True,
    "status_console": 1,
    "github_annotations": "yes",
    "warn_slow_cells": "false",
    "cell_badges": "on",
    "warn_regressions": None,
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
])
def test_values_that_would_misbehave_are_refused(name: str, value: object) -> None:
    reports: list[str] = []
    config = validate({name: value}, reports.append)
    assert len(reports) == 1 and f"gpu_{name}" in reports[0]
    assert getattr(config, name) == getattr(GpuConfig(), name)

