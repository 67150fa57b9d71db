"""HTML of the extension's components, rendered by Jinja2 templates (``templates/``).

Jinja2 ships with Sphinx.  Autoescape is on for every template, so a value from a
record (a notebook title, an error message, a cell's first line) is always text:
templates never build markup from data by hand.  No Sphinx here: the command line
can render the same rows.  A build keeps the compiled templates in its doctree
folder (:func:`keep_compiled_templates`): compiling them took about 30 ms of every
build.  Jinja is imported at the first render, not with this module: mystmd's
plugin imports the views for their data and renders no HTML.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"


@functools.cache
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,  # every template, whatever its name
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,  # a misspelt name fails the tests, not a page
        # the templates are the package's files: no file check at every render (a
        # page renders one per notebook page)
        auto_reload=False,
    )


@functools.cache
def _compiled_templates_class() -> type[jinja2.FileSystemBytecodeCache]:
    import jinja2

    class CompiledTemplates(jinja2.FileSystemBytecodeCache):
        """Compiled templates in a folder; one that cannot be read or written is
        compiled again, never an error.  Jinja2 compiles a template again when its
        source (its checksum) or the Python version changed."""

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):
                super().load_bytecode(bucket)

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    return CompiledTemplates


def keep_compiled_templates(folder: Path) -> None:
    """Keep the compiled templates in ``folder`` (a build's doctree folder, so that
    the next build of the same book reads them instead of compiling them).

    The folder is set on the one environment, not passed to :func:`render`: the views
    render without knowing the build (the command line renders the same templates),
    the compiled templates are the same for every book, and a process builds one book
    at a time (a later build sets its own folder)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    _environment().bytecode_cache = _compiled_templates_class()(str(folder))


def render(name: str, **context: Any) -> str:
    """The template ``templates/<name>`` with ``context``, everything escaped."""
    return _environment().get_template(name).render(**context).strip()
