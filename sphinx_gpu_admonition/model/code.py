"""What a notebook's code runs, from one parse of its code cells.

The kernel probe only sees the running cell's own text, but a real lecture defines
a function with a ``lax.scan`` in one cell and times it in the next two: the time is
spent in the calling cells.  :func:`read_code` parses every code cell once (builder
side, standard library ``ast``), in notebook order as the kernel ran them, and links
each cell to the user functions it calls, resolved to the cell (or local module)
that defined them and through the user functions those call (:mod:`.code_names`):

- the sequential JAX loop primitives they run (``lax.scan``, ``fori_loop``,
  ``while_loop``, ``lax.map``, ``associative_scan``), under whatever alias the
  notebook imported them (``CellRecord.runs``);
- the Python loops around JAX work and the host syncs in them
  (:mod:`.python_loops`, ``CellRecord.dispatch_loops``);
- the jitted functions, and whether the code makes them anew (:mod:`.jit_calls`,
  ``CellRecord.jit_calls``);
- the statement doing the cell's work (:mod:`.work_line`, ``CellRecord.work``).

Functions pinned to the CPU (``jax.jit(f, device=cpu)``, ``backend="cpu"``) and calls
inside ``with jax.default_device(cpu):`` are left out of ``runs``: they are not GPU
loops (the Python loops say ``pinned_to_cpu`` instead).

Nothing here runs the notebook's code; a cell that does not parse (a magic this
module does not know) links nothing.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence

from .code_names import (
    LOOP_PRIMITIVES,
    MAX_DEPTH,
    JaxLoop,
    Names,
    Reader,
    UserFunction,
    argument,
    called_name,
    callees,
    scope_of,
    walk_outside_cpu,
)
from .code_text import dotted_name, int_value, parse, statement_text, without_magics
from .jit_calls import LocalScope, cell_jit_calls, inline_jit
from .python_loops import LoopReader
from .record import DispatchLoop, JitCall, LoopCall, NotebookRecord, WorkLine
from .work_line import work_line

__all__ = ["LOOP_PRIMITIVES", "CellCode", "NotebookCode", "defined_functions",
           "device_twins", "link_loops", "read_code", "without_magics"]

#: library calls that take real time (a finding's code line names them rather than
#: the assignments around them): by a module in their dotted name ...
_HEAVY_MODULES = frozenset({"linalg", "fft", "optimize", "integrate", "interpolate",
                            "sparse", "signal", "ndimage"})
#: ... or by their own name
_HEAVY_FUNCTIONS = frozenset({
    "minimize", "minimize_scalar", "root", "root_scalar", "fsolve", "brentq", "bisect",
    "quad", "dblquad", "odeint", "solve_ivp", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "pinv", "solve", "svd", "lstsq", "det", "qr", "cholesky", "expm", "matrix_power",
    "kron", "convolve", "fit", "train", "sample", "mcmc", "run_mcmc"})
#: calls that are no work worth naming
_TRIVIAL = re.compile(r"^(print|display|len|range|str|repr|format|enumerate|zip|list|"
                      r"tuple|dict|set|isinstance|type|help|plt\..*|ax\..*|fig\..*|"
                      r".*\.set_\w+|.*\.legend|.*\.append|time\..*|.*\.seed)$")


@dataclasses.dataclass
class CellCode:
    """What one cell's code runs (the fields of its :class:`.record.CellRecord`)."""

    runs: list[LoopCall] = dataclasses.field(default_factory=list)
    dispatch_loops: list[DispatchLoop] = dataclasses.field(default_factory=list)
    jit_calls: list[JitCall] = dataclasses.field(default_factory=list)
    work: WorkLine | None = None
    device_twins: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class NotebookCode:
    """:func:`read_code`'s result: each cell's by index, and the notebook's functions."""

    cells: dict[int, CellCode]
    user_functions: list[str]

    def fill(self, record: NotebookRecord) -> None:
        """Set the parse's fields of ``record`` and of each of its cells, keyed by their
        position among the code cells that ran (a cell whose position is not known gets
        empty ones)."""
        record.user_functions = list(self.user_functions)
        for cell in record.cells:
            code = self.cells.get(cell.position) if cell.position is not None else None
            code = code or CellCode()
            cell.runs = list(code.runs)
            cell.dispatch_loops = list(code.dispatch_loops)
            cell.jit_calls = list(code.jit_calls)
            cell.work = code.work
            cell.device_twins = list(code.device_twins)


def read_code(cells: Sequence[tuple[int, str]],
              module_source: Callable[[str], str | None] | None = None) -> NotebookCode:
    """Each cell's :class:`CellCode`, for ``cells`` (position, source) in the order they
    ran (``defined_cell`` of what it finds is such a position); ``module_source`` gives
    the text of a local module by name (None: not a local module, e.g. an installed
    library)."""
    namespace = Names()
    modules = namespace.loaded
    reader = Reader(namespace, module_source, modules)
    scopes: dict[int, LocalScope] = {}
    loops = LoopReader(reader, scopes)
    call_kinds = _call_kinds(reader, namespace, modules, loops)
    result: dict[int, CellCode] = {}
    defined: set[str] = set()
    imported: set[str] = set()
    for index, source in cells:
        tree = parse(source)
        if tree is None:
            continue
        nodes = list(ast.walk(tree))
        _definitions(nodes, defined, imported)
        lines = without_magics(source).split("\n")
        try:
            # definitions first: a cell that defines and calls a function runs it
            for statement in tree.body:
                reader.read_definition(statement, cell=index, module=None, lines=lines)
            loops.new_cell()
            code = _cell_code(index, source, tree, nodes, lines, reader, loops, scopes,
                              call_kinds)
        except RecursionError:  # an expression nested too deep to follow: nothing known
            continue
        if code != CellCode():
            result[index] = code
    return NotebookCode(result, _defined(defined, imported, module_source))


def _cell_code(index: int, source: str, tree: ast.Module, nodes: Sequence[ast.AST],
               lines: list[str], reader: Reader, loops: LoopReader,
               scopes: dict[int, LocalScope], call_kinds: Callable[[ast.Call], str | None],
               ) -> CellCode:
    namespace = reader.names
    code = CellCode(device_twins=_twins(nodes) if "jit" in source else [])
    kinds = {type(node) for node in nodes}
    if ast.Call not in kinds:
        # nothing runs a function: no loop dispatches, no jit runs; a Python loop or a
        # timed statement may still be the cell's work
        if kinds & {ast.For, ast.AsyncFor, ast.While} or "%" in source:
            code.work = work_line(source, tree, lines, call_kinds)
        return code
    code.runs = _cell_runs(tree, lines, reader, namespace, namespace.loaded)
    code.dispatch_loops = loops.cell_loops(tree, lines, namespace, index)
    code.jit_calls = cell_jit_calls(tree, lines, reader, namespace, index, scopes,
                                    inline="jit" in source)
    own_loops = frozenset(loop.line for loop in code.dispatch_loops if loop.function is None)
    code.work = work_line(source, tree, lines, call_kinds, own_loops)
    return code


def link_loops(cells: Sequence[tuple[int, str]],
               module_source: Callable[[str], str | None] | None = None,
               ) -> dict[int, list[LoopCall]]:
    """Cell index -> the GPU loops the cell runs (:func:`read_code`'s ``runs``)."""
    return {index: code.runs for index, code in read_code(cells, module_source).cells.items()
            if code.runs}


def _call_kinds(reader: Reader, namespace: Names, modules: dict[str, Names | None],
                loops: LoopReader) -> Callable[[ast.Call], str | None]:
    """How much one call of the cell weighs (:data:`.record.WORK_KINDS`)."""

    def kind(call: ast.Call) -> str | None:
        if reader.primitive(call) is not None:
            return "loop_call"
        name, _ = called_name(call, namespace)
        function = namespace.functions.get(name) if name else None
        if function is not None and isinstance(call.func, (ast.Name, ast.Attribute)):
            if _reachable_loops(function, namespace, modules, include_pinned=True):
                return "loop_call"
            if not function.jitted and loops.reachable(function):
                return "dispatch_loop"
            if function.jitted or function.batched or loops.uses_jax(function):
                return "jitted_call"
            return "user_call"
        if inline_jit(call, reader) is not None:
            return "jitted_call"
        dotted = dotted_name(call.func)
        if dotted is None:
            return "call"
        parts = dotted.split(".")
        if _HEAVY_MODULES & set(parts[:-1]) or parts[-1] in _HEAVY_FUNCTIONS:
            return "heavy_call"
        if reader.is_jax_call(call):
            return "jax_call" if reader.is_jax_work(call) else None
        if _TRIVIAL.match(dotted) or parts[-1] == "block_until_ready":
            return None
        return "call"

    return kind


def _call_steps(steps: int | None, parameter: tuple[int, str] | None,
                call: ast.Call | None, constants: dict[str, int]) -> int | None:
    if steps is not None:
        return steps
    return int_value(argument(call, parameter), constants)


def _reachable_loops(function: UserFunction, namespace: Names,
                     modules: dict[str, Names | None], include_pinned: bool = False,
                     ) -> list[tuple[UserFunction, JaxLoop]]:
    """The loops ``function`` runs, its own and those of the user functions it refers
    to (depth-first, each function once), none under a CPU pin unless
    ``include_pinned``."""
    found: list[tuple[UserFunction, JaxLoop]] = []
    seen: set[int] = set()

    def visit(current: UserFunction, depth: int) -> None:
        if id(current) in seen or depth > MAX_DEPTH or (
                current.pinned_to_cpu and not include_pinned):
            return
        seen.add(id(current))
        found.extend((current, loop) for loop in current.loops)
        # a module's function refers to its module's names; a cell's, to the notebook's
        for callee in callees(current, scope_of(current, namespace)):
            visit(callee, depth + 1)

    visit(function, 0)
    return found


def _cell_runs(tree: ast.Module, lines: list[str], reader: Reader, namespace: Names,
               modules: dict[str, Names | None]) -> list[LoopCall]:
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
        for node in walk_outside_cpu(statement, reader):
            if isinstance(node, ast.Call):
                primitive = reader.primitive(node)
                if primitive is not None:
                    loop = reader.loop(primitive, node, ())
                    add(LoopCall(primitive=f"lax.{primitive}", steps=loop.steps,
                                 call=statement_text(node, lines)))
                    continue
            name, call = called_name(node, namespace)
            function = namespace.functions.get(name) if name else None
            if function is None:
                continue
            for owner, loop in _reachable_loops(function, namespace, modules):
                add(LoopCall(
                    primitive=f"lax.{loop.primitive}", function=name,
                    defined_cell=function.cell, module=function.module,
                    loop_function=owner.name if owner is not function else None,
                    steps=_call_steps(loop.steps, loop.parameter,
                                      call if owner is function else None,
                                      namespace.constants),
                    call=statement_text(node, lines)))
    return runs


def defined_functions(cells: Sequence[tuple[int, str]],
                      module_source: Callable[[str], str | None] | None = None) -> list[str]:
    """The functions the notebook's own code defines: every ``def`` and every name bound
    to a ``lambda`` in its cells, and the ``def`` s of the local modules they import
    (``module_source`` as for :func:`read_code`).  A JAX compilation of one of these
    (``jit(qm_jax)``) is the user's; any other (``jit(iota)``) is JAX's own work."""
    names: set[str] = set()
    modules: set[str] = set()
    for _, source in cells:
        tree = parse(source)
        if tree is not None:
            _definitions(ast.walk(tree), names, modules)
    return _defined(names, modules, module_source)


def _defined(names: set[str], modules: set[str],
             module_source: Callable[[str], str | None] | None) -> list[str]:
    """``names`` (the cells' definitions) and those of the local ``modules``."""
    names = set(names)
    for module in sorted(modules) if module_source is not None else ():
        text = module_source(module)
        tree = parse(text) if text is not None else None
        if tree is not None:
            _definitions(ast.walk(tree), names, set())
    return sorted(names)


def _definitions(nodes: Iterable[ast.AST], names: set[str], modules: set[str]) -> None:
    """Add the functions among ``nodes`` (a tree walked) to ``names``, the modules it
    imports to ``modules``."""
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)


def device_twins(cells: Sequence[tuple[int, str]]) -> dict[int, list[str]]:
    """Cell index -> the functions the cell wraps in a ``jit`` pinned to a device
    (``jax.jit(qm_jax, device=cpu)``, ``jit(f, backend="cpu")``): JAX compiles the
    function again for that device, under the same name, which is no compilation
    again of the function an earlier cell compiled (``compiled_again``)."""
    result: dict[int, list[str]] = {}
    for index, source in cells:
        tree = parse(source) if "jit" in source else None
        names = _twins(ast.walk(tree)) if tree is not None else []
        if names:
            result[index] = names
    return result


def _twins(nodes: Iterable[ast.AST]) -> list[str]:
    return sorted({node.args[0].id for node in nodes
                   if isinstance(node, ast.Call) and _is_jit(node.func) and node.args
                   and isinstance(node.args[0], ast.Name)
                   and any(keyword.arg in ("device", "backend") for keyword in node.keywords)})


def _is_jit(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "jit") or (
        isinstance(node, ast.Attribute) and node.attr == "jit")
