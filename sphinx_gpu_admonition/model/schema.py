"""The generic JSON loader and dumper of the record model: one validator.

Loading checks every value against the model dataclasses' field types
(:func:`load_model`): a bad value raises :class:`SchemaError` naming its path
(``notebooks[3].cells[2].seconds: not a number``), never a ``TypeError`` later.
Dumping is specialised per class from the same field types (:func:`dumper`).
Nothing here knows a field of the model: :mod:`.record` declares them.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import operator
import re
import reprlib
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

# Limits of what a loaded document may hold: far above any real book, low enough
# that a corrupt or hostile file cannot exhaust memory or the recursion limit, and
# that sums of times cannot overflow to infinity.
MAX_FILE_BYTES = 64 * 2**20
MAX_STRING_CHARS = 100_000
MAX_NUMBER = 1e15
#: nesting of the free-form parts (``build``, ``analysis``); the model itself is 6 deep
MAX_DEPTH = 32


class SchemaError(ValueError):
    """Data that is not an execution-status document this version can read.

    The message names the field (``notebooks[3].cells[2].seconds: not a number``);
    :func:`read_status` prefixes the file.  :attr:`keys` is the same path as the keys
    and positions that lead to the bad value from the data given (``("cells", 2,
    "seconds")``), for a reader that repairs it.
    """

    keys: tuple[str | int, ...] = ()


def choices(values: tuple[str, ...], **field_options: Any) -> Any:
    """A dataclass field whose value must be one of ``values`` (checked on loading)."""
    return dataclasses.field(metadata={"choices": values}, **field_options)


_Model = TypeVar("_Model")


class ModelObject:
    """A dataclass of the model (:func:`model_class`): its ``__eq__`` and ``__repr__``
    are the ones ``dataclasses.dataclass`` writes for each class (the fields compared
    in order, as a tuple, with an object of the same class; ``Name(field=value,
    ...)``), written once here."""

    #: mutable and compared by value, so not hashable (as a dataclass with ``eq``)
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        values = _field_values(self.__class__)
        return values(self) == values(other)

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}"
                           for name in _field_names(self.__class__))
        return f"{self.__class__.__qualname__}({fields})"


class Loadable(ModelObject):
    """A dataclass of the model, loaded from JSON data by :func:`load_model`."""

    @classmethod
    def from_dict(cls: type[_Model], data: Any, where: str = "") -> _Model:
        """Checked against the model's field types; raises :class:`SchemaError`."""
        return load_model(cls, {} if data is None else data, where)


def model_class(cls: type[_Model]) -> type[_Model]:
    """``dataclasses.dataclass`` for a :class:`ModelObject`, which has its ``__eq__``
    and ``__repr__`` already.

    A dataclass compiles each method it writes with ``exec`` when its module is
    imported. ``__init__`` depends on the fields; the other two are the same for every
    class, so only ``__init__`` is compiled: a cost every build, plugin server and
    command pays at its start (measured in ``docs/performance.md``, "Cache-hit
    rebuilds: the import, the loader"). Every field is compared and shown (no
    ``compare=False`` or ``repr=False``: such a class stays a plain dataclass).
    """
    made = dataclasses.dataclass(repr=False, eq=False)(cls)
    if not issubclass(made, ModelObject) or any(
            not field.compare or not field.repr for field in dataclasses.fields(made)):
        raise TypeError(f"{cls.__qualname__}: model_class takes a ModelObject whose every "
                        "field is compared and shown")  # a bug in the model
    return made


#: the values :func:`plain_data` returns as they are (immutable)
_SCALARS = frozenset({str, int, float, bool, type(None)})


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(cls))


@functools.cache
def _field_values(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of an object's field values, in their order."""
    names = _field_names(cls)
    return operator.attrgetter(*names) if len(names) > 1 else \
        (lambda value: (getattr(value, names[0]),) if names else ())


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    """The field types of a model class, resolved once: the annotations are text
    (``from __future__ import annotations``), and resolving compiles each of them
    (the loader and the dumper both need them: 2 ms of a build, twice)."""
    return typing.get_type_hints(cls)


def plain_data(value: Any) -> Any:
    """``dataclasses.asdict`` of a model object, the same dicts and lists, several
    times faster (it runs for every record a build stores and writes): the model
    holds dataclasses, lists, dicts and JSON scalars only."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [plain_data(item) for item in value]
    if kind is dict:
        return {plain_data(key): plain_data(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: plain_data(getattr(value, name)) for name in _field_names(kind)}
    # anything else as asdict makes it
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return kind(*[plain_data(item) for item in value])
    if isinstance(value, (list, tuple)):
        return kind(plain_data(item) for item in value)
    if isinstance(value, dict):
        return kind((plain_data(key), plain_data(item)) for key, item in value.items())
    return copy.deepcopy(value)


Dumper = Callable[[Any], Any]


def _optional_inner(hint: Any) -> Any:
    """``X`` of the field type ``X | None`` (every union of the model is one), else
    None."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return None
    (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    return inner


@functools.cache
def dumper(hint: Any) -> Dumper | None:
    """:func:`plain_data` for a value of the model type ``hint``, specialised from the
    field types once per type (None: the value is kept as it is, a JSON scalar).

    The status JSON converts every record of the book; walking the values and asking
    each for its type, as :func:`plain_data` does, took twice as long.
    """
    origin = typing.get_origin(hint)
    inner = _optional_inner(hint)
    if inner is not None:
        dump_inner = dumper(inner)
        if dump_inner is None:
            return None
        return lambda value: None if value is None else dump_inner(value)
    if hint in (str, int, float, bool):
        return None
    if dataclasses.is_dataclass(hint):
        return _object_dumper(hint)  # type: ignore[arg-type]
    if origin is list:
        dump_item = dumper(typing.get_args(hint)[0])
        if dump_item is None:
            return list
        return lambda value: [dump_item(item) for item in value] if value else []
    if origin is dict:
        dump_value = dumper(typing.get_args(hint)[1])
        if dump_value is None:
            return dict
        return lambda value: {key: dump_value(item) for key, item in value.items()}
    return plain_data  # free-form (``Any``)


def _object_dumper(cls: type) -> Dumper:
    hints = _field_types(cls)
    names = _field_names(cls)
    fields = tuple((name, dumper(hints[name])) for name in names)
    values = operator.attrgetter(*names) if len(names) > 1 else \
        (lambda value: (getattr(value, names[0]),))
    # the fields kept as they are go into the dict at C speed, the others are
    # converted in place (the dict keeps the fields' order)
    converted = tuple((name, dump_field) for name, dump_field in fields
                      if dump_field is not None)

    def dump(value: Any) -> dict[str, Any]:
        data = dict(zip(names, values(value), strict=True))
        for name, dump_field in converted:
            data[name] = dump_field(data[name])
        return data

    return dump


# -- loading: one validator, derived from the dataclasses' field types ------------------
_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _Invalid(Exception):
    """A bad value deep in a document; the path to it is collected on the way up."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem
        self.steps: list[str] = []  # innermost first: "seconds", "[2]", "cells", ...
        self.keys: list[Any] = []  # the same steps as keys: "seconds", 2, "cells", ...

    def step(self, text: str, key: Any) -> None:
        self.steps.append(text)
        self.keys.append(key)

    def path(self, where: str) -> str:
        path = where
        for step in reversed(self.steps):
            path += step if step.startswith("[") or not path else f".{step}"
        return path or "the document"


def short_repr(value: Any) -> str:
    """A value as an error message shows it: short, one line, escaped."""
    if isinstance(value, (dict, list)):
        return _JSON_NAMES[type(value)]
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _wrong_type(expected: str, value: Any) -> _Invalid:
    got = _JSON_NAMES.get(type(value), type(value).__name__)
    shown = "" if isinstance(value, (dict, list, type(None))) else f": {short_repr(value)}"
    return _Invalid(f"not {expected} (got {got}{shown})")


def load_model(cls: type[_Model], data: Any, where: str = "") -> _Model:
    """``cls`` (a dataclass of the model) from JSON data, every field checked.

    Types come from the field annotations; numbers must be finite, not negative and
    at most :data:`MAX_NUMBER`; strings at most :data:`MAX_STRING_CHARS` and valid
    Unicode; ``choices`` fields one of their values.  Unknown keys are ignored (a
    newer writer may add fields), a missing field takes its default, and null where
    an object or array is expected reads as empty.  Raises :class:`SchemaError`
    naming the field path (``where`` is the path of ``data`` itself).
    """
    try:
        return _loader(cls)(data)
    except _Invalid as error:
        problem = SchemaError(f"{error.path(where)}: {error.problem}")
        problem.keys = tuple(reversed(error.keys))
        raise problem from None


Loader = Callable[[Any], Any]
#: a key a JSON object does not have
_ABSENT = object()


@functools.cache
def _loader(hint: Any, minimum: float = 0, allowed: tuple[str, ...] | None = None) -> Loader:
    """The function that checks and converts one value of type ``hint`` (built once)."""
    origin = typing.get_origin(hint)
    inner = _optional_inner(hint)
    if inner is not None:
        load_inner = _loader(inner, minimum, allowed)
        return lambda value: None if value is None else load_inner(value)
    if hint is Any:
        return _free_form
    if dataclasses.is_dataclass(hint):
        return _object_loader(hint)  # type: ignore[arg-type]
    if origin is list:  # ``minimum`` and ``allowed`` apply to the items
        load_item = _loader(typing.get_args(hint)[0], minimum, allowed)
        return functools.partial(_load_list, load_item)
    if origin is dict:
        load_item = _loader(typing.get_args(hint)[1], minimum, allowed)
        return functools.partial(_load_dict, load_item)
    if hint is str:
        return functools.partial(_load_string, allowed)
    if hint is int:
        return functools.partial(_load_integer, minimum)
    if hint is float:
        return _load_float
    if hint is bool:
        return _load_boolean
    raise TypeError(f"no loader for the model type {hint!r}")  # a bug in the model


def _object_loader(cls: type) -> Loader:
    hints = _field_types(cls)
    fields = []
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        # an optional field's null is read here, its value by the loader of ``X``
        # (what :func:`_loader` of ``X | None`` does, without a call per field)
        inner = _optional_inner(hint)
        base = hint if inner is None else inner
        minimum = field.metadata.get("minimum", 0)
        allowed = field.metadata.get("choices")
        simple = base if base in (bool, int, str) else list if \
            typing.get_origin(base) is list else None
        fields.append((field.name, _loader(base, minimum, allowed),
                       field.default is dataclasses.MISSING
                       and field.default_factory is dataclasses.MISSING,
                       inner is not None, simple, minimum, allowed))

    def load(data: Any) -> Any:
        if data is None:
            data = {}
        elif not isinstance(data, dict):
            raise _wrong_type("an object", data)
        values = {}
        for name, load_field, required, optional, simple, minimum, allowed in fields:
            value = data.get(name, _ABSENT)
            if value is None and optional:
                values[name] = None
            # most values of a record are flags, counts, names and empty lists: those
            # that pass their field's checks are taken here, without a call (the same
            # checks as _load_boolean, _load_integer, _load_string and _load_list's)
            elif value.__class__ is simple and (
                    simple is bool
                    or (simple is int and minimum <= value <= MAX_NUMBER)
                    or (simple is str and len(value) <= MAX_STRING_CHARS and value.isascii()
                        and (allowed is None or value in allowed))):
                values[name] = value
            elif simple is list and value.__class__ is list and not value:
                values[name] = []
            elif value is not _ABSENT:
                try:
                    values[name] = load_field(value)
                except _Invalid as error:
                    error.step(name, name)
                    raise
            elif required:
                error = _Invalid("missing")
                error.step(name, name)
                raise error
        return cls(**values)

    return load


def _load_list(load_item: Loader, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _wrong_type("an array", value)
    if not value:  # most of a record's lists (a cell's loops, calls, ...)
        return []
    result = []
    for position, item in enumerate(value):
        try:
            result.append(load_item(item))
        except _Invalid as error:
            error.step(f"[{position}]", position)
            raise
    return result


def _load_dict(load_item: Loader, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong_type("an object", value)
    result = {}
    for key, item in value.items():
        try:
            result[_load_string(None, key)] = load_item(item)
        except _Invalid as error:
            error.step(f"[{short_repr(key)}]", key)
            raise
    return result


def _load_string(allowed: tuple[str, ...] | None, value: Any) -> str:
    if type(value) is not str:
        raise _wrong_type("a string", value)
    if len(value) > MAX_STRING_CHARS:
        raise _Invalid(f"a string of {len(value)} characters (at most {MAX_STRING_CHARS})")
    if not value.isascii() and _LONE_SURROGATE.search(value):  # isascii: a flag
        raise _Invalid("not valid Unicode (a lone surrogate)")
    if allowed is not None and value not in allowed:
        raise _Invalid(f"{short_repr(value)} is not one of {', '.join(allowed)}")
    return value


def _load_integer(minimum: float, value: Any) -> int:
    if type(value) is not int:
        raise _wrong_type("an integer", value)
    _check_range(value, minimum)
    return value


def _load_boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise _wrong_type("a boolean", value)
    return value


def _load_float(value: Any) -> float:
    if type(value) is not float and type(value) is not int:
        raise _wrong_type("a number", value)
    _check_range(value, 0)
    return float(value)


def _check_range(value: float, minimum: float) -> None:
    if not minimum <= value <= MAX_NUMBER:  # False for NaN
        if not math.isfinite(value):
            raise _Invalid(f"not a finite number (got {value!r})")
        if value < minimum:
            raise _Invalid(f"{value!r} is below {minimum!r}")
        raise _Invalid(f"{value!r} is too large (at most {MAX_NUMBER:g})")


def _free_form(value: Any) -> Any:
    """JSON of any shape (``build``, ``analysis``), walked without recursion."""
    pending: list[tuple[Any, list[str], list[Any]]] = [(value, [], [])]
    while pending:
        item, steps, keys = pending.pop()
        try:
            if len(steps) > MAX_DEPTH:
                raise _Invalid(f"nested deeper than {MAX_DEPTH} levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    _load_string(None, key)
                    pending.append((child, [*steps, f"[{short_repr(key)}]"], [*keys, key]))
            elif isinstance(item, list):
                pending.extend((child, [*steps, f"[{i}]"], [*keys, i])
                               for i, child in enumerate(item))
            elif isinstance(item, str):
                _load_string(None, item)
            elif isinstance(item, float) and not math.isfinite(item):
                raise _Invalid(f"not a finite number (got {item!r})")
            elif type(item) is int and abs(item) > MAX_NUMBER:
                raise _Invalid(f"{item!r} is too large (at most {MAX_NUMBER:g})")
        except _Invalid as error:
            error.steps.extend(reversed(steps))
            error.keys.extend(reversed(keys))
            raise
    return value
