#!/usr/bin/env python3
"""The mystmd plugin of sphinx-gpu-admonition (written by
``python -m sphinx_gpu_admonition.mystmd init``; myst.yml names this file)."""
from sphinx_gpu_admonition.mystmd.plugin import main

main()
