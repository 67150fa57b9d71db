"""The status page's texts, in the reader's language.

:meth:`Labels.load` takes the translator of the engine that builds the page (the
Sphinx extension passes its catalog's ``translate`` and ``ngettext``); without one
the texts are English, as the command line writes them.  The literal arguments of
the ``translate(...)`` and ``ngettext(...)`` calls are extracted into the message
catalog (``python -m sphinx_gpu_admonition.ext.i18n``), so every text here is in it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..model.analysis import Flag
from ..model.record import (
    CELL_CHANGED,
    ERROR,
    EXCLUDED,
    EXECUTED,
    EXECUTION_OFF,
    KERNEL_CHANGED,
    KERNEL_DIED,
    METADATA_CHANGED,
    OK,
    OUTPUTS_PRESENT,
    TIMEOUT,
    CellName,
    NotebookRecord,
)

Translate = Callable[[str], str]
NGettext = Callable[[str, str, int], str]

#: the status of a notebook that only the baseline has (a row of its own)
GONE = "gone"


def english(text: str) -> str:
    """No translation: the text as written."""
    return text


def english_plural(singular: str, plural: str, count: int) -> str:
    """English plural forms: the singular for 1, else the plural."""
    return singular if count == 1 else plural


class Labels(NamedTuple):
    """Translated texts, looked up once per table.

    A named tuple, not a frozen dataclass: a dataclass's methods are generated and
    compiled at import (import cost).
    """

    notebook: str
    status: str
    executed: str
    time: str
    device: str
    cells: str
    slowest: str
    flags: str
    compile: str
    memory: str
    baseline: str
    ratio: str
    baseline_device: str
    cell: str
    share: str
    source: str
    total: str
    filter: str
    count: str
    caption: str
    status_text: dict[str, str]
    flag_text: dict[str, str]
    new: str
    gone: str
    cache: str
    executed_now: str
    earlier_build: str
    regression: str
    no_jax: str
    no_capture: str
    #: a notebook whose kernel ran but could not be measured: ``capture failed: {message}``
    capture_failed: str
    #: a record with fewer cells than its kernel ran (capture "partial")
    partial_capture: str
    no_records: str
    no_flagged: str
    error_in: str
    why: str
    action: str
    whole_build: str
    details: str
    device_changed: str
    bar: str
    expected_error: str
    only_flagged: str
    badge_share: str
    badge_where: str
    #: how a cell is named: ``cell {number}`` (the record model's CELL_LABEL, translated)
    cell_name: str
    in_total: str
    slowest_notebook: str
    budget_item: str
    #: JAX's own compilations of a cell, as one group in its compile column
    jax_internals: str
    #: the translator the texts came from: for texts with a number, and the headline
    translate: Translate
    ngettext: NGettext

    @classmethod
    def load(cls, translate: Translate = english,
             ngettext: NGettext = english_plural) -> Labels:
        """The texts through ``translate`` (English without one)."""
        return cls(
            notebook=translate("Notebook"),
            status=translate("Status"),
            executed=translate("Executed"),
            time=translate("Time"),
            device=translate("Backend and device"),
            cells=translate("Code cells"),
            slowest=translate("Slowest cell"),
            flags=translate("Flagged cells"),
            compile=translate("JAX compile"),
            memory=translate("Peak memory"),
            baseline=translate("Baseline time"),
            ratio=translate("Ratio"),
            baseline_device=translate("Baseline device"),
            cell=translate("Cell"),
            share=translate("Share"),
            source=translate("First line"),
            # the totals row counts every notebook, whatever the filter shows
            total=translate("All notebooks"),
            filter=translate("Filter notebooks"),
            count=translate("{shown} of {total} notebooks shown"),
            caption=translate("Execution status of the notebooks"),
            status_text={
                OK: translate("ok"), ERROR: translate("error"), TIMEOUT: translate("timeout"),
                KERNEL_DIED: translate("kernel died"),
                OUTPUTS_PRESENT: translate("not executed (outputs present)"),
                EXCLUDED: translate("excluded"),
                EXECUTION_OFF: translate("not executed (execution off)"),
                GONE: translate("gone (only in the baseline)"),
            },
            flag_text={
                "slow": translate("slow"),
                "share": translate("large share"),
                "regression": translate("regression"),
                "compile": translate("compilation"), "recompile": translate("recompilation"),
                "sequential_loop": translate("sequential loop"),
                # Translators: a Python loop calling small compiled functions many times
                "dispatch_loop": translate("loop of small calls"),
                # Translators: a Python loop copying a device value to the host each time
                "host_sync": translate("host sync in a loop"),
                # Translators: a note: such a Python loop on a build that ran on a CPU
                "python_loop": translate("Python loop"),
                # Translators: a function compiled again in a later cell
                "compiled_again": translate("compiled again"),
                "float64": translate("float64 on the GPU"),
                "compilation_cache": translate("no persistent compilation cache"),
                # Translators: a cell tagged slow-ok: a demonstration, slow by design
                "slow_ok": translate("slow on purpose"),
                # Translators: a cell of only imports past the slow limit
                "imports": translate("imports"),
            },
            # Translators: the compilations of JAX's own operations, counted as one group
            jax_internals=translate("JAX internals"),
            new=translate("new"), gone=translate("gone"), cache=translate("from the cache"),
            executed_now=translate("this build"),
            earlier_build=translate("an earlier build"),
            regression=translate("regression"),
            no_jax=translate("no JAX"),
            no_capture=translate("no measurements"),
            # Translators: a notebook that ran but whose cells could not be measured;
            # {message} says why (in English)
            capture_failed=translate("capture failed: {message}"),
            # Translators: the record misses cells the probe could not write
            partial_capture=translate("some cells not measured"),
            no_records=translate("No notebooks have been executed yet."),
            no_flagged=translate("No flagged cells."),
            error_in=translate("in {cell}"),
            why=translate("Why:"),
            action=translate("What to do:"),
            # Translators: a finding about the whole build, not one cell
            whole_build=translate("This build:"),
            details=translate("details"),
            device_changed=translate("device changed"),
            bar=translate("{share} of the slowest notebook's time; {flagged} in flagged cells, "
                          "{compile} compiling in the others"),
            expected_error=translate("expected {error}"),
            only_flagged=translate("only notebooks with flagged cells"),
            badge_share=translate("{share} of this page's cell time"),
            badge_where=translate("(on the status page)"),
            # Translators: the name of a notebook's code cell, numbered from 1
            cell_name=translate("cell {number}"),
            # Translators: the time of every notebook of the build, added up
            in_total=translate("{time} in total"),
            # Translators: the build's slowest notebook, on the status page's first screen
            slowest_notebook=translate("Slowest: {notebook}, {time} ({share} of the build)."),
            # Translators: a notebook over its time budget (gpu_budget_seconds)
            budget_item=translate("{notebook}: took {time}, budget {budget}"),
            translate=translate,
            ngettext=ngettext,
        )

    def not_measured(self, record: NotebookRecord) -> str:
        """Why an executed notebook has no device: ``capture failed: <why>`` when its
        kernel ran but could not be measured, else ``no measurements``."""
        if record.capture == "failed":
            return self.capture_failed.format(message=record.capture_message or "")
        return self.no_capture

    # texts with a count: through ngettext, so that "1 compilation" reads right (and
    # every language gets its own plural forms)
    def compilations_text(self, count: int) -> str:
        """``1 compilation``, ``3 compilations``"""
        return self.ngettext("{count} compilation", "{count} compilations",
                             count).format(count=count)

    def cells_summary(self, count: int, title: str) -> str:
        """``4 code cells of A lecture``"""
        return self.ngettext("{count} code cell of {title}", "{count} code cells of {title}",
                             count).format(count=count, title=title)

    def hidden_text(self, count: int, seconds: str) -> str:
        """The notebooks ``:min-seconds:`` leaves out of the table."""
        return self.ngettext("{count} notebook faster than {seconds} is not listed "
                             "(it is included in the totals).",
                             "{count} notebooks faster than {seconds} are not listed "
                             "(they are included in the totals).",
                             count).format(count=count, seconds=seconds)

    def budget_title(self, count: int) -> str:
        return self.ngettext("%d notebook over its time budget",
                             "%d notebooks over their time budget", count) % count

    def cell_label(self, name: CellName) -> str:
        """``cell 3`` in the reader's language (:attr:`.record.CellName.label`'s twin)."""
        return self.cell_name.format(number=name.number)

    def flag_name(self, rule: str) -> str:
        return self.flag_text.get(rule, rule)

    def flag_names(self, rules: list[str] | tuple[str, ...]) -> str:
        """``slow, large share``: the rules' names, in the given order."""
        return ", ".join(self.flag_name(rule) for rule in rules)

    def slow_flag_names(self, flags: tuple[Flag, ...] | list[Flag]) -> str:
        """The names of the rules that flag a cell (hints left out)."""
        return self.flag_names([f.rule for f in flags if not f.is_hint])

    def status_of(self, record: NotebookRecord) -> str:
        """``error: ZeroDivisionError``, ``ok``: a notebook's status as the table says it."""
        text = self.status_text.get(record.status, record.status)
        if record.status == ERROR and record.error is not None:
            text += f": {record.error.type}"
        return text


def cache_miss_text(record: NotebookRecord, translate: Translate = english,
                    cell_label: Callable[[CellName], str] | None = None) -> str | None:
    """Why ``record``'s notebook executed instead of coming from the jupyter-cache
    (``the code of cell 3 changed``), None when the record says nothing; the cell
    is named by ``cell_label`` (the page's translated name) when it is on the page.
    Only for a notebook this build executed: a record kept from an earlier build
    keeps that build's reason, which is no news now."""
    miss = record.cache_miss
    if miss is None or record.provenance != EXECUTED:
        return None
    cell = miss.cell
    if cell is not None and cell_label is not None:
        name = next((n for n in record.cell_names() if n.label == cell), None)
        cell = cell_label(name) if name is not None else cell
    if miss.reason == CELL_CHANGED:
        if cell is None:
            return translate("a code cell was removed")
        return translate("the code of %s changed") % cell
    if miss.reason == METADATA_CHANGED:
        return translate("the metadata of %s changed") % (cell or translate("a code cell"))
    if miss.reason == KERNEL_CHANGED:
        return translate("the notebook's kernel changed")
    return translate("a new notebook (the cache held no copy of it)")
