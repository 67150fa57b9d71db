"""The Sphinx adapter's warnings (``ext/warnings.py``): every subtype is documented, and each is
one safe line."""

from typing import Any

from conftest import PROJECT
from runner_commands import forged_commands, runner_lines

from sphinx_gpu_admonition.ext.warnings import SUBTYPES
from unit.test_workflow_commands import PAYLOAD

DOCS = PROJECT / "docs"


def test_every_warning_subtype_is_documented() -> None:
    text = (DOCS / "warnings.md").read_text(encoding="utf-8")
    for subtype in SUBTYPES:
        assert f"`gpu_admonition.{subtype}`" in text, subtype


def test_the_extensions_warnings_are_one_safe_line() -> None:
    from sphinx_gpu_admonition.ext.warnings import warn

    said: list[str] = []

    class Logger:
        def warning(self, message: str, **_: Any) -> None:
            said.append(message)

    warn(Logger(), PAYLOAD.format(n=1), "capture")  # type: ignore[arg-type]
    (message,) = said
    assert len(list(runner_lines(message))) == 1 and forged_commands(message) == []
