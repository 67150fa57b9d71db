"""Loaded data is checked against the record model: a bad file is one clear error.

Real builds: a bad ``gpu_status_baseline`` (execution off, no
kernel) and bad capture sidecars beside the jupyter-cache (one kernel run, then
cache hits).  The validator in-process (``StatusReport.from_dict``, ``read_status``,
``read_sidecar``) on mutations of a valid document, and the JSON schema tied to the
dataclasses: tests/unit/model/test_schema.py and test_files.py.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from conftest import MYST_HEADER, ProjectBuild, build_project, gpu_baseline
from status_documents import _set

from sphinx_gpu_admonition.model import files

# -- a bad baseline in a real build ----------------------------------------------------------
_NOTEBOOK_PAGE = (MYST_HEADER + "# Slow\n\n"
                  "```{code-cell} ipython3\nx = 1\n```\n")
def _deeply_nested(data: dict[str, Any]) -> str:
    """The document with 10,000 nested lists in it (too deep for json.dumps to write)."""
    return json.dumps(data)[:-1] + ', "extra": ' + "[" * 10_000 + "]" * 10_000 + "}"


def _mutated(mutate: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], str]:
    def text(data: dict[str, Any]) -> str:
        mutate(data)
        return json.dumps(data)  # not the writer: NaN is what a bad file holds

    return text


DEVICE_0 = (0, "environment", "jax", "devices", 0)
BAD_BASELINES = {
    "notebooks_dict": (_mutated(_set("notebooks", value={})), "notebooks: not an array"),
    "notebooks_string": (_mutated(_set("notebooks", value="slow")), "notebooks: not an array"),
    "runtime_string": (_mutated(_set("notebooks", 0, "runtime_seconds", value="12")),
                       "notebooks[0].runtime_seconds: not a number"),
    "runtime_nan": (_mutated(_set("notebooks", 0, "runtime_seconds", value=float("nan"))),
                    "notebooks[0].runtime_seconds: not a finite number"),
    "device_count_string": (_mutated(_set("notebooks", *DEVICE_0, "count", value="2")),
                            "notebooks[0].environment.jax.devices[0].count: not an integer"),
    "deep_nesting": (_deeply_nested, "nested too deeply"),
}


def _build_with_baseline(tmp_path: Path, baseline_text: str) -> ProjectBuild:
    """A book with one notebook page and a status page; no kernel (execution off)."""
    files = {"index.md": "# Book\n\n```{toctree}\nslow\nstatus\n```\n",
             "status.md": "# Status\n\n```{execution-status}\n```\n",
             "slow.md": _NOTEBOOK_PAGE, "baseline.json": baseline_text}
    return build_project("cli", tmp_path, files=files, confoverrides={
        "nb_execution_mode": "off", "gpu_status_baseline": "baseline.json",
        "gpu_status_console": False, "show_warning_types": True,
        "exclude_patterns": ["_build", "*.json", "failing.md", "gone.md", "jaxpage.md",
                             "sleepy.md"]})


@pytest.mark.parametrize("kind", ["valid", *BAD_BASELINES])
def test_bad_baseline_is_one_warning_and_the_page_renders(tmp_path: Path, kind: str) -> None:
    to_text, message = BAD_BASELINES.get(kind, (json.dumps, ""))
    build = _build_with_baseline(tmp_path, to_text(gpu_baseline()))
    table = BeautifulSoup(build.read("status.html"), "html.parser").select_one("table")
    assert "Slow" in table.select_one("tbody").get_text()  # the notebook's row
    warnings = [line for line in build.warning_lines if "gpu_admonition.baseline" in line]
    if kind == "valid":
        assert warnings == [] and "Baseline time" in table.get_text()
        return
    assert len(warnings) == 1, build.warnings
    assert "baseline.json: " in warnings[0] and message in warnings[0]
    assert "Baseline time" not in table.get_text()  # rendered without comparison
    assert (build.outdir / "execution-status.json").is_file()  # the build went on


# -- bad capture sidecars in a real build -------------------------------------------------------
def test_bad_or_foreign_sidecar_on_a_cache_hit(tmp_path: Path) -> None:
    """One kernel run fills the jupyter-cache; two cache hits read a changed sidecar."""
    from capture_builds import build_again, forget_environment, notebooks, only

    cache = {"nb_execution_mode": "cache", "show_warning_types": True}
    first = build_project("capture", tmp_path, confoverrides=cache, **only("timing"))
    (sidecar,) = (tmp_path / "_build" / ".jupyter_cache" / "sphinx-gpu-admonition").glob("*.json")
    saved = json.loads(sidecar.read_text(encoding="utf-8"))
    assert saved["sidecar_version"] == files.SIDECAR_VERSION

    def hit_with(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        sidecar.write_text(json.dumps(data), encoding="utf-8")
        forget_environment(tmp_path / "_build")
        build = build_again(first, confoverrides=cache)
        capture = [w for w in build.warnings.splitlines() if "gpu_admonition.capture" in w]
        return notebooks(build)["timing"], capture

    wrong = copy.deepcopy(saved)
    wrong["record"]["cells"][0]["seconds"] = "1.5"
    timing, warnings = hit_with(wrong)
    assert timing["provenance"] == "cache" and timing["capture"] == "missing"
    assert timing["cells"] == []  # ignored, not half read
    assert len(warnings) == 1
    assert "record.cells[0].seconds: not a number" in warnings[0] and "timing" in warnings[0]

    # an unversioned sidecar, as 0.1.0 wrote them: treated as missing, without a warning
    timing, warnings = hit_with(saved["record"])
    assert timing["capture"] == "missing" and warnings == []
    assert "another version of sphinx-gpu-admonition" in timing["capture_message"]

    # a sidecar of an earlier release (version 2: no error_expected) keeps its
    # measurements after an upgrade, so that a -W build reusing its cache still passes
    earlier = copy.deepcopy(saved)
    earlier["sidecar_version"] = 2
    for cell in earlier["record"]["cells"]:
        cell.pop("error_expected", None)
    timing, warnings = hit_with(earlier)
    assert timing["capture"] == "ok" and len(timing["cells"]) == 3 and warnings == []

    # a later release's sidecar: as missing, without a warning
    later = {**saved, "sidecar_version": files.SIDECAR_VERSION + 1}
    timing, warnings = hit_with(later)
    assert timing["capture"] == "missing" and warnings == []
    assert "another version of sphinx-gpu-admonition" in timing["capture_message"]

    timing, warnings = hit_with(saved)
    assert timing["capture"] == "ok" and len(timing["cells"]) == 3 and warnings == []


def test_a_cache_hit_from_an_earlier_release_knows_its_expected_errors(tmp_path: Path) -> None:
    """Sidecars of version 2 do not say whether a cell's error was expected: a cache
    hit works it out from the page (``raises-exception``), as an execution does."""
    from capture_builds import build_again, forget_environment, notebooks

    cache = {"nb_execution_mode": "cache"}
    page = (MYST_HEADER + "# Expected\n\n```{code-cell} ipython3\n:tags: [raises-exception]\n"
            '{}["an expected error"]\n```\n\n```{code-cell} ipython3\nx = 1\n```\n')
    first = build_project("samecell", tmp_path, confoverrides=cache,
                          files={"samecell.md": page})
    (sidecar,) = (tmp_path / "_build" / ".jupyter_cache" / "sphinx-gpu-admonition").glob("*.json")
    saved = json.loads(sidecar.read_text(encoding="utf-8"))
    saved["sidecar_version"] = 2
    for cell in saved["record"]["cells"]:
        cell.pop("error_expected")
    sidecar.write_text(json.dumps(saved), encoding="utf-8")
    forget_environment(tmp_path / "_build")
    hit = notebooks(build_again(first, confoverrides=cache))["samecell"]
    assert hit["provenance"] == "cache" and hit["capture"] == "ok"
    assert [(c["error"], c["error_expected"]) for c in hit["cells"]] == [
        ("KeyError", True), (None, False)]
    assert hit["status"] == "ok"


