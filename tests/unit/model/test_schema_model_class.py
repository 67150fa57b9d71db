"""``model_class`` (``model/schema.py``): the model's dataclasses compare, print and hash
as the dataclasses ``dataclasses.dataclass`` would write, with ``__eq__`` and
``__repr__`` written once in ``ModelObject`` instead of compiled for every class."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from sphinx_gpu_admonition.model import (
    analysis,
    enrich,
    findings,
    merge,
    page_claims,
    record,
    schema,
    timing_record,
)
from sphinx_gpu_admonition.model.record import CellRecord, Environment, Host, NotebookRecord
from sphinx_gpu_admonition.model.schema import ModelObject, model_class


@model_class
class _Made(ModelObject):
    name: str
    cells: list[int] = dataclasses.field(default_factory=list)
    seconds: float | None = None


@dataclasses.dataclass
class _Plain:
    name: str
    cells: list[int] = dataclasses.field(default_factory=list)
    seconds: float | None = None


def _pairs() -> list[tuple[object, object]]:
    return [(_Made(name, cells, seconds), _Plain(name, cells, seconds))
            for name, cells, seconds in (("a", [1, 2], 1.5), ("b", [], None),
                                         ("it's \n", [3], float("nan")))]


def test_equality_and_text_are_those_of_a_dataclass() -> None:
    pairs = _pairs()
    for made, plain in pairs:
        assert repr(made).replace("_Made", "_Plain") == repr(plain)
        for other_made, other_plain in pairs:
            assert (made == other_made) == (plain == other_plain)
        assert made == dataclasses.replace(made)  # the same values, another object
        assert made != plain  # another class is never equal, as with dataclasses
        assert (made == 1) is False and (made != 1) is True
    assert _Made("a", [1]) != _Made("a", [2])
    assert _Made("a", [1], 2.0) == _Made("a", [1], 2)  # as tuples compare


def test_not_hashable_fields_and_init_as_a_dataclass() -> None:
    assert issubclass(schema.Loadable, ModelObject)  # every class read from JSON is one
    with pytest.raises(TypeError):
        hash(_Made("a"))
    assert [field.name for field in dataclasses.fields(_Made)] == ["name", "cells", "seconds"]
    assert str(inspect.signature(_Made)) == str(inspect.signature(_Plain))
    assert _Made.__match_args__ == _Plain.__match_args__
    made = _Made("a")
    made.cells.append(1)
    assert _Made("a").cells == []  # each object its own default list
    assert pickle.loads(pickle.dumps(made)) == made


def test_a_record_reads_back_equal_and_prints_as_before() -> None:
    cell = CellRecord(index=0, execution_count=1, first_line="x = 1", seconds=0.5)
    notebook = NotebookRecord(docname="intro", status="ok", cells=[cell],
                              environment=Environment(host=Host(cores=2)))
    again = NotebookRecord.from_dict(notebook.to_dict())
    assert again == notebook and again is not notebook
    again.cells[0].seconds = 0.6
    assert again != notebook
    assert repr(cell).startswith("CellRecord(index=0, execution_count=1, ")
    assert "host=Host(cpu=None, cores=2, " in repr(notebook)


def test_every_dataclass_of_the_record_and_the_analysis_is_a_model_class() -> None:
    """The classes every build loads (the records, the analysis): a plain dataclass among
    them would compile its own methods again."""
    for module in (record, timing_record, page_claims, enrich, analysis, findings, merge):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__ \
                    and not cls.__dataclass_params__.frozen:
                assert issubclass(cls, ModelObject), cls


def test_a_class_it_cannot_serve_is_refused() -> None:
    class Plain:
        name: str

    with pytest.raises(TypeError, match="ModelObject"):
        model_class(Plain)

    class Hidden(ModelObject):
        name: str
        cache: dict[str, int] = dataclasses.field(default_factory=dict, compare=False)

    with pytest.raises(TypeError, match="compared and shown"):
        model_class(Hidden)
