"""The end-of-cell wait for the device work a cell enqueued (standard library only).

JAX dispatch is asynchronous: a cell can return before its computation has run.
Loaded by the kernel probe (``kernel_probe.py``, beside itself) once the notebook
initialised a JAX backend.
"""

from __future__ import annotations

import contextlib


class DeviceSync:
    """Waits for the work the cell enqueued on the default backend's devices.

    One tiny computation per device, compiled ahead of time here (outside any
    cell's time): a device runs its queue in order, so when the tiny result is
    ready, everything dispatched before it has finished. The cost does not
    depend on how many arrays are alive (``jax.live_arrays()`` walks them all),
    and the computations take no input, so no array of the probe stays alive
    for a notebook to see.
    """

    def __init__(self, jax) -> None:
        # with jax_log_compiles on, compiling would log into the cell's output
        quiet = getattr(jax, "log_compiles", lambda _: contextlib.nullcontext())(False)
        with quiet:
            self._programs = [
                jax.jit(_scalar_zero, out_shardings=jax.sharding.SingleDeviceSharding(device))
                .lower().compile()
                for device in jax.local_devices()
            ]

    def __call__(self) -> None:
        for program in self._programs:
            program().block_until_ready()


def _scalar_zero():
    import jax.numpy  # imported by JAX already; traced once, when compiled

    return jax.numpy.zeros((), "float32")
