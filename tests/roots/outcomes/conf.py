project = "outcomes"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
nb_execution_mode = "force"
exclude_patterns = ["_build"]
