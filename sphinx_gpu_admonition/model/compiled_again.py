"""A function of the user's compiled in a later cell again, and why.

The second call of a function was meant to be warm; JAX compiled it again because
its inputs changed (``f32[10000]``, before ``f32[1000]``: the probe read the types
of each compiled program's inputs, :attr:`.record.CellRecord.compiled_inputs`),
because the code made the function anew (a ``jax.jit`` of a lambda inside the
function the cell calls: :attr:`.record.JitCall.recreated`), or with the same input
types (a static argument's new value, a new function object).  Each cause has its
own action (:mod:`..render.finding_text`): pad or bucket the sizes, jit once at the
top level, keep the static arguments.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .compilations import (
    changed_inputs,
    compiled_function,
    compiled_inputs,
    jax_reasons,
    user_compilations,
)
from .record import CellRecord, JitCall, NotebookRecord
from .rules import Flag, Rule

#: the compiled name of every lambda: two of them are one function only where the
#: parse saw both made by the same ``jax.jit`` (:func:`again_functions`)
LAMBDA = "<lambda>"


def _site(jit: JitCall) -> tuple[int | None, str | None, int]:
    return jit.defined_cell, jit.module, jit.line


def _remade(cell: CellRecord, name: str) -> JitCall | None:
    """The jit the cell runs that makes ``name`` anew on every call, if any."""
    function = compiled_function(name)
    return next((jit for jit in cell.jit_calls if jit.function == function and jit.recreated),
                None)


class _Earlier(NamedTuple):
    """What the cells before one compiled, read in one pass."""

    #: compiled name -> the first cell that compiled it
    first: dict[str, CellRecord]
    #: where a recreated lambda is jitted -> the first cell that ran that jit
    lambdas: dict[tuple[int | None, str | None, int], CellRecord]
    #: compiled name -> the input types of its last compilation and that cell
    inputs: dict[str, tuple[list[str], CellRecord]]


def _earlier(cell: CellRecord, notebook: NotebookRecord) -> _Earlier:
    earlier = _Earlier({}, {}, {})
    for other in notebook.cells:
        if other is cell:
            break
        for name in other.compilations:
            earlier.first.setdefault(name, other)
        for jit in other.jit_calls:
            if jit.function == LAMBDA and jit.recreated:
                earlier.lambdas.setdefault(_site(jit), other)
        for entry in other.compiled_inputs:
            earlier.inputs[entry.function] = entry.inputs, other
    return earlier


def again_functions(cell: CellRecord, notebook: NotebookRecord,
                    earlier: _Earlier | None = None) -> list[tuple[str, CellRecord]]:
    """The user functions compiled in ``cell`` that an earlier cell compiled already,
    each with the first cell that did: not a twin pinned to another device
    (``jax.jit(f, device=cpu)`` compiles f for that device), and a lambda only where
    the same jit made both (every lambda compiles as ``jit(<lambda>)``)."""
    names = user_compilations(cell, notebook)
    if not names:
        return []
    earlier = earlier or _earlier(cell, notebook)
    found = []
    for name in names:
        if compiled_function(name) in cell.device_twins:
            continue
        if LAMBDA in name:
            remade = _remade(cell, name)
            first = earlier.lambdas.get(_site(remade)) if remade is not None else None
            if first is not None and name in first.compilations:
                found.append((name, first))
        elif name in earlier.first:
            found.append((name, earlier.first[name]))
    return found


def compiled_before(cell: CellRecord, notebook: NotebookRecord) -> bool:
    """Every user function the cell compiled was compiled in an earlier cell: its
    call is not a first one (the findings' "(compiled again)")."""
    return id(cell) in compiled_again_cells(notebook, [cell])


def compiled_again_cells(notebook: NotebookRecord,
                         wanted: list[CellRecord] | None = None) -> set[int]:
    """The ``id`` of each cell (of ``wanted``, by default all) whose every user
    function was compiled in an earlier cell, as :func:`again_functions` tells them:
    one pass over the notebook for all of them (the findings ask for every flagged
    cell)."""
    wanted_ids = None if wanted is None else {id(cell) for cell in wanted}
    earlier = _Earlier({}, {}, {})
    found: set[int] = set()
    for cell in notebook.cells:
        if wanted_ids is None or id(cell) in wanted_ids:
            names = user_compilations(cell, notebook)
            if names and len(again_functions(cell, notebook, earlier)) == len(names):
                found.add(id(cell))
        for name in cell.compilations:
            earlier.first.setdefault(name, cell)
        for jit in cell.jit_calls:
            if jit.function == LAMBDA and jit.recreated:
                earlier.lambdas.setdefault(_site(jit), cell)
    return found


def why_again(cell: CellRecord, notebook: NotebookRecord, name: str,
              earlier: _Earlier | None = None) -> dict[str, Any]:
    """Why ``name`` was compiled in ``cell`` again, as facts: ``cause`` is
    ``inputs`` (with ``change``: ``shape``, ``dtype`` or ``inputs``, the ``inputs``
    now and ``before``, those that changed, and ``before_cell``: the number of the cell
    that compiled it last before), ``recreated`` (with ``created_in``: the function
    whose every call makes it), ``same_inputs`` (the same input types: a static
    argument or a new function object) or None (the record does not say: no input
    types, no parse)."""
    now = compiled_inputs(cell, name)
    before = (earlier or _earlier(cell, notebook)).inputs.get(name)
    remade = _remade(cell, name)
    if now and before is not None:
        change = changed_inputs(now[0], before[0])
        if change is not None:
            kind, inputs, old = change
            return {"cause": "inputs", "change": kind, "inputs": inputs[:4],
                    "before": old[:4], "before_cell": notebook.cell_name(before[1]).number}
    if remade is not None:
        return {"cause": "recreated", "created_in": remade.created_in}
    return {"cause": "same_inputs" if now and before is not None else None}


def compiled_again_flag(cell: CellRecord, notebook: NotebookRecord, min_seconds: float
                        ) -> Flag | None:
    """``compiled_again``: a user function compiled in ``cell`` that an earlier cell
    compiled already, taking ``min_seconds`` (``slow_cell_min_seconds``) or more."""
    if cell.compile_seconds < min_seconds:
        return None
    if not user_compilations(cell, notebook):
        return None
    earlier = _earlier(cell, notebook)
    again = again_functions(cell, notebook, earlier)
    if not again:
        return None
    names = [name for name, _ in again]
    return Flag(Rule.COMPILED_AGAIN, {
        "functions": [{"name": name, "first_cell": notebook.cell_name(first).number,
                       **why_again(cell, notebook, name, earlier)} for name, first in again],
        "compile_seconds": cell.compile_seconds, "jax_says": jax_reasons(cell, names),
        "explained": bool(notebook.environment.jax.recompilations_explained)})
