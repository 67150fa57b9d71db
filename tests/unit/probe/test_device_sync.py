"""``probe/device_sync.py``: preparing the device sync adds nothing to the cell's output."""

from __future__ import annotations

import logging

import pytest

from sphinx_gpu_admonition.probe import (
    device_sync,
)


def test_preparing_the_device_sync_adds_nothing_to_the_cell_output(
        caplog: pytest.LogCaptureFixture) -> None:
    """With ``jax_log_compiles`` on, compiling the sync would log into the cell."""
    jax = pytest.importorskip("jax")
    with jax.log_compiles(True), caplog.at_level(logging.WARNING):
        device_sync.DeviceSync(jax)()
        assert jax.config.jax_log_compiles  # the notebook's setting is kept
    assert not [r for r in caplog.records if "_scalar_zero" in r.getMessage()]
