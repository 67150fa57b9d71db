# A tiny book for the command-line tests (tests/integration/test_cli.py): built twice, the
# second time with slower and new pages, then read with report and compare.
project = "CLI tests"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
nb_execution_mode = "force"
nb_execution_raise_on_error = False
