project = "capture"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
nb_execution_mode = "force"
nb_execution_excludepatterns = ["*excluded*"]
exclude_patterns = ["_build"]
