"""Pure tests (no build, no kernel, no browser, no subprocess), a folder per layer of the
package: ``tests/unit/<layer>/test_<module>.py`` tests ``sphinx_gpu_admonition/<layer>/<module>.py``
(``test_<module>_<aspect>.py``: one aspect of it); ``tests/unit/test_<topic>.py``: a rule
across the layers.

A package, so that equal module names in two layers (``model/test_claims.py``,
``ext/test_claims.py``) do not clash; ``tests/`` is not one, so ``tests/`` stays on
``sys.path`` and ``from conftest import ...`` works everywhere.
"""
