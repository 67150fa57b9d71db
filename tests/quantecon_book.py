"""The QuantEcon-style book (tests/roots/quantecon), migrated and built in-process.

``migrated_copy`` copies the root and runs ``sphinx-gpu-admonition migrate`` on
it (the real command).  ``build`` builds the book with the Sphinx settings
Jupyter Book 1.x derives from the ``_config.yml`` keys this book uses (title,
execute, repository, launch_buttons, sphinx: extra_extensions / config), so that
both test environments build it in-process; sphinx-external-toc's
``{tableofcontents}`` becomes a plain toctree of ``_toc.yml``'s chapters (the
jupyter-book command line itself is tested in tests/integration/test_jupyter_book.py).
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import yaml
from conftest import _ANSI, ROOTS, ProjectBuild

ROOT = ROOTS / "quantecon"
BOOK = "lectures"


def migrated_copy(dest: Path) -> Path:
    """A copy of the root with its book migrated; returns the book's folder."""
    from sphinx_gpu_admonition.cli import main

    shutil.copytree(ROOT, dest)
    assert main(["migrate", str(dest / BOOK)]) == 0
    return dest / BOOK


def _chapters(book: Path) -> tuple[str, list[str]]:
    toc = yaml.safe_load((book / "_toc.yml").read_text(encoding="utf-8"))
    chapters = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return toc["root"], chapters


def sphinx_settings(book: Path, cache: Path) -> dict[str, Any]:
    """What Jupyter Book 1.x puts into conf.py for this book's ``_config.yml``."""
    config = yaml.safe_load((book / "_config.yml").read_text(encoding="utf-8"))
    root, chapters = _chapters(book)
    repository = config.get("repository", {})
    sphinx = config.get("sphinx", {})
    settings: dict[str, Any] = {
        "extensions": ["myst_nb", *sphinx.get("extra_extensions", [])],
        "root_doc": root,
        "html_title": config["title"],
        "author": config["author"],
        "html_theme": "sphinx_book_theme",
        "html_theme_options": {
            "repository_url": repository.get("url", ""),
            "repository_branch": repository.get("branch", ""),
            "path_to_docs": repository.get("path_to_book", ""),
            "launch_buttons": config.get("launch_buttons", {}),
            "use_repository_button": False,
        },
        "nb_execution_mode": config["execute"]["execute_notebooks"],
        "nb_execution_timeout": config["execute"]["timeout"],
        "nb_execution_cache_path": str(cache),
        "myst_enable_extensions": ["colon_fence", "dollarmath"],
        # only_build_toc_files: the notice include file is not a page
        "exclude_patterns": ["_build", "_admonition/*"],
        "nitpicky": True,
        "show_warning_types": True,  # Sphinx 7.4 shows "[type.subtype]" only with it
        "intersphinx_mapping": {},
        **sphinx.get("config", {}),
    }
    assert set(chapters) <= {p.stem for p in book.glob("*.md")}
    return settings


def build(book: Path, dest: Path, cache: Path, **overrides: Any) -> ProjectBuild:
    """Build ``book`` (html, sphinx-book-theme) into ``dest`` with ``overrides``."""
    from sphinx.testing.util import SphinxTestApp

    srcdir = dest / "src"
    shutil.copytree(book, srcdir)
    root, chapters = _chapters(book)
    intro = srcdir / f"{root}.md"
    toctree = "```{toctree}\n:hidden:\n\n" + "\n".join(chapters) + "\n```\n"
    intro.write_text(intro.read_text(encoding="utf-8").replace(
        "```{tableofcontents}\n```\n", toctree), encoding="utf-8")
    (srcdir / "conf.py").write_text("", encoding="utf-8")
    settings = {**sphinx_settings(book, cache), **overrides}
    status, warning = io.StringIO(), io.StringIO()
    app = SphinxTestApp("html", srcdir=srcdir, builddir=dest / "_build", freshenv=True,
                        confoverrides=settings, status=status, warning=warning)
    try:
        app.build()
    finally:
        app.cleanup()
    return ProjectBuild(app=app, srcdir=srcdir, outdir=Path(app.outdir),
                        warnings=_ANSI.sub("", warning.getvalue()),
                        status=_ANSI.sub("", status.getvalue()))
