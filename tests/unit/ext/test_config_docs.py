"""docs/configuration: every option of ``ext/config.py`` has a section and an example."""

from conftest import PROJECT

from sphinx_gpu_admonition.ext.config import PREFIX, options

DOCS = PROJECT / "docs"


def test_every_option_has_a_section_and_an_example() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for name in options():
        assert f"## `{PREFIX}{name}`" in text, name
        assert f"\n{PREFIX}{name} = " in text, name  # the conf.py example
        assert f"    {PREFIX}{name}: " in text, name  # the _config.yml example
