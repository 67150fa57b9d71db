"""The extension's configuration, declared once as a typed schema.

Every option is a field of :class:`GpuConfig` with its default, the types Sphinx
should accept, a validator and a help text.  :func:`setup_config` registers each
field as ``gpu_<name>`` and validates the whole set at ``config-inited``: a bad
value is reported once (warning type ``gpu_admonition``, subtype ``config``) and
replaced by the default, so a typo never stops a build.

Every option can also be given on the command line, ``sphinx-build -D
gpu_slow_cell_seconds=30``, where Sphinx passes text: numbers given as text are
parsed here (``"30"``, ``"0.5"``), flags take ``0`` / ``1`` (Sphinx's convention for
``-D``), lists take commas (``-D gpu_runtime_sources=gpu.json,cpu.json``) and an
empty value switches an optional setting off.  Bad text is reported like any bad
value.  Sphinx converts ``-D`` text only for some default types (an int, a str, a
list; a float or a tuple is "unsupported", and a flag's "false" would read as
true on Sphinx 7.4), so :func:`setup_config` registers each option with a default
and types for which Sphinx passes the text on unchanged (:func:`_sphinx_default`).

Other modules read the validated values through :func:`get_config`.  The option
table itself is :mod:`..model.settings` (Sphinx-free: the mystmd plugin reads it too).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from ..model.device import BACKENDS
from ..model.settings import (
    EXECUTION_INFO_POSITIONS,
    PAGE_BUDGET_KEY,
    PREFIX,
    ConfigValueError,
    GpuConfig,
    Option,
    options,
    validate,
)
from ..model.settings import page_budget as page_budget_of
from .state import build_state
from .warnings import warn

logger = logging.getLogger(__name__)

def _on_config_inited(app: Sphinx, config: Config) -> None:
    raw = {name: config[PREFIX + name] for name in options()}
    validated = validate(raw, lambda message: warn(logger, message, "config"))
    # Store the validated values back, so that env pickles compare equal between
    # builds and Sphinx's own "config changed" detection sees the real values.
    for name in options():
        config[PREFIX + name] = getattr(validated, name)
    build_state(app).config = validated


def get_config(app: Sphinx) -> GpuConfig:
    """The validated configuration of ``app``'s build (validated silently if
    ``config-inited`` has not run yet)."""
    validated = build_state(app).config
    if validated is None:
        validated = validate({n: app.config[PREFIX + n] for n in options()}, lambda m: None)
    return validated


def page_budget(app: Sphinx, docname: str) -> float | None:
    """The time budget of ``docname``: its ``gpu_budget_seconds`` metadata, else the
    book's ``gpu_notebook_budget_seconds`` (:func:`..model.settings.page_budget`, the
    rule of both engines); a bad value warns (``budget``)."""
    budget, problem = page_budget_of(app.env.metadata.get(docname, {}),
                                     get_config(app).notebook_budget_seconds,
                                     "gpu_notebook_budget_seconds")
    if problem:
        warn(logger, problem, "budget", location=docname)
    return budget


class _DefaultForText:
    """A default Sphinx evaluates (``default(config)``) and for which it passes ``-D``
    text on unchanged: the callable default of :func:`_sphinx_default`."""

    def __init__(self, value: Any):
        self.value = value

    def __call__(self, config: Config) -> Any:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)


def _sphinx_default(option: Option) -> tuple[Any, tuple[type, ...]]:
    """The default and types to register ``option`` with, so that every ``-D`` value
    reaches :func:`validate`.  Sphinx's ``convert_overrides`` (7.4 to 9) refuses a
    float or tuple default ("unsupported type, ignoring"), converts an int itself
    (with its own message for bad text), splits on commas for a list, and turns a
    flag's text other than ``0`` / ``1`` into True (7.4) or an error (8+) unless
    ``str`` is among the types; a callable default's text is passed on."""
    default, types = option.default, option.types
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        return _DefaultForText(default), (*types, str)
    if isinstance(default, tuple):
        return list(default), types
    if bool in types and str not in types:
        return default, (*types, str)
    return default, types


def setup_config(app: Sphinx) -> None:
    for name, option in options().items():
        default, types = _sphinx_default(option)
        app.add_config_value(PREFIX + name, default, option.rebuild, types=types)
    # Priority 400: after Sphinx's own config checks, before other extensions read us.
    app.connect("config-inited", _on_config_inited, priority=400)


__all__ = ["BACKENDS", "EXECUTION_INFO_POSITIONS", "PAGE_BUDGET_KEY", "PREFIX",
           "ConfigValueError", "GpuConfig", "Option", "get_config", "options", "setup_config",
           "validate"]
