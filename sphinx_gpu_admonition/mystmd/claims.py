"""Timing claims on mystmd: the roles ``{timing}``, ``{timing-ratio}`` and
``{timing-claim}`` (``docs/claims.md``), each page's text read once, the book's claims
checked in the project stage, as on Sphinx (:mod:`..model.page_claims`).

* The role leaves a placeholder (a ``span`` whose ``data`` holds the role, its text
  and its line, which mystmd gives the role).
* The document stage (:func:`read_page`), after the page's record: the page's source
  file (its record's; a page without one is found by its roles' lines in the book's
  files, since mystmd does not tell a transform which page it runs on), its docname
  written into its placeholders, and what its text gives the claims
  (:func:`..model.page_claims.page_text`, kept by its text's digest in the capture
  folder's ``texts/``), saved for the project stage (``claims/``: one file a page).
* The project stage (:func:`check_book`): every page's claims checked against this
  build and each build of ``runtime_sources`` (the same files as Sphinx's
  ``gpu_runtime_sources``), once per plugin call; the page's placeholders replaced
  (:func:`resolve`) and its claims' warnings given at their lines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from ..model.build_warnings import BuildWarning
from ..model.claims import Build
from ..model.files import read_status, repository_path, write_or_warn
from ..model.page_claims import (
    ClaimRole,
    PageText,
    book_claims,
    claim_sites,
    page_text,
    placed,
    wanted_text,
)
from ..model.page_text import CLAIM_ROLE, CLAIM_ROLES
from ..model.record import EXECUTION_OFF, NotebookRecord
from ..model.schema import SchemaError, dumper
from ..model.timing_quotes import Quotes
from ..model.timing_record import Claim, ClaimRules, TimingStatement
from ..model.timings import tag_problems
from ..render import claims_text
from ..render.claims_view import claim_entries, review_pages, statement_entries
from ..render.labels import Labels, Translate, english
from ..render.runtime_text import stale_pages
from . import mdast
from .cells import page_cells
from .pages import source_file
from .warnings import warning

ROLES = CLAIM_ROLES
TIMING_CLASS = "gpu-timing"
PLACEHOLDER_CLASS = "gpu-timing-placeholder"
#: the capture folder's folders: this build's pages, the texts' readings
PAGES_FOLDER = "claims"
TEXTS_FOLDER = "texts"
#: the page files a page without a record may be (the book's folder, not ``_build``)
PAGE_SUFFIXES = (".md", ".ipynb")


def role(name: str, data: dict[str, Any]) -> list[mdast.Node]:
    position = (data.get("node") or {}).get("position") or {}
    line = (position.get("start") or {}).get("line")
    text = " ".join(str(data.get("body") or "").split())
    return [{"type": "span", "class": f"{TIMING_CLASS} {PLACEHOLDER_CLASS}",
             "data": {"role": name, "text": text,
                      "line": line if isinstance(line, int) and line > 0 else None},
             "children": [mdast.text(text)]}]


def placeholders(tree: mdast.Node) -> list[mdast.Node]:
    return [node for node in mdast.walk(tree) if node.get("type") == "span"
            and mdast.has_class(node, PLACEHOLDER_CLASS) and isinstance(node.get("data"), dict)]


def _roles(found: Iterable[mdast.Node]) -> list[ClaimRole]:
    return [ClaimRole(str(node["data"].get("text", "")), node["data"].get("line"),
                      str(node["data"].get("role", ""))) for node in found]


# -- the document stage: the page's text, once per read ----------------------------------
def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _paragraph_at(lines: list[str], line: int) -> str:
    """The text from ``line`` to the end of its paragraph (mystmd gives a role the line
    of its paragraph's start)."""
    end = line - 1
    while end < len(lines) and lines[end].strip():
        end += 1
    return " ".join(lines[line - 1:end])


def _holds_roles(path: Path, roles: list[ClaimRole]) -> bool:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return all(role.line is not None and 0 < role.line <= len(lines)
               and f"{{{role.role}}}" in _paragraph_at(lines, role.line)
               and role.expression.split()[0] in _paragraph_at(lines, role.line)
               for role in roles if role.expression.strip())


def find_page(roles: list[ClaimRole], root: Path) -> Path | None:
    """The source file of a page mystmd gives no path for: the one whose lines hold its
    roles where mystmd says they are (a page with no record: it runs no code, or it
    did not run)."""
    if not roles or any(role.line is None for role in roles):
        return None
    for folder, names, files in os.walk(root):
        names[:] = sorted(name for name in names if not name.startswith((".", "_"))
                          and name != "node_modules")
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix in PAGE_SUFFIXES and _holds_roles(path, roles):
                return path
    return None


def docname_of(path: Path, root: Path) -> str:
    with contextlib.suppress(ValueError):
        path = path.resolve().relative_to(root.resolve())
    return path.with_suffix("").as_posix()


@dataclasses.dataclass
class SavedPage:
    """What the document stage keeps of a page for the project stage."""

    page: str
    source: str | None
    roles: list[ClaimRole]
    text: PageText | None
    #: the page runs code but has no record (it did not run in this build)
    unexecuted: bool = False


def tag_warnings(tree: mdast.Node, record: NotebookRecord | None, root: Path
                 ) -> list[BuildWarning]:
    """A warning at each ``time:NAME`` tag of the page that names nothing."""
    if record is None:
        return []
    return [warning("claim", claims_text.tag_problem_text(problem), record.source,
                    problem.line)
            for problem in tag_problems(page_cells(tree, source_file(record, root)))]


def read_page(tree: mdast.Node, record: NotebookRecord | None, has_code: bool,
              folder: Path, root: Path) -> list[str]:
    """The document stage's part: the page's docname into its placeholders, its text's
    reading, both saved for the project stage; returns the warnings (a file that
    cannot be written)."""
    found = placeholders(tree)
    roles = _roles(found)
    timed = bool(record is not None and record.timings)
    if not roles and not timed:
        return []
    path = source_file(record, root) if record is not None else find_page(roles, root)
    if path is None:
        return []
    page = record.docname if record is not None else docname_of(path, root)
    numbers: dict[str, int] = {}
    for node in found:
        kind = str(node["data"].get("role"))
        node["data"].update(page=page, number=numbers.get(kind, 0))
        numbers[kind] = numbers.get(kind, 0) + 1
    source = record.source if record is not None and record.source else repository_path(path)
    text, problem = None, None
    what = wanted_text(timed, bool(roles))
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text, problem = page_text(page, source, path.read_text(encoding="utf-8"),
                                  path.suffix, what or "", folder / TEXTS_FOLDER)
    saved = {"page": page, "source": source, "unexecuted": record is None and has_code,
             "roles": [list(role) for role in roles],
             "text": dumper(PageText)(text) if text is not None else None}
    written = write_or_warn(folder / PAGES_FOLDER / f"{_digest(page)}.json",
                            json.dumps(saved, ensure_ascii=False, sort_keys=True))
    return [message for message in (problem, written) if message]


def saved_pages(folder: Path, root: Path, since: float | None = None) -> list[SavedPage]:
    """This build's pages (saved at ``since`` or later; None: any whose source is still
    there), by docname."""
    pages = []
    for path in sorted((folder / PAGES_FOLDER).glob("*.json")):
        try:
            if since is not None and path.stat().st_mtime < since:
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            text = PageText.from_dict(data["text"]) if data.get("text") else None
            roles = [ClaimRole(str(text_), line if isinstance(line, int) else None, str(kind))
                     for text_, line, kind in data.get("roles") or []]
            page = SavedPage(str(data["page"]), data.get("source"), roles, text,
                             bool(data.get("unexecuted")))
        except (OSError, ValueError, KeyError, TypeError, SchemaError):
            continue  # a file cut by a full disk: that page's claims are not known
        if page.source and not (root / page.source).exists() and \
                not Path(page.source).exists():
            continue
        pages.append(page)
    return sorted(pages, key=lambda saved: saved.page)


# -- the project stage: the book's claims ------------------------------------------------
class CheckedBook(NamedTuple):
    builds: list[Build]
    rules: ClaimRules
    claims: list[Claim]
    statements: list[TimingStatement]
    by_role: dict[tuple[str, int], Claim]
    #: the quoting roles' values, worked out once for their warnings and their text
    quotes: Quotes


def other_builds(configured: Iterable[str], root: Path
                 ) -> tuple[list[tuple[str, dict[str, NotebookRecord]]], list[str]]:
    """(name as configured, records by docname) of each readable ``runtime_sources``
    file, and a warning for each that is not (Sphinx's words)."""
    found, problems = [], []
    for name in configured:
        try:
            found.append((name, read_status(root / name).by_docname()))
        except (SchemaError, OSError) as error:
            problems.append(f"runtime_sources: {name!r} ignored, the timing claims are not "
                            f"checked against that build: {error}")
    return found, problems


def _mtime(records: dict[str, NotebookRecord], root: Path, docname: str) -> float | None:
    record = records.get(docname)
    path = source_file(record, root) if record is not None else None
    try:
        return path.stat().st_mtime if path is not None else None
    except OSError:
        return None


def check_book(pages: list[SavedPage], records: list[NotebookRecord],
               others: list[tuple[str, dict[str, NotebookRecord]]], rules: ClaimRules,
               root: Path) -> CheckedBook:
    """Every page's claims checked against this build's records and ``others``."""
    by_docname = {record.docname: record for record in records}
    # a page that runs code but did not run: its timings are "not executed"
    claimed = {**{saved.page: NotebookRecord(docname=saved.page, status=EXECUTION_OFF)
                  for saved in pages if saved.unexecuted}, **by_docname}
    builds = [Build(claimed)] + [
        Build(other, name, stale_pages(other, by_docname,
                                       lambda docname: _mtime(by_docname, root, docname)))
        for name, other in others]
    sites, keys = [], []
    for saved in pages:
        found = claim_sites(saved.page, saved.source, saved.roles, saved.text)
        sites += found
        keys += [(saved.page, number) for number in range(len(found))]
    texts = {saved.page: saved.text for saved in pages if saved.text is not None}
    claims, statements = book_claims(sites, texts, builds, rules)
    return CheckedBook(builds, rules, claims, statements, dict(zip(keys, claims, strict=True)),
                       Quotes(builds, rules))


# -- the page's placeholders and warnings --------------------------------------------------
def _mark(claim: Claim | None, translate: Translate) -> mdast.Node:
    verdict = claim.verdict if claim is not None else "not_checked"
    title = claims_text.mark_label(claim, translate) if claim is not None else \
        claims_text.mark_text(None, translate)
    if claim is not None:
        title += " · " + claims_text.hover_text(claim, translate)
    return {"type": "span", "class": f"gpu-claim-mark gpu-claim-{verdict}", "children": [
        {"type": "abbreviation", "title": title,
         "children": [mdast.text(claims_text.VERDICT_MARKS.get(verdict, "?"))]}]}


def _quote_problem(role: str, text: str, page: str, checked: CheckedBook) -> str | None:
    check = checked.quotes.problem(role, text, page)
    return claims_text.reason_text(check) if check is not None else None


def resolve(tree: mdast.Node, checked: CheckedBook, pages: list[SavedPage],
            translate: Translate = english) -> list[BuildWarning]:
    """Replace the page's placeholders; returns the warnings of its claims and quoting
    roles, at their lines (the page is its placeholders': mystmd shows them on it)."""
    found = placeholders(tree)
    by_page = {saved.page: saved for saved in pages}
    pages_here = _pages_of(found)
    for node in found:
        data = node.pop("data")
        role, text, page = str(data.get("role")), str(data.get("text", "")), data.get("page")
        if role == CLAIM_ROLE:
            claim = checked.by_role.get((page, data.get("number", -1))) if page else None
            node.update(_mark(claim, translate))
            continue
        shown_text, hover = (
            claims_text.quoted_text(role, text, page, checked.quotes, translate) if page
            else (claims_text.unknown_text(role, translate), ""))
        node["class"] = TIMING_CLASS
        node["children"] = [{"type": "abbreviation", "title": hover,
                             "children": [mdast.text(shown_text)]} if hover
                            else mdast.text(shown_text)]
    warnings: list[BuildWarning] = []
    for claim in checked.claims:
        if claim.page not in pages_here:
            continue
        message = claims_text.claim_warning(claim) or claims_text.problem_warning(claim)
        if message:
            warnings.append(warning("claim", message, claim.source, claim.line))
    for page in sorted(pages_here):
        saved = by_page.get(page)
        if saved is None:
            continue
        for written, found_role in placed(saved.roles, saved.text):
            if written.role == CLAIM_ROLE:
                continue
            why = _quote_problem(written.role, written.expression, page, checked)
            if why:
                line = found_role.line if found_role is not None and found_role.line \
                    else written.line
                warnings.append(warning("claim", claims_text.quote_warning(
                    written.role, written.expression, why), saved.source, line))
    return warnings


def _pages_of(found: list[mdast.Node]) -> set[str]:
    return {str(node["data"]["page"]) for node in found if node["data"].get("page")}


# -- the status page ----------------------------------------------------------------------
def claims_nodes(claims: list[Claim], statements: list[TimingStatement],
                 labels: Labels) -> list[mdast.Node]:
    """The status page's "Timing claims" (failing first) and the review list, as the
    Sphinx page lists them (:mod:`..render.claims_view`), in standard nodes."""
    if not claims and not statements:
        return []
    translate, ngettext = labels.translate, labels.ngettext
    texts = claims_text.column_texts(translate)
    nodes: list[mdast.Node] = [mdast.heading(claims_text.claims_title(translate), 2),
                               mdast.paragraph(claims_text.claims_summary(
                                   claims, ngettext, translate) if claims
                                   else texts["no_claims"])]
    items = []
    for row in claim_entries(claims, translate, ngettext):
        head = [mdast.text(f"{row['mark']} "), mdast.strong(row["verdict_text"]),
                mdast.text(" "), mdast.inline_code(row["expression"])]
        if row["sentence"]:
            head.append(mdast.text(f": {row['sentence']}"))
        head.append(mdast.text(f" ({row['where']})"))
        items.append([mdast.paragraph(*head), mdast.list_node(
            [[mdast.paragraph(check["text"])] for check in row["checks"]])])
    if items:
        nodes.append(mdast.list_node(items, ordered=True))
    if statements:
        nodes.append(mdast.heading(claims_text.review_summary(
            len(statements), review_pages(statements), ngettext, translate), 3))
        nodes.append(mdast.paragraph(claims_text.review_note(translate)))
        nodes.append(mdast.list_node([
            [mdast.paragraph(row["sentence"], f" ({row['where']})"),
             *([mdast.list_node([[mdast.paragraph(evidence["text"])]
                                 for evidence in row["evidence"]])] if row["evidence"] else [])]
            for row in statement_entries(statements, translate)]))
    return nodes
