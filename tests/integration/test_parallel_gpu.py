"""Several notebooks on one GPU with JAX's preallocation on (issue 22, item 3).

With ``-j N`` MyST-NB executes notebooks in N reader processes at once; each JAX
kernel takes 75 % of the GPU's memory at its first computation, so the second one on
the same GPU dies (QuantEcon's runner: three notebooks on one T4).  The build warns
at its start, before any kernel runs, with the setting to change; real Sphinx
builds at ``-j 2``, the GPU expected from the book's ``gpu_expected_backend``.
mystmd's ``--execute-parallel`` warning is the same rule (tests/integration/test_mystmd.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import MYST_HEADER, ProjectBuild, sphinx_build

CONF = ('extensions = ["myst_nb", "sphinx_gpu_admonition"]\n'
        'nb_execution_mode = "force"\nexclude_patterns = ["_build"]\n')
INDEX = "# Book\n\n```{toctree}\na\nb\n```\n"
NOTEBOOK = MYST_HEADER + "# {name}\n\n```{{code-cell}} ipython3\nx = 1\n```\n"
EXPECTED = {"gpu_expected_backend": "gpu"}


def _build(tmp_path: Path, overrides: dict[str, object], parallel: int = 2) -> ProjectBuild:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "index.md").write_text(INDEX, encoding="utf-8")
    for name in ("a", "b"):
        (src / f"{name}.md").write_text(NOTEBOOK.format(name=name), encoding="utf-8")
    return sphinx_build(src, tmp_path / "_build", "html", overrides, freshenv=True,
                        parallel=parallel)


def _warnings(build: ProjectBuild) -> list[str]:
    return [line for line in build.warning_lines if "gpu_admonition.preallocation" in line]


@pytest.fixture
def no_gpu_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's GPU driver out of sight (this test machine may have one): the
    book's configuration alone says whether a GPU is expected."""
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if name == "nvidia-smi"
                        else real_which(name, *a, **k))
    for name in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
                 "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR"):
        monkeypatch.delenv(name, raising=False)


def test_two_readers_on_an_expected_gpu_with_preallocation_warn_once_at_the_start(
        tmp_path: Path, no_gpu_driver: None) -> None:
    build = _build(tmp_path, EXPECTED)
    (warning,) = _warnings(build)
    assert "gpu_expected_backend is 'gpu'" in warning
    assert "Sphinx reads 2 notebooks at once (-j 2)" in warning
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in warning and "-j 1" in warning
    # the build goes on: both notebooks executed (this machine has no GPU)
    assert (build.outdir / "a.html").is_file() and (build.outdir / "b.html").is_file()


@pytest.mark.parametrize("case", ["preallocation-off", "memory-fraction", "one-reader",
                                  "gpu-not-expected", "execution-off"])
def test_no_warning_where_the_kernels_cannot_collide(
        tmp_path: Path, no_gpu_driver: None, monkeypatch: pytest.MonkeyPatch,
        case: str) -> None:
    overrides: dict[str, object] = dict(EXPECTED)
    parallel = 2
    if case == "preallocation-off":
        monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    elif case == "memory-fraction":
        monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.4")
    elif case == "one-reader":
        parallel = 0
    elif case == "gpu-not-expected":
        overrides = {}  # the default "gpu" is every book's: it says nothing of this one
    else:
        overrides["nb_execution_mode"] = "off"
    build = _build(tmp_path, overrides, parallel)
    assert _warnings(build) == []


