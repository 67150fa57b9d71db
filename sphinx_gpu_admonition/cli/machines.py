"""The machines a build ran on, as the text tables of ``report`` and ``compare`` show
them (the data and the Markdown are :mod:`..render.summary`'s and
:mod:`..render.markdown`'s)."""

from __future__ import annotations

from typing import Any

from ..render.markdown import machines_markdown
from ..render.summary import MACHINE_FIELDS, machine_summary, machine_value, report_machines
from .output import Style, plural, text_table

__all__ = ["machine_summary", "machine_value", "machines_markdown", "machines_text",
           "report_machines", "MACHINE_FIELDS"]


def machines_text(machines: list[dict[str, Any]], style: Style) -> list[str]:
    if not machines:
        return ["  no machine data (no notebook was captured)"]
    headers = ["", *[f"{m['id']} ({plural(len(m['notebooks']), 'notebook')})" for m in machines]]
    rows = [[label, *[machine_value(m, key) for m in machines]]
            for key, label in MACHINE_FIELDS]
    return text_table(headers, rows, style)
