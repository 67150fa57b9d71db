"""Unit tests of ``sphinx_gpu_admonition.model``."""
