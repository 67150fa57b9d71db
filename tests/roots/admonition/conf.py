project = "GPU admonition tests"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
nb_execution_mode = "auto"
nb_execution_raise_on_error = True
myst_enable_extensions = ["dollarmath"]
# Tests switch on optional builders with confoverrides (e.g. sphinx_tojupyter).
# The default from Sphinx 8 on; Sphinx 7.4 needs it to show "[type.subtype]".
show_warning_types = True
