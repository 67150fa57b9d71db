# Notebooks shaped like the real GPU incidents (issue 22), executed for real on the CPU;
# tests/make_gpu_fixture.py moves the resulting status file to a GPU's device fields.
project = "diagnosis"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
nb_execution_mode = "force"
exclude_patterns = ["_build"]

