"""Which JAX compilations of a cell are the user's, and what JAX said about compiling
them again: the names :mod:`.analysis` (the recompile and compiled_again hints) and
:mod:`.findings` (the views' "JAX says" line) share.

A compiled function is named as JAX names it (``jit(q)``); JAX's explanations of
recompilations (``cells[].recompile_reasons``, recorded with
``gpu_explain_recompilations``) name the Python function (``q``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .record import CellRecord, NotebookRecord

#: functions JAX compiles for its own operations (``jnp.ones(n)`` compiles ``iota``,
#: ``broadcast_in_dim`` ... for each new shape): counted apart from the user's, since
#: what to change is the user's code that calls them
JAX_INTERNAL_FUNCTIONS = frozenset({
    "abs", "add", "and", "argmax", "argmin", "broadcast_in_dim", "ceil", "clamp",
    "concatenate", "convert_element_type", "copy", "cos", "cumsum", "div", "dot_general",
    "dynamic_slice", "dynamic_update_slice", "eq", "exp", "expand_dims", "floor", "gather",
    "ge", "gt", "integer_pow", "iota", "le", "log", "lt", "matmul", "max", "min", "mul",
    "multiply", "ne", "neg", "not", "or", "pow", "reduce_max", "reduce_min", "reduce_sum",
    "remainder", "reshape", "round", "rsqrt", "scatter", "select_n", "sign", "sin", "sort",
    "sqrt", "squeeze", "sub", "subtract", "tanh", "transpose", "true_divide", "xor",
})


def is_jax_internal(name: str) -> bool:
    """``jit(convert_element_type)``, ``jit(_where)``: a function of JAX itself, told by
    its name (for a record that does not know the notebook's own functions)."""
    inner = compiled_function(name)
    return inner.startswith("_") or inner in JAX_INTERNAL_FUNCTIONS


def compiled_function(name: str) -> str:
    """``jit(qm_jax)`` -> ``qm_jax``; ``pjit(f)`` -> ``f``; a plain name as it is."""
    head, paren, rest = name.partition("(")
    return rest[:-1] if paren and rest.endswith(")") and head.isidentifier() else name


def is_user_compilation(name: str, notebook: NotebookRecord) -> bool:
    """A compilation of the user's code: of a function or lambda the notebook defines
    (``NotebookRecord.user_functions``), not of JAX's own operations (``jit(iota)``);
    a record that does not know its functions tells JAX's own by their names."""
    if notebook.user_functions is None:
        return not is_jax_internal(name)
    inner = compiled_function(name)
    return inner == "<lambda>" or inner in notebook.user_functions


def user_compilations(cell: CellRecord, notebook: NotebookRecord) -> list[str]:
    """The user's functions JAX compiled in ``cell`` (JAX's own operations left out)."""
    return [name for name in cell.compilations if is_user_compilation(name, notebook)]


def jax_reasons(cell: CellRecord, names: Sequence[str]) -> list[dict[str, str]]:
    """``[{"function": "jit(q)", "reason": "seen another function defined on the same
    line; ..."}]``: the reasons JAX gave in ``cell`` for the compiled functions
    ``names`` (those it gave none for left out)."""
    if not cell.recompile_reasons:
        return []
    said = []
    for name in names:
        function = compiled_function(name)
        reason = next((r.reason for r in cell.recompile_reasons if r.function == function),
                      None)
        if reason is not None:
            said.append({"function": name, "reason": reason})
    return said


def compiled_inputs(cell: CellRecord, name: str) -> list[list[str]]:
    """The input types of each compilation of ``name`` (``jit(f)``) in ``cell``, in
    order (``[["f32[1000]"], ["f32[10000]"]]``; empty where the probe read none)."""
    return [entry.inputs for entry in cell.compiled_inputs if entry.function == name]


def changed_inputs(now: Sequence[str], before: Sequence[str]
                   ) -> tuple[str, list[str], list[str]] | None:
    """What changed from the inputs ``before`` to ``now`` of one function's programs:
    (``shape``, ``dtype`` or ``inputs``, the inputs now, those before), only the
    positions that changed (all, when their number changed); None: the same."""
    if list(now) == list(before):
        return None
    if len(now) != len(before):
        return "inputs", list(now), list(before)
    pairs = [(new, old) for new, old in zip(now, before, strict=True) if new != old]
    dtypes = {(new.partition("[")[0], old.partition("[")[0]) for new, old in pairs}
    kind = "shape" if all(new == old for new, old in dtypes) else "dtype"
    return kind, [new for new, _ in pairs], [old for _, old in pairs]
