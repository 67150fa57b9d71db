project = "Run time tests"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
# the jupyter-cache, as lecture series build: a cache hit must report the run
# that produced the outputs
nb_execution_mode = "cache"
nb_execution_raise_on_error = False
# Other builds of this book (written by tests/integration/test_runtime.py): a GPU runner, an
# old laptop run of an earlier version, and two files that cannot be read.
gpu_runtime_sources = ["gpu-status.json", "old-status.json", "missing.json", "broken.json"]
# Every notice states the run time, unless it says :runtime: off.
gpu_admonition_runtime = True
show_warning_types = True
# The notebooks run on the test machine's CPU, and the notices link to Colab.
gpu_expected_backend = None
gpu_colab_url = "https://colab.research.google.com/github/example/notebooks/blob/main/{path}.ipynb"
