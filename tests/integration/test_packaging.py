"""The wheel and the sdist ship the stylesheet and the translations, and they work.

Builds both distributions with ``python -m build`` from a copy of the project,
installs each into a fresh virtual environment and, from that environment,
checks the package data and builds a tiny book in Chinese.

The fresh environment gets the test environment's dependencies (Sphinx,
MyST-NB, ...) through a ``.pth`` file that appends the test environment's
site-packages to ``sys.path``; paths added that way do not run their own
``.pth`` files, so the editable install of the working tree stays invisible and
the package is imported from the installed distribution only.

What a distribution holds does not depend on the Sphinx version, so the test runs
with the newest Sphinx only (``tooling``; with jupyter-book 1.0.4's it took 25 s of
that environment's 3.5 minutes and checked the same files).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from conftest import PROJECT

pytest.importorskip("build")

pytestmark = [pytest.mark.slow, pytest.mark.tooling]

PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE.txt", "MANIFEST.in",
                 "CHANGELOG.md", "setup.cfg")


def run(*args: str | Path, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    # without the suite's PYTHONPATH, hence without its kernel provisioner (conftest)
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV",
                        "JUPYTER_DEFAULT_PROVISIONER_NAME"}}
    env["PYTHONNOUSERSITE"] = "1"
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=600, **kwargs)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """``{"wheel": ..., "sdist": ...}`` built from a clean copy of the project."""
    root = tmp_path_factory.mktemp("packaging")
    src = root / "src"
    src.mkdir()
    for name in PROJECT_FILES:
        if (PROJECT / name).is_file():
            shutil.copy2(PROJECT / name, src / name)
    shutil.copytree(PROJECT / "sphinx_gpu_admonition", src / "sphinx_gpu_admonition",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = root / "dist"
    # The sdist first, then the wheel from the sdist: the wheel proves the sdist
    # carries the package data.
    run(sys.executable, "-m", "build", "--outdir", out, src, cwd=root)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def fresh_venv(path: Path) -> Path:
    """A new venv at ``path`` that also sees the test environment's packages."""
    run(sys.executable, "-m", "venv", path, cwd=path.parent)
    python = path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                  cwd=path.parent).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
            *site.getsitepackages()}
    (Path(purelib) / "_test_environment.pth").write_text(
        "\n".join(sorted(p for p in ours if Path(p).is_dir())) + "\n", encoding="utf-8")
    return python


CHECK = textwrap.dedent("""
    import json, sys
    from importlib import resources
    import sphinx_gpu_admonition as package
    root = resources.files(package)
    print(json.dumps({
        "file": package.__file__,
        "css": (root / "static" / "gpu-admonition.css").is_file(),
        "mo": (root / "locale" / "zh_CN" / "LC_MESSAGES"
               / "sphinx_gpu_admonition.mo").is_file(),
        "mjs": (root / "mystmd" / "plugin.mjs").is_file(),
        "prefix": sys.prefix,
    }))
""")

BOOK_CONF = textwrap.dedent("""
    project = "Packaging check"
    extensions = ["myst_nb", "sphinx_gpu_admonition"]
    nb_execution_mode = "off"
    language = "zh_CN"
""")

BOOK_PAGE = "# Packaging check\n\n```{gpu}\n```\n"


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_installed_distribution(kind, dists, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    run(python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall",
        dists[kind], cwd=tmp_path)

    found = json.loads(run(python, "-c", CHECK, cwd=tmp_path).stdout)
    assert Path(found["file"]).resolve().is_relative_to((tmp_path / "venv").resolve()), found
    assert found["css"], "static/gpu-admonition.css is not installed"
    assert found["mo"], "the zh_CN .mo is not installed"
    assert found["mjs"], "mystmd/plugin.mjs (init's template) is not installed"

    book = tmp_path / "book"
    book.mkdir()
    (book / "conf.py").write_text(BOOK_CONF, encoding="utf-8")
    (book / "index.md").write_text(BOOK_PAGE, encoding="utf-8")
    out = tmp_path / "html"
    result = run(python, "-m", "sphinx", "-b", "html", "-W", "-q", book, out, cwd=tmp_path)
    assert "WARNING" not in result.stderr, result.stderr
    assert (out / "_static" / "gpu-admonition.css").is_file()
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "_static/gpu-admonition.css" in html
    assert "本讲座使用配备 GPU 的机器构建" in html
    assert 'class="gpu-admonition' in html
