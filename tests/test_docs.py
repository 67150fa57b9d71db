"""The docs document every option and every warning subtype."""

from pathlib import Path

from sphinx_gpu_admonition.ext.config import PREFIX, options
from sphinx_gpu_admonition.ext.warnings import SUBTYPES

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_option_has_a_section_and_an_example() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for name in options():
        assert f"## `{PREFIX}{name}`" in text, name
        assert f"\n{PREFIX}{name} = " in text, name  # the conf.py example
        assert f"    {PREFIX}{name}: " in text, name  # the _config.yml example


def test_every_warning_subtype_is_documented() -> None:
    text = (DOCS / "warnings.md").read_text(encoding="utf-8")
    for subtype in SUBTYPES:
        assert f"`gpu_admonition.{subtype}`" in text, subtype
