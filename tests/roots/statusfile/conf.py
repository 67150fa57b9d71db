project = "Status from files"
extensions = ["myst_nb", "sphinx_gpu_admonition"]
exclude_patterns = ["_build"]
html_theme = "sphinx_book_theme"
