"""model/jit_calls.py through model/code.py read_code: the jitted functions a cell runs,
named as JAX names their compilations, and whether the code makes them anew (a jit
inside a function, of a lambda in a loop: "jit it once at the top level" fits) or once
at the top level (then a compilation again is the inputs' doing: new shapes)."""

from __future__ import annotations

from sphinx_gpu_admonition.model.code import read_code
from sphinx_gpu_admonition.model.record import JitCall

IMPORTS = ("import jax\nimport jax.numpy as jnp\nfrom functools import partial\n"
           "from jax import jit\ncpu = jax.devices('cpu')[0]")


def jits_of(*sources: str, modules: dict[str, str] | None = None,
            ) -> dict[int, list[JitCall]]:
    code = read_code(list(enumerate(sources)), (modules or {}).get)
    return {index: cell.jit_calls for index, cell in code.cells.items() if cell.jit_calls}


def test_one_top_level_function_called_with_three_sizes_is_made_once() -> None:
    """The seed's "recompilations when array sizes change": three cells, one ``f``."""
    jits = jits_of(IMPORTS, "@jax.jit\ndef f(x):\n    return jnp.cumsum(x) * 2",
                   "f(jnp.ones(1000)).block_until_ready()",
                   "f(jnp.ones(10000)).block_until_ready()",
                   "f(jnp.ones(100000)).block_until_ready()")
    assert set(jits) == {2, 3, 4}
    for cell in (2, 3, 4):
        (call,) = jits[cell]
        assert (call.function, call.called, call.defined_cell, call.line) == ("f", "f", 1, 1)
        assert (call.code, call.recreated, call.created_in) == ("@jax.jit", False, None)
    assert jits[3][0].call == "f(jnp.ones(10000)).block_until_ready()"


def test_every_way_of_jitting_at_the_top_level_is_made_once() -> None:
    jits = jits_of(
        IMPORTS,
        "@partial(jax.jit, static_argnums=(1,))\ndef qm_jax(x0, n):\n    return x0",
        "@jit\ndef g(x):\n    return x",
        "def h(x):\n    return x\n\nh_jit = jax.jit(h)\nsquare = jax.jit(lambda v: v * v)",
        "qm_jax(0.1, 10)\ng(1.0)\nh_jit(2.0)\nsquare(3.0)",
        "qm_cpu = jax.jit(qm_jax, static_argnums=(1,), device=cpu)\ny = qm_cpu(0.2, 10)")
    made = {(call.called, call.function, call.defined_cell, call.line, call.recreated)
            for call in jits[4]}
    assert made == {("qm_jax", "qm_jax", 1, 1, False), ("g", "g", 2, 1, False),
                    ("h_jit", "h", 3, 4, False), ("square", "<lambda>", 3, 5, False)}
    (twin,) = jits[5]
    assert (twin.function, twin.called, twin.pinned_to_cpu, twin.recreated) == (
        "qm_jax", "qm_cpu", True, False)
    assert twin.code == "qm_cpu = jax.jit(qm_jax, static_argnums=(1,), device=cpu)"


def test_a_jit_inside_a_function_is_made_anew_on_every_call() -> None:
    """tests/roots/diagnosis's ``newton``: ``step = jax.jit(q)`` of a closure; lecture-jax
    newtons_method's ``@jax.jit def q`` inside ``newton``."""
    jits = jits_of(
        IMPORTS,
        "def newton(f, x0):\n    def q(x):\n        return x - f(x) / jax.grad(f)(x)\n"
        "    step = jax.jit(q)  # jitted inside the function\n    for _ in range(3):\n"
        "        x0 = step(x0)\n    return x0\n\nroot = newton(lambda x: x**2 - 2.0, 1.0)",
        "root = newton(lambda x: x**2 - 2.0, 1.0)",
        "def newton2(f, x_0):\n    @jax.jit\n    def q(x):\n        return x - f(x)\n"
        "    return q(x_0)",
        "newton2(lambda p: p - 1.0, 2.0)",
        "def stable(x):\n    return x\n\ndef wrap(x):\n    return jax.jit(stable)(x)",
        "wrap(1.0)",
        "def per_call(f, x):\n    return jax.jit(f)(x)",
        "per_call(stable, 1.0)")
    for cell in (1, 2):
        (call,) = jits[cell]
        assert (call.function, call.called, call.defined_cell, call.line) == (
            "q", "newton", 1, 4)
        assert (call.recreated, call.created_in) == (True, "newton")
        assert call.code == "step = jax.jit(q)  # jitted inside the function"
    (decorated,) = jits[4]
    assert (decorated.function, decorated.recreated, decorated.created_in,
            decorated.code) == ("q", True, "newton2", "@jax.jit")
    # a jit of a top-level function inside another: the same function to JAX each time
    (same,) = jits[6]
    assert (same.function, same.called, same.recreated) == ("stable", "wrap", False)
    # a function passed in may be a new lambda on every call
    (passed,) = jits[8]
    assert (passed.function, passed.recreated, passed.created_in) == ("f", True, "per_call")


def test_a_jit_of_a_lambda_in_a_loop_is_made_anew_on_every_iteration() -> None:
    jits = jits_of(IMPORTS,
                   "for size in (10, 20, 30):\n"
                   "    jax.jit(lambda v: jnp.cumsum(v))(jnp.ones(size)).block_until_ready()",
                   "for size in (10, 20):\n    jax.jit(jnp.cumsum)(jnp.ones(size))",
                   "fit = jax.jit(minimize, static_argnames=('fun',))(loss, x0)",
                   "for k in range(3):\n    g = jax.jit(partial(jnp.add, k))\n    g(1.0)")
    (loop,) = jits[1]
    assert (loop.function, loop.recreated, loop.created_in, loop.defined_cell, loop.line) == (
        "<lambda>", True, None, 1, 2)
    (library,) = jits[2]
    assert (library.function, library.recreated) == ("cumsum", False)
    (inline,) = jits[3]
    assert (inline.function, inline.called, inline.recreated) == ("minimize", "minimize", False)
    (partial_call,) = jits[4]
    assert partial_call.recreated and partial_call.line == 2


def test_jitted_functions_of_local_modules_and_through_plain_functions() -> None:
    library = "import jax\n\n@jax.jit\ndef sample(x0):\n    return x0\n"
    jits = jits_of(IMPORTS + "\nimport mylib\nfrom mylib import sample",
                   "def run(x):\n    return mylib.sample(x) + helper(x)\n"
                   "def helper(x):\n    return sample(x)",
                   "z = mylib.sample(1.0)", "run(2.0)",
                   modules={"mylib": library})
    (direct,) = jits[2]
    assert (direct.function, direct.called, direct.module, direct.defined_cell,
            direct.line) == ("sample", "mylib.sample", "mylib", None, 3)
    assert {(call.function, call.called, call.module) for call in jits[3]} == {
        ("sample", "run", "mylib")}
    assert 1 not in jits  # defining is not running


def test_numbas_jit_is_not_jax() -> None:
    jits = jits_of("import numba\nfrom numba import jit",
                   "@jit\ndef qm(x0, n):\n    return x0\n\n@numba.jit\ndef r(x):\n    return x",
                   "qm(0.1, 10)\nr(1)")
    assert jits == {}
