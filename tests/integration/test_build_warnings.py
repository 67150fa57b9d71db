"""The build's warnings are kept in its status file (``build.warnings``) and ``report``
repeats them: what a Sphinx build warned about (also from ``-j`` reader processes),
read back as strictly as every other field.  mystmd's side is in test_mystmd.py
(``test_a_warning_shows_in_a_normal_build_and_report_repeats_it``)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOTS, sphinx_build

from sphinx_gpu_admonition import cli
from sphinx_gpu_admonition.model.build_warnings import (
    build_warnings,
)
from sphinx_gpu_admonition.model.files import read_status

PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
orphan: true
---

# Page {name}

```{{gpu}}
```

```{{code-cell}} ipython3
x = {number}
```
"""


@pytest.fixture(scope="module")
def warned(tmp_path_factory: pytest.TempPathFactory):
    """Four notebook pages read by two reader processes (``-j 2``: Sphinx reads in
    parallel from six documents), each warning that it ran on the CPU where a GPU is
    expected, a bad option, and at the start the preallocation of two kernels."""
    dest = tmp_path_factory.mktemp("warned")
    shutil.copytree(ROOTS / "admonition", dest / "src")
    for number, name in enumerate(("alpha", "beta", "gamma"), start=1):
        (dest / "src" / f"{name}.md").write_text(PAGE.format(name=name, number=number),
                                                  encoding="utf-8")
    return sphinx_build(dest / "src", dest / "_build", confoverrides={
        "gpu_expected_backend": "gpu", "gpu_slow_cell_seconds": -1}, freshenv=True,
        parallel=2, show_warning_types=False)


def test_every_warning_the_build_showed_is_in_its_status_file(warned) -> None:
    kept = build_warnings(read_status(warned.outdir / "execution-status.json"))
    shown = [line for line in warned.warning_lines if "[gpu_admonition." in line]
    assert len(kept) == len(shown) == 6, warned.warnings
    # before reading, the option and the preallocation; then the documents'
    assert [item.subtype for item in kept] == ["config", "preallocation", *["backend"] * 4]
    assert "gpu_slow_cell_seconds" in kept[0].message
    backend = kept[2:]
    # the readers' warnings came back with their documents, in document order
    assert [item.file for item in backend] == ["alpha.md", "beta.md", "gamma.md",
                                               "notebook.md"]
    assert [item.line for item in backend] == [15, 15, 15, 14]
    for item in backend:
        assert any(item.message in line and f"{item.file}:{item.line}" in line
                   for line in shown), (item, shown)


def test_report_repeats_them_as_text_json_and_annotations(warned, capsys, monkeypatch,
                                                          tmp_path) -> None:
    path = str(warned.outdir / "execution-status.json")
    assert cli.main(["report", "--no-github", "--no-color", path]) == 0
    text = capsys.readouterr().out
    assert "Build warnings (6)" in text
    assert "alpha.md:" in text and "[gpu_admonition.backend]" in text
    assert cli.main(["report", "--json", "--no-github", path]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [item["name"] for item in data["warnings"]] == [
        "gpu_admonition.config", "gpu_admonition.preallocation",
        *["gpu_admonition.backend"] * 4]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    assert cli.main(["report", path]) == 0
    annotations = [line for line in capsys.readouterr().err.splitlines()
                   if "Build warning" in line]
    assert len(annotations) == 6
    assert any(line.startswith("::warning file=") and "alpha.md,line=" in line
               and "title=Build warning%3A gpu_admonition.backend::page with a gpu" in line
               for line in annotations), annotations
    assert "Build warnings (6)" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_a_build_without_warnings_keeps_an_empty_list(build_root, capsys) -> None:
    build = build_root("admonition")
    assert json.loads(build.read("execution-status.json"))["build"]["warnings"] == []
    assert cli.main(["report", "--no-github", str(build.outdir / "execution-status.json")]) == 0
    assert "Build warnings" not in capsys.readouterr().out
