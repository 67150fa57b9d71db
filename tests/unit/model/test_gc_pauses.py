"""The collector paused for a burst of the extension's work (``model/gc_pauses.py``): off
inside, and the user's process left as it was, also when the burst raises."""

from __future__ import annotations

import gc

import pytest

from sphinx_gpu_admonition.model.gc_pauses import gc_paused


@pytest.fixture(autouse=True)
def _collector_restored():
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()


def test_no_collection_runs_inside_and_the_collector_runs_again_after() -> None:
    gc.enable()
    before = sum(generation["collections"] for generation in gc.get_stats())
    with gc_paused():
        assert not gc.isenabled()
        garbage = [[index] for index in range(50_000)]  # many young collections' worth
        del garbage
        assert sum(generation["collections"] for generation in gc.get_stats()) == before
    assert gc.isenabled()


def test_a_burst_that_raises_leaves_the_collector_on() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("the record could not be built")
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()
