"""model/work_line.py through model/code.py read_code: the statement a finding shows
as its code is the one doing the work, on the shapes of QuantEcon's real lectures
(excerpts of lecture-jax newtons_method, lecture-python-programming jax_intro,
numpy_vs_numba_vs_jax, numpy and need_for_speed): inside ``%%time`` and ``with
qe.Timer(...)``, the call of the slow function or the loop, not the set-up."""

from __future__ import annotations

import pytest

from sphinx_gpu_admonition.model.code import read_code
from sphinx_gpu_admonition.model.code_text import without_magics
from sphinx_gpu_admonition.model.record import WorkLine

IMPORTS = ("import jax\nimport jax.numpy as jnp\nimport numpy as np\nimport quantecon as qe\n"
           "from scipy.optimize import root\nfrom functools import partial\nfrom jax import lax")
#: lecture-jax newtons_method: the excess demand and the multivariate Newton routine
NEWTON = ("def e(p, A, b, c):\n    return jnp.exp(- A @ p) + c - b * jnp.sqrt(p)",
          "def newton(f, x_0, tol=1e-5, max_iter=15):\n    x = x_0\n"
          "    f_jac = jax.jacobian(f)\n    @jax.jit\n    def q(x):\n"
          "        return x - jnp.linalg.solve(f_jac(x), f(x))\n    error = tol + 1\n"
          "    n = 0\n    while error > tol:\n        n += 1\n        y = q(x)\n"
          "        error = jnp.linalg.norm(x - y)\n        x = y\n"
          "        print(f'iteration {n}, error = {error}')\n    return x")
#: lecture-python-programming numpy_vs_numba_vs_jax: the CPU-pinned lax.scan
QM_JAX = ("cpu = jax.devices(\"cpu\")[0]\n\n"
          "@partial(jax.jit, static_argnums=(1,), device=cpu)\ndef qm_jax(x0, n, α=4.0):\n"
          "    def update(x, t):\n        x_new = α * x * (1 - x)\n        return x_new, x_new\n\n"
          "    _, x = lax.scan(update, x0, jnp.arange(n))\n"
          "    return jnp.concatenate([jnp.array([x0]), x])")


def work_of(*sources: str) -> WorkLine | None:
    """The work line of the last of ``sources`` (the cells before define things)."""
    cells = list(enumerate((IMPORTS, *sources)))
    code = read_code(cells).cells.get(len(cells) - 1)
    return code.work if code is not None else None


@pytest.mark.parametrize("cell", [
    "%%time\np = newton(lambda p: e(p, A, b, c), init_p).block_until_ready()",
    "%%timeit -n 1 -r 1\np = newton(lambda p: e(p, A, b, c), init_p).block_until_ready()",
])
def test_after_a_timing_cell_magic_the_call_of_the_slow_function(cell: str) -> None:
    work = work_of(*NEWTON, "dim = 50\ninit_p = jnp.ones(dim)", cell)
    assert work == WorkLine("p = newton(lambda p: e(p, A, b, c), init_p).block_until_ready()",
                            2, "dispatch_loop", timed=True)


def test_a_statement_over_several_lines_reads_as_one() -> None:
    """newtons_method's SciPy comparison: five lines of one call."""
    work = work_of(*NEWTON, "%%time\nsolution = root(lambda p: e(p, A, b, c),\n"
                            "                init_p,\n"
                            "                jac=lambda p: jax.jacobian(e)(p, A, b, c),\n"
                            "                method='hybr',\n                tol=1e-5)")
    assert work is not None and (work.line, work.kind) == (2, "heavy_call")
    assert work.code == ("solution = root(lambda p: e(p, A, b, c), init_p, "
                         "jac=lambda p: jax.jacobian(e)(p, A, b, c), method='hybr', tol=1e-5)")


def test_the_timed_line_magic_in_a_loop_not_the_counter_before_it() -> None:
    """newtons_method: ``attempt = 1`` was the finding's code."""
    work = work_of(*NEWTON, "initLs = [jnp.ones(3), jnp.ones(3) * 2]",
                   "attempt = 1\nfor init in initLs:\n"
                   "    print(f'Attempt {attempt}: Starting value is {init} \\n')\n"
                   "    %time k = newton(lambda k: multivariate_solow(k) - k, \\\n"
                   "                     init).block_until_ready()\n"
                   "    print('-'*64)\n    attempt += 1")
    assert work == WorkLine("k = newton(lambda k: multivariate_solow(k) - k, "
                            "init).block_until_ready()", 4, "dispatch_loop", timed=True)


@pytest.mark.parametrize("cell, expected", [
    # numpy_vs_numba_vs_jax: the warm call of the pinned lax.scan
    ("with qe.Timer(precision=8):\n    x_jax = qm_jax(0.1, n).block_until_ready()",
     WorkLine("x_jax = qm_jax(0.1, n).block_until_ready()", 2, "loop_call", True)),
    # numpy_vs_numba_vs_jax: the JAX version of the vectorised function
    ("with qe.Timer(precision=8):\n    z_max = jnp.max(f(x_mesh, y_mesh))\n"
     "    z_max.block_until_ready()\n\nprint(f\"Plain vanilla JAX result: {z_max:.6f}\")",
     WorkLine("z_max = jnp.max(f(x_mesh, y_mesh))", 2, "jitted_call", True)),
    # jax_intro: an operation of jax.numpy, then the block
    ("with qe.Timer():\n    y = jnp.cos(x)\n    jax.block_until_ready(y);",
     WorkLine("y = jnp.cos(x)", 2, "jax_call", True)),
    # numpy: a named timer
    ("with qe.Timer(\"Broadcasting operation\"):\n    B = x / y",
     WorkLine("B = x / y", 2, "timed", True)),
    # need_for_speed: a pure Python loop is the work, not ``y = 0``
    ("with qe.Timer():\n    y = 0      # Will accumulate and store sum\n"
     "    for i in range(n):\n        x = random.uniform(0, 1)\n        y += x**2",
     WorkLine("for i in range(n):", 3, "python_loop", True)),
])
def test_inside_a_timer_block_the_call_or_loop_doing_the_work(cell: str,
                                                              expected: WorkLine) -> None:
    work = work_of(QM_JAX, "n = 10_000_000",
                   "def f(x, y):\n    return jnp.cos(x**2 + y**2) / (1 + x**2 + y**2)", cell)
    assert work == expected


def test_the_heavy_call_in_a_loop_not_the_size_before_it() -> None:
    """numpy: ``n = 20`` was the finding's code; the work is ``np.linalg.eigvals(X)``."""
    work = work_of("n = 20\nm = 1000\nfor i in range(n):\n    X = np.random.randn(m, m)\n"
                   "    λ = np.linalg.eigvals(X)")
    assert work == WorkLine("λ = np.linalg.eigvals(X)", 5, "heavy_call", timed=False)


def test_without_timing_code_the_heaviest_statement() -> None:
    """job_search: ``model = create_js_model()`` before ``vfi(model)``, whose loop works;
    tests/roots/diagnosis: the call between two clock readings."""
    vfi = ("@jax.jit\ndef T(v, model):\n    return jnp.maximum(v, model)",
           "def create_js_model(n=500):\n    return jnp.ones(n)",
           "def vfi(model, tol=1e-4):\n    v = jnp.zeros(10)\n    error = tol + 1\n"
           "    while error > tol:\n        new_v = T(v, model)\n"
           "        error = jnp.max(jnp.abs(new_v - v))\n        v = new_v\n    return v")
    work = work_of(*vfi, "model = create_js_model()\nn, w_vals, P, β, c = model\n\n"
                         "v_star, σ_star = vfi(model)")
    assert work == WorkLine("v_star, σ_star = vfi(model)", 4, "dispatch_loop", False)
    clocked = work_of(QM_JAX, "import time\nn = 20_000\nstart = time.perf_counter()\n"
                              "x = qm_jax(0.1, n).block_until_ready()\n"
                              "elapsed = time.perf_counter() - start")
    assert clocked == WorkLine("x = qm_jax(0.1, n).block_until_ready()", 4, "loop_call", True)
    dispatch = work_of("@jax.jit\ndef step(x):\n    return x + 1",
                       "x = jnp.zeros(4)\nfor _ in range(200_000):\n    x = step(x)\n"
                       "x.block_until_ready()")
    assert dispatch == WorkLine("for _ in range(200_000):", 2, "dispatch_loop", False)


def test_nothing_better_than_the_first_line_gives_none() -> None:
    assert work_of("import os\nimport sys") is None  # imports: no work line
    assert work_of("x = 1\ny = x + 2") is None
    assert work_of("def f(x):\n    return x") is None
    assert work_of("print('hello')\nplt.show()") is None
    assert work_of("cpu = jax.devices('cpu')[0]") is None  # asks JAX, runs nothing
    assert work_of("%%bash\necho hi") is None
    assert work_of("with qe.Timer(:\n    broken") is None
    # a timed cell with nothing weighing: its first timed statement
    assert work_of("%%time\nx = 1\ny = 2") == WorkLine("x = 1", 2, "timed", True)


def test_timing_magics_keep_their_statement_as_written() -> None:
    assert without_magics("%time x = f(a) - g(b)") == "x = f(a) - g(b)"
    assert without_magics("%timeit -n 10 -r 3 f(-1)") == "f(-1)"
    assert without_magics("%timeit -n10 -o f(x)") == "f(x)"
    assert without_magics("    %time k = newton(lambda k: s(k) - k, \\\n    init)") == \
        "    k = newton(lambda k: s(k) - k, \\\n    init)"
    assert without_magics("%matplotlib inline\n%load_ext autoreload") == "pass\npass"
    assert without_magics("%%capture\n%pip install x\ny = 1") == "\npass\ny = 1"
