"""model/python_loops.py through model/code.py read_code: the Python loops around JAX
work a cell runs (its own, or in the functions it calls), their iteration counts, the
host syncs inside them, and whether the work is pinned to the CPU or batched.

The shapes are QuantEcon's (lecture-jax job_search's ``vfi``, newtons_method's
``newton``) and the dispatch-bound loop of tiny jitted calls (jax-ml/jax#427)."""

from __future__ import annotations

from sphinx_gpu_admonition.model.code import read_code
from sphinx_gpu_admonition.model.record import DispatchLoop

IMPORTS = ("import jax\nimport jax.numpy as jnp\nimport numpy as np\n"
           "from functools import partial\ncpu = jax.devices('cpu')[0]")
STEP = "@jax.jit\ndef step(x):\n    return 0.5 * x + 1.0"


def loops_of(*sources: str, modules: dict[str, str] | None = None,
             ) -> dict[int, list[DispatchLoop]]:
    code = read_code(list(enumerate(sources)), (modules or {}).get)
    return {index: cell.dispatch_loops for index, cell in code.cells.items()
            if cell.dispatch_loops}


def test_a_python_loop_of_tiny_jitted_calls_names_the_function_count_and_line() -> None:
    loops = loops_of(IMPORTS, STEP,
                     "x = jnp.zeros(4)\nfor _ in range(200_000):\n    x = step(x)\n"
                     "x.block_until_ready()")
    (loop,) = loops[2]
    assert (loop.loop, loop.code, loop.line) == ("for", "for _ in range(200_000):", 2)
    assert (loop.calls, loop.operations, loop.iterations) == (["step"], [], 200_000)
    assert (loop.function, loop.defined_cell, loop.call) == (None, 2,
                                                              "for _ in range(200_000):")
    assert not loop.pinned_to_cpu and not loop.batched and loop.syncs == []


def test_counts_come_from_constants_literals_nested_loops_and_the_calls_arguments() -> None:
    loops = loops_of(
        IMPORTS, STEP, "n = 1_000\nsizes = (10, 20, 30)",
        "for i in range(2, n, 2):\n    step(i)",
        "for size in sizes:\n    for _ in range(100):\n        step(size)",
        "for k, size in enumerate([1, 2]):\n    step(size)",
        "def simulate(x, T):\n    for t in range(T):\n        x = step(x)\n    return x",
        "out = simulate(1.0, 5_000)", "out = simulate(1.0, m)",
        "while True:\n    step(1.0)\n    break")
    assert loops[3][0].iterations == 499
    assert loops[4][0].iterations == 300  # 3 sizes x 100 calls
    assert loops[5][0].iterations == 2
    assert 6 not in loops  # defining is not running
    first, unknown = loops[7][0], loops[8][0]
    assert (first.function, first.defined_cell, first.line) == ("simulate", 6, 2)
    assert (first.iterations, first.call) == (5_000, "out = simulate(1.0, 5_000)")
    assert unknown.iterations is None  # m is not known: never guessed
    assert loops[9][0].loop == "while" and loops[9][0].iterations is None


def test_the_value_function_iteration_shape_syncs_on_every_iteration() -> None:
    """job_search's ``vfi``: the loop is in a function an earlier cell defined; its
    ``while`` compares a device value (the error) on every iteration."""
    bellman = "@jax.jit\ndef T(v, model):\n    return jnp.maximum(v * 0.9, model)"
    vfi = ("def vfi(model, max_iter=10_000, tol=1e-4):\n"
           "    v = jnp.zeros(10)\n    i = 0\n    error = tol + 1\n"
           "    while error > tol and i < max_iter:\n"
           "        new_v = T(v, model)\n"
           "        error = jnp.max(jnp.abs(new_v - v))\n"
           "        i += 1\n        v = new_v\n    return v")
    loops = loops_of(IMPORTS, bellman, vfi, "model = 1.0\n\nv_star = vfi(model)")
    (loop,) = loops[3]
    assert (loop.function, loop.defined_cell, loop.line) == ("vfi", 2, 5)
    assert loop.code == "while error > tol and i < max_iter:"
    assert loop.calls == ["T"] and loop.operations == ["jnp.max", "jnp.abs"]
    (sync,) = loop.syncs
    assert (sync.kind, sync.line, sync.code, sync.guarded) == (
        "condition", 5, "while error > tol and i < max_iter:", False)
    assert loop.call == "v_star = vfi(model)"


def test_each_kind_of_host_sync_is_named_with_its_line() -> None:
    body = ("v = jnp.ones(3)\nerror = 1.0\nfor i in range(50):\n"
            "    v = step(v)\n"
            "    error = float(jnp.max(v))\n"         # 5
            "    n = int(v[0])\n"                      # 6
            "    ok = bool(v[1] > 0)\n"                # 7
            "    e = v.sum().item()\n"                 # 8
            "    w = np.asarray(v)\n"                  # 9
            "    print(f'error = {v[0]}')\n"           # 10
            "    v.block_until_ready()\n"              # 11
            "    h = jax.device_get(v)\n"              # 12
            "    if v[2] > 1:\n"                       # 13
            "        print(v)\n"                       # 14
            "    print(i, error)\n"                    # 15: host values only
            "    z = np.max(np.abs(h))\n")             # 16: already on the host
    (loop,) = loops_of(IMPORTS, STEP, body)[2]
    assert [(s.kind, s.line, s.guarded) for s in loop.syncs] == [
        ("float", 5, False), ("int", 6, False), ("bool", 7, False), ("item", 8, False),
        ("numpy", 9, False), ("print", 10, False), ("block_until_ready", 11, False),
        ("device_get", 12, False), ("condition", 13, False), ("print", 14, True)]
    assert loop.syncs[0].code == "error = float(jnp.max(v))"


def test_a_host_value_in_the_condition_is_no_sync() -> None:
    """``error = float(...)`` syncs once per iteration; the ``while`` on the float then
    does not sync again."""
    (loop,) = loops_of(IMPORTS, STEP,
                       "v = jnp.zeros(10)\nerror, tol = 1.0, 1e-6\nwhile error > tol:\n"
                       "    v_new = step(v)\n"
                       "    error = float(jnp.max(jnp.abs(v_new - v)))\n    v = v_new")[2]
    assert [(s.kind, s.line) for s in loop.syncs] == [("float", 5)]


def test_newtons_method_loop_in_a_function_with_a_jitted_closure() -> None:
    """lecture-jax newtons_method: ``q`` is jitted inside ``newton``; the ``while``
    compares the device error, and ``print`` shows it each iteration; the lecture's
    loop over starting values calls ``newton`` under ``%time``."""
    newton = ("def newton(f, x_0, tol=1e-5, max_iter=15):\n"
              "    x = x_0\n    f_jac = jax.jacobian(f)\n    @jax.jit\n    def q(x):\n"
              "        \" Updates the current guess. \"\n"
              "        return x - jnp.linalg.solve(f_jac(x), f(x))\n"
              "    error = tol + 1\n    n = 0\n    while error > tol:\n        n += 1\n"
              "        if(n > max_iter):\n"
              "            raise Exception('Max iteration reached without convergence')\n"
              "        y = q(x)\n        error = jnp.linalg.norm(x - y)\n        x = y\n"
              "        print(f'iteration {n}, error = {error}')\n    return x")
    attempts = ("attempt = 1\nfor init in initLs:\n"
                "    print(f'Attempt {attempt}: Starting value is {init} \\n')\n"
                "    %time k = newton(lambda k: multivariate_solow(k) - k, \\\n"
                "                     init).block_until_ready()\n"
                "    print('-'*64)\n    attempt += 1")
    loops = loops_of(IMPORTS, newton, attempts)
    # the loop over starting values is no dispatch loop of its own: newton's is
    (loop,) = loops[2]
    assert (loop.function, loop.defined_cell, loop.line) == ("newton", 1, 10)
    assert loop.calls == ["q"] and loop.operations == ["jnp.linalg.norm"]
    assert [(s.kind, s.line) for s in loop.syncs] == [("condition", 10), ("print", 17)]
    assert loop.call == "k = newton(lambda k: multivariate_solow(k) - k, " \
                        "init).block_until_ready()"


def test_work_pinned_to_the_cpu_or_batched_is_said_so() -> None:
    loops = loops_of(
        IMPORTS, STEP,
        "step_cpu = jax.jit(lambda x: x + 1, device=cpu)\nfor _ in range(1000):\n"
        "    y = step_cpu(1.0)",
        "with jax.default_device(cpu):\n    for _ in range(1000):\n        y = step(1.0)",
        "@partial(jax.jit, backend='cpu')\ndef p(x):\n    return x\n"
        "for _ in range(10):\n    p(1.0)",
        "batched = jax.vmap(step)\nfor size in (10, 20, 30):\n"
        "    batched(jnp.ones((size, 4)))",
        "for _ in range(10):\n    step(1.0)\n    step_cpu(1.0)",
        "def run(x):\n    for _ in range(10):\n        x = step(x)\n    return x",
        "with jax.default_device(cpu):\n    run(1.0)")
    assert all(loop.pinned_to_cpu for cell in (2, 3, 4) for loop in loops[cell])
    (batched,) = loops[5]
    assert batched.batched and batched.calls == ["batched"] and not batched.pinned_to_cpu
    assert not loops[6][0].pinned_to_cpu  # one of its calls runs on the default device
    assert loops[8][0].pinned_to_cpu and loops[8][0].function == "run"


def test_loops_inside_jitted_functions_are_traced_not_dispatched() -> None:
    loops = loops_of(IMPORTS,
                     "@jax.jit\ndef unrolled(x):\n    for _ in range(10):\n"
                     "        x = jnp.sin(x)\n    return x",
                     "y = unrolled(1.0)",
                     "for name in ['a', 'b']:\n    print(name)",  # no JAX: no dispatch
                     "for _ in range(3):\n    y = unrolled(y)")
    assert set(loops) == {4}
    assert loops[4][0].calls == ["unrolled"]


def test_loops_are_followed_through_plain_functions_and_into_local_modules() -> None:
    library = ("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef kernel(x):\n"
               "    return x * 2\n\ndef iterate(x, n):\n    for _ in range(n):\n"
               "        x = kernel(x)\n    return x\n")
    loops = loops_of(IMPORTS + "\nimport mylib\nfrom mylib import iterate\n\n" + STEP,
                     "def update(x):\n    return step(x) + jnp.sum(x)",
                     "for _ in range(7):\n    x = update(1.0)",
                     "def outer(x):\n    return inner(x)\ndef inner(x):\n"
                     "    while x < 3:\n        x = step(x)\n    return x",
                     "outer(1.0)", "mylib.iterate(1.0, 40)", "iterate(1.0, 8)",
                     modules={"mylib": library})
    (through,) = loops[2]
    assert (through.calls, through.operations, through.iterations) == (
        ["step"], ["jnp.sum"], 7)
    (nested,) = loops[4]
    assert (nested.function, nested.loop_function, nested.defined_cell) == (
        "outer", "inner", 3)
    module_loop = loops[5][0]
    assert (module_loop.function, module_loop.module, module_loop.defined_cell) == (
        "mylib.iterate", "mylib", None)
    assert (module_loop.line, module_loop.code, module_loop.calls) == (
        9, "for _ in range(n):", ["kernel"])
    assert module_loop.iterations == 40 and loops[6][0].iterations == 8


def test_a_cell_that_does_not_parse_or_runs_no_jax_has_no_loop() -> None:
    loops = loops_of(IMPORTS, STEP, "for _ in range(3:\n    step(1)",
                     "%%bash\nfor i in 1 2 3; do echo $i; done",
                     "total = 0\nfor i in range(10):\n    total += i\nprint(total)")
    assert loops == {}


def test_a_function_jitted_in_a_later_cell_changes_what_its_callers_run() -> None:
    """jax_intro's ``f_jax = jax.jit(f)`` shape, rebinding the name: a caller read
    before runs plain Python, after it runs the jitted function."""
    loops = loops_of(IMPORTS, "def f(x):\n    return x + 1",
                     "def run(x):\n    for _ in range(5):\n        x = f(x)\n    return x",
                     "run(1.0)", "f = jax.jit(f)", "run(1.0)")
    assert set(loops) == {5}
    assert (loops[5][0].function, loops[5][0].calls) == ("run", ["f"])
    counted = loops_of(IMPORTS, STEP,
                       "def simulate(x):\n    for t in range(T):\n        x = step(x)\n"
                       "    return x", "T = 10", "simulate(1.0)", "simulate(2.0)", "T = 20",
                       "simulate(1.0)")
    assert [counted[cell][0].iterations for cell in (4, 5, 7)] == [10, 10, 20]


def test_a_function_passed_in_is_not_the_global_of_the_same_name() -> None:
    """lecture-jax newtons_method's first ``newton(f, x_0)``: its closure ``q`` calls the
    ``f`` passed in, not the notebook's ``f`` (which happens to be that lambda here)."""
    newton = ("def newton(f, x_0, tol=1e-5):\n    f_prime = jax.grad(f)\n    def q(x):\n"
              "        return x - f(x) / f_prime(x)\n\n    error = tol + 1\n    x = x_0\n"
              "    while error > tol:\n        y = q(x)\n        error = abs(x - y)\n"
              "        x = y\n\n    return x")
    loops = loops_of(IMPORTS, newton,
                     "f = lambda x: jnp.sin(4 * (x - 1/4)) + x + x**20 - 1", "newton(f, 0.2)")
    assert loops == {}  # what the loop dispatches is not in the code: no finding from it

