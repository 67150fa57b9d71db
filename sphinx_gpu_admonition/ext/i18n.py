"""Translations of the extension: one message catalog for every module.

All user-visible texts of the extension live in the ``sphinx_gpu_admonition``
catalog (``locale/<lang>/LC_MESSAGES/sphinx_gpu_admonition.mo``).  Modules mark
their texts with :data:`_` and call it *at build time* (inside a directive's
``run`` or an event handler), so the book's ``language`` decides the text::

    from .i18n import _

    title = str(_("GPU"))

Texts with a number use :func:`ngettext`, so that each language gets its
plural forms::

    ngettext("about %d minute", "about %d minutes", count) % count

Maintainers refresh the catalog after adding or changing a message with::

    python -m sphinx_gpu_admonition.i18n

which extracts ``_("...")`` calls from the package into ``locale/<catalog>.pot``,
merges new messages into every ``.po`` file and compiles the ``.mo`` files
(with Babel, which Sphinx depends on).  ``tests/unit/ext/test_i18n.py`` fails when the
committed files are out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.locale import get_translation, get_translator, translators

#: Name of the gettext domain (``.mo`` file name) of the extension.
CATALOG = "sphinx_gpu_admonition"

#: Folder with ``<catalog>.pot`` and ``<lang>/LC_MESSAGES/<catalog>.po|.mo``.
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"

#: Mark and translate a message of this extension (call it at build time).
_ = get_translation(CATALOG)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a message for ``count`` in the book's language (call at build time).

    Sphinx's ``_`` has no plural forms (since Sphinx 9), so this asks the catalog's
    translator; outside a build that is English.
    """
    return get_translator(CATALOG).ngettext(singular, plural, count)


def translate(text: str) -> str:
    """Look ``text`` up in the extension's catalog at build time.

    The eager twin of ``_``: ``python -m sphinx_gpu_admonition.i18n`` extracts
    the literal arguments of both into the catalog.
    """
    return str(_(text))


def setup_i18n(app: Sphinx) -> None:
    """Load the catalog for ``app.config.language``."""
    # ``sphinx.locale.init`` merges into an existing translator of the same
    # catalog; drop the one of a previous application in this process (tests,
    # docs tools building several books) so that its language does not leak.
    translators.pop(("general", CATALOG), None)
    app.add_message_catalog(CATALOG, str(LOCALE_DIR))


# ---------------------------------------------------------------------------
# Maintainer tooling (not used during builds)
# ---------------------------------------------------------------------------

PACKAGE_DIR = Path(__file__).resolve().parents[1]
POT_FILE = LOCALE_DIR / f"{CATALOG}.pot"


def po_files() -> list[Path]:
    """The ``.po`` files of all shipped languages."""
    return sorted(LOCALE_DIR.glob(f"*/LC_MESSAGES/{CATALOG}.po"))


def extract_messages() -> dict[str | tuple[str, str],
                                tuple[list[tuple[str, int]], list[str]]]:
    """``{message: ([(file, line), ...], [translator comment, ...])}`` of the package.

    Every ``_("...")`` or ``translate("...")`` call in the package's Python files is
    a message, every ``ngettext("...", "...", n)`` a (singular, plural) message; a
    ``# Translators: ...`` comment just above it is kept for translators.
    """
    from babel.messages.extract import extract_from_dir

    found: dict[str, tuple[list[tuple[str, int]], list[str]]] = {}
    for filename, lineno, message, comments, _context in extract_from_dir(
        str(PACKAGE_DIR),
        method_map=[("**.py", "python")],
        keywords={"_": None, "translate": None, "ngettext": (1, 2)},
        comment_tags=("Translators:",),
        strip_comment_tags=True,
    ):
        if isinstance(message, (list, tuple)):
            message = tuple(message)
        if message and (isinstance(message, str) or all(message)):
            locations, notes = found.setdefault(message, ([], []))
            locations.append((filename.replace("\\", "/"), lineno))
            notes.extend(c for c in comments if c not in notes)
    return dict(sorted(found.items(), key=lambda item: str(item[0])))


def build_template():
    """A Babel catalog with the messages extracted from the package."""
    from babel.messages.catalog import Catalog

    from .._version import __version__

    template = Catalog(
        project="sphinx-gpu-admonition",
        version=__version__,
        domain=CATALOG,
        copyright_holder="sphinx-gpu-admonition developers",
        msgid_bugs_address="https://github.com/sphinx-gpu-admonition/sphinx-gpu-admonition/issues",
        header_comment=(
            "# Translations template for sphinx-gpu-admonition.\n"
            "# This file is distributed under the same license as the "
            "sphinx-gpu-admonition project.\n"
            "# Regenerate with: python -m sphinx_gpu_admonition.i18n\n#"
        ),
        fuzzy=False,
    )
    for message, (locations, notes) in extract_messages().items():
        template.add(message, locations=locations, auto_comments=notes)
    return template


def compile_po(po_path: Path) -> bytes:
    """The ``.mo`` bytes for one ``.po`` file (fuzzy entries left out)."""
    import io

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po_path.open("rb") as f:
        catalog = read_po(f, domain=CATALOG)
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def _entries(catalog) -> list[tuple]:
    return sorted(
        (str(m.id), tuple(m.locations), tuple(m.auto_comments)) for m in catalog if m.id
    )


def update_catalogs() -> list[Path]:
    """Rewrite the ``.pot``, merge it into every ``.po`` and compile the ``.mo`` files."""
    from babel.messages.pofile import read_po, write_po

    written = []
    template = build_template()
    if POT_FILE.exists():
        with POT_FILE.open("rb") as f:
            previous = read_po(f, domain=CATALOG)
        if _entries(previous) == _entries(template):
            # Nothing changed: keep the old date so the files stay byte-identical.
            template.creation_date = previous.creation_date
    with POT_FILE.open("wb") as f:
        write_po(f, template, width=88, omit_header=False, sort_output=True)
    written.append(POT_FILE)
    for po_path in po_files():
        with po_path.open("rb") as f:
            catalog = read_po(f, domain=CATALOG)
        catalog.update(template, no_fuzzy_matching=True, update_header_comment=False)
        with po_path.open("wb") as f:
            write_po(f, catalog, width=88, sort_output=True, ignore_obsolete=True)
        mo_path = po_path.with_suffix(".mo")
        mo_path.write_bytes(compile_po(po_path))
        written += [po_path, mo_path]
    return written


def main() -> int:  # pragma: no cover - maintainer command
    for path in update_catalogs():
        print(f"wrote {path.relative_to(PACKAGE_DIR.parent)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
