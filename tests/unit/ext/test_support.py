"""``ext/support.py``: what an HTML tree may hold follows the toctrees below the page."""

from __future__ import annotations

from types import SimpleNamespace

from sphinx_gpu_admonition.ext.support import html_tree_may_hold


def test_html_tree_may_hold_follows_the_toctrees_below_the_page():
    """Which HTML pages the placeholder post-transforms walk: the page noted by a
    directive, or one whose toctrees include it (singlehtml's root), never a sibling."""
    env = SimpleNamespace(toctree_includes={"index": ["a", "b"], "a": ["a1"],
                                            "a1": ["index"], "b": []})
    assert html_tree_may_hold(env, "a1", {"a1"})
    assert html_tree_may_hold(env, "index", {"a1"})  # two levels below
    assert not html_tree_may_hold(env, "b", {"a1"})
    assert not html_tree_may_hold(env, "index", set())
    assert not html_tree_may_hold(env, "index", {"orphan"})  # ends despite the cycle
