# A tiny lecture series for the GitHub Actions workflow test (tests/integration/test_workflow.py):
# executed in two shards, merged, rebuilt under CPU load and compared.  The test
# appends the sharding snippet of docs/workflow.md to this file.
project = "Workflow lectures"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
nb_execution_mode = "cache"
nb_execution_raise_on_error = False
