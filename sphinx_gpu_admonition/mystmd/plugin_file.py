"""The plugin file a mystmd book names in ``myst.yml`` (``project: plugins: - type:
executable, path: gpu_admonition.py``): mystmd runs an executable plugin from a file
path, not a module.  ``python -m sphinx_gpu_admonition.mystmd init`` writes it, and
``sphinx-gpu-admonition migrate`` adds it to a book that has none."""

from __future__ import annotations

#: the module the file runs
PLUGIN_MODULE = "sphinx_gpu_admonition.mystmd.plugin"
PLUGIN_FILE = "gpu_admonition.py"
PLUGIN_TEXT = f'''#!/usr/bin/env python3
"""The mystmd plugin of sphinx-gpu-admonition (written by
``python -m sphinx_gpu_admonition.mystmd init``; myst.yml names this file)."""
from {PLUGIN_MODULE} import main

main()
'''
