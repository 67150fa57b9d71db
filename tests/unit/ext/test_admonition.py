"""The ``gpu`` notice's parts without a build (``ext/admonition.py``): the launch button only where
the theme shows one, the Colab link, the steps the page needs."""

from __future__ import annotations

import pytest
from docutils import nodes

OPTIONAL = (
    "This lecture was built using a machine with access to a GPU, although it will also "
    "run without one."
)


class FakeConfig(dict):
    """The config values the notice reads (``get_config`` validates the gpu_* ones)."""

    def __init__(self, theme="alabaster", options=None, colab_url=None):
        from sphinx_gpu_admonition.ext.config import options as gpu_options

        super().__init__({f"gpu_{k}": o.default for k, o in gpu_options().items()})
        self.update(html_theme=theme, html_theme_options=options or {},
                    gpu_colab_url=colab_url)


BOOK_THEME = {"repository_url": "https://github.com/QuantEcon/lecture-jax",
              "repository_branch": "main", "path_to_docs": "lectures",
              "launch_buttons": {"colab_url": "https://colab.research.google.com"}}


QUANTECON_THEME = {**BOOK_THEME,
                   "nb_repository_url": "https://github.com/QuantEcon/lecture-jax.notebooks"}


@pytest.mark.parametrize(("theme", "options", "expected"), [
    ("sphinx_book_theme", BOOK_THEME, "sphinx_book_theme"),
    ("quantecon_book_theme", QUANTECON_THEME, "quantecon_book_theme"),
    # quantecon-book-theme shows its "play" icon only for a repository of notebooks
    ("quantecon_book_theme", BOOK_THEME, None),
    ("alabaster", BOOK_THEME, None),  # the option means nothing to other themes
    ("sphinx_book_theme", {**BOOK_THEME, "launch_buttons": {"colab_url": ""}}, None),
    ("sphinx_book_theme", {"launch_buttons": BOOK_THEME["launch_buttons"]}, None),
])
def test_launch_button_only_where_the_theme_shows_one(theme, options, expected):
    from sphinx_gpu_admonition.ext.admonition import launch_button_theme

    assert launch_button_theme(FakeConfig(theme, options)) == expected


def test_colab_link_from_the_template_or_the_repository(tmp_path):
    from sphinx_gpu_admonition.ext.admonition import colab_link

    markdown = tmp_path / "jax_intro.md"
    markdown.write_text("x")
    template = "https://colab.research.google.com/github/QuantEcon/n/blob/main/{path}.ipynb"
    assert colab_link(FakeConfig(), template, "intro/jax intro", markdown) == (
        "https://colab.research.google.com/github/QuantEcon/n/blob/main/intro/jax%20intro.ipynb")
    # Colab opens notebooks, not MyST Markdown: no link from the repository for .md
    assert colab_link(FakeConfig(options=BOOK_THEME), None, "jax_intro", markdown) is None
    notebook = tmp_path / "autodiff.ipynb"
    notebook.write_text("{}")
    assert colab_link(FakeConfig(options=BOOK_THEME), None, "autodiff", notebook) == (
        "https://colab.research.google.com/github/QuantEcon/lecture-jax/blob/main/"
        "lectures/autodiff.ipynb")
    # quantecon-book-theme: the notebooks repository, whatever the source's format
    assert colab_link(FakeConfig("quantecon_book_theme", QUANTECON_THEME), None,
                      "jax_intro", markdown) == ("https://colab.research.google.com/github/QuantEcon/"
                                    "lecture-jax.notebooks/blob/main/jax_intro.ipynb")
    gitlab = {"repository_url": "https://gitlab.com/a/b"}
    assert colab_link(FakeConfig(options=gitlab), None, "autodiff", notebook) is None


@pytest.mark.parametrize(("button", "link", "steps", "after"), [
    ("quantecon_book_theme", None,
     ['Click on the "play" icon top right', "Select Colab",
      "Set the runtime environment to include a GPU"], None),
    ("sphinx_book_theme", "https://colab/x.ipynb",
     ['Click on the "launch" icon (a rocket) top right', "Select Colab",
      "Set the runtime environment to include a GPU"], "Open this notebook in Colab"),
    (None, "https://colab/x.ipynb",
     ["Open this notebook in Colab", "Set the runtime environment to include a GPU"], None),
    (None, None, [], None),
])
def test_notice_steps_name_only_what_the_page_has(button, link, steps, after):
    from sphinx_gpu_admonition.ext.admonition import colab_paths, default_notice

    body = default_notice("optional", button, link)
    assert body[0].astext() == OPTIONAL and "gpu-notice-intro" in body[0]["classes"]
    lists = [n for n in body if isinstance(n, nodes.enumerated_list)]
    assert [item.astext() for lst in lists for item in lst.children] == steps
    trailing = [n for n in body[2:] if isinstance(n, nodes.paragraph)]
    assert [p.astext() for p in trailing] == ([after] if after else [])
    if link:
        (reference,) = [r for r in body[-1].findall(nodes.reference)]
        assert reference["refuri"] == link
    if not (button or link):
        assert body[1].astext() == "Google Colab has a free tier with GPUs."
    assert colab_paths(button, link) == {(True, True): "both", (True, False): "button",
                                         (False, True): "link", (False, False): "none"}[
        (bool(button), bool(link))]
