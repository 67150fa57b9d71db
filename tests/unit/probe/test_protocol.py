"""``probe/protocol.py``: the startup file names agree with the package."""

from __future__ import annotations

from sphinx_gpu_admonition.probe import (
    ENV_EXPLAIN_RECOMPILATIONS,
    ENV_OUTPUT,
    ENV_PROBE,
    ENV_USER_STARTUP,
    STARTUP_FILE,
    protocol,
)


# -- in this process -----------------------------------------------------------------
def test_startup_file_names_agree_with_the_package() -> None:
    """startup.py cannot import the package; its copies of the names must agree."""
    text = STARTUP_FILE.read_text(encoding="utf-8")
    for name in (ENV_OUTPUT, ENV_PROBE, ENV_USER_STARTUP, ENV_EXPLAIN_RECOMPILATIONS,
                 protocol.KIND_ERROR,
                 protocol.KIND_WARNING):
        assert f'"{name}"' in text
