"""The only reader of Sphinx's private API: one file to check on a Sphinx release.

Sphinx has no public way to ask these two things, and each is read here only:

* whether the book set an option itself (``conf.py`` or ``-D``), not its default:
  ``Config._raw_config`` and ``Config._overrides`` (Sphinx 7.4 to 9);
* whether a warning fails the build (``-W``): ``Sphinx._fail_on_warnings`` from
  Sphinx 8.1 on (``warningiserror`` is always false there), ``warningiserror`` and
  ``keep_going`` before.

``tests/unit/ext/test_sphinx_compat.py`` pins both on Sphinx 7.4 (jupyter-book 1.0.4) and
the newest Sphinx, with real applications.
"""

from __future__ import annotations

from typing import Any


def user_set(config: Any, name: str) -> bool:
    """Whether the book gave ``name`` a value (``conf.py``, ``-D``), rather than
    leaving its default."""
    return name in getattr(config, "_raw_config", {}) or name in getattr(
        config, "_overrides", {})


def fails_on_warnings(app: Any) -> bool:
    """Whether a warning fails this build (``-W``): Sphinx 7.4 and 8.0 stop at it, or
    with ``--keep-going`` fail at the end; Sphinx 8.1 and later always fail at the end."""
    return bool(getattr(app, "_fail_on_warnings", False) or app.warningiserror
                or app.keep_going)
