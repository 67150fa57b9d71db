"""What the names of a notebook's code stand for: the one reading of its namespace.

:mod:`.code` and the modules it calls on (:mod:`.python_loops`, :mod:`.work_line`)
read a notebook's code cells in the order the kernel ran them; this module is what
they share beside the cell's text (:mod:`.code_text`): :class:`Reader`, which reads
one namespace's top-level statements (the notebook's, or a local module's) into
:class:`Names`: the aliases of ``jax``,
``jax.lax``, ``jax.numpy``, ``numpy``, ``jit``, ``vmap`` and ``partial``, integer
constants, CPU devices, and the user functions with their JAX loop primitives, the
names they refer to, and how they are compiled (``@jax.jit``, ``f = jax.jit(g)``,
``partial(jax.jit, device=cpu)``, ``jax.vmap``).

Nothing here runs the notebook's code; a cell that does not parse links nothing.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterable, Sequence

from .code_text import dotted_name, int_value, parse, source_line, without_magics

#: sequential loop primitives of ``jax.lax``: on a GPU every iteration launches device
#: kernels, so their cost there grows with the step count
LOOP_PRIMITIVES = ("scan", "fori_loop", "while_loop", "map", "associative_scan")

#: how deep calls between user functions are followed (recursion, long chains)
MAX_DEPTH = 8
#: ``jax.numpy`` functions that make an array of a given length (``jnp.arange(n)``),
#: whose length is a ``lax.scan``'s step count when it is the scanned ``xs``
_LENGTH_MAKERS = ("arange", "ones", "zeros", "empty")
#: ``jax.*`` functions that are no device work
_NOT_WORK = ("devices", "local_devices", "device_count", "config", "default_device",
             "device_get", "block_until_ready", "print_environment_info", "jit", "vmap",
             "grad", "jacobian", "jacfwd", "jacrev", "hessian", "value_and_grad",
             "make_jaxpr", "eval_shape", "tree_util", "tree", "named_call", "checkpoint")


@dataclasses.dataclass
class JaxLoop:
    """A loop primitive a function calls, and its step count where the code gives it."""

    primitive: str
    steps: int | None = None
    #: the position (and name) of the function's parameter that gives the count
    parameter: tuple[int, str] | None = None


@dataclasses.dataclass
class JitSite:
    """Where the code makes a jitted function: ``@jax.jit``, ``f = jax.jit(g)``,
    ``jax.jit(lambda v: ...)(x)``."""

    #: the Python function as JAX names its compilation (``jit(q)``): ``q``, ``<lambda>``
    function: str
    #: the code cell (None: a local module's code) and the line there (1: its first)
    cell: int | None
    module: str | None
    line: int
    code: str
    #: it wraps a function made anew each time the code runs (a lambda, a closure, a
    #: partial, a function passed in) inside a function or a loop
    recreated: bool = False
    #: the user function whose every call makes it again (None: the cell's own code)
    created_in: str | None = None
    pinned_to_cpu: bool = False


@dataclasses.dataclass
class UserFunction:
    """A function of the notebook's code (a ``def``, a lambda bound to a name, or a
    jitted / vmapped copy of one)."""

    name: str
    #: the cell index that defined it, or None for a module's function
    cell: int | None
    module: str | None
    parameters: list[str]
    loops: list[JaxLoop]
    #: names the body refers to (calls, and functions passed to loops or ``vmap``)
    references: set[str]
    pinned_to_cpu: bool = False
    #: how JAX compiles it, when it is jitted (None: it runs op by op, or in Python)
    jit: JitSite | None = None
    #: a ``jax.vmap`` of the function: one batched program, not a call per element
    batched: bool = False
    #: its definition (body and lines) for the readers of Python loops, and the lines
    #: of the cell or module that holds it
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None = \
        dataclasses.field(default=None, repr=False, compare=False)
    lines: Sequence[str] = dataclasses.field(default=(), repr=False, compare=False)

    @property
    def jitted(self) -> bool:
        return self.jit is not None

    @property
    def compiled_name(self) -> str:
        """The name JAX compiles it under (``jit(<name>)``): its ``def`` 's, or
        ``<lambda>``."""
        if isinstance(self.node, ast.Lambda):
            return "<lambda>"
        return self.node.name if self.node is not None else self.name


@dataclasses.dataclass
class Names:
    """What the names of one namespace (the notebook's, or a module's) stand for."""

    jax: set[str] = dataclasses.field(default_factory=set)
    lax: set[str] = dataclasses.field(default_factory=set)
    #: ``jax.numpy`` (``jnp``), ``numpy`` (``np``) aliases
    jnp: set[str] = dataclasses.field(default_factory=set)
    numpy: set[str] = dataclasses.field(default_factory=set)
    #: ``jit`` / ``vmap`` imported from ``jax``, ``partial`` from ``functools``
    jit: set[str] = dataclasses.field(default_factory=set)
    vmap: set[str] = dataclasses.field(default_factory=set)
    partial: set[str] = dataclasses.field(default_factory=lambda: {"partial"})
    #: name -> primitive (``from jax.lax import scan as s``)
    primitives: dict[str, str] = dataclasses.field(default_factory=dict)
    #: names bound to a CPU device (``cpu = jax.devices("cpu")[0]``)
    cpu: set[str] = dataclasses.field(default_factory=set)
    #: integer constants (``n = 10_000_000``), for step counts
    constants: dict[str, int] = dataclasses.field(default_factory=dict)
    #: lengths of tuple and list literals (``sizes = (10, 20, 30)``), for loop counts
    lengths: dict[str, int] = dataclasses.field(default_factory=dict)
    functions: dict[str, UserFunction] = dataclasses.field(default_factory=dict)
    #: local module aliases (``import mylib as m``) -> module name
    modules: dict[str, str] = dataclasses.field(default_factory=dict)
    #: every local module read so far, by name (shared by the notebook and its modules)
    loaded: dict[str, Names | None] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Wrapped:
    """What ``jax.jit(jax.vmap(g), device=cpu)`` wraps, and how."""

    base: ast.expr
    jitted: bool = False
    batched: bool = False
    pinned: bool = False
    #: through ``partial(g, ...)``: a new object each time it runs
    partial: bool = False


class Reader:
    """Reads one namespace's statements: imports, constants, functions, loops."""

    def __init__(self, names: Names, module_source: Callable[[str], str | None] | None,
                 modules: dict[str, Names | None]):
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

    def is_jit(self, node: ast.AST) -> bool:
        """``jax.jit``, or ``jit`` imported from ``jax`` (not numba's)."""
        return self.is_jax_attribute(node, "jit") or (
            isinstance(node, ast.Name) and node.id in self.names.jit)

    def is_vmap(self, node: ast.AST) -> bool:
        return self.is_jax_attribute(node, "vmap") or (
            isinstance(node, ast.Name) and node.id in self.names.vmap)

    def is_partial(self, node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in self.names.partial) or (
            isinstance(node, ast.Attribute) and node.attr == "partial"
            and isinstance(node.value, ast.Name) and node.value.id == "functools")

    def is_jax_call(self, call: ast.Call) -> bool:
        """``jnp.max(...)``, ``jax.random.normal(...)``, ``x.at[0].set(...)`` excepted:
        a call of JAX's own API on a ``jax`` / ``jax.numpy`` alias."""
        name = dotted_name(call.func)
        if name is None:
            return False
        root = name.split(".", 1)[0]
        return root in self.names.jnp or (root in self.names.jax and "." in name)

    def is_jax_work(self, call: ast.Call) -> bool:
        """A JAX call that runs device work (not ``jax.devices()``, ``jax.jit(f)``)."""
        return self.is_jax_call(call) and is_work(call)

    def is_numpy_call(self, call: ast.Call) -> bool:
        name = dotted_name(call.func)
        return name is not None and name.split(".", 1)[0] in self.names.numpy

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

    def jit_decorator(self, decorator: ast.expr) -> tuple[bool, bool]:
        """(jits, pins to the CPU) for one decorator: ``@jax.jit``, ``@jit``,
        ``@partial(jax.jit, static_argnums=(1,), device=cpu)``, ``@jax.jit(...)``."""
        if self.is_jit(decorator):
            return True, False
        if isinstance(decorator, ast.Call):
            if self.is_jit(decorator.func) and not decorator.args:
                return True, self.pins_to_cpu(decorator)
            if self.is_partial(decorator.func) and decorator.args \
                    and self.is_jit(decorator.args[0]):
                return True, self.pins_to_cpu(decorator)
        return False, False

    def is_vmap_decorator(self, decorator: ast.expr) -> bool:
        return self.is_vmap(decorator) or (
            isinstance(decorator, ast.Call) and (
                (self.is_vmap(decorator.func) and not decorator.args)
                or (self.is_partial(decorator.func) and bool(decorator.args)
                    and self.is_vmap(decorator.args[0]))))

    def unwrap(self, expression: ast.expr) -> Wrapped:
        """``jax.jit(jax.vmap(g), device=cpu)`` -> ``g``, jitted, batched, pinned;
        ``partial(jax.jit, static_argnums=1)(g)``; anything else as it is."""
        found = Wrapped(expression)
        node = expression
        for _ in range(MAX_DEPTH):
            if not isinstance(node, ast.Call) or not node.args:
                break
            func = node.func
            if self.is_jit(func):
                found.jitted = True
                found.pinned = found.pinned or self.pins_to_cpu(node)
            elif isinstance(func, ast.Call) and self.jit_decorator(func)[0]:
                found.jitted = True  # partial(jax.jit, ...)(g)
                found.pinned = found.pinned or self.jit_decorator(func)[1]
            elif self.is_vmap(func):
                found.batched = True
            elif self.is_partial(func):
                found.partial = True
            else:
                break
            node = node.args[0]
        found.base = node
        return found

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
                elif alias.name == "jax.numpy":
                    (names.jnp if alias.asname else names.jax).add(bound)
                elif alias.name == "numpy":
                    names.numpy.add(bound)
                elif self.load_module(alias.name) is not None:
                    names.modules[bound] = alias.name
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
            origin = statement.module or ""
            for alias in statement.names:
                bound = alias.asname or alias.name
                if origin == "jax" and alias.name == "lax":
                    names.lax.add(bound)
                elif origin == "jax" and alias.name == "numpy":
                    names.jnp.add(bound)
                elif origin == "jax" and alias.name in ("jit", "vmap"):
                    (names.jit if alias.name == "jit" else names.vmap).add(bound)
                elif origin == "functools" and alias.name == "partial":
                    names.partial.add(bound)
                elif origin == "jax.lax" and alias.name in LOOP_PRIMITIVES:
                    names.primitives[bound] = alias.name
                elif origin == "jax" and alias.name == "default_device":
                    names.jax.discard(bound)  # a bare default_device(...) is recognised
                else:
                    if alias.name == "jit":
                        names.jit.discard(bound)  # numba's jit
                    module = self.load_module(origin)
                    if module is not None and alias.name in module.functions:
                        names.functions[bound] = module.functions[alias.name]

    def load_module(self, name: str) -> Names | None:
        """A local module's namespace (``module_source`` finds its file), read once."""
        if name in self.modules:
            return self.modules[name]
        source = self.module_source(name) if self.module_source is not None else None
        self.modules[name] = None  # an import cycle stops here
        tree = parse(source) if source is not None else None
        if tree is None:
            return None
        namespace = Names(loaded=self.modules)
        reader = Reader(namespace, self.module_source, self.modules)
        lines = without_magics(source or "").split("\n")
        for statement in tree.body:
            reader.read_definition(statement, cell=None, module=name, lines=lines)
        self.modules[name] = namespace
        return namespace

    def read_definition(self, statement: ast.stmt, cell: int | None, module: str | None,
                        lines: Sequence[str] = ()) -> None:
        """Imports, constants, CPU devices and functions bound at the top level."""
        names = self.names
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            self.read_import(statement)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.functions[statement.name] = self.function(statement, cell, module, lines)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            self.read_assignment(statement.targets[0].id, statement.value, cell, module,
                                 lines, statement)

    def read_assignment(self, target: str, value: ast.expr, cell: int | None,
                        module: str | None, lines: Sequence[str], statement: ast.stmt,
                        ) -> None:
        names = self.names
        names.constants.pop(target, None)
        names.lengths.pop(target, None)
        names.cpu.discard(target)
        number = int_value(value, names.constants)
        if number is not None:
            names.constants[target] = number
            return
        if isinstance(value, (ast.Tuple, ast.List)) \
                and not any(isinstance(item, ast.Starred) for item in value.elts):
            names.lengths[target] = len(value.elts)
            return
        wrapped = self.unwrap(value) if isinstance(value, ast.Call) else None
        if wrapped is not None and (wrapped.jitted or wrapped.batched):
            function = self.wrapped_function(wrapped, cell, module, lines, statement,
                                             target)
            if function is not None:
                names.functions[target] = function
                return
        if isinstance(value, ast.Call) and self.wrapped(value) is not None:
            # f = some_wrapper(g): f runs g
            names.functions[target] = names.functions[self.wrapped(value)]  # type: ignore[index]
        elif isinstance(value, ast.Lambda):
            names.functions[target] = self.function(value, cell, module, lines, target)
        elif self.means_cpu(value) and isinstance(value, (ast.Subscript, ast.Call)):
            names.cpu.add(target)

    def wrapped_function(self, wrapped: Wrapped, cell: int | None, module: str | None,
                         lines: Sequence[str], statement: ast.stmt, target: str,
                         ) -> UserFunction | None:
        """The user function a top-level ``jax.jit(g)`` / ``jax.vmap(g)`` makes (None:
        it wraps no user function, e.g. ``jax.jit(jnp.cumsum)``)."""
        base = wrapped.base
        if isinstance(base, ast.Lambda):
            inner = self.function(base, cell, module, lines, target)
        elif isinstance(base, ast.Name) and base.id in self.names.functions:
            inner = self.names.functions[base.id]
        else:
            return None
        jit = inner.jit
        if wrapped.jitted:
            jit = JitSite(inner.compiled_name, cell, module, statement.lineno,
                          source_line(lines, statement), pinned_to_cpu=wrapped.pinned)
        return dataclasses.replace(
            inner, jit=jit, batched=inner.batched or wrapped.batched,
            pinned_to_cpu=inner.pinned_to_cpu or wrapped.pinned)

    def wrapped(self, call: ast.Call) -> str | None:
        """``jax.jit(g, ...)`` or ``jit(g)``: the user function ``g`` it wraps."""
        if call.args and isinstance(call.args[0], ast.Name) \
                and call.args[0].id in self.names.functions:
            return call.args[0].id
        return None

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                 cell: int | None, module: str | None, lines: Sequence[str] = (),
                 name: str | None = None) -> UserFunction:
        arguments = node.args
        parameters = [arg.arg for arg in arguments.posonlyargs + arguments.args]
        decorators = [] if isinstance(node, ast.Lambda) else node.decorator_list
        jit: JitSite | None = None
        pinned = batched = False
        for decorator in decorators:
            jits, pins = self.jit_decorator(decorator)
            pinned = pinned or pins or (isinstance(decorator, ast.Call)
                                        and self.pins_to_cpu(decorator))
            batched = batched or self.is_vmap_decorator(decorator)
            if jits:
                jit = JitSite(getattr(node, "name", "<lambda>"), cell, module,
                              decorator.lineno, source_line(lines, decorator),
                              pinned_to_cpu=pins)
        loops: list[JaxLoop] = []
        references: set[str] = set()
        body = [ast.Expr(node.body)] if isinstance(node, ast.Lambda) else node.body
        self.collect(body, loops, references, parameters)
        return UserFunction(name or getattr(node, "name", "<lambda>"), cell, module,
                            parameters, loops, references, pinned, jit, batched, node, lines)

    def collect(self, body: Iterable[ast.stmt], loops: list[JaxLoop], references: set[str],
                parameters: Sequence[str] = ()) -> None:
        """The loop primitives called in ``body`` and the names it refers to, leaving
        out what runs under ``with jax.default_device(cpu)``."""
        for statement in body:
            for node in walk_outside_cpu(statement, self):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    references.add(node.id)
                elif isinstance(node, ast.Call):
                    primitive = self.primitive(node)
                    if primitive is not None:
                        loops.append(self.loop(primitive, node, parameters))

    def loop(self, primitive: str, call: ast.Call, parameters: Sequence[str]) -> JaxLoop:
        """The primitive and its step count: ``length=``, ``fori_loop(lower, upper, ...)``,
        a scan over ``jnp.arange(n)``."""
        # a parameter shadows a notebook constant of the same name (``n``)
        constants = {k: v for k, v in self.names.constants.items() if k not in parameters}
        if primitive == "fori_loop" and len(call.args) >= 2:
            lower = int_value(call.args[0], constants)
            upper = call.args[1]
            if lower is not None:
                upper_value = int_value(upper, constants)
                if upper_value is not None:
                    return JaxLoop(primitive, steps=max(upper_value - lower, 0))
                if lower == 0 and isinstance(upper, ast.Name) and upper.id in parameters:
                    return JaxLoop(primitive, parameter=(parameters.index(upper.id), upper.id))
            return JaxLoop(primitive)
        length = next((k.value for k in call.keywords if k.arg == "length"), None)
        if primitive == "scan" and length is None and len(call.args) >= 4:
            length = call.args[3]
        if primitive == "scan" and length is None:
            length = self.array_length(
                call.args[2] if len(call.args) >= 3 else
                next((k.value for k in call.keywords if k.arg == "xs"), None))
        if length is not None:
            if isinstance(length, ast.Name) and length.id in parameters:
                return JaxLoop(primitive, parameter=(parameters.index(length.id), length.id))
            steps = int_value(length, constants)
            if steps is not None:
                return JaxLoop(primitive, steps=steps)
        return JaxLoop(primitive)

    def array_length(self, node: ast.AST | None) -> ast.expr | None:
        """The length expression of ``jnp.arange(n)``, ``jnp.ones(n)`` (one dimension)."""
        if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
            return None
        name = dotted_name(node.func)
        if name is None or "." not in name:
            return None
        root, _, function = name.rpartition(".")
        if function in _LENGTH_MAKERS and (
                root in self.names.jnp or root in self.names.numpy):
            return node.args[0]
        return None


def walk_outside_cpu(statement: ast.AST, reader: Reader) -> Iterable[ast.AST]:
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


def called_name(node: ast.AST, namespace: Names) -> tuple[str | None, ast.Call | None]:
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


def _bind_module_function(namespace: Names, alias: str, attribute: str,
                          qualified: str) -> None:
    module = namespace.loaded.get(namespace.modules[alias])
    if module is not None and attribute in module.functions:
        namespace.functions[qualified] = module.functions[attribute]


def is_work(call: ast.Call) -> bool:
    """``jnp.max(x)``, ``jax.random.normal(k)``: not ``jax.devices()``, ``jax.jit(f)``."""
    parts = (dotted_name(call.func) or "").split(".")
    return len(parts) < 2 or parts[1] not in _NOT_WORK


def callees(function: UserFunction, scope: Names | None) -> list[UserFunction]:
    """The user functions ``function``'s body refers to (its parameters shadow the
    namespace's names: ``def simulate(x, T)`` does not call a function ``T``)."""
    if scope is None:
        return []
    shadowed = set(function.parameters)
    return [scope.functions[name] for name in sorted(function.references - shadowed)
            if name in scope.functions]


def scope_of(function: UserFunction, namespace: Names) -> Names | None:
    """The namespace a function's names refer to: its module's, or the notebook's."""
    return namespace.loaded.get(function.module) if function.module else namespace


def argument(call: ast.Call | None, parameter: tuple[int, str] | None) -> ast.expr | None:
    """The argument ``call`` passes for ``parameter`` (position, name)."""
    if call is None or parameter is None:
        return None
    position, name = parameter
    value = next((k.value for k in call.keywords if k.arg == name), None)
    if value is None and position < len(call.args):
        value = call.args[position]
    return value
