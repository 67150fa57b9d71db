# Held-out-style notebooks of the three shapes issue 32 names (a Python loop of tiny
# jitted calls, a loop that syncs with the host every iteration, one function compiled
# for three array sizes) and a local module's loop called twice, executed for real on
# the CPU; tests/make_gpu_fixture.py --root jax_loops moves them to a GPU's device fields.
project = "jax_loops"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
nb_execution_mode = "force"
exclude_patterns = ["_build"]
