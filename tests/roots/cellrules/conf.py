project = "Cell rules a lecture lives with"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
nb_execution_mode = "force"
nb_execution_timeout = 120
# a low limit, so that a 0.5 s sleep is a "slow" cell
gpu_slow_cell_seconds = 0.3
gpu_slow_cell_min_seconds = 0.25
gpu_warn_slow_cells = True
gpu_status_console = False
