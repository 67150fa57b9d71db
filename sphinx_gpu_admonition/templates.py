"""HTML of the extension's components, rendered by Jinja2 templates (``templates/``).

Jinja2 ships with Sphinx.  Autoescape is on for every template, so a value from a
record (a notebook title, an error message, a cell's first line) is always text:
templates never build markup from data by hand.  No Sphinx here: the command line
can render the same rows.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,  # every template, whatever its name
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,  # a misspelt name fails the tests, not a page
    )


def render(name: str, **context: Any) -> str:
    """The template ``templates/<name>`` with ``context``, everything escaped."""
    return _environment().get_template(name).render(**context).strip()
