project = "Timing claims tests"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build", "jupyter-config"]
# the jupyter-cache, as lecture series build: a cache-hit rebuild keeps the claims
nb_execution_mode = "cache"
nb_execution_raise_on_error = False
show_warning_types = True
# the notebooks run on the test machine's CPU
gpu_expected_backend = None
# a GPU runner's build of the same book (tests/data/claims-gpu-t4-status.json, made
# from a real CPU execution by tests/make_gpu_fixture.py; the test copies it here)
gpu_runtime_sources = ["_static/claims-gpu-t4-status.json"]
# "about the same" within 5 times: the two vmap versions are timed one after the other
# on a shared test machine, whose load may change between them
gpu_claim_similar_factor = 5
