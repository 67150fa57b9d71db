"""Data kept on the build environment (pickled with it) and per-build state kept on
the application (never pickled): one "get or create" for both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sphinx.environment import BuildEnvironment

T = TypeVar("T")


def env_data(env: BuildEnvironment, attribute: str, factory: Callable[[], T]) -> T:
    """``env.<attribute>``, created with ``factory()`` the first time.

    Plain containers only, so the environment pickles and ``-j N`` merges work;
    each owner clears and merges its attribute in its ``EnvironmentCollector``.
    """
    return _get_or_create(env, attribute, factory)


def per_build(app: Any, attribute: str, factory: Callable[[], T]) -> T:
    """State of this build kept on the application (the main process's, never
    pickled): ``app.<attribute>``, created with ``factory()`` the first time."""
    return _get_or_create(app, attribute, factory)


def _get_or_create(owner: Any, attribute: str, factory: Callable[[], T]) -> T:
    value: Any = getattr(owner, attribute, None)
    if value is None:
        value = factory()
        setattr(owner, attribute, value)
    return value
