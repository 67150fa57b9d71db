"""Every builder renders the gpu admonition, without warnings and without losing text.

Each builder builds the ``admonition`` test project (MyST, rST and an executed
notebook) with ``-W`` semantics: the build must not emit a single warning.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("sphinx_tojupyter")

HTML_BUILDERS = ("html", "dirhtml", "singlehtml")
OTHER_BUILDERS = ("latex", "text", "man", "jupyter")

# Texts every output must contain, per source page (man and singlehtml put all
# pages in one file; the others write one file per page).
NOTICE = [
    # every page: the executed notebook says "written for a GPU" (it ran on the CPU),
    # the others keep "built using a machine with access to a GPU"
    "although it will also run without one.",
    "This lecture was built using a machine with access to a GPU and needs one to run "
    "in a reasonable amount of time.",
    "This lecture was written for a GPU, although it will also run without one.",
    "has a free tier with GPUs that you can access as follows:",
    "Google Colab",
    # the root links each page's notebook in Colab (gpu_colab_url); no launch button
    "Open this notebook in Colab",
    "Set the runtime environment to include a GPU",
]
TITLES = ["Needs a", "fast", "Accelerator", "wanted"]
BODIES = ["This page uses", "JAX", "A custom body with", "first", "second"]


def page_files(outdir: Path, builder: str) -> list[Path]:
    """The output file(s) holding the pages' text."""
    if builder == "html":
        return [outdir / f"{p}.html" for p in ("myst", "rest", "notebook")]
    if builder == "dirhtml":
        return [outdir / p / "index.html" for p in ("myst", "rest", "notebook")]
    if builder == "singlehtml":
        return [outdir / "index.html"]
    if builder == "latex":
        return sorted(outdir.glob("*.tex"))
    if builder == "text":
        return [outdir / f"{p}.txt" for p in ("myst", "rest", "notebook")]
    if builder == "man":
        return sorted(outdir.glob("*.1"))
    if builder == "jupyter":
        return [outdir / f"{p}.ipynb" for p in ("myst", "rest", "notebook")]
    raise AssertionError(builder)


def plain_text(path: Path, builder: str) -> str:
    """The output's visible text with markup removed and whitespace normalised."""
    raw = path.read_text(encoding="utf-8")
    if builder in HTML_BUILDERS:
        from bs4 import BeautifulSoup

        raw = BeautifulSoup(raw, "html.parser").get_text(" ")
    elif builder == "jupyter":
        notebook = json.loads(raw)
        raw = "\n".join("".join(cell["source"]) for cell in notebook["cells"])
        raw = raw.replace("*", "")
    elif builder == "man":
        raw = re.sub(r"^\.\S+.*$", " ", raw, flags=re.M)  # requests like .sp, .IP
        raw = raw.replace(r"\(dq", '"').replace(r"\-", "-").replace(r"\%", "")
    elif builder == "latex":
        raw = re.sub(r"\\sphinxstyleemphasis\{|\\sphinxstylestrong\{|\\sphinxhref\{[^}]*\}\{",
                     "", raw)
        raw = raw.replace("{", " ").replace("}", " ").replace("\\", " ")
    return re.sub(r"\s+", " ", raw)


CONF = 'extensions += ["sphinx_tojupyter"]'


@pytest.fixture(scope="module", params=HTML_BUILDERS + OTHER_BUILDERS)
def build(request, build_root_module):
    return build_root_module("admonition", request.param, conf_append=CONF)


def builder_of(build) -> str:
    return build.app.builder.name


def test_no_warnings(build):
    assert build.warning_lines == [], build.warnings


def test_notice_titles_and_bodies_are_not_lost(build):
    builder = builder_of(build)
    files = page_files(build.outdir, builder)
    assert files and all(f.is_file() for f in files), files
    text = " ".join(plain_text(f, builder) for f in files)
    for expected in NOTICE + TITLES + BODIES:
        assert expected in text, f"{builder}: {expected!r} missing"
    # Every page with a directive shows the notice, including the executed notebook.
    if len(files) == 3:
        for f in files:
            assert NOTICE[0] in plain_text(f, builder), f


def test_stylesheet_only_for_html_builders(build):
    builder = builder_of(build)
    css = build.outdir / "_static" / "gpu-admonition.css"
    if builder in HTML_BUILDERS:
        assert css.is_file()
        for f in page_files(build.outdir, builder):
            assert "gpu-admonition.css" in f.read_text(encoding="utf-8"), f
    else:
        assert not css.exists()
        assert not any("gpu-admonition.css" in f.read_text(encoding="utf-8")
                       for f in page_files(build.outdir, builder))


def test_jupyter_title_is_not_a_heading(build_root_module):
    """sphinx-tojupyter turns titles into Markdown headings; ours is bold text."""
    build = build_root_module("admonition", "jupyter", conf_append=CONF)
    notebook = json.loads((build.outdir / "myst.ipynb").read_text(encoding="utf-8"))
    markdown = "\n".join("".join(c["source"]) for c in notebook["cells"]
                         if c["cell_type"] == "markdown")
    assert "**GPU**" in markdown
    assert not re.search(r"^#+ GPU\s*$", markdown, flags=re.M)
    assert "[Google Colab](https://colab.research.google.com/)" in markdown


def test_text_paragraphs_are_separated(build_root_module):
    """Sphinx's text writer runs an admonition's paragraphs together; ours are apart."""
    build = build_root_module("admonition", "text", conf_append=CONF)
    text = (build.outdir / "myst.txt").read_text(encoding="utf-8")
    assert re.search(r"without one\.\n\nGoogle Colab", text)


def test_where_the_page_ran_in_every_builder(build):
    """The executed page says where it ran; download notebooks keep only the sentence."""
    builder = builder_of(build)
    files = page_files(build.outdir, builder)
    notebook_page = files[-1] if len(files) == 3 else files[0]
    text = plain_text(notebook_page, builder)
    if builder == "jupyter":
        # the student's copy: how to get a GPU, not the build machine's CPU
        assert "This page was executed on" not in text
        assert READER_SENTENCE in text
        assert "Executed on CPU" not in text and "Peak kernel memory" not in text
    else:
        assert "This page was executed on CPU" in text
        assert "Executed on CPU" in text
        assert READER_SENTENCE not in text


READER_SENTENCE = ("To run this notebook on a GPU in Google Colab, choose Runtime > Change "
                   "runtime type and select a GPU.")

STATUS_PAGE = "---\norphan: true\n---\n# Status\n\n```{execution-status}\n```\n\n" \
              "```{execution-environment}\n```\n"


def markdown_tables(notebook: dict) -> list[list[str]]:
    """The pipe tables of a notebook's Markdown cells, each as its lines."""
    tables = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        lines = "".join(cell["source"]).splitlines()
        for number, line in enumerate(lines):
            if line.startswith("|") and (number == 0 or not lines[number - 1].startswith("|")):
                block = [line]
                for following in lines[number + 1:]:
                    if not following.startswith("|"):
                        break
                    block.append(following)
                tables.append(block)
    return tables


def test_the_status_page_notebook_has_valid_tables(build_root):
    """sphinx-tojupyter wrote each link of a table before it (ten empty links on the
    header line of a ten-notebook book's status table), and the environment table,
    which has no header row, without the line a Markdown table needs."""
    build = build_root("admonition", "jupyter", conf_append=CONF,
                       files={"status.md": STATUS_PAGE})
    notebook = json.loads((build.outdir / "status.ipynb").read_text(encoding="utf-8"))
    tables = markdown_tables(notebook)
    assert len(tables) == 2, tables
    for table in tables:
        header, rule, *rows = table
        columns = header.count("|") - 1
        assert re.fullmatch(r"(\|:?-+:?)+\|", rule), table
        assert rule.count("|") - 1 == columns and rows
        assert all(row.count("|") - row.count("\\|") - 1 == columns for row in rows), table
    status, environment = tables
    assert status[0].startswith("|Notebook|Status|")
    assert "[](" not in json.dumps(notebook)
    assert any(row.startswith("|Executed notebook|ok|") for row in status[2:])  # text
    assert environment[0].startswith("|CPU|")
    assert "|GPU|none|" in environment
