"""model/code.py defined_functions and model/analysis.py is_user_compilation: the
user's compilations are told from JAX's own by where the function was defined (the
notebook's ``def`` s and lambdas, its local modules), not by a list of JAX's names."""

from __future__ import annotations

from sphinx_gpu_admonition.model.analysis import Thresholds, analyse, is_user_compilation
from sphinx_gpu_admonition.model.code import defined_functions
from sphinx_gpu_admonition.model.record import CellRecord, NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.status_html import cells_data

CELLS = [
    (0, "import jax\nimport mylib\nfrom jax import lax"),
    (1, "@jax.jit\ndef add(x, y):\n    return x + y\n\nmax = lambda a: a.max()"),
    (2, "%time add(1, 2)\n!nvidia-smi"),
    (3, "def outer():\n    def step(c, x):\n        return c, x\n    return step"),
]
MODULE = "def sampler(n):\n    return n\n"


def test_the_notebook_defines_its_cells_and_local_modules_functions():
    names = defined_functions(CELLS, lambda name: MODULE if name == "mylib" else None)
    assert names == ["add", "max", "outer", "sampler", "step"]
    assert defined_functions(CELLS) == ["add", "max", "outer", "step"]  # no module text


def test_a_users_add_is_the_users_and_jax_own_operations_are_not():
    notebook = NotebookRecord(docname="nb", status="ok", user_functions=["add", "max", "qm_jax"])
    # the hand list took a user's own add or max for JAX's
    assert is_user_compilation("jit(add)", notebook)
    assert is_user_compilation("jit(max)", notebook)
    assert is_user_compilation("jit(<lambda>)", notebook)
    # JAX's own work the hand list missed
    for name in ("jit(dot)", "jit(inv)", "jit(eigh)", "jit(stage)", "jit(unstack)",
                 "jit(convert_element_type)"):
        assert not is_user_compilation(name, notebook), name
    # a record without the notebook's functions (an earlier release's) uses the names
    unknown = NotebookRecord(docname="old", status="ok")
    assert is_user_compilation("jit(qm_jax)", unknown)
    assert not is_user_compilation("jit(iota)", unknown)


def test_the_cell_data_lists_the_users_compilations_and_groups_jaxs_own():
    cell = CellRecord(index=0, execution_count=1, seconds=2.0, compile_seconds=1.0,
                      compilations={"jit(iota)": 9, "jit(convert_element_type)": 5,
                                    "jit(qm_jax)": 1})
    record = NotebookRecord(docname="nb", status="ok", provenance="executed", capture="ok",
                            cells=[cell], user_functions=["qm_jax"])
    analysis = analyse(StatusReport([record]), Thresholds())
    (entry,) = cells_data(analysis)["nb"]["nb"]["c"]
    # the user's function by name, JAX's own operations as one group (jax_intro cell 12
    # listed "9 compilations: jit(convert_element_type) 3x, ...")
    assert entry["n"] == "15 compilations: jit(qm_jax) 1×, JAX internals 14×"
