"""Unit tests of ``sphinx_gpu_admonition.ext``, the Sphinx adapter: they import Sphinx or
docutils, so they are not ``sphinx_free`` (tests/conftest.py)."""
