"""The shipped translations (``ext/i18n.py``): zh_CN ships, the .pot lists every message, the .po
translates each, the committed .mo is up to date."""

from __future__ import annotations

import re

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from sphinx_gpu_admonition.ext import i18n


def read_catalog(path, reader):
    with path.open("rb") as f:
        return reader(f)


def _plain(value):
    """A message id or string; plural ones as tuples (.mo readers give lists)."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


def messages(catalog) -> dict:
    """id -> string; a plural message is (singular, plural) -> (form, ...)."""
    return {_plain(m.id): _plain(m.string) for m in catalog if m.id and not m.fuzzy}


def _texts(value) -> tuple[str, ...]:
    return value if isinstance(value, tuple) else (value,)


def test_zh_cn_is_shipped():
    names = [p.relative_to(i18n.LOCALE_DIR).as_posix() for p in i18n.po_files()]
    assert "zh_CN/LC_MESSAGES/sphinx_gpu_admonition.po" in names
    for po in i18n.po_files():
        assert po.with_suffix(".mo").is_file(), f"{po} has no compiled .mo"


def test_pot_lists_every_message_of_the_package():
    pot = read_catalog(i18n.POT_FILE, read_po)
    extracted = set(i18n.extract_messages())
    assert extracted, "no _() messages found in the package"
    assert {_plain(m.id) for m in pot if m.id} == extracted, (
        "locale/sphinx_gpu_admonition.pot is out of date: run "
        "`python -m sphinx_gpu_admonition.ext.i18n` and translate the new messages"
    )


@pytest.mark.parametrize("po", i18n.po_files(), ids=lambda p: p.parts[-3])
def test_po_translates_every_message(po):
    pot_ids = {_plain(m.id) for m in read_catalog(i18n.POT_FILE, read_po) if m.id}
    catalog = read_catalog(po, read_po)
    translated = messages(catalog)
    missing = sorted(map(str, pot_ids - {k for k, v in translated.items() if all(_texts(v))}))
    assert not missing, f"untranslated in {po.parts[-3]}: {missing}"
    assert not [m.id for m in catalog if m.id and m.fuzzy], "fuzzy entries left"
    for msgid, msgstr in translated.items():
        # Placeholders ({colab}, {name}, %(name)s ...) must survive the translation.
        placeholders = re.compile(r"\{[a-z_]+\}|%\([a-z_]+\)[sd]|%[sd]")
        expected = sorted(placeholders.findall(_texts(msgid)[-1]))
        for text in _texts(msgstr):  # every plural form keeps them too
            assert sorted(placeholders.findall(text)) == expected, msgid


@pytest.mark.parametrize("po", i18n.po_files(), ids=lambda p: p.parts[-3])
def test_committed_mo_is_up_to_date(po):
    committed = messages(read_catalog(po.with_suffix(".mo"), read_mo))
    # untranslated messages are not compiled (test_po_translates_every_message catches them)
    expected = {k: v for k, v in messages(read_catalog(po, read_po)).items() if all(_texts(v))}
    assert committed == expected, (
        f"{po.with_suffix('.mo').name} is out of date with the .po: run "
        "`python -m sphinx_gpu_admonition.ext.i18n`"
    )
