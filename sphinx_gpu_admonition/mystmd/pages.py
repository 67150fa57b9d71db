"""What a page's source says that its mdast does not: its front matter.

mystmd gives a transform the page's mdast only (its front matter is not in it, and a
page's first heading has been lifted into the front matter's title), so the plugin
reads the page's file for its title and its time budget (``gpu_budget_seconds``,
:func:`..model.settings.page_budget`: the rule of both engines). In a MyST Markdown
page the budget is a key of ``options:``, mystmd's free mapping (a key of the front
matter's own makes mystmd warn "extra key ignored", but counts too); in an
``.ipynb``, a key of the notebook's metadata, as MyST-NB reads it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..model.record import NotebookRecord
from ..model.settings import budget_line, page_budget
from .settings import Settings, parsed_file

#: the front matter's fences (the first line of the page, and a line of its own)
_FENCE = "---"
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$")
_CODE_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})")


def source_file(record: NotebookRecord, root: Path) -> Path | None:
    """The page's file (``record.source``, relative to the repository or the book)."""
    if not record.source:
        return None
    for path in (root / record.source, Path(record.source)):
        if path.is_file():
            return path
    return None


def page_text(path: Path) -> str:
    """The page file's text (empty when it cannot be read)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return ""


def front_matter(path: Path) -> dict[str, Any]:
    """The page's front matter (an ``.ipynb``'s notebook metadata); empty without one,
    or when it is not a mapping of YAML (read again when the file changed:
    :func:`.settings.parsed_file`)."""
    return parsed_file(path, _front_matter, "front matter")


def _front_matter(path: Path) -> dict[str, Any]:
    text = page_text(path)
    if path.suffix == ".ipynb":
        try:
            metadata = json.loads(text).get("metadata")
        except (ValueError, AttributeError):
            return {}
        return metadata if isinstance(metadata, dict) else {}
    lines = text.splitlines()
    if not lines or lines[0].strip() != _FENCE:
        return {}
    end = next((n for n, line in enumerate(lines[1:], 1) if line.strip() == _FENCE), None)
    if end is None:
        return {}
    import yaml  # PyYAML comes with jupyter_server (which --execute needs)

    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def title(path: Path) -> str:
    """The page's title as mystmd gives it: its front matter's ``title``, else its first
    ``#`` heading (outside code)."""
    found = front_matter(path).get("title")
    if isinstance(found, str) and found.strip():
        return found.strip()
    if path.suffix == ".ipynb":
        return ""
    fenced = None
    for line in page_text(path).splitlines():
        fence = _CODE_FENCE.match(line)
        if fence:
            marker = fence.group(1)
            if fenced is None:
                fenced = marker
            elif marker.startswith(fenced):
                fenced = None
            continue
        heading = _HEADING.match(line) if fenced is None else None
        if heading:
            return heading.group(1)
    return ""


def apply_front_matter(records: list[NotebookRecord], settings: Settings, root: Path
                       ) -> list[tuple[NotebookRecord, str, int | None]]:
    """Each record's title (where its tree had none) and time budget from its page's
    file and the book's ``notebook_budget_seconds``; the warnings about a bad budget
    ((record, message, line))."""
    problems = []
    book = settings.config.notebook_budget_seconds
    for record in records:
        path = source_file(record, root)
        if path is None:
            record.budget_seconds = book
            continue
        if not record.title:
            record.title = title(path)
        budget, problem = page_budget(front_matter(path), book, "notebook_budget_seconds")
        record.budget_seconds = budget
        if problem:
            problems.append((record, problem, budget_source_line(path)))
    return problems


def budget_source_line(path: Path) -> int | None:
    """Where a budget warning points in the page's file (None for an ``.ipynb``)."""
    return None if path.suffix == ".ipynb" else budget_line(page_text(path))
