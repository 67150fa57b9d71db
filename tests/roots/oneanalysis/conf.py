project = "One analysis"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build", "baseline.json"]
nb_execution_mode = "force"
nb_execution_timeout = 120
# nothing is slow by the build's own rules: only the baseline can flag a cell
gpu_slow_cell_seconds = 100.0
gpu_slow_cell_min_seconds = 0.2
gpu_warn_slow_cells = True
gpu_warn_regressions = True
gpu_status_console = True
gpu_status_junit = "execution-status.junit.xml"
gpu_github_annotations = True
