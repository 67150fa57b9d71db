project = "Same cell"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
nb_execution_mode = "force"
nb_execution_timeout = 120
# a 1.5 s sleep is a "slow" cell; the others stay far below the limit on a busy
# machine too (a failing cell's traceback took 0.5 s there)
gpu_slow_cell_seconds = 1.0
gpu_slow_cell_min_seconds = 0.9
gpu_warn_slow_cells = True
gpu_cell_badges = True
gpu_status_console = True
