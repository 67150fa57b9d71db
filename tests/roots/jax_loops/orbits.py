"""The logistic map iterated with a fori_loop whose trip count only the compiled
program knows (it follows from the input's shape)."""

import jax
from jax import lax


def _logistic(i, x):
    return 4.0 * x * (1.0 - x)


@jax.jit
def orbit(x0):
    return lax.fori_loop(0, 1000 * x0.shape[0], _logistic, x0)
