"""Which jitted functions a cell runs, and whether its code makes them anew.

JAX compiles a jitted function again when it sees a new function (a lambda, a
closure, a ``partial`` made again, so "jit it once at the top level") or when the
same function gets arguments of another shape or dtype (then the function is fine;
its inputs are not).  The parse tells the two apart from where the jit is: a
``@jax.jit`` or ``f = jax.jit(g)`` at the top level of a cell or module makes one
function, once; a jit inside a function body (``newton``'s ``@jax.jit def q``) or of
a lambda inside a loop makes a new one each time it runs (:attr:`.JitCall.recreated`).

:func:`local_scope` also gives the names a function body binds to functions of its
own (nested ``def`` s, local jits), which :mod:`.python_loops` resolves calls in.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence

from .code_names import (
    MAX_DEPTH,
    JitSite,
    Names,
    Reader,
    UserFunction,
    called_name,
    callees,
    scope_of,
)
from .code_text import (
    DEFINITIONS,
    child_bodies,
    expressions,
    source_line,
    statement_text,
    statements,
)
from .record import JitCall


@dataclasses.dataclass
class LocalScope:
    """What a function body binds: its nested functions and local jits by name, and
    every jit it makes (bound or called inline: ``jax.jit(f)(x)``)."""

    functions: dict[str, UserFunction]
    jits: list[JitSite]


def _is_fresh(base: ast.expr, wrapped_partial: bool, fresh_names: set[str]) -> bool:
    """A jit of ``base`` makes a new function to JAX each time it runs."""
    if wrapped_partial or isinstance(base, ast.Lambda):
        return True
    return isinstance(base, ast.Name) and base.id in fresh_names


def _site_name(base: ast.expr, functions: dict[str, UserFunction],
               names: Names) -> str | None:
    """The name JAX compiles ``jax.jit(base)`` under."""
    if isinstance(base, ast.Lambda):
        return "<lambda>"
    if isinstance(base, ast.Name):
        function = functions.get(base.id) or names.functions.get(base.id)
        return function.compiled_name if function is not None else base.id
    if isinstance(base, ast.Attribute):
        return base.attr  # jax.jit(jnp.cumsum), jax.jit(mylib.step)
    return None


def inline_jit(call: ast.Call, reader: Reader) -> tuple[ast.expr, bool, bool] | None:
    """``jax.jit(g, ...)(x)``: (``g``, pinned to the CPU, through a ``partial``)."""
    if not isinstance(call.func, ast.Call):
        return None
    wrapped = reader.unwrap(call.func)
    if not wrapped.jitted:
        return None
    return wrapped.base, wrapped.pinned, wrapped.partial


def local_scope(function: UserFunction, reader: Reader, cache: dict[int, LocalScope],
                ) -> LocalScope:
    """The nested functions and jits of ``function``'s body (read once per function)."""
    known = cache.get(id(function.node))
    if known is not None:
        return known
    scope = LocalScope({}, [])
    cache[id(function.node)] = scope
    node = function.node
    if node is None or isinstance(node, ast.Lambda):
        return scope
    reader = reader_for(function, reader)
    names = reader.names
    # a function passed in may be a new lambda on each call (newton(lambda p: ...))
    fresh = set(function.parameters)
    for statement in statements(node.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested = reader.function(statement, function.cell, function.module, function.lines)
            if nested.jit is not None:
                nested.jit = dataclasses.replace(nested.jit, recreated=True,
                                                 created_in=function.name)
                scope.jits.append(nested.jit)
            scope.functions[statement.name] = nested
            fresh.add(statement.name)
            continue
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) \
                and isinstance(statement.value, ast.Call):
            target = statement.targets[0].id
            wrapped = reader.unwrap(statement.value)
            if wrapped.jitted or wrapped.batched:
                site = _local_site(wrapped.base, wrapped.pinned, wrapped.partial, statement,
                                   function, scope, names, fresh) if wrapped.jitted else None
                inner = _callable(wrapped.base, scope.functions, names)
                scope.functions[target] = dataclasses.replace(
                    inner or UserFunction(target, function.cell, function.module, [], [],
                                          set()),
                    jit=site or (inner.jit if inner else None),
                    batched=wrapped.batched or bool(inner and inner.batched),
                    pinned_to_cpu=wrapped.pinned or bool(inner and inner.pinned_to_cpu))
                if site is not None:
                    scope.jits.append(site)
                if site is None or site.recreated:
                    fresh.add(target)
                continue
        for expression in expressions(statement):
            if isinstance(expression, ast.Call):
                found = inline_jit(expression, reader)
                if found is not None:
                    site = _local_site(found[0], found[1], found[2], expression, function,
                                       scope, names, fresh)
                    if site is not None:
                        scope.jits.append(site)
    return scope


def reader_for(function: UserFunction, reader: Reader) -> Reader:
    """A reader of the namespace ``function``'s names refer to (its module's)."""
    names = scope_of(function, reader.names)
    if names is None or names is reader.names:
        return reader
    return Reader(names, reader.module_source, reader.modules)


def _callable(base: ast.expr, functions: dict[str, UserFunction],
              names: Names) -> UserFunction | None:
    if isinstance(base, ast.Name):
        return functions.get(base.id) or names.functions.get(base.id)
    return None


def _local_site(base: ast.expr, pinned: bool, through_partial: bool, node: ast.AST,
                function: UserFunction, scope: LocalScope, names: Names,
                fresh: set[str]) -> JitSite | None:
    name = _site_name(base, scope.functions, names)
    if name is None:
        return None
    recreated = _is_fresh(base, through_partial, fresh)
    return JitSite(name, function.cell, function.module, getattr(node, "lineno", 1),
                   source_line(function.lines, node), recreated=recreated,
                   created_in=function.name if recreated else None, pinned_to_cpu=pinned)


def loop_jits(body: Sequence[ast.stmt], reader: Reader, cell: int, lines: Sequence[str],
              ) -> list[tuple[ast.AST, JitSite]]:
    """The jits a cell's own code makes outside its top-level definitions: inline
    (``jax.jit(minimize)(loss, x0)``) and inside its loops, where a lambda or a
    ``partial`` is a new function on every iteration."""
    found: list[tuple[ast.AST, JitSite]] = []
    names = reader.names

    def visit(statements_: Iterable[ast.stmt], in_loop: bool) -> None:
        for statement in statements_:
            if isinstance(statement, DEFINITIONS):
                continue
            looping = in_loop or isinstance(statement, (ast.For, ast.AsyncFor, ast.While))
            for expression in expressions(statement):
                if not isinstance(expression, ast.Call):
                    continue
                jitted = inline_jit(expression, reader)
                if jitted is None and in_loop and isinstance(statement, ast.Assign):
                    wrapped = reader.unwrap(expression)
                    if wrapped.jitted and expression is statement.value:
                        jitted = (wrapped.base, wrapped.pinned, wrapped.partial)
                if jitted is None:
                    continue
                base, pinned, through_partial = jitted
                name = _site_name(base, {}, names)
                if name is None:
                    continue
                recreated = in_loop and _is_fresh(base, through_partial, set())
                found.append((expression, JitSite(
                    name, cell, None, expression.lineno, source_line(lines, expression),
                    recreated=recreated, pinned_to_cpu=pinned)))
            for body_ in child_bodies(statement):
                visit(body_, looping)

    visit(body, False)
    return found


def _call(site: JitSite, called: str, call: str) -> JitCall:
    return JitCall(function=site.function, called=called, defined_cell=site.cell,
                   module=site.module, line=site.line, code=site.code,
                   recreated=site.recreated, created_in=site.created_in,
                   pinned_to_cpu=site.pinned_to_cpu, call=call)


def reached_jits(function: UserFunction, reader: Reader, namespace: Names,
                 cache: dict[int, LocalScope]) -> list[JitSite]:
    """The jits calling ``function`` runs: its own when it is jitted (a jitted function
    traces the functions it calls into one program), else those its body makes and
    those of the functions it calls, depth-first."""
    found: list[JitSite] = []
    seen: set[int] = set()

    def visit(current: UserFunction, depth: int) -> None:
        if id(current) in seen or depth > MAX_DEPTH:
            return
        seen.add(id(current))
        if current.jit is not None:
            found.append(current.jit)
            return
        local = local_scope(current, reader, cache)
        found.extend(local.jits)
        for name, nested in sorted(local.functions.items()):
            if name in current.references:
                visit(nested, depth + 1)
        for callee in callees(current, scope_of(current, namespace)):
            if callee is not current:
                visit(callee, depth + 1)

    visit(function, 0)
    return found


def cell_jit_calls(tree: ast.Module, lines: Sequence[str], reader: Reader,
                   namespace: Names, cell: int, cache: dict[int, LocalScope],
                   inline: bool = True) -> list[JitCall]:
    """The jitted functions the cell's code runs (its top-level definitions left out:
    defining is not running), each once by (function, jit line, what it calls);
    ``inline``: the cell may jit in its own code (its text says ``jit``)."""
    calls: list[JitCall] = []
    seen: set[tuple[str, int | None, str | None, int, str]] = set()

    def add(site: JitSite, called: str, node: ast.AST) -> None:
        key = (site.function, site.cell, site.module, site.line, called)
        if key not in seen:
            seen.add(key)
            calls.append(_call(site, called, statement_text(node, lines)))

    body = [statement for statement in tree.body
            if not isinstance(statement, (*DEFINITIONS, ast.Import, ast.ImportFrom))]
    sites = {id(node): site for node, site in loop_jits(body, reader, cell, lines)} \
        if inline else {}
    for statement in body:
        for node in ast.walk(statement):
            if id(node) in sites:
                add(sites[id(node)], sites[id(node)].function, node)
                continue
            if isinstance(node, DEFINITIONS[:3]):
                continue
            name, _ = called_name(node, namespace)
            function = namespace.functions.get(name) if name else None
            if function is None or not isinstance(node, ast.Call):
                continue
            for site in reached_jits(function, reader, namespace, cache):
                add(site, name or site.function, node)
    return calls
