"""model/derivations.py and the record builder's page facts (model/enrich.py): what a
page says is derived once per version of the page and kept with its sidecar; a
rebuild of the same page takes it as kept (no parse) and builds the same record, and
any change to what it was derived from derives it again."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sphinx_gpu_admonition.model import derivations
from sphinx_gpu_admonition.model import enrich as enrich_module
from sphinx_gpu_admonition.model.derivations import Kept, kept_or_derived
from sphinx_gpu_admonition.model.enrich import CellFacts, PageCell, PageFacts, enrich, page_facts
from sphinx_gpu_admonition.model.record import CellRecord, NotebookRecord

MODULE = ("from jax import lax\n"
          "def simulate(x):\n    return lax.scan(lambda c, t: (c, c), x, None, length=10)\n")
SOURCES = ("import numpy as np\nimport mylib", "!pip install quantecon",
           "def qm(x):\n    return lax.fori_loop(0, 100, lambda i, v: v * 2, x)",
           "from jax import lax\nimport jax\nqm_cpu = jax.jit(qm, device=jax.devices('cpu')[0])",
           "for i in range(10):\n    y = qm_cpu(float(i))\n    print(float(y))",
           "mylib.simulate(1.0)", "", "1 / 0")


def page(**changes: object) -> list[PageCell]:
    positions = iter(range(len(SOURCES)))  # the cells with code, as the kernel numbers them
    cells = [PageCell(position=next(positions) if source else None, index=2 * n + 1,
                      source=source,
                      tags=("slow-ok",) if n == 1 else ("raises-exception",) if n == 7 else (),
                      line=10 * (n + 1), outputs="0.0\n2.0" if n == 4 else "",
                      traceback="ZeroDivisionError: division by zero" if n == 7 else None)
             for n, source in enumerate(SOURCES)]
    return [cell._replace(**changes) if cell.index == 9 else cell for cell in cells]


def executed() -> NotebookRecord:
    record = NotebookRecord(docname="lecture", status="ok")
    ran = [source for source in SOURCES if source]
    record.cells = [CellRecord(index=None, execution_count=n, seconds=0.1 * n,
                               first_line=source.splitlines()[0],
                               error="ZeroDivisionError" if source == "1 / 0" else None)
                    for n, source in enumerate(ran, 1)]
    return record


class Modules:
    """A folder's local modules, counting what the builder read."""

    def __init__(self, **texts: str):
        self.texts = texts
        self.read: list[str] = []

    def __call__(self, name: str) -> str | None:
        self.read.append(name)
        return self.texts.get(name)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The parses of the notebook's code the builder runs."""
    calls: list[int] = []
    original = enrich_module.read_code

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(enrich_module, "read_code", counted)
    return calls


def enriched(cells: list[PageCell], modules: Modules, kept: Kept | None = None
             ) -> tuple[NotebookRecord, list[str]]:
    record = executed()
    warnings = enrich(record, cells, modules, kept=kept)
    return record, warnings


def saved(kept: Kept) -> Kept:
    """The entry as a later build reads it back from the sidecar's JSON."""
    return Kept(json.loads(json.dumps(kept.entry)))


def test_a_rebuild_of_the_same_page_takes_the_kept_facts_and_builds_the_same_record(parses):
    kept = Kept()
    first, warnings = enriched(page(), Modules(mylib=MODULE), kept)
    assert warnings == [] and kept.changed and parses == [1]
    # the facts are those of the page: loops through the module, twins, marks
    assert first.cells[4].dispatch_loops and first.cells[5].runs[0].module == "mylib"
    assert first.cells[3].device_twins == ["qm"] and first.cells[1].slow_ok
    assert first.cells[6].error_expected and first.user_functions

    again = saved(kept)
    modules = Modules(mylib=MODULE)
    second, warnings = enriched(page(), modules, again)
    assert parses == [1] and not again.changed  # nothing parsed again
    assert "mylib" in modules.read  # the local module is read, to see it is the same
    assert warnings == [] and second.to_dict() == first.to_dict()
    # and it is the record a build that derives everything makes
    assert enriched(page(), Modules(mylib=MODULE))[0].to_dict() == first.to_dict()


@pytest.mark.parametrize("change", [
    {"line": 42}, {"tags": ("slow-ok",)}, {"outputs": "1.0"}, {"source": "mylib.simulate(2.0)"},
    {"index": 30}, {"traceback": "boom"},
], ids=lambda change: next(iter(change)))
def test_any_change_of_a_page_cell_derives_the_facts_again(parses, change):
    kept = Kept()
    enriched(page(), Modules(mylib=MODULE), kept)
    again = saved(kept)
    record, _ = enriched(page(**change), Modules(mylib=MODULE), again)
    assert parses == [1, 1] and again.changed and again.entry["key"] != kept.entry["key"]
    assert record.to_dict() == enriched(page(**change), Modules(mylib=MODULE))[0].to_dict()


@pytest.mark.parametrize("modules", [
    Modules(mylib=MODULE.replace("length=10", "length=20")),  # the module was edited
    Modules(),  # it is gone
    Modules(mylib=MODULE, numpy="def fake(): pass"),  # a local module shadows a library
], ids=["edited", "removed", "appeared"])
def test_a_local_module_that_changed_derives_the_facts_again(parses, modules):
    kept = Kept()
    enriched(page(), Modules(mylib=MODULE), kept)
    again = saved(kept)
    record, _ = enriched(page(), modules, again)
    assert parses == [1, 1] and again.changed
    assert record.to_dict() == enriched(page(), Modules(**modules.texts))[0].to_dict()


def test_facts_of_other_code_or_damaged_ones_are_derived_again(parses, monkeypatch):
    kept = Kept()
    enriched(page(), Modules(mylib=MODULE), kept)
    # another release (or an edited rule) keys its facts with its own code
    monkeypatch.setattr(derivations, "code_digest", lambda: "another release")
    again = saved(kept)
    enriched(page(), Modules(mylib=MODULE), again)
    assert parses == [1, 1] and again.changed
    # a damaged entry (a hostile or truncated cache) is never trusted, never raises
    for damaged in ({**again.entry, "result": {"code_cells": "many"}},
                    {**again.entry, "modules": ["mylib"]}, {"key": 3}, "not an entry"):
        record, warnings = enriched(page(), Modules(mylib=MODULE), Kept(damaged))
        assert warnings == [] and record.cells[5].runs
    assert len(parses) == 6


def test_every_field_of_the_facts_is_kept_and_set_by_its_name():
    """A field added to the facts is digested, kept and restored without more code: every
    field survives the sidecar's JSON, and each named as a record's field is set on it."""
    facts = page_facts(page(), Modules(mylib=MODULE))
    kept = Kept()
    assert kept_or_derived(PageFacts, page(), lambda _source: facts, None, kept) is facts
    restored = kept_or_derived(PageFacts, page(), lambda _source: pytest.fail("derived"),
                               None, saved(kept))
    assert restored == facts
    cell_fields = {field.name for field in dataclasses.fields(CellRecord)}
    copied = {field.name for field in dataclasses.fields(CellFacts)} & cell_fields
    assert copied - {"position"} == set(enrich_module._CELL_FIELDS)
    assert {"runs", "dispatch_loops", "jit_calls", "work", "device_twins", "line",
            "index", "slow_ok", "imports_only", "shell"} <= copied
    assert enrich_module._RECORD_FIELDS == ("user_functions",)


def test_enrich_sets_nothing_of_the_page_that_is_not_a_fact():
    """enrich sees the page only through its facts: on a cell, it sets the facts' fields,
    its position and whether its error was expected, nothing else."""
    blank, record = executed(), enriched(page(), Modules(mylib=MODULE))[0]
    changed = {name for before, after in zip(blank.cells, record.cells, strict=True)
               for name in (field.name for field in dataclasses.fields(CellRecord))
               if getattr(before, name) != getattr(after, name)}
    assert changed <= set(enrich_module._CELL_FIELDS) | {"position", "error_expected"}


def test_a_record_without_cells_that_did_not_fail_takes_nothing_and_parses_nothing(parses):
    record = NotebookRecord(docname="lecture", status="ok", capture="missing")
    kept = Kept()
    assert enrich(record, page(), Modules(mylib=MODULE), kept=kept) == []
    assert parses == [] and not kept.changed and record.user_functions is None
