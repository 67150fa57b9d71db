project = "GPU admonition tests"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
nb_execution_mode = "auto"
nb_execution_raise_on_error = True
myst_enable_extensions = ["dollarmath"]
# Tests switch on optional builders with confoverrides (e.g. sphinx_tojupyter).
# The default from Sphinx 8 on; Sphinx 7.4 needs it to show "[type.subtype]".
show_warning_types = True
# A Colab link for every page's notebook (the default theme has no launch button).
gpu_colab_url = "https://colab.research.google.com/github/example/lectures.notebooks/blob/main/{path}.ipynb"
# The notebook runs on the test machine's CPU; the backend check has tests of its own.
gpu_expected_backend = None
