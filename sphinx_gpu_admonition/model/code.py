"""Which JAX loops a notebook cell runs: one parse of the notebook's code cells.

The kernel probe only sees the running cell's own text, but a real lecture defines
a function with a ``lax.scan`` in one cell and times it in the next two: the time is
spent in the calling cells.  :func:`link_loops` parses every code cell once (builder
side, standard library ``ast``), in notebook order as the kernel ran them, and links
each cell to the user functions it calls, resolved to the cell (or local module)
that defined them and through the user functions those call, down to the sequential
loop primitives (``lax.scan``, ``fori_loop``, ``while_loop``, ``lax.map``,
``associative_scan``) under whatever alias the notebook imported them.

Functions pinned to the CPU (``jax.jit(f, device=cpu)``, ``backend="cpu"``) and calls
inside ``with jax.default_device(cpu):`` are left out: they are not GPU loops.

Nothing here runs the notebook's code; a cell that does not parse (a magic this
module does not know) links nothing.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterable, Sequence

from .record import LoopCall

#: sequential loop primitives of ``jax.lax``: on a GPU every iteration launches device
#: kernels, so their cost there grows with the step count
LOOP_PRIMITIVES = ("scan", "fori_loop", "while_loop", "map", "associative_scan")

_CALL_LINE_LENGTH = 120
#: how deep calls between user functions are followed (recursion, long chains)
_MAX_DEPTH = 8
#: the largest step count worth computing from a constant expression (``10**7``)
_MAX_STEPS = 10**15


@dataclasses.dataclass
class _Loop:
    primitive: str
    #: a known count, or the position (and name) of the parameter that gives it
    steps: int | None = None
    parameter: tuple[int, str] | None = None


@dataclasses.dataclass
class _Function:
    name: str
    #: the cell index that defined it, or None for a module's function
    cell: int | None
    module: str | None
    parameters: list[str]
    loops: list[_Loop]
    #: names the body refers to (calls, and functions passed to loops or ``vmap``)
    references: set[str]
    pinned_to_cpu: bool = False


@dataclasses.dataclass
class _Names:
    """What the names of one namespace (the notebook's, or a module's) stand for."""

    jax: set[str] = dataclasses.field(default_factory=set)
    lax: set[str] = dataclasses.field(default_factory=set)
    #: name -> primitive (``from jax.lax import scan as s``)
    primitives: dict[str, str] = dataclasses.field(default_factory=dict)
    #: names bound to a CPU device (``cpu = jax.devices("cpu")[0]``)
    cpu: set[str] = dataclasses.field(default_factory=set)
    #: integer constants (``n = 10_000_000``), for step counts
    constants: dict[str, int] = dataclasses.field(default_factory=dict)
    functions: dict[str, _Function] = dataclasses.field(default_factory=dict)
    #: local module aliases (``import mylib as m``) -> module name
    modules: dict[str, str] = dataclasses.field(default_factory=dict)
    #: every local module read so far, by name (shared by the notebook and its modules)
    loaded: dict[str, _Names | None] = dataclasses.field(default_factory=dict)


def without_magics(source: str) -> str:
    """The cell as Python: ``%time f(x)`` -> ``f(x)``, ``!ls`` and other magics blank;
    a cell magic (``%%time``) keeps its body, any other cell magic is not Python."""
    lines = source.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in ("time", "timeit", "capture", "prun"):
            return ""
        lines[0] = ""
    cleaned = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            indent = line[: len(line) - len(stripped)]
            words = stripped.split()
            rest = [w for w in words[1:] if not w.startswith("-")] if stripped[0] == "%" else []
            # the timing magics' options take a value (-n 10 -r 3): numbers are not code
            while rest and rest[0].isdigit():
                rest.pop(0)
            line = indent + (" ".join(rest) if rest else "pass")
        cleaned.append(line)
    return "\n".join(cleaned)


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(without_magics(source))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _int_value(node: ast.AST | None, constants: dict[str, int]) -> int | None:
    """``10_000_000``, ``n``, ``10**7``, ``2 * n``: a whole number, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        value = node.value
    elif isinstance(node, ast.Constant) and isinstance(node.value, float) \
            and node.value.is_integer() and abs(node.value) <= _MAX_STEPS:
        value = int(node.value)  # 1e7
    elif isinstance(node, ast.Name):
        value = constants.get(node.id)  # type: ignore[assignment]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "int" and len(node.args) == 1:
        value = _int_value(node.args[0], constants)  # type: ignore[assignment]
    elif isinstance(node, ast.BinOp):
        left, right = _int_value(node.left, constants), _int_value(node.right, constants)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow):
            if right < 0 or right > 64 or abs(left) > 10**6:
                return None
            value = left**right
        elif isinstance(node.op, ast.Mult):
            value = left * right
        elif isinstance(node.op, ast.Add):
            value = left + right
        elif isinstance(node.op, ast.Sub):
            value = left - right
        elif isinstance(node.op, ast.FloorDiv) and right:
            value = left // right
        else:
            return None
    else:
        return None
    if value is None or abs(value) > _MAX_STEPS:
        return None
    return value


class _Reader:
    """Reads one namespace's statements: imports, constants, functions, loops."""

    def __init__(self, names: _Names, module_source: Callable[[str], str | None] | None,
                 modules: dict[str, _Names]):
        self.names = names
        self.module_source = module_source
        self.modules = modules

    # -- what an expression stands for ----------------------------------------------
    def is_lax(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.names.lax
        return (isinstance(node, ast.Attribute) and node.attr == "lax"
                and isinstance(node.value, ast.Name) and node.value.id in self.names.jax)

    def is_jax_attribute(self, node: ast.AST, attribute: str) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == attribute
                and isinstance(node.value, ast.Name) and node.value.id in self.names.jax)

    def primitive(self, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in LOOP_PRIMITIVES \
                and self.is_lax(func.value):
            return func.attr
        if isinstance(func, ast.Name):
            return self.names.primitives.get(func.id)
        return None

    def means_cpu(self, node: ast.AST) -> bool:
        """``cpu``, ``jax.devices("cpu")[0]``, ``"cpu"``: the CPU device or backend."""
        for part in ast.walk(node):
            if isinstance(part, ast.Name) and part.id in self.names.cpu:
                return True
            if isinstance(part, ast.Constant) and part.value == "cpu":
                return True
        return False

    def pins_to_cpu(self, call: ast.Call) -> bool:
        """``jax.jit(f, device=cpu)``, ``partial(jax.jit, backend="cpu")``."""
        return any(keyword.arg in ("device", "backend") and self.means_cpu(keyword.value)
                   for keyword in call.keywords)

    def is_default_device_cpu(self, item: ast.withitem) -> bool:
        expression = item.context_expr
        return (isinstance(expression, ast.Call)
                and (self.is_jax_attribute(expression.func, "default_device")
                     or (isinstance(expression.func, ast.Name)
                         and expression.func.id == "default_device"))
                and any(self.means_cpu(arg) for arg in expression.args))

    # -- statements ---------------------------------------------------------------
    def read_import(self, statement: ast.stmt) -> None:
        names = self.names
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                bound = alias.asname or alias.name.split(".")[0]
                if alias.name == "jax":
                    names.jax.add(bound)
                elif alias.name == "jax.lax":
                    (names.lax if alias.asname else names.jax).add(bound)
                elif self.load_module(alias.name) is not None:
                    names.modules[bound] = alias.name
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
            origin = statement.module or ""
            for alias in statement.names:
                bound = alias.asname or alias.name
                if origin == "jax" and alias.name == "lax":
                    names.lax.add(bound)
                elif origin == "jax.lax" and alias.name in LOOP_PRIMITIVES:
                    names.primitives[bound] = alias.name
                elif origin == "jax" and alias.name == "default_device":
                    names.jax.discard(bound)  # a bare default_device(...) is recognised
                else:
                    module = self.load_module(origin)
                    if module is not None and alias.name in module.functions:
                        names.functions[bound] = module.functions[alias.name]

    def load_module(self, name: str) -> _Names | None:
        """A local module's namespace (``module_source`` finds its file), read once."""
        if name in self.modules:
            return self.modules[name]
        source = self.module_source(name) if self.module_source is not None else None
        self.modules[name] = None  # type: ignore[assignment]  # an import cycle stops here
        tree = _parse(source) if source is not None else None
        if tree is None:
            return None
        namespace = _Names(loaded=self.modules)
        reader = _Reader(namespace, self.module_source, self.modules)
        for statement in tree.body:
            reader.read_definition(statement, cell=None, module=name)
        self.modules[name] = namespace
        return namespace

    def read_definition(self, statement: ast.stmt, cell: int | None,
                        module: str | None) -> None:
        """Imports, constants, CPU devices and functions bound at the top level."""
        names = self.names
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            self.read_import(statement)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.functions[statement.name] = self.function(statement, cell, module)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            target, value = statement.targets[0].id, statement.value
            names.constants.pop(target, None)
            names.cpu.discard(target)
            number = _int_value(value, names.constants)
            if number is not None:
                names.constants[target] = number
            elif isinstance(value, ast.Call) and self.wrapped(value) is not None:
                # f = jax.jit(g, device=cpu): f runs g, pinned or not
                wrapped = names.functions[self.wrapped(value)]  # type: ignore[index]
                names.functions[target] = dataclasses.replace(
                    wrapped, pinned_to_cpu=wrapped.pinned_to_cpu or self.pins_to_cpu(value))
            elif self.means_cpu(value) and isinstance(value, (ast.Subscript, ast.Call)):
                names.cpu.add(target)

    def wrapped(self, call: ast.Call) -> str | None:
        """``jax.jit(g, ...)`` or ``jit(g)``: the user function ``g`` it wraps."""
        if call.args and isinstance(call.args[0], ast.Name) \
                and call.args[0].id in self.names.functions:
            return call.args[0].id
        return None

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, cell: int | None,
                 module: str | None) -> _Function:
        parameters = [arg.arg for arg in node.args.posonlyargs + node.args.args]
        pinned = any(isinstance(d, ast.Call) and self.pins_to_cpu(d)
                     for d in node.decorator_list)
        loops: list[_Loop] = []
        references: set[str] = set()
        self.collect(node.body, loops, references, parameters)
        return _Function(node.name, cell, module, parameters, loops, references, pinned)

    def collect(self, body: Iterable[ast.stmt], loops: list[_Loop], references: set[str],
                parameters: Sequence[str] = ()) -> None:
        """The loop primitives called in ``body`` and the names it refers to, leaving
        out what runs under ``with jax.default_device(cpu)``."""
        for statement in body:
            for node in _walk_outside_cpu(statement, self):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    references.add(node.id)
                elif isinstance(node, ast.Call):
                    primitive = self.primitive(node)
                    if primitive is not None:
                        loops.append(self.loop(primitive, node, parameters))

    def loop(self, primitive: str, call: ast.Call, parameters: Sequence[str]) -> _Loop:
        """The primitive and its step count: ``length=``, ``fori_loop(lower, upper, ...)``."""
        # a parameter shadows a notebook constant of the same name (``n``)
        constants = {k: v for k, v in self.names.constants.items() if k not in parameters}
        if primitive == "fori_loop" and len(call.args) >= 2:
            lower = _int_value(call.args[0], constants)
            upper = call.args[1]
            if lower is not None:
                upper_value = _int_value(upper, constants)
                if upper_value is not None:
                    return _Loop(primitive, steps=max(upper_value - lower, 0))
                if lower == 0 and isinstance(upper, ast.Name) and upper.id in parameters:
                    return _Loop(primitive, parameter=(parameters.index(upper.id), upper.id))
            return _Loop(primitive)
        length = next((k.value for k in call.keywords if k.arg == "length"), None)
        if primitive == "scan" and length is None and len(call.args) >= 4:
            length = call.args[3]
        if length is not None:
            if isinstance(length, ast.Name) and length.id in parameters:
                return _Loop(primitive, parameter=(parameters.index(length.id), length.id))
            steps = _int_value(length, constants)
            if steps is not None:
                return _Loop(primitive, steps=steps)
        return _Loop(primitive)


def _walk_outside_cpu(statement: ast.AST, reader: _Reader) -> Iterable[ast.AST]:
    """``ast.walk`` in source order, skipping ``with jax.default_device(cpu):`` blocks
    (what runs there runs on the CPU); nested functions are walked (a closure defined
    and used in the function is part of it)."""
    stack = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.With, ast.AsyncWith)) \
                and any(reader.is_default_device_cpu(item) for item in node.items):
            continue
        if isinstance(node, ast.Call) and reader.pins_to_cpu(node):
            continue  # jax.jit(f, device=cpu): what it wraps runs on the CPU
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _source_line(source_lines: list[str], node: ast.AST) -> str:
    number = getattr(node, "lineno", 0)
    line = source_lines[number - 1].strip() if 0 < number <= len(source_lines) else ""
    return line if len(line) <= _CALL_LINE_LENGTH else line[: _CALL_LINE_LENGTH - 1] + "…"


def _call_steps(loop: _Loop, call: ast.Call | None, constants: dict[str, int]) -> int | None:
    if loop.steps is not None:
        return loop.steps
    if loop.parameter is None or call is None:
        return None
    position, name = loop.parameter
    argument = next((k.value for k in call.keywords if k.arg == name), None)
    if argument is None and position < len(call.args):
        argument = call.args[position]
    return _int_value(argument, constants)


def _reachable_loops(function: _Function, namespace: _Names, modules: dict[str, _Names],
                     ) -> list[tuple[_Function, _Loop]]:
    """The loops ``function`` runs, its own and those of the user functions it refers
    to (depth-first, each function once), none under a CPU pin."""
    found: list[tuple[_Function, _Loop]] = []
    seen: set[int] = set()

    def visit(current: _Function, depth: int) -> None:
        if id(current) in seen or depth > _MAX_DEPTH or current.pinned_to_cpu:
            return
        seen.add(id(current))
        found.extend((current, loop) for loop in current.loops)
        # a module's function refers to its module's names; a cell's, to the notebook's
        scope = modules.get(current.module) if current.module else namespace
        for name in sorted(current.references):
            callee = scope.functions.get(name) if scope is not None else None
            if callee is not None:
                visit(callee, depth + 1)

    visit(function, 0)
    return found


def link_loops(cells: Sequence[tuple[int, str]],
               module_source: Callable[[str], str | None] | None = None,
               ) -> dict[int, list[LoopCall]]:
    """Cell index -> the GPU loops the cell runs, for ``cells`` (index, source) in the
    order they ran; ``module_source`` gives the text of a local module by name (None:
    not a local module, e.g. an installed library)."""
    namespace = _Names()
    modules = namespace.loaded
    reader = _Reader(namespace, module_source, modules)
    result: dict[int, list[LoopCall]] = {}
    for index, source in cells:
        tree = _parse(source)
        if tree is None:
            continue
        lines = without_magics(source).split("\n")
        # definitions first: a cell that defines and calls a function runs it
        for statement in tree.body:
            reader.read_definition(statement, cell=index, module=None)
        runs = _cell_runs(tree, lines, reader, namespace, modules)
        if runs:
            result[index] = runs
    return result


def _cell_runs(tree: ast.Module, lines: list[str], reader: _Reader, namespace: _Names,
               modules: dict[str, _Names]) -> list[LoopCall]:
    runs: list[LoopCall] = []
    seen: set[tuple[str | None, str, str | None]] = set()

    def add(run: LoopCall) -> None:
        key = (run.function, run.primitive, run.loop_function)
        if key not in seen:
            seen.add(key)
            runs.append(run)

    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.Import, ast.ImportFrom)):
            continue  # defining is not running
        for node in _walk_outside_cpu(statement, reader):
            line = _source_line(lines, node)
            if isinstance(node, ast.Call):
                primitive = reader.primitive(node)
                if primitive is not None:
                    loop = reader.loop(primitive, node, ())
                    add(LoopCall(primitive=f"lax.{primitive}", steps=loop.steps, call=line))
                    continue
            name, call = _called_name(node, namespace)
            function = namespace.functions.get(name) if name else None
            if function is None:
                continue
            for owner, loop in _reachable_loops(function, namespace, modules):
                add(LoopCall(
                    primitive=f"lax.{loop.primitive}", function=name,
                    defined_cell=function.cell, module=function.module,
                    loop_function=owner.name if owner is not function else None,
                    steps=_call_steps(loop, call if owner is function else None,
                                      namespace.constants),
                    call=line))
    return runs


def _called_name(node: ast.AST, namespace: _Names) -> tuple[str | None, ast.Call | None]:
    """The user function a node calls or passes on: ``f(x)``, ``jax.vmap(f)``,
    ``m.f(x)`` for a local module ``m`` (its functions are looked up under ``m.f``)."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id, node
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in namespace.modules:
            qualified = f"{func.value.id}.{func.attr}"
            _bind_module_function(namespace, func.value.id, func.attr, qualified)
            return qualified, node
        return None, None
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return node.id, None  # passed on (``timeit(f)``, ``jax.vmap(f)``): no arguments
    return None, None


def _bind_module_function(namespace: _Names, alias: str, attribute: str,
                          qualified: str) -> None:
    module = namespace.loaded.get(namespace.modules[alias])
    if module is not None and attribute in module.functions:
        namespace.functions[qualified] = module.functions[attribute]


def defined_functions(cells: Sequence[tuple[int, str]],
                      module_source: Callable[[str], str | None] | None = None) -> list[str]:
    """The functions the notebook's own code defines: every ``def`` and every name bound
    to a ``lambda`` in its cells, and the ``def`` s of the local modules they import
    (``module_source`` as for :func:`link_loops`).  A JAX compilation of one of these
    (``jit(qm_jax)``) is the user's; any other (``jit(iota)``) is JAX's own work."""
    names: set[str] = set()
    modules: set[str] = set()
    for _, source in cells:
        tree = _parse(source)
        if tree is None:
            continue
        names |= _definitions(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module)
    for module in sorted(modules) if module_source is not None else ():
        text = module_source(module)
        tree = _parse(text) if text is not None else None
        if tree is not None:
            names |= _definitions(tree)
    return sorted(names)


def _definitions(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            found |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return found


def device_twins(cells: Sequence[tuple[int, str]]) -> dict[int, list[str]]:
    """Cell index -> the functions the cell wraps in a ``jit`` pinned to a device
    (``jax.jit(qm_jax, device=cpu)``, ``jit(f, backend="cpu")``): JAX compiles the
    function again for that device, under the same name, which is no compilation
    again of the function an earlier cell compiled (``compiled_again``)."""
    result: dict[int, list[str]] = {}
    for index, source in cells:
        tree = _parse(source) if "jit" in source else None
        if tree is None:
            continue
        names = sorted({node.args[0].id for node in ast.walk(tree)
                        if isinstance(node, ast.Call) and _is_jit(node.func) and node.args
                        and isinstance(node.args[0], ast.Name)
                        and any(keyword.arg in ("device", "backend")
                                for keyword in node.keywords)})
        if names:
            result[index] = names
    return result


def _is_jit(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "jit") or (
        isinstance(node, ast.Attribute) and node.attr == "jit")
