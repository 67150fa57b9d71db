"""The package's shape stays as docs/architecture.md describes it (a rule across the layers).

Read with :mod:`ast`, in-process: the imports between the package's modules run downward
only (no module imports the package ``__init__`` or another package it lies in) and have no
cycle at module level; the model, the views, the command line, the mystmd adapter and the
probe import only what their layer may; the version is defined once; and the architecture
page's module map names every module (tests/integration/test_architecture.py: the checks
that need a fresh interpreter)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from conftest import PROJECT

PACKAGE = PROJECT / "sphinx_gpu_admonition"


NAME = PACKAGE.name


ARCHITECTURE = PROJECT / "docs" / "architecture.md"


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def imported_modules(name: str, top_level_only: bool) -> set[str]:
    """The package modules ``name`` imports (``from . import x`` names module ``x``
    when it is one, else the package); ``top_level_only``: not those imported
    inside functions (imported when called, so they cannot form a cycle at import)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    if top_level_only:  # imports under ``if``/``try`` at module level run at import too
        nodes = [node for statement in tree.body
                 if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for node in ast.walk(statement)]
    else:
        nodes = list(ast.walk(tree))
    package = name if is_package(name) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == NAME}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            elif (node.module or "").split(".")[0] == NAME:
                target = node.module or ""
            else:
                continue
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES
                          else target)
    return {module for module in found if module in MODULES and module != name}


def test_no_module_imports_a_package_it_lies_in():
    upward = {name: sorted(target for target in imported_modules(name, top_level_only=False)
                           if is_package(target) and name.startswith(target + "."))
              for name in MODULES}
    assert {name: targets for name, targets in upward.items() if targets} == {}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (a list of modules, the first repeated last), or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return None
        for target in sorted(graph[module]):
            cycle = visit(target, path + [module])
            if cycle:
                return cycle
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module, [])
        if cycle:
            return cycle
    return None


def test_module_level_imports_have_no_cycle():
    graph = {name: imported_modules(name, top_level_only=True) for name in MODULES}
    assert find_cycle(graph) is None


def test_imports_inside_functions_make_no_cycle_either():
    """A lazy import hid ``reports -> cli -> ... -> reports`` (issue 23): every import
    counts, wherever it is written, except the package's own ``setup`` entry point
    (``__init__`` loads the Sphinx adapter when Sphinx calls it)."""
    graph = {name: imported_modules(name, top_level_only=False) for name in MODULES}
    graph[NAME] = set()
    assert find_cycle(graph) is None


def _external_imports(name: str) -> set[str]:
    """The top-level names of everything ``name`` imports from outside the package,
    at module level and inside functions."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found - {NAME, "__future__"}


def _layer(prefix: str) -> list[str]:
    return [name for name in MODULES if name == f"{NAME}.{prefix}"
            or name.startswith(f"{NAME}.{prefix}.")]


def test_the_model_imports_only_the_standard_library_and_itself():
    """The engine-neutral core (issue 23): a second engine reuses it as it is."""
    assert _layer("model")
    for name in _layer("model"):
        assert _external_imports(name) <= set(sys.stdlib_module_names), name
        inside = {target.split(".")[1] for target in imported_modules(name, False)
                  if target != NAME}
        # the probe's line protocol: its names are the probe module's own (standard
        # library only), so that the writer and every engine's reader agree
        assert inside <= {"model", "probe", "_version"}, (name, inside)


def test_the_views_import_no_sphinx_docutils_or_adapter():
    assert _layer("render")
    for name in _layer("render"):
        assert not _external_imports(name) & {"sphinx", "docutils", "myst_nb"}, name
        inside = {target.split(".")[1] for target in imported_modules(name, False)
                  if target != NAME}
        assert inside <= {"model", "render", "_version"}, (name, inside)


def test_the_command_line_never_imports_the_sphinx_adapter():
    assert _layer("cli")
    for name in _layer("cli"):
        assert not _external_imports(name) & {"sphinx", "docutils"}, name
        assert not {target for target in imported_modules(name, False)
                    if target.startswith(f"{NAME}.ext")}, name


def test_the_mystmd_adapter_never_imports_the_sphinx_adapter():
    """A second engine reuses the probe, the core and the views, not the Sphinx side."""
    assert _layer("mystmd")
    for name in _layer("mystmd"):
        assert not _external_imports(name) & {"sphinx", "docutils", "myst_nb"}, name
        inside = {target.split(".")[1] for target in imported_modules(name, False)
                  if target != NAME}
        assert inside <= {"model", "render", "probe", "mystmd", "_version"}, (name, inside)


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_probe_imports_only_the_standard_library_at_load():
    """The kernel loads the probe into every user's kernel: at load it may import the
    standard library only (JAX, NVML and IPython only inside functions, when present)."""
    for name in [name for name in MODULES if name.startswith(f"{NAME}.probe")]:
        tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
        loaded = {alias.name.split(".")[0] for node in tree.body
                  if isinstance(node, ast.Import) for alias in node.names}
        loaded |= {node.module.split(".")[0] for node in tree.body
                   if isinstance(node, ast.ImportFrom) and node.module and not node.level}
        assert loaded <= set(sys.stdlib_module_names) | {"__future__"}, (name, loaded)


def test_the_version_is_defined_once():
    from sphinx_gpu_admonition import __version__
    from sphinx_gpu_admonition._version import __version__ as defined

    assert __version__ is defined
    pyproject = (PROJECT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.MULTILINE)
    assert 'version = { attr = "sphinx_gpu_admonition._version.__version__" }' in pyproject
    assert not re.search(r'^version = "', pyproject, re.MULTILINE)
    assignments = [name for name, path in MODULES.items()
                   if re.search(r"^__version__ = ", path.read_text(encoding="utf-8"),
                                re.MULTILINE)]
    assert assignments == [f"{NAME}._version"]


def test_the_module_map_names_every_module():
    if not ARCHITECTURE.exists():
        pytest.fail(f"{ARCHITECTURE} is missing")
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`(sphinx_gpu_admonition(?:\.\w+)*)`", section))
    assert sorted(set(MODULES) - listed) == [], "modules missing from the module map"
    assert sorted(listed - set(MODULES)) == [], "the module map names modules that do not exist"


def floors(prefix: str) -> tuple[int, list[str]]:
    """How many modules deep the imports among the modules under ``prefix`` go
    (counting imports inside functions), and the deepest chain."""
    graph = {name: {target for target in imported_modules(name, top_level_only=False)
                    if target.startswith(prefix) and not is_package(target)}
             for name in MODULES if name.startswith(prefix) and not is_package(name)}
    depth: dict[str, int] = {}

    def walk(name: str) -> int:
        if name not in depth:
            depth[name] = 1 + max((walk(target) for target in graph[name]), default=0)
        return depth[name]

    deepest = max(graph, key=walk)
    chain = [deepest]
    while graph[chain[-1]]:
        chain.append(max(graph[chain[-1]], key=walk))
    return walk(deepest), chain


def test_features_of_the_sphinx_adapter_lean_on_plumbing_not_on_each_other():
    """``ext/`` was nine modules deep (reports -> status_page -> page_info -> admonition
    -> runtime -> support -> capture -> calibration -> state): a feature lean on the
    plumbing (state, warnings, config, support, blocks, _sphinx, _mystnb) and the records
    (capture), so that a change in one feature does not ripple through others."""
    deep, chain = floors(f"{NAME}.ext.")
    assert deep <= 6, " -> ".join(chain)


def test_the_module_map_is_grouped_by_package():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    groups = re.split(r"^### ", section, flags=re.M)[1:]
    assert groups, "the module map has no package headings"
    for group in groups:
        heading = group.splitlines()[0]
        package = re.match(r"`(\w+)/?`", heading)
        assert package, heading
        listed = re.findall(r"^\| `(sphinx_gpu_admonition(?:\.\w+)*)`", group, flags=re.M)
        if package.group(1) == NAME:
            expected = [name for name in listed if name.count(".") == 0
                        or name in (f"{NAME}.__main__", f"{NAME}._version")]
        else:
            expected = [name for name in listed
                        if name == f"{NAME}.{package.group(1)}"
                        or name.startswith(f"{NAME}.{package.group(1)}.")]
        assert listed == expected, f"listed under {heading!r} but not in that package: " \
                                   f"{sorted(set(listed) - set(expected))}"
