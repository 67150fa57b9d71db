"""Builds of tests/roots/capture and what they write: its execution-status.json read and
checked against the schema (notebooks), an incremental build again (build_again), a build
as a clean CI build with a restored jupyter-cache (forget_environment), and the build
arguments for some of its pages only (only)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
from conftest import ProjectBuild, sphinx_build

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "sphinx_gpu_admonition" / "schema"
     / "execution-status.schema.json").read_text(encoding="utf-8"))


def status_json(build: ProjectBuild) -> dict[str, Any]:
    data = json.loads(build.read("execution-status.json"))
    jsonschema.validate(data, SCHEMA)
    return data


def notebooks(build: ProjectBuild) -> dict[str, Any]:
    return {nb["docname"]: nb for nb in status_json(build)["notebooks"]}


def build_again(build: ProjectBuild, parallel: int = 0,
                confoverrides: dict[str, Any] | None = None) -> ProjectBuild:
    """Build the same source folder again, incrementally (the environment is kept)."""
    return sphinx_build(build.srcdir, build.srcdir.parent / "_build", "html", confoverrides,
                        parallel=parallel, show_warning_types=False)


def forget_environment(build_folder: Path) -> None:
    """Remove the pickled environment and doctrees: the next build reads everything,
    as a clean CI build does with a restored jupyter-cache."""
    for doctrees in (*build_folder.rglob("doctrees"), *build_folder.rglob(".doctrees")):
        shutil.rmtree(doctrees, ignore_errors=True)


#: the notebook pages of tests/roots/capture
ALL_PAGES = ("timing", "jax_compile", "jax_unused", "fails", "nested/deeper/page", "excluded",
             "prefilled")


def only(*pages: str) -> dict[str, Any]:
    """build_project arguments that build just these notebook pages of the capture root."""
    toctree = "\n".join(pages)
    skipped = [f"{p}.*" for p in ALL_PAGES if p not in pages]
    return {"files": {"index.md": f"# Pages\n\n```{{toctree}}\n{toctree}\n```\n"},
            "conf_append": f"exclude_patterns = ['_build', *{skipped!r}]"}
