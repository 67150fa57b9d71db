"""How a build was judged, kept in its status file: the thresholds, the rule settings
and the baseline its analysis used (and ``build.engine``).

Every engine writes :func:`build_fields` into ``build``; ``report``, ``compare`` and
``merge`` start from :func:`judged_by` of the file they read (command-line options
override a value), so that ``report`` on a build's file flags what the build
flagged. A status file of an earlier release has none of them: the defaults apply.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, NamedTuple

from .analysis import Thresholds
from .device import BACKENDS
from .files import read_status, repository_path
from .record import StatusReport
from .schema import SchemaError, short_repr
from .settings import ConfigValueError, options


class Rules(NamedTuple):
    """The rule settings of a build beside its thresholds (the options of the same name)."""

    #: every flagged cell warned (``gpu_warn_slow_cells``): with ``-W`` / ``--strict``
    #: each failed the build
    warn_slow_cells: bool = False
    #: every regression warned (``gpu_warn_regressions``)
    warn_regressions: bool = False
    #: the JAX backend pages with a ``{gpu}`` notice were expected to run on
    expected_backend: str | None = "gpu"


class BaselineUsed(NamedTuple):
    """The baseline a build compared with (``gpu_status_baseline``)."""

    #: its path as the build named it: relative to the repository root inside it
    path: str
    #: ``sha256:<hex>`` of the file's bytes: a file of that path and digest is it
    digest: str
    #: its own ``build.created``
    created: str | None = None


class Judging(NamedTuple):
    """What a status file says about how it was judged (defaults where it says nothing)."""

    thresholds: Thresholds = Thresholds()
    rules: Rules = Rules()
    baseline: BaselineUsed | None = None
    #: the build's status file holds its thresholds (else they are the defaults)
    stored: bool = False


def file_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def baseline_used(path: str, data: bytes, created: Any) -> BaselineUsed:
    return BaselineUsed(path, file_digest(data), created if isinstance(created, str) else None)


class LoadedBaseline(NamedTuple):
    """A build's baseline as it read it: the report, what the status file keeps of it
    (:class:`BaselineUsed`), or why it is ignored (one warning)."""

    report: StatusReport | None = None
    used: BaselineUsed | None = None
    problem: str | None = None


def load_baseline(path: Path | None, option: str,
                  own_output: Path | None = None) -> LoadedBaseline:
    """The baseline ``path`` (absolute; None: no baseline), named by the setting
    ``option`` in the warning of a file that is missing, unreadable, not a status file
    or ``own_output`` (the status file the build writes: every build would compare with
    itself); the rule of both engines."""
    if path is None:
        return LoadedBaseline()
    if own_output is not None and path == own_output:
        return LoadedBaseline(problem=(
            f"{option} ignored: {path} is this build's own output; copy a build's "
            "execution-status.json elsewhere (for example into _static/) to compare "
            "against it"))
    try:
        report = read_status(path)
        data = path.read_bytes()
    except (SchemaError, OSError) as error:
        return LoadedBaseline(problem=(f"{option} ignored, the page renders without "
                                       f"comparison: {error}"))
    return LoadedBaseline(report, baseline_used(repository_path(path), data,
                                                report.build.get("created")))


def build_fields(thresholds: Thresholds, rules: Rules,
                 baseline: BaselineUsed | None) -> dict[str, Any]:
    """The ``build`` entries of a status file that say how it was judged."""
    return {"thresholds": thresholds._asdict(), "rules": rules._asdict(),
            "baseline": baseline._asdict() if baseline is not None else None}


def _threshold(name: str, value: Any) -> Any:
    """``value`` checked as the option of the same name checks it (as a number: a file
    holds no text for one)."""
    wanted = int if isinstance(Thresholds._field_defaults[name], int) else (int, float)
    if isinstance(value, bool) or not isinstance(value, wanted):
        raise ConfigValueError("must be an integer" if wanted is int else "must be a number")
    option = options().get(name)
    if option is not None:
        return option.validate(value)
    if not (math.isfinite(value) and value >= 0):  # the cache rule's, not an option
        raise ConfigValueError("must be a finite number >= 0")
    return float(value)


def judged_by(build: dict[str, Any]) -> Judging:
    """The thresholds, rules and baseline ``build`` stores; :class:`SchemaError`
    naming the field for a value no build writes."""
    stored = build.get("thresholds")
    thresholds = Thresholds()
    if stored is not None:
        if not isinstance(stored, dict):
            raise SchemaError(f"build.thresholds: not an object (got {short_repr(stored)})")
        values = {}
        for name in Thresholds._fields:
            if name in stored:
                try:
                    values[name] = _threshold(name, stored[name])
                except ConfigValueError as error:
                    raise SchemaError(f"build.thresholds.{name}: {error} (got "
                                      f"{short_repr(stored[name])})") from None
        thresholds = thresholds._replace(**values)
    return Judging(thresholds, _rules(build.get("rules")), _baseline(build.get("baseline")),
                   stored is not None)


def _rules(stored: Any) -> Rules:
    if stored is None:
        return Rules()
    if not isinstance(stored, dict):
        raise SchemaError(f"build.rules: not an object (got {short_repr(stored)})")
    values: dict[str, Any] = {}
    for name in ("warn_slow_cells", "warn_regressions"):
        if name in stored:
            if not isinstance(stored[name], bool):
                raise SchemaError(f"build.rules.{name}: not a boolean (got "
                                  f"{short_repr(stored[name])})")
            values[name] = stored[name]
    if "expected_backend" in stored:
        backend = stored["expected_backend"]
        if backend is not None and backend not in BACKENDS:
            raise SchemaError(f"build.rules.expected_backend: not one of "
                              f"{', '.join(BACKENDS)} or null (got {short_repr(backend)})")
        values["expected_backend"] = backend
    return Rules(**values)


def _baseline(stored: Any) -> BaselineUsed | None:
    if stored is None:
        return None
    if not isinstance(stored, dict) or not isinstance(stored.get("path"), str) \
            or not isinstance(stored.get("digest"), str):
        raise SchemaError("build.baseline: not an object with a path and a digest (got "
                          f"{short_repr(stored)})")
    created = stored.get("created")
    return BaselineUsed(stored["path"], stored["digest"],
                        created if isinstance(created, str) else None)


def find_baseline(baseline: BaselineUsed, near: Path) -> Path | None:
    """The file the build compared with, where it still is: its path from the current
    folder (the repository root, as the build named it) or from the folder of the
    status file ``near``, with the same digest; None: not there, or changed since."""
    for folder in (Path.cwd(), near.parent):
        path = folder / baseline.path
        try:
            if path.is_file() and file_digest(path.read_bytes()) == baseline.digest:
                return path
        except OSError:
            continue
    return None
