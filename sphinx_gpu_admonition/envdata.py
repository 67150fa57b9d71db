"""Per-document data kept on the build environment (pickled with it)."""

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
    value: Any = getattr(env, attribute, None)
    if value is None:
        value = factory()
        setattr(env, attribute, value)
    return value
