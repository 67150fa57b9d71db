"""The tests' own layout says what a test is (README, "the fast loop"; issue 34, item 6).

tests/conftest.py marks a test by its folder, so a test in the wrong folder would be
marked wrong: pure tests lie in ``tests/unit/<layer>/test_<module>.py`` (or
``test_<module>_<aspect>.py``), named after a module of ``sphinx_gpu_admonition/<layer>/``,
or in ``tests/unit/`` itself for a rule across the layers; the others in
``tests/integration/``; none at the top of ``tests/``.
"""

from __future__ import annotations

from conftest import PROJECT, TESTS

PACKAGE = PROJECT / "sphinx_gpu_admonition"
UNIT = TESTS / "unit"
INTEGRATION = TESTS / "integration"
#: tests/unit/test_<topic>.py: rules that hold across the layers
ACROSS_THE_LAYERS = {"test_architecture.py", "test_layout.py", "test_workflow_commands.py"}


def modules_of(layer: str) -> set[str]:
    """The module names of one layer of the package, as a test module names them:
    ``_sphinx`` as ``sphinx``, ``__main__`` as ``main``."""
    return {path.stem.strip("_") for path in (PACKAGE / layer).glob("*.py")
            if path.name != "__init__.py"}


def test_every_unit_test_module_is_named_after_a_module_of_its_layer() -> None:
    wrong = []
    for path in sorted(UNIT.glob("*/test_*.py")):
        modules = modules_of(path.parent.name)
        name = path.stem.removeprefix("test_")
        if not any(name == module or name.startswith(module + "_") for module in modules):
            wrong.append(str(path.relative_to(TESTS)))
    assert not wrong, f"named after no module of their layer: {wrong}"


def test_every_layer_folder_is_a_layer_of_the_package() -> None:
    folders = {path.name for path in UNIT.iterdir()
               if path.is_dir() and path.name != "__pycache__"}
    assert folders <= {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}


def test_the_modules_across_the_layers_are_the_listed_ones() -> None:
    assert {path.name for path in UNIT.glob("test_*.py")} == ACROSS_THE_LAYERS


def test_no_test_module_lies_outside_unit_and_integration() -> None:
    outside = [str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py")
               if not path.is_relative_to(UNIT) and not path.is_relative_to(INTEGRATION)
               and not path.is_relative_to(TESTS / "roots")]
    assert not outside


def test_the_test_folders_are_packages_and_have_no_conftest_of_their_own() -> None:
    """Packages, so that two layers' test_claims.py do not clash; no conftest.py of
    their own, which would drop tests/conftest.py from sys.modules (conftest.py)."""
    folders = [UNIT, INTEGRATION, *(path for path in UNIT.iterdir()
                                    if path.is_dir() and path.name != "__pycache__")]
    assert all((folder / "__init__.py").is_file() for folder in folders)
    assert not (TESTS / "__init__.py").exists()
    assert [path for path in TESTS.rglob("conftest.py")
            if not path.is_relative_to(TESTS / "roots")] == [TESTS / "conftest.py"]
