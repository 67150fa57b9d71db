"""``sphinx-gpu-admonition migrate BOOK`` on a QuantEcon-style book, and the book after it.

The rewriting rules and the command on copies of tests/roots/quantecon are tested in
tests/unit/cli/test_migrate.py and test_migrate_mystmd.py; here, the migrated book
(``quantecon_book`` in conftest, built once per session on this machine's CPU) builds
warning-free with
``gpu_expected_backend: cpu`` and, with the default settings, warns only that
the GPU lecture ran without a GPU (so ``-W`` fails there, by design).
"""

from __future__ import annotations

from bs4 import BeautifulSoup
from conftest import QuantEconBook

# -- the migrated book builds --------------------------------------------------------------


def test_migrated_book_builds_warning_free_with_a_cpu_expectation(quantecon_book: QuantEconBook):
    assert quantecon_book.html.warning_lines == [], quantecon_book.html.warnings
    page = BeautifulSoup(quantecon_book.html.read("jax_intro.html"), "html.parser")
    (notice,) = page.select("div.gpu-admonition")
    text = " ".join(notice.get_text(" ").split())
    assert text.startswith("GPU This lecture was written for a GPU")
    # sphinx-book-theme shows the Colab launch button: its steps, and the direct link
    assert 'Click on the "launch" icon (a rocket) top right' in text.replace("“", '"').replace(
        "”", '"')
    link = notice.select_one("a.gpu-colab-link")
    assert link["href"] == ("https://colab.research.google.com/github/QuantEcon/"
                            "lecture-tiny.notebooks/blob/main/jax_intro.ipynb")
    # the lecture without {gpu} has no notice; the status page lists only notebooks
    numpy_page = BeautifulSoup(quantecon_book.html.read("numpy_intro.html"), "html.parser")
    assert numpy_page.select("div.gpu-admonition") == []
    status = BeautifulSoup(quantecon_book.html.read("status.html"), "html.parser")
    # the table's rows (a flagged cell's line in the findings list names its source)
    names = [n.get_text(strip=True) for n in status.select(".gpu-status-docname")
             if n.find_parent("li", class_="gpu-status-finding") is None]
    assert sorted(names) == ["jax_intro", "numpy_intro"]
    # the !conda list replacement: every installed distribution, collapsed
    (packages,) = status.select("details.gpu-environment-packages")
    assert packages.get("open") is None
    installed = {tr.td.get_text(): tr.select("td")[1].get_text() for tr in packages.select("tr")}
    import jax
    import sphinx

    assert installed["jax"] == jax.__version__ and installed["Sphinx"] == sphinx.__version__
    assert f"({len(installed)})" in packages.summary.get_text()


def test_default_settings_warn_only_that_the_gpu_lecture_ran_without_a_gpu(
        quantecon_book: QuantEconBook, tmp_path):
    import quantecon_book as helpers

    build = helpers.build(quantecon_book.book, tmp_path, quantecon_book.cache)
    (warning,) = build.warning_lines
    assert "jax_intro.md:16:" in warning and "[gpu_admonition.backend]" in warning
    assert "'cpu' backend" in warning and "gpu_expected_backend is 'gpu'" in warning
    # -W therefore fails the default build; silencing the documented subtype passes it
    quiet = helpers.build(quantecon_book.book, tmp_path / "quiet", quantecon_book.cache,
                          suppress_warnings=["gpu_admonition.backend"])
    assert quiet.warning_lines == [], quiet.warnings


