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

Other modules read the validated values through :func:`get_config`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, NamedTuple

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from ..model.analysis import Thresholds
from ..model.device import BACKENDS
from .warnings import warn

logger = logging.getLogger(__name__)

PREFIX = "gpu_"

EXECUTION_INFO_POSITIONS = ("top", "bottom", "admonition", "off")

#: the flagging rules' defaults, defined once by the analysis (the command line's too)
_RULES = Thresholds()


class ConfigValueError(ValueError):
    """A configuration value that the extension cannot use."""


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value not in choices:
            raise ConfigValueError(f"must be one of {', '.join(map(repr, choices))}")
        return value

    return check


def _optional_one_of(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    check = _one_of(choices)
    # "" is how ``-D name=`` says None
    return lambda value: None if value is None or value == "" else check(value)


def _from_text(value: Any, parse: Callable[[str], Any]) -> Any:
    """A number given as text (``-D gpu_slow_cell_seconds=30``) parsed; anything else as
    it is.  Text that is no number is returned unchanged, for the check to refuse."""
    if isinstance(value, str):
        try:
            return parse(value.strip())
        except ValueError:
            return value
    return value


def _non_negative_number(value: Any) -> float:
    value = _from_text(value, float)
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value < 0):
        raise ConfigValueError("must be a finite number >= 0")
    return float(value)


def _ratio_above_one(value: Any) -> float:
    number = _non_negative_number(value)
    if number <= 1:
        raise ConfigValueError("must be a number > 1 (for example 1.5 for 50% slower)")
    return number


def _share(value: Any) -> float:
    number = _non_negative_number(value)
    if not 0 < number <= 1:
        raise ConfigValueError("must be a fraction between 0 and 1 (for example 0.5)")
    return number


def _positive_int(value: Any) -> int:
    value = _from_text(value, int)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigValueError("must be an integer >= 1")
    return value


def _optional_seconds(value: Any) -> float | None:
    if value is None or value == "":  # "" is how ``-D name=`` says None
        return None
    number = _non_negative_number(value)
    if number <= 0:
        raise ConfigValueError("must be a number of seconds > 0, or None")
    return number


def _optional_text(value: Any) -> str | None:
    if value is None or value == "":  # "" is how ``-D name=`` says None
        return None
    if not isinstance(value, str):
        raise ConfigValueError("must be a string or None")
    return value


def _colab_template(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if (not isinstance(value, str) or "{path}" not in value
            or not value.startswith(("https://", "http://"))):
        raise ConfigValueError("must be an http(s) address containing {path}, or None")
    return value


def _css_classes(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigValueError("must be a string of CSS classes or a list of strings")
    # ``-D gpu_admonition_class=warning,lecture`` arrives as ["warning", "lecture"];
    # an item "warning lecture" is two classes, as in the string form
    return tuple(name for item in value for name in item.split())


def _flag(value: Any) -> bool:
    if value in ("0", "1"):  # ``-D name=0``: the text Sphinx passes on
        return value == "1"
    if not isinstance(value, bool):
        raise ConfigValueError("must be True or False (0 or 1 with -D)")
    return value


def _auto_or_flag(value: Any) -> str | bool:
    if value in ("0", "1"):  # ``-D name=0``: Sphinx 7.4 passes the text on
        return value == "1"
    if value != "auto" and not isinstance(value, bool):
        raise ConfigValueError("must be 'auto', True or False")
    return value


def _paths(value: Any) -> tuple[str, ...]:
    if value == "":  # ``-D gpu_runtime_sources=``: none
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise ConfigValueError("must be a list of paths (strings)")
    return tuple(value)


def _optional_report_file(suffix: str) -> Callable[[Any], str | None]:
    """A file the build writes into the output folder: a plain, visible name with
    ``suffix``, so it can never replace a page (``index.html``), a folder
    (``_static``) or anything outside the output folder (``..``)."""

    def check(value: Any) -> str | None:
        if value is None or value == "":
            return None
        if (not isinstance(value, str) or "/" in value or "\\" in value
                or value.startswith(".") or not value.endswith(suffix)
                or len(value) == len(suffix) or value != value.strip()):
            raise ConfigValueError(
                f"must be a plain file name ending in {suffix!r} (no folders, not hidden), "
                "or None to disable")
        return value

    return check


class Option(NamedTuple):
    """One configuration value: default, accepted types, validator and help.

    A named tuple: immutable, and cheaper to define than a frozen dataclass (whose
    methods Python generates and compiles at every build's start).
    """

    default: Any
    types: tuple[type, ...]
    validate: Callable[[Any], Any]
    help: str
    rebuild: str = "env"


def _option(default: Any, types: tuple[type, ...], validate: Callable[[Any], Any], help: str,
            rebuild: str = "env") -> Any:
    return dataclasses.field(
        default=default,
        metadata={"option": Option(default, types, validate, help, rebuild)},
    )


@dataclasses.dataclass(frozen=True)
class GpuConfig:
    """Validated values of all ``gpu_*`` options (names without the prefix)."""

    admonition_title: str | None = _option(
        None, (str, type(None)), _optional_text,
        "Default title of the gpu directive; None uses the translated 'GPU'.")
    admonition_body: str | None = _option(
        None, (str, type(None)), _optional_text,
        "Default body (MyST/rST markup) of an empty {gpu} directive that marks the GPU "
        "as optional; None uses the translated standard notice.")
    admonition_required_body: str | None = _option(
        None, (str, type(None)), _optional_text,
        "Default body of an empty {gpu} directive with :required:; None uses the "
        "translated standard notice.")
    admonition_class: tuple[str, ...] = _option(
        ("warning",), (str, list, tuple), _css_classes,
        "CSS classes of every gpu admonition (the default gives theme's warning colours).")
    admonition_runtime: bool = _option(
        False, (bool,), _flag,
        "Every {gpu} notice says how long the page takes to run, and on what (this build "
        "and gpu_runtime_sources); the :runtime: option overrides it.")
    execution_info: str = _option(
        "bottom", (str,), _one_of(EXECUTION_INFO_POSITIONS),
        "Where an executed page says what it ran on: top, bottom, admonition, off.")
    expected_backend: str | None = _option(
        "gpu", (str, type(None)), _optional_one_of(BACKENDS),
        "JAX backend that pages with a {gpu} directive must execute on; anything "
        "else warns (gpu_admonition.backend). None switches the check off.")
    colab_url: str | None = _option(
        None, (str, type(None)), _colab_template,
        "Address of a page's notebook in Colab, with {path} for the page's path without "
        "suffix; the gpu notice links to it. None derives it from html_theme_options "
        "repository_url for .ipynb sources.")
    capture: bool = _option(
        True, (bool,), _flag,
        "Measure cells, backend and device inside each kernel.")
    slow_cell_seconds: float = _option(
        _RULES.slow_cell_seconds, (int, float), _non_negative_number,
        "A cell that runs at least this long is flagged slow.")
    slow_cell_share: float = _option(
        _RULES.slow_cell_share, (int, float), _share,
        "A cell that takes at least this share of its notebook's time is flagged.")
    slow_cell_min_seconds: float = _option(
        _RULES.slow_cell_min_seconds, (int, float), _non_negative_number,
        "Cells faster than this are never flagged by the share or baseline rules.")
    compile_share: float = _option(
        _RULES.compile_share, (int, float), _share,
        "A flagged cell whose JAX compile time is at least this share gets a compile hint.")
    recompile_threshold: int = _option(
        _RULES.recompile_threshold, (int,), _positive_int,
        "A function compiled at least this many times in one cell gets a recompile hint.")
    regression_ratio: float = _option(
        _RULES.regression_ratio, (int, float), _ratio_above_one,
        "A cell or notebook this many times slower than the baseline, beyond the "
        "machine's own slowdown (its calibration), is a regression.")
    status_baseline: str | None = _option(
        None, (str, type(None)), _optional_text,
        "Path (relative to the source folder) of a previous build's execution-status.json.")
    runtime_sources: tuple[str, ...] = _option(
        (), (list, tuple, str), _paths,
        "Paths (relative to the source folder) of other builds' execution-status.json "
        "(for example a GPU and a CPU runner), whose run times the {gpu} notice and "
        "{runtime-all} also state.")
    status_json: str | None = _option(
        "execution-status.json", (str, type(None)), _optional_report_file(".json"),
        "File name of the status JSON in the output folder; None disables it.", "")
    status_junit: str | None = _option(
        "execution-status.junit.xml", (str, type(None)), _optional_report_file(".xml"),
        "File name of the JUnit XML in the output folder; None disables it.", "")
    status_console: bool = _option(
        True, (bool,), _flag, "Print a short execution summary at the end of the build.", "")
    github_annotations: str | bool = _option(
        "auto", (str, bool), _auto_or_flag,
        "GitHub Actions output at the end of the build: annotations at the source of "
        "failed, flagged and regressed cells, a job summary and step outputs; 'auto': "
        "when GITHUB_ACTIONS is 'true'.", "")
    cell_badges: bool = _option(
        False, (bool,), _flag,
        "Show a badge (\"0.50 s, slow\") above each flagged cell on its notebook page, "
        "linking to the cell on the status page. Off by default: on a public lecture "
        "page timings are build information, not content.", "html")
    notebook_budget_seconds: float | None = _option(
        None, (int, float, str, type(None)), _optional_seconds,
        "Time budget of every notebook, in seconds: a notebook that takes longer warns "
        "(gpu_admonition.budget). A page's gpu_budget_seconds metadata overrides it. "
        "None: no budget.")
    warn_slow_cells: bool = _option(
        False, (bool,), _flag,
        "Warn (gpu_admonition.slow_cell) for every flagged cell, so -W fails on them.", "")
    warn_regressions: bool = _option(
        False, (bool,), _flag,
        "Warn (gpu_admonition.regression) for every regression against the baseline.", "")


def options() -> dict[str, Option]:
    """The declared options by name without prefix."""
    return {f.name: f.metadata["option"] for f in dataclasses.fields(GpuConfig)}


def validate(raw: dict[str, Any], report: Callable[[str], None]) -> GpuConfig:
    """Build a :class:`GpuConfig`; each bad value is reported and replaced by its default."""
    values = {}
    for name, option in options().items():
        value = raw.get(name, option.default)
        try:
            values[name] = option.validate(value)
        except ConfigValueError as error:
            report(
                f"invalid value {value!r} for {PREFIX}{name}: {error}; "
                f"using the default {option.default!r}"
            )
            values[name] = option.validate(option.default)
    return GpuConfig(**values)


def _on_config_inited(app: Sphinx, config: Config) -> None:
    raw = {name: config[PREFIX + name] for name in options()}
    validated = validate(raw, lambda message: warn(logger, message, "config"))
    # Store the validated values back, so that env pickles compare equal between
    # builds and Sphinx's own "config changed" detection sees the real values.
    for name in options():
        config[PREFIX + name] = getattr(validated, name)
    config._gpu_admonition = validated  # noqa: SLF001 - our own attribute


def get_config(config: Config) -> GpuConfig:
    """The validated configuration (defaults if ``config-inited`` has not run)."""
    validated = getattr(config, "_gpu_admonition", None)
    if validated is None:
        validated = validate({n: config[PREFIX + n] for n in options()}, lambda m: None)
    return validated


#: the page metadata (MyST front matter, an .ipynb's notebook metadata) that sets a
#: notebook's own time budget, overriding ``gpu_notebook_budget_seconds``
PAGE_BUDGET_KEY = "gpu_budget_seconds"


def page_budget(app: Sphinx, docname: str) -> float | None:
    """The time budget of ``docname``: its ``gpu_budget_seconds`` metadata (MyST front
    matter gives text: ``"60"``), else the book's ``gpu_notebook_budget_seconds``; a bad
    value warns (``budget``) and the book's budget applies.  ``none`` (or an empty
    value) switches the book's budget off for the page."""
    configured = get_config(app.config).notebook_budget_seconds
    metadata = app.env.metadata.get(docname, {})
    if PAGE_BUDGET_KEY not in metadata:
        return configured
    value = metadata[PAGE_BUDGET_KEY]
    if isinstance(value, str) and value.strip().lower() in ("none", "null", "off"):
        return None
    try:
        return _optional_seconds(value.strip() if isinstance(value, str) else value)
    except ConfigValueError as error:
        warn(logger, f"invalid {PAGE_BUDGET_KEY} {value!r}: {error}; using "
                     f"gpu_notebook_budget_seconds ({configured!r})", "budget",
             location=docname)
        return configured


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


__all__ = ["GpuConfig", "get_config", "setup_config", "options", "validate"]
