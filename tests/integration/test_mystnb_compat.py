"""Pins what `_mystnb.py` reads from MyST-NB and jupyter-cache internals.

If a MyST-NB or jupyter-cache release changes these shapes, this file fails
first and names the piece to adapt (all in sphinx_gpu_admonition/_mystnb.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MYST_HEADER, ProjectBuild, build_project, sphinx_build

from sphinx_gpu_admonition.ext import _mystnb

NOTEBOOK = (MYST_HEADER + "# Page\n\n"
            "```{code-cell} ipython3\na = 1\n```\n\n```{code-cell} ipython3\nprint(a)\n```\n")
FILES = {"index.md": "# I\n\n```{toctree}\npage\n```\n", "page.md": NOTEBOOK,
         "myst.md": "# m\n", "rest.rst": "r\n=\n", "notebook.md": "# n\n"}


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuild:
    return build_project("admonition", tmp_path_factory.mktemp("compat"), files=FILES,
                         confoverrides={"nb_execution_mode": "cache"})


def test_execution_result_of_an_executed_notebook(cached: ProjectBuild) -> None:
    result = _mystnb.execution_result(cached.app.env, "page")
    assert result is not None and result.succeeded and result.method == "cache"
    assert result.runtime is not None and result.mtime is not None
    assert _mystnb.execution_result(cached.app.env, "index") is None
    assert _mystnb.execution_mode(cached.app.env) == "cache"


def test_cache_path_and_record_keys(cached: ProjectBuild) -> None:
    env = cached.app.env
    cache_path = _mystnb.execution_cache_path(env)
    assert cache_path is not None and (cache_path / "global.db").is_file()
    key = _mystnb.newest_record_key(cache_path, env.doc2path("page"))
    assert key and len(key) >= 16
    # a fresh execution's mtime is "now", which no record carries: not a hit
    assert _mystnb.hit_record_key(cache_path, _mystnb.execution_result(env, "page").mtime) \
        is None
    from jupyter_cache import get_cache

    (record,) = get_cache(str(cache_path)).list_cache_records()
    assert _mystnb.hit_record_key(cache_path, record.created.timestamp()) == key
    # the shapes the index reads: NbCacheRecord.records_from_uri, created, hashkey
    from jupyter_cache.cache.db import NbCacheRecord

    (same,) = NbCacheRecord.records_from_uri(str(env.doc2path("page")), record_db(cache_path))
    assert (same.hashkey, same.created) == (record.hashkey, record.created)


def record_db(cache_path: Path):
    from jupyter_cache import get_cache

    return get_cache(str(cache_path)).db


def test_hits_are_found_without_listing_the_cache(
        cached: ProjectBuild, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hit is one query on the creation time (in any time zone), not a listing of
    every record per notebook (quadratic in book size)."""
    import time

    from jupyter_cache.cache.main import JupyterCacheBase

    env = cached.app.env
    cache_path = _mystnb.execution_cache_path(env)
    (record,) = JupyterCacheBase(str(cache_path)).list_cache_records()
    listings = []
    original = JupyterCacheBase.list_cache_records
    monkeypatch.setattr(JupyterCacheBase, "list_cache_records",
                        lambda self: listings.append(1) or original(self))
    _mystnb._CACHE_DATABASES.clear()
    try:
        for zone in ("UTC", "America/New_York", "Asia/Kolkata"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            # MyST-NB's mtime of a hit: the record's created time, in the build's zone
            assert _mystnb.hit_record_key(cache_path, record.created.timestamp()) \
                == record.hashkey
            assert _mystnb.hit_record_key(cache_path, record.created.timestamp() + 1e-3) \
                is None
    finally:
        monkeypatch.undo()
        time.tzset()
    assert listings == []
    # a broken cache folder reports "not a hit" instead of failing the build
    assert _mystnb.hit_record_key(cache_path / "missing", 1.0) is None


def test_a_build_reads_the_cache_once_then_looks_hits_up_without_queries(
        cached: ProjectBuild, monkeypatch: pytest.MonkeyPatch) -> None:
    """One read of the cache per build for every hit, not a query per notebook; a
    record the index does not hold (added after it was read) takes its own query."""
    from jupyter_cache import get_cache

    cache_path = _mystnb.execution_cache_path(cached.app.env)
    (record,) = get_cache(str(cache_path)).list_cache_records()
    queries = []
    original = _mystnb._CacheDatabase._query
    monkeypatch.setattr(_mystnb._CacheDatabase, "_query",
                        lambda self, *a, **k: queries.append(1) or original(self, *a, **k))
    monkeypatch.setattr(_mystnb, "_HIT_INDEXES", {})
    _mystnb.index_cache_hits(cache_path)
    # read without jupyter-cache (the table and the stored times it reads are its)
    assert _mystnb._HIT_INDEXES[str(cache_path.resolve())] == {
        _mystnb._created_key(record.created.timestamp()): record.hashkey}
    for _ in range(3):
        assert _mystnb.hit_record_key(cache_path, record.created.timestamp()) == record.hashkey
    assert queries == []
    _mystnb._HIT_INDEXES.clear()  # as if the record were added after the index was read
    assert _mystnb.hit_record_key(cache_path, record.created.timestamp()) == record.hashkey
    assert len(queries) == 1
    # no cache yet: nothing is read, and no database is created
    _mystnb.index_cache_hits(cache_path.parent / "no-cache-here")
    assert not (cache_path.parent / "no-cache-here").exists()


def test_code_cells_come_with_index_and_execution_count(cached: ProjectBuild) -> None:
    doctree = cached.app.env.get_doctree("page")
    assert _mystnb.code_cells(doctree) == [(1, 1, "a = 1"), (2, 2, "print(a)")]
    assert _mystnb.is_notebook(cached.app.env, "page", doctree)
    assert not _mystnb.is_notebook(cached.app.env, "index", cached.app.env.get_doctree("index"))


def test_excludepatterns_are_matched_like_myst_nb(tmp_path: Path) -> None:
    build = build_project("admonition", tmp_path, files=FILES,
                          confoverrides={"nb_execution_excludepatterns": ["*pag*"]})
    assert _mystnb.is_excluded(build.app.env, "page")
    assert not _mystnb.is_excluded(build.app.env, "index")
    assert _mystnb.execution_result(build.app.env, "page") is None


def test_what_the_cache_miss_reason_reads(tmp_path: Path) -> None:
    """:func:`_mystnb.cache_miss_reason` relies on jupyter-cache keeping, for each cached
    notebook, its code cells (source, metadata) and its kernelspec, on caching a
    changed notebook as a new record beside the old one of the same source path
    (``list_cache_records``: ``pk``, ``uri``, ``hashkey``, ``created``;
    ``get_cache_bundle(pk).nb``), and on MyST-NB staging the notebook as a project
    record that jupyter-cache can read again."""
    from jupyter_cache import get_cache

    first = build_project("admonition", tmp_path / "a", files=FILES,
                          confoverrides={"nb_execution_mode": "cache"})
    env = first.app.env
    cache_path = _mystnb.execution_cache_path(env)
    source = env.doc2path("page")
    page = Path(source)
    page.write_text(NOTEBOOK.replace("print(a)", "print(a + 1)"), encoding="utf-8")
    again = sphinx_build(page.parent, tmp_path / "a" / "_build",
                         confoverrides={"nb_execution_mode": "cache"})
    assert "Cached executed notebook" in again.status, again.status
    cache = get_cache(str(cache_path))
    old, new = sorted(cache.list_cache_records(), key=lambda r: r.created)
    assert old.uri == new.uri == str(source)  # the old record stays
    cached_nb = cache.get_cache_bundle(new.pk).nb
    assert [c.cell_type for c in cached_nb.cells] == ["code", "code"]
    assert cached_nb.cells[1].source == "print(a + 1)"
    assert isinstance(cached_nb.cells[0].metadata, dict)
    assert cached_nb.metadata["kernelspec"]["name"] == "python3"
    assert _mystnb.cache_miss_reason(cache_path, str(source), "page.md", new.hashkey) == \
        _mystnb.CacheMissReason("cell_changed", 2)
    # a checkout elsewhere (another absolute path): found by the path in the book
    assert _mystnb.cache_miss_reason(cache_path, "/elsewhere/page.md", "page.md",
                                     new.hashkey) == _mystnb.CacheMissReason("cell_changed", 2)
    assert _mystnb.cache_miss_reason(cache_path, "/elsewhere/other.md", "other.md",
                                     new.hashkey) == _mystnb.CacheMissReason("new_notebook")
    assert _mystnb.cache_miss_reason(tmp_path / "no-cache", str(source), "page.md",
                                     new.hashkey) is None
    # a failed execution is not cached: the notebook as its project record reads it
    # (``get_project_notebook(uri).nb``, made comparable by ``create_hashed_notebook``)
    read, _ = cache.create_hashed_notebook(cache.get_project_notebook(str(source)).nb)
    assert [c.source for c in read.cells] == ["a = 1", "print(a + 1)"]
    assert read.metadata["kernelspec"] == cached_nb.metadata["kernelspec"]
    # (the project record reads the file as it is now: a third version, not cached)
    page.write_text(NOTEBOOK.replace("a = 1", "a = 2"), encoding="utf-8")
    assert _mystnb.cache_miss_reason(cache_path, str(source), "page.md", None) == \
        _mystnb.CacheMissReason("cell_changed", 1)
