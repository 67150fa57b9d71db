"""The probe's reading of what JAX compiled (``probe/jax_inspect.py``): the loops of
real programs compiled by the installed JAX (on the CPU), and a GPU's memory, which
only a stub device can stand for here."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sphinx_gpu_admonition.probe import jax_inspect

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax


@pytest.fixture
def compiled() -> Iterator[list[dict]]:
    """The loops the probe notes at each backend compilation, as in a kernel."""
    loops: list[dict] = []

    def listener(event: str, duration: float, **kwargs: Any) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            jax_inspect.note_program(str(kwargs.get("fun_name")), loops, [])

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield loops
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


def steps_of(loops: list[dict], function: str) -> list[int | None]:
    return [loop["steps"] for loop in loops if loop["function"] == function]


def scanned(x: float) -> Any:
    return lax.scan(lambda c, _: (4.0 * c * (1.0 - c), None), x, length=20_000)[0]


def counted(x: float, n: int) -> Any:
    return lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x)


def conditioned(x: float) -> Any:
    return lax.while_loop(lambda s: s[1] < 200, lambda s: (s[0] * 0.5, s[1] + 1), (x, 0))[0]


def nested(x: float) -> Any:
    inner = lambda i, c: lax.scan(lambda a, _: (a + 1.0, None), c, length=5)[0]  # noqa: E731
    return lax.fori_loop(3, 10, inner, x)


@pytest.mark.parametrize("function, arguments, static, expected", [
    (scanned, (0.1,), (), [20_000]),
    (counted, (1.0, 7), (1,), [7]),  # static bounds: a counted loop
    (counted, (1.0, 7), (), [None]),  # a traced bound: not fixed by the program
    (conditioned, (1.0,), (), [200]),  # a counter against a constant, as the scan's
    (nested, (1.0,), (), [7, 5]),
    (lambda a: a @ a, (jnp.ones((3, 3)),), (), []),
])
def test_the_loops_of_a_compiled_program_and_their_trip_counts(
        compiled: list[dict], function: Callable[..., Any], arguments: tuple[Any, ...],
        static: tuple[int, ...], expected: list[int | None]) -> None:
    jax.jit(function, static_argnums=static)(*arguments)
    name = f"jit({function.__name__})"
    assert steps_of(compiled, name) == expected
    assert {loop["platform"] for loop in compiled if loop["function"] == name} <= {"cpu"}


def test_a_loop_inside_an_installed_library_is_found(compiled: list[dict]) -> None:
    from jax.scipy.optimize import minimize

    result = minimize(lambda w: jnp.sum((w - 3.0) ** 2), jnp.zeros(2), method="BFGS")
    assert float(result.x[0]) == pytest.approx(3.0, abs=1e-3)  # the program is unchanged
    assert any(loop["loop"] == "while" and loop["platform"] == "cpu" for loop in compiled)


def test_outside_a_compilation_there_is_no_program_and_nothing_is_noted() -> None:
    loops: list[dict] = []
    assert jax_inspect.compiling_program() is None
    jax_inspect.note_program("jit(f)", loops, [])
    assert loops == []


@pytest.mark.parametrize("text, expected", [
    ("", []),
    ("module {\n  %0 = stablehlo.add %a, %b\n}", []),
    # a while with no closing regions (text cut short): counted, its steps unknown
    ("    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0)", [None]),
])
def test_programs_without_a_readable_loop(text: str, expected: list[int | None]) -> None:
    assert jax_inspect.while_loops(text) == expected


class StubGpu:
    """A GPU's ``memory_stats`` as JAX reports it (the one mock: no GPU here)."""

    platform = "gpu"

    def __init__(self, in_use: int, peak: int) -> None:
        self.stats = {"bytes_in_use": in_use, "peak_bytes_in_use": peak,
                      "bytes_limit": 16 * 2**30}

    def memory_stats(self) -> dict[str, int]:
        return self.stats


def test_a_cells_gpu_peak_is_known_when_it_grew_in_the_cell() -> None:
    gpus = [StubGpu(100 * 2**20, 300 * 2**20), StubGpu(200 * 2**20, 250 * 2**20)]
    fields, peak = jax_inspect.memory_fields(gpus, 0.0)
    # the fullest device's figures
    assert fields == ',"device_memory_mb":200.0,"device_peak_memory_mb":300.0'
    assert peak == 300.0
    gpus[0].stats["bytes_in_use"] = 50 * 2**20  # freed; the kernel's peak did not grow
    fields, peak = jax_inspect.memory_fields(gpus, peak)
    assert fields == ',"device_memory_mb":200.0,"device_peak_memory_mb":null'


def test_a_device_without_memory_figures_records_nothing() -> None:
    silent = types.SimpleNamespace(memory_stats=lambda: None)
    assert jax_inspect.device_memory_mb([silent]) == (None, None)
    broken = types.SimpleNamespace(memory_stats=lambda: 1 / 0)
    assert jax_inspect.memory_fields([broken], 5.0) == ("", 5.0)


def test_the_cpu_backend_has_no_devices_to_read() -> None:
    assert jax.default_backend() == "cpu"
    assert jax_inspect.memory_devices(jax) == []


# -- JAX's explanations of recompilations (gpu_explain_recompilations) --------------------
def newton(f: Callable[[Any], Any], x0: float) -> Any:
    def q(x: Any) -> Any:
        return x - f(x) / jax.grad(f)(x)
    step = jax.jit(q)  # jitted inside the function: traced again at every call
    for _ in range(3):
        x0 = step(x0)
    return x0


def test_explanations_are_captured_out_of_sight_until_the_notebook_asks_for_them(
        caplog: pytest.LogCaptureFixture) -> None:
    """The probe's explanations are dropped; once the notebook's own (global) setting
    is on they reach its handlers, and are still recorded (a real kernel:
    tests/integration/test_probe_jax.py)."""
    import logging

    loggers = [logging.getLogger(name) for name in
               (jax_inspect.EXPLAIN_LOGGER, *jax_inspect._PERSISTENT_CACHE_LOGGERS)]
    before = [list(logger.filters) for logger in loggers]
    local = jax.explain_cache_misses.get_local()
    try:
        reasons: list[dict] = []
        in_cell = [False]
        assert jax_inspect.explain_recompilations(jax, reasons, lambda: in_cell[0])
        assert jax.config.jax_explain_cache_misses  # what the notebook then reads
        assert jax.explain_cache_misses.get_global() is False  # its own: left alone
        first = newton(lambda x: x**2 - 2.0, 1.0)  # outside a cell: dropped, not kept
        in_cell[0] = True
        again = newton(lambda x: x**2 - 2.0, 1.0)
        assert float(first) == float(again)
        assert reasons == [{"function": "q", "reason": (
            "seen another function defined on the same line; maybe the function is being "
            "re-defined repeatedly, preventing caching?")}]
        assert not [r for r in caplog.records if "CACHE MISS" in r.getMessage()]
        reasons.clear()
        jax.config.update("jax_explain_cache_misses", True)  # the notebook asks
        with caplog.at_level(logging.WARNING):
            newton(lambda x: x**2 - 2.0, 1.0)
        assert [r for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]
        assert [r["function"] for r in reasons] == ["q"]
    finally:
        jax.config.update("jax_explain_cache_misses", False)
        jax.explain_cache_misses.set_local(local)
        for logger, filters in zip(loggers, before, strict=True):
            for added in logger.filters[len(filters):]:
                logger.removeFilter(added)
