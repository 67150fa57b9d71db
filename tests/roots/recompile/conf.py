# One notebook that compiles a function again (jitted inside another around a new
# lambda) and recompiles in a loop: built with gpu_explain_recompilations on and off.
project = "recompile"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
nb_execution_mode = "force"
exclude_patterns = ["_build"]
