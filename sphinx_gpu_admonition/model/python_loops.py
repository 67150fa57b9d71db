"""Python loops around JAX, and the host syncs in them: from the parse of the notebook.

A ``for`` / ``while`` loop that calls a small jitted function on every iteration
spends its time dispatching (on a GPU each call also pays a kernel launch); one that
reads a device value back on every iteration (``error = float(jnp.max(...))``,
``while error > tol`` on a device array, ``print(error)``) waits for the device and
copies to the host each time.  :class:`LoopReader` finds such loops in a cell's own
code and in the plain Python functions it calls (defined in an earlier cell or a
local module), resolved as :mod:`.code` resolves calls, and says whether the work is
pinned to the CPU or batched (``jax.vmap``), so not a GPU dispatch loop.

A loop inside a jitted function is traced once (unrolled), not dispatched: jitted
functions are where the search stops.  Which values live on the device is read from
the assignments of the function (or cell): a name assigned from a jitted call, a JAX
operation or a function that runs JAX code holds a device value; ``float(...)``,
``.item()`` and numpy functions give host values.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence

from .code_names import (
    MAX_DEPTH,
    Names,
    Reader,
    UserFunction,
    argument,
    called_name,
    callees,
    scope_of,
)
from .code_text import (
    child_bodies,
    dotted_name,
    expressions,
    int_value,
    source_line,
    statement_text,
    statements,
)
from .jit_calls import LocalScope, inline_jit, local_scope, reader_for
from .record import DispatchLoop, HostSync

#: the most names a loop record lists (its calls, its operations)
_MAX_NAMES = 8
#: builtins that give a host value of their argument, and the sync kind they are
_CONVERSIONS = {"float": "float", "complex": "float", "int": "int", "bool": "bool"}
#: builtins whose result holds a device value when an argument does
_PASSING = ("abs", "max", "min", "sum", "round")
#: array attributes that are host values (shape metadata), not device reads
_METADATA = ("shape", "ndim", "size", "dtype", "sharding", "device", "devices")

@dataclasses.dataclass
class FoundLoop:
    """A loop of one body (a cell's or a function's), before it is tied to a call."""

    node: ast.For | ast.AsyncFor | ast.While
    code: str
    calls: list[str]
    operations: list[str]
    pinned: bool
    batched: bool
    #: the product of the nested counts, and the function parameter that gives the
    #: outer loop's count (``range(T)``), resolved by the call
    factor: int | None
    parameter: tuple[int, str] | None
    syncs: list[HostSync]


class LoopReader:
    """Finds the dispatch loops of cells and of the user functions they call."""

    def __init__(self, reader: Reader, scopes: dict[int, LocalScope]):
        self.reader = reader
        self.scopes = scopes
        self._function_loops: dict[int, list[FoundLoop]] = {}
        self._uses_jax: dict[int, bool] = {}
        self._reachable: dict[int, list[tuple[UserFunction, FoundLoop]]] = {}
        self._namespace: object = None

    def new_cell(self) -> None:
        """Forget what was read for the cells before when a cell bound a name again: a
        function jitted in a later cell (``f = jax.jit(f)``) changes what its callers
        run, a constant their counts."""
        names = self.reader.names
        # m.f entries are bound while reading calls: the same functions, not a new binding
        state = ({name: id(function) for name, function in names.functions.items()
                  if "." not in name},
                 dict(names.constants), dict(names.lengths), len(names.jax),
                 len(names.jnp), len(names.jit), len(names.vmap))
        if state == self._namespace:
            return
        self._namespace = state
        self._function_loops.clear()
        self._uses_jax.clear()
        self._reachable.clear()
        self.scopes.clear()

    # -- what the loop calls ---------------------------------------------------------
    def resolve(self, call: ast.Call, local: dict[str, UserFunction],
                names: Names) -> tuple[str | None, UserFunction | None]:
        name, _ = called_name(call, names)
        if name is None:
            return None, None
        return name, local.get(name) or names.functions.get(name)

    def uses_jax(self, function: UserFunction, depth: int = 0) -> bool:
        """Its body runs JAX code: a JAX operation or a jitted function (so it returns
        device values)."""
        key = id(function)
        if key in self._uses_jax:
            return self._uses_jax[key]
        self._uses_jax[key] = False  # recursion stops here
        result = function.jitted or function.batched or bool(function.loops)
        if not result and function.node is not None and depth <= MAX_DEPTH:
            reader = reader_for(function, self.reader)
            scope = scope_of(function, self.reader.names) or reader.names
            for node in ast.walk(function.node):
                if isinstance(node, ast.Call) and (
                        reader.is_jax_work(node)
                        or inline_jit(node, reader) is not None):
                    result = True
                    break
            if not result:
                result = any(callee is not function and self.uses_jax(callee, depth + 1)
                             for callee in callees(function, scope))
        self._uses_jax[key] = result
        return result

    # -- device values ------------------------------------------------------------------
    def device_names(self, body: Sequence[ast.stmt], reader: Reader,
                     local: dict[str, UserFunction]) -> set[str]:
        """The names of ``body`` that hold device values (any assignment of one)."""
        assignments = []
        for statement in statements(body):
            if isinstance(statement, ast.Assign):
                assignments.extend((target, statement.value) for target in statement.targets)
            elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) \
                    and statement.value is not None:
                assignments.append((statement.target, statement.value))
        device: set[str] = set()
        for _ in range(MAX_DEPTH):  # a fixed point: v = T(v); error = jnp.max(v)
            before = len(device)
            for target, value in assignments:
                if self.is_device(value, device, reader, local):
                    device |= _target_names(target)
            if len(device) == before:
                break
        return device

    def is_device(self, node: ast.AST, device: set[str], reader: Reader,
                  local: dict[str, UserFunction]) -> bool:
        """``node`` evaluates to a JAX array (or a tuple of them)."""
        names = reader.names
        if isinstance(node, ast.Name):
            return node.id in device
        if isinstance(node, ast.Attribute):
            return node.attr not in _METADATA and self.is_device(node.value, device, reader,
                                                                  local)
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self.is_device(node.value, device, reader, local)
        if isinstance(node, ast.UnaryOp):
            return self.is_device(node.operand, device, reader, local)
        if isinstance(node, (ast.BinOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Tuple,
                             ast.List)):
            return any(self.is_device(child, device, reader, local)
                       for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Name) and func.id in _PASSING:
            return any(self.is_device(arg, device, reader, local) for arg in node.args)
        if isinstance(func, ast.Name) and func.id in _CONVERSIONS:
            return False
        if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist"):
            return False
        if isinstance(func, ast.Attribute) and func.attr == "block_until_ready":
            return self.is_device(func.value, device, reader, local)
        if reader.is_numpy_call(node):
            return False
        if reader.is_jax_call(node):
            return reader.is_jax_work(node) or (dotted_name(func) or "").endswith(
                "block_until_ready")
        if inline_jit(node, reader) is not None or (
                isinstance(func, ast.Call) and reader.unwrap(func).batched):
            return True
        _, callee = self.resolve(node, local, names)
        if callee is not None:
            return self.uses_jax(callee)
        if isinstance(func, ast.Attribute):  # x.sum(), x.at[0].set(1.0)
            return self.is_device(func.value, device, reader, local)
        return False

    # -- loops in a body -------------------------------------------------------------------
    def body_loops(self, body: Sequence[ast.stmt], reader: Reader, lines: Sequence[str],
                   local: dict[str, UserFunction], parameters: Sequence[str],
                   pinned: bool = False) -> list[FoundLoop]:
        """The outermost loops of ``body`` that dispatch JAX work, each with its host
        syncs; ``pinned``: the body runs under ``with jax.default_device(cpu)``."""
        known: list[set[str]] = []

        def device() -> set[str]:  # read once, and only for a body with a loop
            if not known:
                known.append(self.device_names(body, reader, local))
            return known[0]

        found: list[FoundLoop] = []

        def visit(statements_: Iterable[ast.stmt], on_cpu: bool) -> None:
            for statement in statements_:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                          ast.ClassDef)):
                    continue
                if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
                    loop = self.read_loop(statement, reader, lines, local, parameters,
                                          device(), on_cpu)
                    if loop is not None:
                        found.append(loop)
                        continue
                cpu = on_cpu or (isinstance(statement, (ast.With, ast.AsyncWith)) and any(
                    reader.is_default_device_cpu(item) for item in statement.items))
                for inner in child_bodies(statement):
                    visit(inner, cpu)

        visit(body, pinned)
        return found

    def read_loop(self, loop: ast.For | ast.AsyncFor | ast.While, reader: Reader,
                  lines: Sequence[str], local: dict[str, UserFunction],
                  parameters: Sequence[str], device: set[str], on_cpu: bool,
                  ) -> FoundLoop | None:
        calls: list[str] = []
        operations: list[str] = []
        pinned_calls: list[bool] = []
        batched_calls: list[bool] = []
        deepest: list[int | None] = [1]
        syncs: list[HostSync] = []

        def note(name: str, into: list[str]) -> None:
            if name not in into and len(into) < _MAX_NAMES:
                into.append(name)

        def dispatches(call: ast.Call, cpu: bool) -> bool:
            jitted = inline_jit(call, reader)
            if jitted is not None:
                note(dotted_name(jitted[0]) or "<lambda>", calls)
                pinned_calls.append(cpu or jitted[1])
                batched_calls.append(False)
                return True
            if isinstance(call.func, ast.Call) and reader.unwrap(call.func).batched:
                note(dotted_name(reader.unwrap(call.func).base) or "<lambda>", calls)
                pinned_calls.append(cpu)
                batched_calls.append(True)
                return True
            name, callee = self.resolve(call, local, reader.names)
            if callee is not None and name is not None:
                if callee.jitted or callee.batched:
                    note(name, calls)
                    pinned_calls.append(cpu or callee.pinned_to_cpu)
                    batched_calls.append(callee.batched)
                    return True
                if self.reachable(callee):
                    return False  # its own loop is the dispatch loop (the cell names it)
                through = self.through(callee, cpu, parameters if name in local else ())
                if through:
                    for inner_name, inner_pinned, inner_batched in through:
                        operation = inner_name.startswith(".")
                        note(inner_name, operations if operation else calls)
                        pinned_calls.append(inner_pinned)
                        if not operation:
                            batched_calls.append(inner_batched)
                    return True
                return False
            if reader.is_jax_work(call):
                note(dotted_name(call.func) or "", operations)
                pinned_calls.append(cpu)
                return True
            return False

        def visit(statements_: Iterable[ast.stmt], factor: int | None, guarded: bool,
                  cpu: bool) -> None:
            for statement in statements_:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                          ast.ClassDef)):
                    continue
                inner_factor = factor
                if statement is not loop and isinstance(statement, (ast.For, ast.AsyncFor)):
                    count = self.count(statement, reader, parameters)[0]
                    inner_factor = None if factor is None or count is None else factor * count
                elif statement is not loop and isinstance(statement, ast.While):
                    inner_factor = None
                work = False
                once = statement is loop and not isinstance(statement, ast.While)
                for node in () if once else expressions(statement):
                    if isinstance(node, ast.Call):
                        work = dispatches(node, cpu) or work
                        self.sync(node, statement, lines, device, reader, local, guarded, syncs)
                test = getattr(statement, "test", None)
                if isinstance(statement, (ast.While, ast.If)) and test is not None \
                        and self.is_device(test, device, reader, local):
                    _add_sync(syncs, HostSync("condition", statement_text(statement, lines),
                                              statement.lineno, guarded))
                if work:
                    deepest.append(factor)
                cpu_here = cpu or (isinstance(statement, (ast.With, ast.AsyncWith)) and any(
                    reader.is_default_device_cpu(item) for item in statement.items))
                body_factor = inner_factor if statement is not loop else factor
                guard = guarded or isinstance(statement, ast.If)
                visit(getattr(statement, "body", None) or [], body_factor, guard, cpu_here)
                visit(getattr(statement, "orelse", None) or [], body_factor,
                      guard or isinstance(statement, (ast.For, ast.AsyncFor, ast.While)),
                      cpu_here)
                visit(getattr(statement, "finalbody", None) or [], body_factor, guard,
                      cpu_here)
                for handler in getattr(statement, "handlers", None) or []:
                    visit(handler.body, body_factor, True, cpu_here)

        visit([loop], 1, False, on_cpu)
        if not calls and not operations:
            return None
        # the loop statement's own expressions (a for's iterable) run once, not per
        # iteration: only the body's and a while's test count; the test is read above
        factors = deepest[1:] or [1]
        factor = None if any(f is None for f in factors) else max(factors)  # type: ignore[type-var]
        count, parameter = self.count(loop, reader, parameters)
        if count is not None and factor is not None:
            factor *= count
        elif parameter is None:
            factor = None
        return FoundLoop(loop, source_line(lines, loop), calls, operations,
                         pinned=bool(pinned_calls) and all(pinned_calls),
                         batched=bool(batched_calls) and all(batched_calls),
                         factor=factor, parameter=parameter if count is None else None,
                         syncs=sorted(syncs, key=lambda sync: (sync.line, sync.kind)))

    def through(self, function: UserFunction, cpu: bool, enclosing: Sequence[str] = (),
                ) -> list[tuple[str, bool, bool]]:
        """What calling the plain Python ``function`` dispatches: the jitted functions
        it (and the plain functions it calls) calls, and ``.``-prefixed JAX operations
        (``.jnp.dot``, told apart by the prefix), each with (pinned, batched);
        ``enclosing``: the parameters of the function ``function`` is a closure of."""
        found: list[tuple[str, bool, bool]] = []
        seen: set[int] = set()

        def visit(current: UserFunction, depth: int, on_cpu: bool,
                  outer: frozenset[str]) -> None:
            if id(current) in seen or depth > MAX_DEPTH or current.node is None:
                return
            seen.add(id(current))
            parameters = outer | set(current.parameters)
            reader = reader_for(current, self.reader)
            local = local_scope(current, self.reader, self.scopes).functions
            scope = scope_of(current, self.reader.names) or reader.names
            on_cpu = on_cpu or current.pinned_to_cpu
            for node in ast.walk(current.node):
                if not isinstance(node, ast.Call):
                    continue
                jitted = inline_jit(node, reader)
                if jitted is not None:
                    found.append((dotted_name(jitted[0]) or "<lambda>", on_cpu or jitted[1],
                                  False))
                    continue
                name, _ = called_name(node, scope)
                # a parameter (newton's f, also inside its closures) is no global function
                shadowed = name in parameters and name not in local
                callee = None if not name or shadowed else (
                    local.get(name) or scope.functions.get(name))
                if callee is not None and callee is not current:
                    if callee.jitted or callee.batched:
                        found.append((name, on_cpu or callee.pinned_to_cpu,  # type: ignore[arg-type]
                                      callee.batched))
                    else:
                        nested = name in local  # a closure sees this function's names
                        visit(callee, depth + 1, on_cpu,
                              frozenset(parameters) if nested else frozenset())
                elif reader.is_jax_work(node):
                    found.append(("." + (dotted_name(node.func) or ""), on_cpu, False))

        visit(function, 0, cpu, frozenset(enclosing))
        return found

    def count(self, loop: ast.stmt, reader: Reader, parameters: Sequence[str],
              ) -> tuple[int | None, tuple[int, str] | None]:
        """A ``for`` loop's count: ``range(...)`` of constants, a literal or a known
        tuple, ``enumerate`` / ``zip`` of one; or the parameter giving it."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            return None, None
        constants = {k: v for k, v in reader.names.constants.items() if k not in parameters}
        iterable = loop.iter
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
                and iterable.func.id in ("enumerate", "zip", "reversed") and iterable.args:
            iterable = iterable.args[0]
        if isinstance(iterable, (ast.Tuple, ast.List, ast.Set)):
            return len(iterable.elts), None
        if isinstance(iterable, ast.Name) and iterable.id not in parameters:
            return reader.names.lengths.get(iterable.id), None
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                and iterable.func.id == "range" and 1 <= len(iterable.args) <= 3):
            return None, None
        args = iterable.args
        if len(args) == 1 and isinstance(args[0], ast.Name) and args[0].id in parameters:
            return None, (list(parameters).index(args[0].id), args[0].id)
        values = [int_value(arg, constants) for arg in args]
        if any(value is None for value in values):
            return None, None
        start, stop, step = (0, values[0], 1) if len(values) == 1 else (
            values[0], values[1], values[2] if len(values) == 3 else 1)
        if not step:
            return None, None
        return max(0, -(-(stop - start) // step)), None  # type: ignore[operator]

    # -- host syncs --------------------------------------------------------------------------
    def sync(self, call: ast.Call, statement: ast.stmt, lines: Sequence[str],
             device: set[str], reader: Reader, local: dict[str, UserFunction],
             guarded: bool, syncs: list[HostSync]) -> None:
        kind = self.sync_kind(call, device, reader, local)
        if kind is not None:
            _add_sync(syncs, HostSync(kind, statement_text(statement, lines),
                                      statement.lineno, guarded))

    def sync_kind(self, call: ast.Call, device: set[str], reader: Reader,
                  local: dict[str, UserFunction]) -> str | None:
        func = call.func

        def on_device(node: ast.AST) -> bool:
            return self.is_device(node, device, reader, local)

        def any_argument() -> bool:
            values = [*call.args, *(k.value for k in call.keywords)]
            return any(on_device(value) or _formats_device(value, on_device)
                       for value in values)

        if isinstance(func, ast.Name):
            if func.id in _CONVERSIONS and call.args and on_device(call.args[0]):
                return _CONVERSIONS[func.id]
            if func.id == "print" and any_argument():
                return "print"
            return None
        name = dotted_name(func) or ""
        if isinstance(func, ast.Attribute):
            if func.attr == "block_until_ready":
                return "block_until_ready"
            if func.attr in ("item", "tolist") and on_device(func.value):
                return "item"
            if name.split(".", 1)[0] in reader.names.jax and func.attr == "device_get":
                return "device_get"
        if reader.is_numpy_call(call) and any_argument():
            return "numpy"
        return None

    # -- the loops of a user function, read once -------------------------------------------------
    def function_loops(self, function: UserFunction) -> list[FoundLoop]:
        key = id(function)
        if key not in self._function_loops:
            self._function_loops[key] = []  # recursion stops here
            node = function.node
            if node is not None and not isinstance(node, ast.Lambda) and not function.jitted:
                reader = reader_for(function, self.reader)
                local = local_scope(function, self.reader, self.scopes).functions
                self._function_loops[key] = self.body_loops(
                    node.body, reader, function.lines, local, function.parameters,
                    pinned=function.pinned_to_cpu)
        return self._function_loops[key]

    def cell_loops(self, tree: ast.Module, lines: Sequence[str], namespace: Names,
                   cell: int) -> list[DispatchLoop]:
        """The dispatch loops the cell runs: its own, and those of the plain Python
        functions it calls (through the functions those call), each once."""
        body = [statement for statement in tree.body
                if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                              ast.ClassDef, ast.Import, ast.ImportFrom))]
        result: list[DispatchLoop] = []
        seen: set[tuple[int | None, str | None, int, str | None]] = set()

        def add(loop: DispatchLoop) -> None:
            key = (loop.defined_cell, loop.module, loop.line, loop.function)
            if key not in seen:
                seen.add(key)
                result.append(loop)

        for found in self.body_loops(body, self.reader, lines, {}, ()):
            add(_record(found, None, None, cell, None, found.code))
        for statement in body:
            nodes = list(ast.walk(statement))
            cpu_blocks = _cpu_lines(nodes, self.reader)
            for node in nodes:
                if not isinstance(node, ast.Call):
                    continue
                name, function = self.resolve(node, {}, namespace)
                if function is None or function.jitted or name is None:
                    continue
                on_cpu = node.lineno in cpu_blocks
                for owner, found in self.reachable(function):
                    steps = found.factor
                    if found.parameter is not None:
                        count = int_value(argument(node if owner is function else None,
                                                   found.parameter), namespace.constants)
                        steps = None if count is None or steps is None else steps * count
                    add(dataclasses.replace(
                        _record(found, name, owner.name if owner is not function else None,
                                owner.cell, owner.module, statement_text(node, lines)),
                        iterations=steps, pinned_to_cpu=found.pinned or on_cpu))
        return result

    def reachable(self, function: UserFunction) -> list[tuple[UserFunction, FoundLoop]]:
        """The loops of ``function`` and of the plain functions it calls, depth-first."""
        known = self._reachable.get(id(function))
        if known is not None:
            return known
        found: list[tuple[UserFunction, FoundLoop]] = []
        self._reachable[id(function)] = found  # recursion stops here
        seen: set[int] = set()

        def visit(current: UserFunction, depth: int) -> None:
            if id(current) in seen or depth > MAX_DEPTH or current.jitted:
                return
            seen.add(id(current))
            found.extend((current, loop) for loop in self.function_loops(current))
            for callee in callees(current, scope_of(current, self.reader.names)):
                visit(callee, depth + 1)

        visit(function, 0)
        return found


def _record(found: FoundLoop, function: str | None, loop_function: str | None,
            cell: int | None, module: str | None, call: str) -> DispatchLoop:
    return DispatchLoop(
        loop="while" if isinstance(found.node, ast.While) else "for", code=found.code,
        line=found.node.lineno, function=function, loop_function=loop_function,
        defined_cell=cell if module is None else None, module=module,
        calls=list(found.calls), operations=[name.lstrip(".") for name in found.operations],
        iterations=found.factor if found.parameter is None else None,
        pinned_to_cpu=found.pinned, batched=found.batched, syncs=list(found.syncs),
        call=call)


def _add_sync(syncs: list[HostSync], sync: HostSync) -> None:
    if not any(other.line == sync.line and other.kind == sync.kind for other in syncs):
        syncs.append(sync)


def _formats_device(node: ast.AST, on_device) -> bool:  # type: ignore[no-untyped-def]
    """An f-string or ``%`` formatting of a device value (``f"error = {error}"``)."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) and on_device(part.value)
                   for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return on_device(node.right)
    return False


def _target_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(item) for item in target.elts))
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _cpu_lines(nodes: Iterable[ast.AST], reader: Reader) -> set[int]:
    """The lines of a statement (its ``nodes``) under ``with jax.default_device(cpu):``."""
    lines: set[int] = set()
    for node in nodes:
        if isinstance(node, (ast.With, ast.AsyncWith)) \
                and any(reader.is_default_device_cpu(item) for item in node.items):
            for inner in node.body:
                lines |= set(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines
