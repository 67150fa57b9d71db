"""The ``gpu`` directive: HTML structure, doctree, options, config and bad input."""

from __future__ import annotations

import pickle
import re

import pytest
from docutils import nodes

bs4 = pytest.importorskip("bs4")

from conftest import REGRESSIONS, assert_matches_regression  # noqa: E402
from unit.ext.test_admonition import OPTIONAL  # noqa: E402

DOCS = REGRESSIONS.parent.parent / "docs"

REQUIRED = (
    "This lecture was built using a machine with access to a GPU and needs one to run in "
    "a reasonable amount of time."
)
WRITTEN_FOR_GPU = "This lecture was written for a GPU, although it will also run without one."
COLAB = "Google Colab has a free tier with GPUs that you can access as follows:"
# The root sets gpu_colab_url; its theme (alabaster) has no launch button.
COLAB_LINK = ("https://colab.research.google.com/github/example/lectures.notebooks/blob/main/"
              "{path}.ipynb")
STEPS = [
    "Open this notebook in Colab",
    "Set the runtime environment to include a GPU",
]


def text_of(element) -> str:
    text = element.get_text(" ", strip=True)
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", " ", re.sub(r"\s+([.,:;])", r"\1", text))


def soup(build, page: str):
    return bs4.BeautifulSoup(build.read(page), "html.parser")


def admonitions(build, page: str):
    return soup(build, page).select("div.gpu-admonition")


@pytest.fixture(scope="module")
def html(build_root_module):
    build = build_root_module("admonition", "html")
    assert build.warning_lines == [], build.warnings
    return build


def doctree(build, docname):
    return pickle.loads((build.outdir.parent / "doctrees" / f"{docname}.doctree").read_bytes())


def gpu_nodes(build, docname) -> list[nodes.admonition]:
    return [n for n in doctree(build, docname).findall(nodes.admonition)
            if "gpu-admonition" in n["classes"]]


# -- default notice -----------------------------------------------------------


def test_default_notice(html):
    default = admonitions(html, "myst.html")[0]
    assert default.name == "div"
    assert default["class"] == [
        "gpu-admonition", "admonition-gpu", "warning", "gpu-optional", "admonition"]
    assert text_of(default.select_one("p.admonition-title")) == "GPU"
    paragraphs = [text_of(p) for p in default.find_all("p", recursive=False)]
    assert paragraphs == ["GPU", OPTIONAL, COLAB]
    link = default.find("a", string="Google Colab")
    assert link["href"] == "https://colab.research.google.com/"
    assert [text_of(li) for li in default.select("ol > li")] == STEPS
    # no launch button on this theme: the steps never point at one
    assert "icon" not in text_of(default)
    notebook_link = default.select_one("ol > li a.gpu-colab-link")
    assert notebook_link["href"] == COLAB_LINK.format(path="myst")


def test_required_notice(html):
    required = admonitions(html, "myst.html")[1]
    assert "gpu-required" in required["class"]
    assert "gpu-optional" not in required["class"]
    text = text_of(required)
    assert REQUIRED in text
    assert OPTIONAL not in text
    assert COLAB in text


def test_doctree_kind_attribute(html):
    kinds = [(n["gpu_kind"], n["classes"][-1]) for n in gpu_nodes(html, "myst")]
    assert kinds == [
        ("optional", "gpu-optional"),
        ("required", "gpu-required"),
        ("required", "gpu-required"),
        ("optional", "gpu-optional"),
    ]


# -- options ------------------------------------------------------------------


def test_class_title_name_options(html):
    page = soup(html, "myst.html")
    node = page.select_one("div.gpu-admonition#gpu-options")
    assert node["class"] == [
        "gpu-admonition", "admonition-gpu", "warning", "extra-one", "extra-two",
        "gpu-required", "admonition"]
    title = node.select_one("p.admonition-title")
    assert text_of(title) == "Needs a fast GPU"
    assert title.find("em").get_text() == "fast"
    assert REQUIRED in text_of(node)


def test_label_is_referencable(html):
    refs = soup(html, "myst.html").select("section#references a.reference.internal")
    # Without an explicit text the reference uses the admonition's title.
    assert [(a["href"], text_of(a)) for a in refs] == [
        ("#gpu-options", "Needs a fast GPU"),
        ("#gpu-body", "the GPU notice"),
    ]


def test_custom_body_is_parsed_as_markup(html):
    node = soup(html, "myst.html").select_one("div.gpu-admonition#gpu-body")
    text = text_of(node)
    assert OPTIONAL not in text and COLAB not in text
    assert text_of(node.select_one("p.admonition-title")) == "GPU"
    assert node.find("a", string="JAX")["href"] == "https://github.com/jax-ml/jax"
    assert len(node.select("ul > li")) == 2
    assert [m.get_text() for m in node.select("span.math")] == [r"\(x^2\)", r"\(\alpha\)"]
    internal = node.select_one("a.reference.internal")
    assert internal["href"] == "#gpu-options"


def test_rst_page(html):
    default, options, body = admonitions(html, "rest.html")
    assert OPTIONAL in text_of(default)
    assert options["id"] == "rst-gpu"
    assert options["class"] == [
        "gpu-admonition", "admonition-gpu", "warning", "extra-rst", "gpu-required", "admonition"]
    assert text_of(options.select_one("p.admonition-title")) == "Accelerator wanted"
    assert REQUIRED in text_of(options)
    assert body.find("a", string="a link")["href"] == "https://example.org/"
    assert [text_of(li) for li in body.select("ol > li")] == ["first", "second"]
    assert body.select_one("span.math") is not None
    ref = soup(html, "rest.html").find("a", href="#rst-gpu")
    assert text_of(ref) == "Accelerator wanted"


def test_executed_notebook_page(html):
    page = soup(html, "notebook.html")
    (admonition,) = page.select("div.gpu-admonition")
    # it ran on the test machine's CPU: the notice says so in one voice
    text = text_of(admonition)
    assert text.startswith(f"GPU {WRITTEN_FOR_GPU}")
    assert "This page was executed on CPU: " in text and text.endswith(", not on a GPU.")
    assert "built using a machine with access to a GPU" not in text
    outputs = page.select("div.cell_output")
    assert outputs and "42" in text_of(outputs[0])


def test_stylesheet_linked_and_copied(html):
    for page in ("index.html", "myst.html", "rest.html", "notebook.html"):
        hrefs = [link["href"] for link in soup(html, page).find_all("link", rel="stylesheet")]
        assert any(h.split("?")[0] == "_static/gpu-admonition.css" for h in hrefs), hrefs
    css = (html.outdir / "_static" / "gpu-admonition.css").read_text(encoding="utf-8")
    assert ".admonition.gpu-admonition" in css
    assert 'html[data-theme="dark"]' in css


# -- doctree regression -------------------------------------------------------


@pytest.mark.parametrize(("docname", "index", "name"), [
    ("myst", 0, "myst-default"),
    ("myst", 2, "myst-options"),
    ("rest", 1, "rest-options"),
])
def test_doctree_regression(html, normalise_pseudoxml, docname, index, name):
    actual = normalise_pseudoxml(gpu_nodes(html, docname)[index].pformat())
    assert_matches_regression(actual, REGRESSIONS / "admonition" / f"{name}.xml")


# -- site-wide defaults -------------------------------------------------------


def test_config_defaults(build_root):
    build = build_root("admonition", conf_append="\n".join([
        'gpu_admonition_title = "Accelerator"',
        'gpu_admonition_class = "note site-wide"',
        'gpu_admonition_body = "Optional [GPU](https://example.org/gpu) notice."',
        'gpu_admonition_required_body = "A GPU is **required**."',
    ]))
    assert build.warning_lines == [], build.warnings
    default, required, options, body = admonitions(build, "myst.html")
    assert default["class"] == [
        "gpu-admonition", "admonition-gpu", "note", "site-wide", "gpu-optional", "admonition"]
    assert text_of(default.select_one("p.admonition-title")) == "Accelerator"
    assert text_of(default) == "Accelerator Optional GPU notice."
    assert default.find("a", string="GPU")["href"] == "https://example.org/gpu"
    assert text_of(required) == "Accelerator A GPU is required."
    assert required.find("strong").get_text() == "required"
    # Options still win over the site-wide values.
    assert text_of(options.select_one("p.admonition-title")) == "Needs a fast GPU"
    assert options["class"][2:5] == ["note", "site-wide", "extra-one"]
    assert "This page uses JAX" in text_of(body)


def test_bad_config_value_warns_and_uses_default(build_root):
    build = build_root("admonition", conf_append='gpu_admonition_class = ["ok", 3]')
    ours = [line for line in build.warning_lines if "gpu_admonition.config" in line]
    assert len(ours) == 1, build.warnings
    assert "gpu_admonition_class" in ours[0]
    default = admonitions(build, "myst.html")[0]
    assert default["class"][:3] == ["gpu-admonition", "admonition-gpu", "warning"]


# -- bad input ------------------------------------------------------------------

BAD_MYST = """\
# Bad input

```{gpu} An argument
```

```{gpu}
:unknown-option: 1
```

```{gpu}
:required: yes
```

```{gpu}
:title:
```

```{gpu}
:name: good-after-bad
```
"""

BAD_RST = """\
Bad reST
========

.. gpu:: An argument

.. gpu::
   :unknown-option: 1

.. gpu::
   :class:

.. gpu::
   :name: rst-good-after-bad
"""


def test_bad_input_warns_with_location_and_build_succeeds(build_root):
    index = "# Index\n\n```{toctree}\nmyst\nrest\nnotebook\nbad\nbad_rst\n```\n"
    build = build_root("admonition", files={
        "index.md": index, "bad.md": BAD_MYST, "bad_rst.rst": BAD_RST})
    # One entry per warning (docutils' errors span several lines).
    lines = [w for w in re.split(r"\n(?=\S+:\d+: [A-Z]+: )", build.warnings) if w.strip()]

    def at(name: str, *line: int) -> list[str]:
        return [w for w in lines if any(f"{name}:{n}:" in w for n in line)]

    # The argument: our own warning, with file and line.
    (arg_md,) = at("bad.md", 3)
    assert "gpu directive takes no argument" in arg_md
    assert "[gpu_admonition.directive]" in arg_md
    (arg_rst,) = at("bad_rst.rst", 4)
    assert "gpu directive takes no argument" in arg_rst
    # Unknown options and bad values: MyST / docutils errors naming the directive.
    # (MyST >= 4 points at the option's line, older MyST and docutils at the directive's.)
    assert any("unknown-option" in w and "gpu" in w for w in at("bad.md", 6, 7)), lines
    assert any("required" in w and "gpu" in w for w in at("bad.md", 10, 11)), lines
    assert any("title" in w and "gpu" in w for w in at("bad.md", 14, 15)), lines
    assert any("unknown option" in w and '"gpu"' in w for w in at("bad_rst.rst", 6)), lines
    assert any('"gpu"' in w for w in at("bad_rst.rst", 9)), lines

    # The build went on: the good directives after the bad ones rendered.
    page = soup(build, "bad.html")
    assert page.select_one("div.gpu-admonition#good-after-bad") is not None
    assert page.select_one("div.gpu-admonition#rst-good-after-bad") is None
    assert soup(build, "bad_rst.html").select_one("div#rst-good-after-bad") is not None
    # The argument was ignored, not turned into the body.
    first, _unknown, bad_flag, *_rest = page.select("div.gpu-admonition")
    assert "An argument" not in text_of(first)
    assert OPTIONAL in text_of(first)
    # ":required: yes" is not taken for ":required:" (MyST would accept any value).
    assert "gpu-optional" in bad_flag["class"]


# -- the docs page ------------------------------------------------------------------


def test_docs_page_builds_without_warnings(build_root):
    """docs/admonition.md renders every example live: it must build cleanly."""
    page = (DOCS / "admonition.md").read_text(encoding="utf-8")
    index = ("# Docs\n\n```{toctree}\nmyst\nrest\nnotebook\nadmonition\nruntime\njax-demo\n"
             "configuration\n```\n")
    linked = {"runtime.md": "(runtime-docs)=\n# Run time\n", "jax-demo.md": "# JAX\n",
              "configuration.md": "# Options\n\n(gpu_expected_backend)=\n## a\n\n"
                                  "(gpu_colab_url)=\n## b\n\n(gpu_cell_badges)=\n## c\n"}
    build = build_root("admonition", files={"index.md": index, "admonition.md": page, **linked},
                       confoverrides={"nitpicky": True})
    assert build.warning_lines == [], build.warnings
    found = admonitions(build, "admonition.html")
    assert len(found) == page.count("\n```{gpu}") // 2 + 1  # shown once as source, once live
    assert any("gpu-required" in a["class"] for a in found)
    assert any(a.get("id") == "gpu-example-label" for a in found)


# -- the way to Colab: only what the page has (pure functions, no build) -----------------


def notice_text(nodes_: list) -> str:
    return " ".join(n.astext() for n in nodes_)


def test_a_notebook_page_without_a_way_to_colab_warns(build_root):
    """No launch button, no link: the notebook page warns at its directive; pages that
    are not notebooks do not (nothing to open in Colab). No kernel: execution off."""
    build = build_root("admonition", confoverrides={"gpu_colab_url": None,
                                                    "nb_execution_mode": "off"})
    colab = [w for w in build.warning_lines if "[gpu_admonition.colab]" in w]
    assert len(colab) == 1, build.warnings
    assert "notebook.md:14:" in colab[0] and "gpu_colab_url" in colab[0]
    notice = admonitions(build, "notebook.html")[0]
    assert "Google Colab has a free tier with GPUs." in text_of(notice)
    assert notice.select("ol") == [] and "icon" not in text_of(notice)
