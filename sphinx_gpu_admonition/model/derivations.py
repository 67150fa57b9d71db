"""What a record builder derives from a page, kept with the page's sidecar.

A page whose notebook is a cache hit has the code, tags and outputs it had when it
ran, and a rebuild asks the same questions of them again: the parse of every cell,
the loops its calls reach, the marks. :func:`kept_or_derived` answers them once per
version of their inputs. It runs a derivation (a function of JSON data and of the
local modules it reads) and keeps its result as an entry of the sidecar (a
:class:`Kept`), keyed by a digest of exactly what it read:

- the inputs it was given (for the record builder, every field of every
  :class:`.enrich.PageCell`: sources, tags, outputs, lines, positions);
- the code that derives (every module of this package's ``model/``, and Python's
  version, whose ``ast`` it reads): another release, or a change to a rule, derives
  again;
- each local module the derivation read, by the digest of its text (or its absence):
  an edited ``mylib.py`` derives again, an unchanged one is read but not parsed.

A rebuild whose digest matches takes the kept result as saved (read through the
model's one validator, as the sidecar's record is); any other derives it again and
marks the entry changed, for the engine to write back. The result's type is a
dataclass of the model, so any field added to it is digested, kept, validated and
restored by construction.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .schema import SchemaError, dumper, load_model

ModuleSource = Callable[[str], "str | None"]
_Result = TypeVar("_Result")


@functools.cache
def code_digest() -> str:
    """The digest of the code that derives: Python's version (its ``ast``) and the text
    of every module of ``model/`` (read once per process: 1 to 2 ms)."""
    digest = hashlib.sha1(f"{sys.version_info[0]}.{sys.version_info[1]}".encode())
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode("utf-8"))
        try:
            digest.update(path.read_bytes())
        except OSError as error:  # a module that cannot be read still names the code
            digest.update(str(error.errno).encode())
    return digest.hexdigest()


def _text_digest(text: str | None) -> str | None:
    if text is None:
        return None
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def inputs_digest(inputs: Any) -> str:
    """The key of a derivation's ``inputs`` (JSON data: lists, tuples, named tuples,
    dicts, scalars) with the code that derives them."""
    text = json.dumps(inputs, separators=(",", ":"), allow_nan=False)
    return hashlib.sha1(f"{code_digest()}\n{text}".encode()).hexdigest()


class Kept:
    """A derivation's entry in a sidecar: the one read from it (None: none, or an earlier
    release's sidecar), then the one to keep there; ``changed``: derived in this build,
    to be written back."""

    def __init__(self, entry: Any = None):
        self.entry: dict[str, Any] | None = entry if isinstance(entry, dict) else None
        self.changed = False


class _Reads:
    """``module_source`` that notes the digest of every module it gives."""

    def __init__(self, module_source: ModuleSource):
        self.module_source = module_source
        self.read: dict[str, str | None] = {}

    def __call__(self, name: str) -> str | None:
        text = self.module_source(name)
        self.read[name] = _text_digest(text)
        return text


def _modules_unchanged(read: Any, module_source: ModuleSource | None) -> bool:
    if not isinstance(read, dict):
        return False
    for name, digest in read.items():
        text = module_source(name) if module_source is not None and isinstance(name, str) \
            else None
        if _text_digest(text) != digest:
            return False
    return True


def _kept_result(kind: type[_Result], kept: Kept | None, key: str,
                 module_source: ModuleSource | None) -> _Result | None:
    entry = kept.entry if kept is not None else None
    if entry is None or entry.get("key") != key or \
            not _modules_unchanged(entry.get("modules"), module_source):
        return None
    try:
        return load_model(kind, entry.get("result"))
    except SchemaError:  # a damaged entry: derived again (and replaced)
        return None


def kept_or_derived(kind: type[_Result], inputs: Any,
                    derive: Callable[[ModuleSource | None], _Result],
                    module_source: ModuleSource | None = None,
                    kept: Kept | None = None) -> _Result:
    """``derive(module_source)`` (a ``kind``, a dataclass of the model, from ``inputs``
    and the local modules it reads through ``module_source``), or the result ``kept``
    holds for the same inputs, code and modules. Derived anew, ``kept`` gets the entry
    to save (``changed``)."""
    key = inputs_digest(inputs)
    found = _kept_result(kind, kept, key, module_source)
    if found is not None:
        return found
    reads = _Reads(module_source) if module_source is not None else None
    result = derive(reads)
    if kept is not None:
        kept.entry = {"key": key, "modules": reads.read if reads is not None else {},
                      "result": dumper(kind)(result)}
        kept.changed = True
    return result
