"""The probe with real JAX (on the CPU) in the real kernels of one Sphinx build: the
notebook's own JAX settings are left alone (issue 33, item 3), one bad value of its
environment loses that value only (item 5), the input types of each compilation are
recorded and compilations in several threads at once count once (issue 32, items 2
and 5).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from capture_builds import notebooks, only
from conftest import MYST_HEADER, ProjectBuild, build_project
from docutils import nodes

pytest.importorskip("jax")


def notebook(title: str, *cells: str) -> str:
    return MYST_HEADER + f"# {title}\n\n" + "".join(
        f"```{{code-cell}} ipython3\n{cell}\n```\n\n" for cell in cells)


NEWTON = ("import jax\n\n"
          "def newton(f, x0):\n"
          "    def q(x):\n"
          "        return x - f(x) / jax.grad(f)(x)\n"
          "    step = jax.jit(q)  # jitted inside the function: compiled again at each call\n"
          "    for _ in range(3):\n"
          "        x0 = step(x0)\n"
          "    return x0")
SQUARE_ROOT = "float(newton(lambda x: x**2 - 2.0, 1.0))"

PAGES = {
    # the usual cell of a notebook that wants JAX's explanations itself, after two cells
    # whose explanations are the probe's (gpu_explain_recompilations)
    "asks": notebook("Asks", NEWTON, SQUARE_ROOT, SQUARE_ROOT,
                     'jax.config.update("jax_explain_cache_misses", True)', SQUARE_ROOT),
    # a backend plugin (here the notebook) reporting a 10 MB device kind
    "huge_kind": notebook("Huge kind", "import jax, jax.numpy as jnp\n\n"
                          "class HugeKind:\n    platform = 'cpu'\n"
                          "    device_kind = 'T' * 10_000_000\n\n"
                          "jax.devices = lambda *args: [HugeKind()]\nfloat(jnp.ones(3).sum())",
                          "x = 2"),
    # one function compiled for three input types
    "shapes": notebook("Shapes", "import jax, jax.numpy as jnp\n\n@jax.jit\n"
                       "def total(x, unused):\n    return jnp.cumsum(x)[-1]\n\n"
                       "total(jnp.ones(1000), 1.0)",
                       "total(jnp.ones(10000), 1.0)",
                       "total(jnp.ones(10000, dtype=jnp.int32), 1.0)"),
    # four functions compiled by four threads at once: their compile events overlap
    "threads": notebook("Threads", "import jax, jax.numpy as jnp\n"
                        "from concurrent.futures import ThreadPoolExecutor\n\n"
                        "def chain(n):\n    def f(x):\n        for _ in range(n):\n"
                        "            x = jnp.sin(x) * 1.0001\n        return x\n"
                        "    f.__name__ = f'chain{n}'\n    return jax.jit(f)",
                        "with ThreadPoolExecutor(4) as pool:\n"
                        "    done = list(pool.map(lambda f: f(jnp.ones(8)).block_until_ready(),"
                        "\n                         [chain(150 + k) for k in range(4)]))"),
}


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    files = {**only()["files"], **{f"{name}.md": text for name, text in PAGES.items()}}
    files["index.md"] = "# Book\n\n```{toctree}\n" + "\n".join(PAGES) + "\n```\n"
    return build_project("capture", tmp_path_factory.mktemp("probe-jax"), files=files,
                         conf_append=only()["conf_append"],
                         confoverrides={"gpu_explain_recompilations": True,
                                        "show_warning_types": True})


def cell_outputs(build: ProjectBuild, page: str) -> list[str]:
    """Each code cell's outputs (stdout, stderr, results), as the page shows them."""
    doctree = build.app.env.get_doctree(page)
    return ["\n".join(output.astext() for output in cell.findall(nodes.container)
                      if "cell_output" in output["classes"])
            for cell in doctree.findall(nodes.container)
            if cell.get("nb_element") == "cell_code"]


def reasons(cell: dict[str, Any]) -> list[str]:
    return [reason["function"] for reason in cell.get("recompile_reasons") or []]


def test_explanations_the_notebook_asked_for_reach_it_and_are_recorded(
        build: ProjectBuild) -> None:
    record = notebooks(build)["asks"]
    assert record["environment"]["jax"]["recompilations_explained"] is True
    outputs = cell_outputs(build, "asks")
    cells = record["cells"]
    # before the notebook asked: the probe's, recorded and out of sight
    assert reasons(cells[2]) == ["q"] and "TRACING CACHE MISS" not in outputs[2]
    # after: JAX's explanation in the cell's output, as without the probe, and recorded
    assert "TRACING CACHE MISS" in outputs[4] and "never seen function" in outputs[4]
    assert reasons(cells[4]) == ["q"]
    assert not any("TRACING CACHE MISS" in text for text in outputs[:4])


def test_a_huge_device_kind_is_cut_alone_with_a_warning_and_one_machine_remains(
        build: ProjectBuild, capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_gpu_admonition.cli import main
    from sphinx_gpu_admonition.probe import protocol

    record = notebooks(build)["huge_kind"]
    assert (record["status"], record["capture"]) == ("ok", "ok")
    environment = record["environment"]
    assert environment["host"] == notebooks(build)["asks"]["environment"]["host"]
    assert environment["python"] and environment["jax"]["backend"] == "cpu"
    (device,) = environment["jax"]["devices"]
    assert len(device["kind"]) == protocol.TEXT_LENGTH
    (warning,) = [line for line in build.warning_lines if "huge_kind.md" in line]
    assert "jax.devices[0].kind: 10000000 characters, cut to 200" in warning
    assert "gpu_admonition.capture" in warning
    assert main(["report", str(build.outdir), "--json", "--exit-zero"]) == 0
    assert len(json.loads(capsys.readouterr().out)["machines"]) == 1  # no phantom machine


def test_each_compilation_records_its_input_shapes_and_dtypes(build: ProjectBuild) -> None:
    cells = notebooks(build)["shapes"]["cells"]
    inputs = [[entry for entry in cell.get("compiled_inputs", [])
               if entry["function"] == "jit(total)"] for cell in cells]
    # the unused argument is no input of the program JAX compiled
    assert inputs == [[{"function": "jit(total)", "inputs": [shape], "arguments": 1,
                        "platform": "cpu"}] for shape in ("f32[1000]", "f32[10000]",
                                                           "i32[10000]")]


def test_compilations_in_threads_at_once_count_once_never_beyond_the_cell(
        build: ProjectBuild) -> None:
    compiling = notebooks(build)["threads"]["cells"][1]
    assert {f"jit(chain{150 + k})" for k in range(4)} <= set(compiling["compilations"])
    assert 0 < compiling["compile_seconds"] <= compiling["seconds"]
