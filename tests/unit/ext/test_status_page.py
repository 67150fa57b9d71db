"""``ext/status_page.py`` without a build: the cells' data files beside the page (fifty notebooks a
file), the plain table reads the same rows as the HTML one."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup

from sphinx_gpu_admonition.model.analysis import (
    Thresholds,
    analyse,
)
from sphinx_gpu_admonition.model.record import NotebookRecord, StatusReport
from sphinx_gpu_admonition.render.labels import Labels
from sphinx_gpu_admonition.render.status_html import cells_data, render_html
from sphinx_gpu_admonition.render.status_rows import (
    StatusOptions,
    plain_text,
    status_rows,
)
from unit.render.test_status_rows import ALL_COLUMNS, CASES


def test_cells_data_file_beside_the_page(tmp_path, caplog):

    from sphinx_gpu_admonition.ext.status_page import write_cells_data

    records = [NotebookRecord.from_dict({
        "docname": "a", "status": "ok", "capture": "ok", "runtime_seconds": 1.0,
        "cells": [{"index": 0, "execution_count": 1, "seconds": 0.5, "first_line": "</script>"}],
    })]
    analysis = analyse(StatusReport(records), Thresholds())
    builder = SimpleNamespace(get_outfilename=lambda docname: str(tmp_path / f"{docname}.html"))
    (src,) = write_cells_data(builder, "status", analysis)
    data_file = tmp_path / "status.gpu-cells.json"
    assert src.startswith("status.gpu-cells.json?v=")
    assert json.loads(data_file.read_text("utf-8")) == json.loads(json.dumps(cells_data(analysis)))
    written = data_file.stat().st_mtime_ns
    assert write_cells_data(builder, "status", analysis) == [src]  # same: not rewritten
    assert data_file.stat().st_mtime_ns == written
    # a builder without a file per page, EPUB, a file that cannot be written: no details
    assert write_cells_data(SimpleNamespace(), "status", analysis) is None
    epub = SimpleNamespace(embedded=True, get_outfilename=builder.get_outfilename)
    assert write_cells_data(epub, "other", analysis) is None
    assert not (tmp_path / "other.gpu-cells.json").exists()
    blocked = SimpleNamespace(get_outfilename=lambda d: str(tmp_path / "blocked" / "s.html"))
    (tmp_path / "blocked" / "s.gpu-cells.json").mkdir(parents=True)
    assert write_cells_data(blocked, "status", analysis) is None
    assert "could not write the per-cell data" in caplog.text


def test_cells_of_a_large_book_are_in_files_of_fifty_notebooks(tmp_path):
    """Opening a row reads the file that holds its notebook only; every row names
    that file, and a later build with fewer notebooks leaves no stale file."""

    from sphinx_gpu_admonition.ext.status_page import write_cells_data
    from sphinx_gpu_admonition.render.status_html import NOTEBOOKS_PER_CELLS_FILE

    def analysis_of(notebooks: int):
        return analyse(StatusReport([NotebookRecord.from_dict({
            "docname": f"nb{n:03d}", "status": "ok", "capture": "ok", "runtime_seconds": 1.0,
            "cells": [{"index": 0, "execution_count": 1, "seconds": 0.5, "first_line": f"x{n}"}],
        }) for n in range(notebooks)]), Thresholds())

    builder = SimpleNamespace(get_outfilename=lambda docname: str(tmp_path / f"{docname}.html"))
    analysis = analysis_of(2 * NOTEBOOKS_PER_CELLS_FILE + 20)
    sources = write_cells_data(builder, "status", analysis)
    assert [src.split("?")[0] for src in sources] == [
        "status.gpu-cells.json", "status.gpu-cells-1.json", "status.gpu-cells-2.json"]
    files = [json.loads((tmp_path / src.split("?")[0]).read_text("utf-8")) for src in sources]
    assert [len(data["nb"]) for data in files] == [50, 50, 20]
    soup = BeautifulSoup(render_html(analysis, StatusOptions(), lambda d: f"{d}.html",
                                     cells_src=sources), "lxml")
    assert soup.select_one(".gpu-status")["data-cells-src"].split(" ") == sources
    places = soup.select(".gpu-status-cells")
    assert len(places) == 120
    for place in places:
        docname = place.find_parent("tbody").select_one(".gpu-status-docname").get_text()
        cells = files[int(place["data-cells-file"])]["nb"][docname]["c"]
        assert cells[0]["l"] == f"x{int(docname[2:])}"
    # fewer notebooks: one file, no file attribute, no stale files
    # (another page's file stays)
    (tmp_path / "statusx.gpu-cells-7.json").write_text("{}", encoding="utf-8")
    small = analysis_of(10)
    sources = write_cells_data(builder, "status", small)
    assert len(sources) == 1
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "status.gpu-cells.json", "statusx.gpu-cells-7.json"]
    soup = BeautifulSoup(render_html(small, StatusOptions(), lambda d: f"{d}.html",
                                     cells_src=sources), "lxml")
    assert not soup.select(".gpu-status-cells[data-cells-file]")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_plain_table_reads_the_same_rows(case):
    from sphinx_gpu_admonition.ext.status_page import status_table_nodes

    analysis = CASES[case]
    rows = status_rows(analysis, ALL_COLUMNS, Labels.load(), row_ids=False)
    table = next(node for node in status_table_nodes(analysis, ALL_COLUMNS, "index", set())
                 if node.tagname == "table")
    body = [[entry.astext() for entry in row.children]
            for row in table.findall(lambda n: n.tagname == "row")][1:]
    expected = [[row["title"], *(plain_text(row["values"][c.key]) for c in rows.columns[1:])]
                for row in rows.rows]
    expected.append([rows.totals["label"],
                     *(str(rows.totals["texts"][c.key]) for c in rows.columns[1:])])
    assert body == expected
