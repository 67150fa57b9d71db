"""The package's version, defined once: ``pyproject.toml`` reads it (``dynamic``), and
modules import it from here rather than from the package ``__init__``."""

__version__ = "0.1.0"
