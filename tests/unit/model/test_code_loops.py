"""Loops found in the code (``model/code.py``): under any alias, through user functions and local
modules, the steps of a call, functions pinned to the CPU, device twins; cells that do not
parse break nothing."""

from __future__ import annotations

from typing import Any

import pytest

from sphinx_gpu_admonition.model.code import device_twins, link_loops, without_magics


# -- the parse alone (no kernel) -------------------------------------------------------
def runs_of(*sources: str, modules: dict[str, str] | None = None) -> dict[int, list[Any]]:
    return link_loops(list(enumerate(sources)), (modules or {}).get)


@pytest.mark.parametrize("imports, call", [
    ("from jax import lax as L", "L.scan(step, 0.0, length=5)"),
    ("import jax", "jax.lax.fori_loop(0, 5, step, 0.0)"),
    ("from jax.lax import scan", "scan(step, 0.0, length=5)"),
    ("import jax.lax as lx", "lx.while_loop(lambda c: c < 5, step, 0)"),
    ("from jax import lax", "lax.map(step, xs)"),
    ("from jax import lax", "lax.associative_scan(step, xs)"),
])
def test_a_loop_under_any_alias_is_found_in_the_cell_that_calls_its_function(
        imports: str, call: str) -> None:
    runs = runs_of(imports, f"def run(xs):\n    return {call}", "run(1.0)")
    assert set(runs) == {2}  # defining is not running
    (run,) = runs[2]
    assert (run.function, run.defined_cell, run.call) == ("run", 1, "run(1.0)")
    assert run.primitive == "lax." + call.split("(")[0].split(".")[-1]


def test_steps_come_from_a_literal_or_the_length_argument_of_the_call() -> None:
    runs = runs_of("import jax\nn = 10**7",
                   "def f(x, n):\n    return jax.lax.scan(g, x, length=n)",
                   "f(0.1, n)", "f(0.1, k)",
                   "def h(x):\n    return jax.lax.fori_loop(0, 1_000, g, x)", "h(1.0)")
    assert runs[2][0].steps == 10_000_000
    assert runs[3][0].steps is None  # unknown: skipped, never guessed
    assert runs[5][0].steps == 1000


def test_loops_are_followed_through_user_functions_and_into_local_modules() -> None:
    library = "from jax import lax\ndef step(x):\n    return lax.while_loop(c, b, x)\n" \
              "def sample(x):\n    return step(x)\n"
    runs = runs_of("import jax\nimport mylib\nfrom mylib import sample",
                   "def outer(x):\n    return inner(x)\ndef inner(x):\n"
                   "    return jax.lax.fori_loop(0, 3, g, x)",
                   "outer(1.0)", "mylib.sample(1.0)", "sample(2.0)",
                   modules={"mylib": library})
    assert (runs[2][0].function, runs[2][0].loop_function) == ("outer", "inner")
    assert (runs[3][0].function, runs[3][0].module) == ("mylib.sample", "mylib")
    assert (runs[4][0].module, runs[4][0].loop_function) == ("mylib", "step")


def test_functions_pinned_to_the_cpu_are_not_gpu_loops() -> None:
    runs = runs_of("import jax\nfrom functools import partial\ncpu = jax.devices('cpu')[0]",
                   "def f(x):\n    return jax.lax.scan(g, x, length=3)",
                   "f_cpu = jax.jit(f, device=cpu)\nf_cpu(1.0)",
                   "with jax.default_device(cpu):\n    f(1.0)",
                   "@partial(jax.jit, backend='cpu')\ndef p(x):\n    return f(x)\np(1.0)",
                   "f(1.0)")
    assert set(runs) == {5}


def test_magics_and_cells_that_do_not_parse_link_nothing_and_break_nothing() -> None:
    assert without_magics("%time x = f(1)\n!ls") == "x = f(1)\npass"
    assert without_magics("%timeit -n 10 -r 3 f(1)") == "f(1)"
    assert without_magics("%%bash\necho hi") == ""
    runs = runs_of("import jax", "def f(x):\n    return jax.lax.scan(g, x)",
                   "%time y = f(1)", "def broken(:", "%%time\nf(2)")
    assert set(runs) == {2, 4}


def test_device_twins_are_the_functions_a_cell_jits_for_a_device() -> None:
    twins = device_twins([
        (0, "import jax\ncpu = jax.devices('cpu')[0]"),
        (1, "qm_cpu = jax.jit(qm_jax, static_argnums=(1,), device=cpu)"),
        (2, "f2 = jit(f, backend='cpu')\ng2 = jax.jit(g)"),
        (3, "%%time\nh = jax.jit(h, device=cpu)"),
        (4, "jax.jit(("),  # does not parse: nothing, no error
    ])
    assert twins == {1: ["qm_jax"], 2: ["f"], 3: ["h"]}
