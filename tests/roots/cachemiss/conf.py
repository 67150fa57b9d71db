project = "Cache miss tests"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
nb_execution_mode = "cache"
nb_execution_timeout = 120
gpu_expected_backend = None
gpu_status_console = True
