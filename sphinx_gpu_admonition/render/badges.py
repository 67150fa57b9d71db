"""The badge above a flagged cell on its notebook page: its words for both engines
(:func:`badge_text`), and its HTML on Sphinx (``templates/badge.html``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..model.analysis import Flag
from ..model.formatting import format_percent, format_seconds
from .finding_text import FindingText
from .labels import Labels
from .templates import render as render_template


class BadgeText(NamedTuple):
    #: ``2.30 s, 69% of this page's cell time — slow, large share``
    text: str
    #: every flag with its reason (a tooltip, and text for screen readers)
    reasons: str


def badge_text(seconds: float, part: float | None, flags: Sequence[Flag],
               labels: Labels) -> BadgeText:
    text = format_seconds(seconds)
    if part is not None:
        text += ", " + labels.badge_share.format(share=format_percent(part))
    names = labels.slow_flag_names(list(flags))
    if names:
        text += f" — {names}"
    words = FindingText.of(labels)
    reasons = labels.translate("; ").join(f"{labels.flag_name(f.rule)}: {words.text(f)}"
                                          for f in flags)
    return BadgeText(text, reasons)


def badge_html(seconds: float, part: float | None, flags: Sequence[Flag], href: str | None,
               labels: Labels) -> str:
    """``2.30 s, 69% of this page's cell time — slow, large share (on the status page)``
    linking to the cell's row on the status page; reasons in the tooltip and as text
    for screen readers."""
    words = badge_text(seconds, part, flags, labels)
    return render_template("badge.html", rules=[f.rule for f in flags], href=href,
                           text=words.text, reasons=words.reasons, where=labels.badge_where)
