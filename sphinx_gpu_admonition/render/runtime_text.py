"""How long a page takes to run, in words for readers: the runtime roles' and the
``{gpu}`` notice's texts, for every engine.

Each function takes the engine's translator (``translate``, ``ngettext``; the
Sphinx extension passes its catalog's, the mystmd plugin the same catalog read
with :mod:`gettext`); without one the texts are English.  The literal arguments of
the ``translate(...)`` and ``ngettext(...)`` calls are extracted into the message
catalog (``python -m sphinx_gpu_admonition.ext.i18n``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from ..model import device
from ..model.formatting import format_date, format_seconds
from ..model.record import NotebookRecord
from .labels import NGettext, Translate, english, english_plural

#: role name -> part (the same roles on every engine)
ROLES = {"runtime": "full", "runtime-time": "time", "runtime-device": "device",
         "runtime-all": "all"}
#: role targets that mean the page the role is on
THIS_PAGE = ("this page", ".")


def _rounded(value: float, step: int) -> int:
    """``value`` to the nearest multiple of ``step``, halves up (not to even)."""
    return int(math.floor(value / step + 0.5)) * step


def reader_time(seconds: float, translate: Translate = english,
                ngettext: NGettext = english_plural) -> str:
    """A duration as a reader wants it: "a few seconds", "about 40 seconds",
    "under a minute", "about 2 minutes", "about 25 minutes", "about 3 hours".

    Coarse on purpose: times vary between runs by more than the last digit,
    and a reader only decides whether to wait, take a coffee, or get a GPU.
    """
    if seconds < 10:
        return translate("a few seconds")
    if seconds < 45:
        count = _rounded(seconds, 5 if seconds < 20 else 10)
        return ngettext("about %d second", "about %d seconds", count) % count
    if seconds < 60:
        return translate("under a minute")
    minutes = seconds / 60
    if minutes < 100:
        count = _rounded(minutes, 1 if minutes < 20 else 5)
        return ngettext("about %d minute", "about %d minutes", count) % count
    hours = _rounded(minutes / 60, 1)
    return ngettext("about %d hour", "about %d hours", hours) % hours


def device_kind(record: NotebookRecord) -> str:
    """``"GPU"``, ``"TPU"`` or ``"CPU"``: what a reader needs to run the page like this."""
    return device.device_kind(record.environment)


def device_name(record: NotebookRecord) -> str | None:
    """``"Tesla T4"``, ``"2x NVIDIA H200"`` or ``"AMD EPYC 7763"``; None when unknown."""
    return device.device_name(record.environment)


class Measurement(NamedTuple):
    """One execution of a page as the text states it."""

    record: NotebookRecord
    #: path of the other build's status file; None for this build
    source: str | None = None
    stale: bool = False

    @property
    def device_known(self) -> bool:
        return self.record.measured

    @property
    def device_key(self) -> tuple[str, str | None]:
        return device_kind(self.record), device_name(self.record)


def device_phrase(record: NotebookRecord, translate: Translate = english) -> str:
    """``"a GPU (Tesla T4)"``, ``"a CPU (AMD EPYC 7763)"`` (translated)."""
    return kind_phrase(device_kind(record), device_name(record), translate)


def kind_phrase(kind: str, name: str | None, translate: Translate = english) -> str:
    """:func:`device_phrase` of a device's kind and name (``"GPU"``, ``"Tesla T4"``)."""
    if name:
        return translate("a %(kind)s (%(name)s)") % {"kind": kind, "name": name}
    return translate("a %(kind)s") % {"kind": kind}


def run_phrase(measurement: Measurement, translate: Translate = english,
               ngettext: NGettext = english_plural) -> str:
    """``"about 2 minutes on a GPU (Tesla T4)"``; time only when the device is unknown."""
    time = reader_time(measurement.record.seconds, translate, ngettext)
    if not measurement.device_known:
        return time
    values = {"time": time, "device": device_phrase(measurement.record, translate)}
    if measurement.stale:
        return translate("%(time)s on %(device)s, measured on an earlier version") % values
    return translate("%(time)s on %(device)s") % values


def exact_figures(measurement: Measurement) -> str:
    """The tooltip: ``"88.4 s · GPU: Tesla T4 · 2026-10-04 03:12 · gpu-status.json"``."""
    record = measurement.record
    parts = [format_seconds(record.seconds)]
    if measurement.device_known:
        parts.append(record.environment.device_label)
    parts.append(format_date(record.executed_at))
    if measurement.source:
        parts.append(Path(measurement.source).name)
    return " · ".join(part for part in parts if part)


def separators(count: int, translate: Translate = english) -> list[str]:
    """The ``count - 1`` separators of a list: ``A and B``, ``A, B and C`` (translated)."""
    if count < 2:
        return []
    return [translate(", ")] * (count - 2) + [translate(" and ")]


#: a piece of a sentence of run times: a text, or a measurement and its words (which
#: each engine shows with the exact figures as a tooltip, :func:`exact_figures`)
RunPiece = str | tuple[Measurement, str]


def runs(found: list[Measurement], translate: Translate = english,
         ngettext: NGettext = english_plural) -> list[RunPiece]:
    """``found`` as a list: "about 2 minutes on a GPU (Tesla T4) and about 25 minutes on
    a CPU (...)" (``{runtime-all}``)."""
    pieces: list[RunPiece] = []
    for measurement, separator in zip(found, ["", *separators(len(found), translate)],
                                      strict=True):
        if separator:
            pieces.append(separator)
        pieces.append((measurement, run_phrase(measurement, translate, ngettext)))
    return pieces


def notice_sentence(found: list[Measurement], translate: Translate = english,
                    ngettext: NGettext = english_plural) -> list[RunPiece]:
    """The ``{gpu}`` notice's sentence (``:runtime:``): "It runs in ... ."."""
    # Translators: %(runs)s is a list like "about 2 minutes on a GPU (Tesla T4) and
    # about 25 minutes on a CPU (Intel Xeon)"
    before, _placeholder, after = translate("It runs in %(runs)s.").partition("%(runs)s")
    return [*([before] if before else []), *runs(found, translate, ngettext),
            *([after] if after else [])]


def unknown_time(translate: Translate = english) -> str:
    return translate("an unknown time (not measured yet)")


def unknown_device(translate: Translate = english) -> str:
    return translate("an unknown device")


# -- which records -------------------------------------------------------------------
def usable(record: NotebookRecord | None) -> bool:
    """A record whose time a reader can trust: executed, not a failed run, and a
    time that is a number (other builds' files may be written by hand)."""
    if record is None or not record.executed or record.failed:
        return False
    try:
        seconds = record.seconds
    except TypeError:  # a cell time that is not a number
        return False
    return (isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
            and math.isfinite(seconds) and seconds >= 0)


def _code_lines(record: NotebookRecord) -> list[str]:
    return [cell.first_line for cell in record.cells]


def _timestamp(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_stale(other: NotebookRecord, current: NotebookRecord | None,
             source_mtime: float | None) -> bool:
    """Whether ``other`` (another build's record) measured an earlier version of the page.

    The code cells' first lines are compared when both builds captured cells
    (robust where a fresh checkout gives every source file a new time); else
    the other execution must not be older than the source file.  Unknown
    times count as stale: a label is cheaper than a wrong claim.
    """
    if current is not None and current.measured and current.cells and other.cells:
        return _code_lines(current) != _code_lines(other)
    executed = _timestamp(other.executed_at)
    if executed is None or source_mtime is None:
        return True
    return executed < source_mtime


def stale_pages(other: Mapping[str, NotebookRecord], current: Mapping[str, NotebookRecord],
                source_mtime: Callable[[str], float | None]) -> frozenset[str]:
    """The pages another build (its records by docname) measured in an earlier version
    (:func:`is_stale`; ``source_mtime(docname)``: the page's source file's time, asked
    only where the code cannot tell)."""
    stale = set()
    for docname, record in other.items():
        page = current.get(docname)
        known = page is not None and page.measured and page.cells and record.cells
        if is_stale(record, page, None if known else source_mtime(docname)):
            stale.add(docname)
    return frozenset(stale)


def measurements(current: NotebookRecord | None,
                 others: list[tuple[str, NotebookRecord | None]],
                 source_mtime: float | None) -> list[Measurement]:
    """This build's measurement of a page and other builds' ones (``(path, record)``),
    one per device (kind and name), this build first, stale ones last."""
    found = [Measurement(current)] if usable(current) else []
    for path, other in others:
        if not usable(other) or not other.measured:
            continue  # another build's time without its device tells a reader nothing
        measurement = Measurement(other, path, is_stale(other, current, source_mtime))
        if measurement.device_key not in {m.device_key for m in found if m.device_known}:
            found.append(measurement)
    return sorted(found, key=lambda m: m.stale)
