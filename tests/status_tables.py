"""Reading the status page's HTML table (BeautifulSoup): its notebook rows, a row's docname,
a column's cell or, for a column the table does not show, the value in the row's details;
used by tests/integration/test_status_page.py and tests/unit/render/test_status_html.py."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from sphinx_gpu_admonition.render.labels import Labels
from sphinx_gpu_admonition.render.status_rows import column_label


def soup_of(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "lxml")


def rows(table) -> list:
    return table.select("tbody.gpu-status-notebook")


def docname_of(row) -> str:
    return row.select_one(".gpu-status-docname").get_text()


def column(table, key: str) -> int:
    keys = [th["data-sort-key"] for th in table.select("thead th[data-sort-key]")]
    return keys.index(key)


def fact(row, key: str):
    """The value of column ``key`` in a notebook's details (a column not shown): the
    ``dd`` after the ``dt`` that names it."""
    label = column_label(key, Labels.load())
    term = next(dt for dt in row.select(".gpu-status-facts dt") if dt.get_text() == label)
    return term.find_next_sibling("dd")


def cell(row, key: str, table):
    """A notebook's value of column ``key``: its table cell, or where the table does
    not show that column, the value in the row's details."""
    if key not in [th["data-sort-key"] for th in table.select("thead th[data-sort-key]")]:
        return fact(row, key)
    return row.tr.find_all(["th", "td"], recursive=False)[column(table, key)]
