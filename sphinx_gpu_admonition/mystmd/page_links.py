"""Links from the status page to each notebook's page, made by mystmd itself.

The status page's table is filled at the project stage, after mystmd resolved the
links of every page, and a transform is told neither a page's URL nor its title (a
page's slug follows mystmd's own rules: ``lectures/jax_intro.md`` is ``/jax-intro``).
So the status page's document stage leaves a link to every page of the book's table
of contents (``/lectures/jax_intro.md``, from the book's folder) in a comment node,
which no renderer shows; mystmd resolves them with its other links (the page's URL,
``internal``, its ``dataUrl``, and its title as the text of a link without one), and
the project stage takes them from there (measured with mystmd 1.8.3, docs/mystmd.md).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from . import mdast
from .pages import page_text
from .settings import CONFIG_FILE

HOLDER_CLASS = "gpu-admonition-page-links"
#: the files mystmd makes pages of
PAGE_SUFFIXES = (".md", ".ipynb")
#: folders of a book that hold no pages (mystmd's own and the usual tools')
_NOT_PAGES = ("_build", "node_modules")


class PageLink(NamedTuple):
    """A page as mystmd links to it."""

    url: str
    title: str
    data_url: str | None = None

    def node(self, text: str | None = None, anchor: str | None = None) -> mdast.Node:
        """A link to the page (to ``anchor`` on it), with ``text`` (else its title)."""
        node: mdast.Node = {"type": "link", "url": self.url + (f"#{anchor}" if anchor else ""),
                            "internal": True,
                            "children": [mdast.text(text if text is not None else self.title)]}
        if self.data_url:
            node["dataUrl"] = self.data_url
        return node


def _toc_entries(entries: Any, folder: Path) -> list[Path]:
    found: list[Path] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("file"), str):
            found.append(folder / entry["file"])
        if isinstance(entry.get("pattern"), str):
            found += sorted(Path(name) for name in glob.glob(str(folder / entry["pattern"]),
                                                               recursive=True))
        found += _toc_entries(entry.get("children"), folder)
    return found


def book_pages(folder: Path | None = None) -> list[Path]:
    """The pages of the book in ``folder`` (the working directory): its table of
    contents (``project: toc:`` in ``myst.yml``: files, patterns, children), or, without
    one, every Markdown and notebook file in it, as mystmd takes them."""
    folder = folder or Path.cwd()
    import yaml  # PyYAML comes with jupyter_server (which --execute needs)

    try:
        config = yaml.safe_load((folder / CONFIG_FILE).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        config = None
    project = config.get("project") if isinstance(config, dict) else None
    toc = project.get("toc") if isinstance(project, dict) else None
    if isinstance(toc, list):
        pages = _toc_entries(toc, folder)
    else:
        pages = [path for suffix in PAGE_SUFFIXES for path in sorted(folder.rglob(f"*{suffix}"))
                 if not any(part.startswith(".") or part in _NOT_PAGES
                            for part in path.relative_to(folder).parts[:-1])]
    return [path for path in dict.fromkeys(pages)
            if path.suffix in PAGE_SUFFIXES and path.is_file()]


#: a page with the status table (its directive's fence, as mystmd parses it)
_STATUS_DIRECTIVE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{execution-status\}", re.MULTILINE)


def status_page(capture: Path, folder: Path | None = None) -> Path | None:
    """The book's status page, which the badges link to: the first page (by path) with
    the ``execution-status`` directive; looked for once per build (the answer is kept in
    the capture folder for the build's other calls, the build being the parent
    ``myst`` process)."""
    folder = folder or Path.cwd()
    kept = capture / f"status-page-{os.getppid()}.json"
    try:
        page = json.loads(kept.read_text(encoding="utf-8"))["page"]
        return Path(page) if isinstance(page, str) and page else None
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not looked for yet in this build
    found = next((path for path in sorted(book_pages(folder))
                  if _STATUS_DIRECTIVE.search(page_text(path))), None)
    for other in capture.glob("status-page-*.json"):
        other.unlink(missing_ok=True)  # an earlier build's
    with contextlib.suppress(OSError):
        capture.mkdir(parents=True, exist_ok=True)
        kept.write_text(json.dumps({"page": str(found) if found else None}), encoding="utf-8")
    return found


def hold(tree: mdast.Node, paths: list[Path] | None = None, folder: Path | None = None
         ) -> None:
    """Document stage: a link without text to each of ``paths`` (every page of the book,
    on the status page), for mystmd to resolve."""
    folder = folder or Path.cwd()
    links = [{"type": "link", "url": "/" + path.relative_to(folder).as_posix(), "children": []}
             for path in (book_pages(folder) if paths is None else paths)]
    tree.setdefault("children", []).append({"type": "comment", "value": "",
                                            "class": HOLDER_CLASS, "children": links})


def docname(path: Path, folder: Path | None = None) -> str:
    """A page's docname: its path from the book's folder, without suffix."""
    return path.relative_to(folder or Path.cwd()).with_suffix("").as_posix()


def take(tree: mdast.Node) -> dict[str, PageLink]:
    """Project stage: the pages mystmd linked, by docname (their path from the book's
    folder without suffix); the holder is left empty."""
    found: dict[str, PageLink] = {}
    for holder in [node for node in mdast.walk(tree) if node.get("type") == "comment"
                   and mdast.has_class(node, HOLDER_CLASS)]:
        for link in holder.get("children") or []:
            source = str(link.get("urlSource") or "")
            if not link.get("internal") or not source.startswith("/"):
                continue  # not a page mystmd knows (a file it copied, say)
            docname = str(Path(source.lstrip("/")).with_suffix("").as_posix())
            title = "".join(str(n.get("value", "")) for n in mdast.walk(link)
                            if n.get("type") == "text")
            found[docname] = PageLink(str(link.get("url") or ""), title,
                                      link.get("dataUrl") if isinstance(link.get("dataUrl"),
                                                                        str) else None)
        holder["children"] = []
    return found
