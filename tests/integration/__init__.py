"""Tests that build a real project, start a kernel, a browser or a subprocess (a package,
as tests/unit/ is, so that their module names never clash with a unit test's)."""
