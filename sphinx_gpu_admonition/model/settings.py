"""The settings of sphinx-gpu-admonition, declared once as a typed schema, for every
engine.

Every option is a field of :class:`GpuConfig` with its default, the types accepted,
a validator and a help text.  The Sphinx extension registers each field as
``gpu_<name>`` (``ext/config.py``); the mystmd plugin reads the ones that apply to
it from ``myst.yml`` (``mystmd/settings.py``).  :func:`validate` reports a bad value
and replaces it by its default, so a typo never stops a build.  Numbers and flags
given as text (``sphinx-build -D``) are parsed here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any, NamedTuple

from .analysis import Thresholds
from .device import BACKENDS
from .timing_record import ClaimRules

PREFIX = "gpu_"

EXECUTION_INFO_POSITIONS = ("top", "bottom", "admonition", "off")

#: the flagging rules' defaults, defined once by the analysis (the command line's too)
_RULES = Thresholds()
#: the timing claims' defaults, defined once by the claims' rules
_CLAIMS = ClaimRules()


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


def _margin(value: Any) -> float:
    number = _non_negative_number(value)
    if number >= 1:
        raise ConfigValueError("must be a fraction from 0 to below 1 (for example 0.1 for "
                               "10%)")
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


#: the flagging rules' limits: a new value changes no record, only how the records are
#: judged, so no page is read again; the Sphinx adapter rewrites the pages that show
#: the judgement (the status pages, the notebooks' badges) when they change
_JUDGED = ""


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
    explain_recompilations: bool = _option(
        False, (bool,), _flag,
        "Record why JAX compiled a function again (JAX's own explanation: the kernel turns "
        "jax_explain_cache_misses on and keeps its messages out of the outputs); the "
        "recompile and compiled_again findings then say why.")
    slow_cell_seconds: float = _option(
        _RULES.slow_cell_seconds, (int, float), _non_negative_number,
        "A cell that runs at least this long is flagged slow.", _JUDGED)
    slow_cell_share: float = _option(
        _RULES.slow_cell_share, (int, float), _share,
        "A cell that takes at least this share of its notebook's time is flagged.", _JUDGED)
    slow_cell_min_seconds: float = _option(
        _RULES.slow_cell_min_seconds, (int, float), _non_negative_number,
        "Cells faster than this are never flagged by the share or baseline rules.", _JUDGED)
    compile_share: float = _option(
        _RULES.compile_share, (int, float), _share,
        "A flagged cell whose JAX compile time is at least this share gets a compile hint.",
        _JUDGED)
    recompile_threshold: int = _option(
        _RULES.recompile_threshold, (int,), _positive_int,
        "A function compiled at least this many times in one cell gets a recompile hint.",
        _JUDGED)
    regression_ratio: float = _option(
        _RULES.regression_ratio, (int, float), _ratio_above_one,
        "A cell or notebook this many times slower than the baseline, beyond the "
        "machine's own slowdown (the machine factor), is a regression.", _JUDGED)
    status_baseline: str | None = _option(
        None, (str, type(None)), _optional_text,
        "Path (relative to the source folder) of a previous build's execution-status.json.")
    runtime_sources: tuple[str, ...] = _option(
        (), (list, tuple, str), _paths,
        "Paths (relative to the source folder) of other builds' execution-status.json "
        "(for example a GPU and a CPU runner), whose run times the {gpu} notice and "
        "{runtime-all} also state, and against which the timing claims are checked.")
    status_json: str | None = _option(
        "execution-status.json", (str, type(None)), _optional_report_file(".json"),
        "File name of the status JSON in the output folder; None disables it.", "")
    status_junit: str | None = _option(
        "execution-status.junit.xml", (str, type(None)), _optional_report_file(".xml"),
        "File name of the JUnit XML in the output folder; None disables it.", "")
    publish_interpreter_path: bool = _option(
        True, (bool,), _flag,
        "Name the kernel's Python on the status page's package list (:packages:) and in "
        "execution-status.json: relative to the repository inside it, ~/... under the "
        "home folder, else absolute. False leaves it out of every public file.", "html")
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
    claim_much_factor: float = _option(
        _CLAIMS.much_factor, (int, float), _ratio_above_one,
        "A timing claim A << B (A >> B) holds when A is at least this many times faster "
        "(slower) than B.", _JUDGED)
    claim_similar_factor: float = _option(
        _CLAIMS.similar_factor, (int, float), _ratio_above_one,
        "A timing claim A ~ B (about the same) holds when neither takes this many times "
        "as long as the other.", _JUDGED)
    claim_margin: float = _option(
        _CLAIMS.margin, (int, float), _margin,
        "A timing claim whose measured ratio is within this fraction of its bound is "
        "'too close to call' instead of holding or failing, so that a noisy runner cannot "
        "flip its verdict.", _JUDGED)


#: the page metadata that sets a notebook's own time budget, overriding
#: ``gpu_notebook_budget_seconds``: a key of its own (MyST front matter, an .ipynb's
#: notebook metadata) or one of its ``options`` (mystmd's free mapping of a page's
#: front matter, where a key of its own warns "extra key ignored")
PAGE_BUDGET_KEY = "gpu_budget_seconds"
PAGE_OPTIONS_KEY = "options"
#: the texts that switch the book's budget off for a page
_NO_BUDGET = ("none", "null", "off")


def page_budget(metadata: Any, book_budget: float | None,
                book_option: str) -> tuple[float | None, str | None]:
    """The time budget of a page with ``metadata`` (its front matter) and the warning
    about it: its ``gpu_budget_seconds`` (text too: MyST front matter gives ``"60"``),
    else the book's budget (``book_option``, as the book names it); a bad value warns
    and the book's budget applies; ``none`` (or an empty value) switches it off."""
    found = metadata if isinstance(metadata, dict) else {}
    if PAGE_BUDGET_KEY not in found:
        options_ = found.get(PAGE_OPTIONS_KEY)
        if isinstance(options_, str):  # Sphinx's metadata holds a nested value as JSON
            with contextlib.suppress(ValueError):
                options_ = json.loads(options_)
        found = options_ if isinstance(options_, dict) else {}
    if PAGE_BUDGET_KEY not in found:
        return book_budget, None
    value = found[PAGE_BUDGET_KEY]
    if isinstance(value, str) and value.strip().lower() in _NO_BUDGET:
        return None, None
    try:
        return _optional_seconds(value.strip() if isinstance(value, str) else value), None
    except ConfigValueError as error:
        return book_budget, (f"invalid {PAGE_BUDGET_KEY} {value!r}: {error}; using "
                             f"{book_option} ({book_budget!r})")


def budget_line(text: str) -> int:
    """The line of a text notebook's ``gpu_budget_seconds`` (else 1: the notebook as a
    whole, the book's budget), where a budget warning points."""
    return next((number for number, line in enumerate(text.splitlines(), 1)
                 if line.lstrip().startswith(PAGE_BUDGET_KEY)), 1)


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
