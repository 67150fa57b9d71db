"""What a page's text gives the timing claims, read once per page read, and the book's
claims and review list made from it once per build, for every engine.

An engine knows where each timing role of a page is (its role: the text and its line,
:class:`ClaimRole`); the page's Markdown gives each claim its sentence and each role
its own line (an engine may know only its paragraph's), and the sentences about speed
that no claim checks (:mod:`.page_text`,
:mod:`.speed_statements`).  Splitting a lecture into sentences costs a few
milliseconds, more than a cache-hit read of the page may spend, so :func:`page_text`
keeps its result (a :class:`PageText`) in a folder of the engine's, named by a digest
of the text: a page read again with the same text (a cache-hit rebuild, a fresh
environment) loads it instead.

Which pages are read (:func:`wanted_text`): a notebook with timed cells (its review
list needs every sentence about speed), and any page with a timing role, notebook or
not (only the roles' paragraphs): a page without code may state a claim about another
page's timings.  A page with neither costs nothing; the review list is of the pages
that time cells (there is nothing to put beside a sentence elsewhere).

:func:`book_claims` checks every claim of the book against this build and the other
builds (:func:`.claims.check_claims`) and lists the sentences to review
(:func:`.speed_statements.statements_to_review`): ``StatusReport.claims`` and
``.timing_statements``, what every view of the build shows.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from .claims import Build, ClaimSite, check_claims
from .files import write_or_warn
from .page_text import CLAIM_ROLE, RATIO_ROLE, TIMING_ROLE, Place, Sentence, TextBlock, sentences
from .schema import Loadable, SchemaError, dumper, model_class
from .speed_statements import may_matter, review_candidates, statements_to_review
from .timing_record import Claim, ClaimRules, TimingStatement

#: bumped when what is read from a page's text changes: a kept reading of an earlier
#: rule is not used again (the digest includes it)
TEXT_VERSION = 1
#: what of a page is read: every sentence that may be about speed, or only the
#: paragraphs of its claims
FULL, CLAIMS_ONLY = "full", "claims"
TIMING_ROLES = (CLAIM_ROLE, TIMING_ROLE, RATIO_ROLE)
#: the page files whose text is Markdown (a notebook's Markdown cells for ``.ipynb``)
TEXT_SUFFIXES = (".md", ".myst", ".ipynb", ".rst", ".txt")


class ClaimRole(NamedTuple):
    """A timing role as the engine found it on the page: its text (a claim's
    expression) and its line (maybe its paragraph's first)."""

    expression: str
    line: int | None = None
    role: str = CLAIM_ROLE


@model_class
class PageSentence(Loadable):
    """A sentence kept for the review list (:func:`.speed_statements.review_candidates`)."""

    text: str
    line: int | None = None
    position: int | None = None
    section: int = 0


@model_class
class PagePlace(Loadable):
    """Where a heading is (:class:`.page_text.Place`)."""

    position: int | None = None
    line: int | None = None


@model_class
class TextRole(Loadable):
    """A timing role as the text writes it (a claim, a quoted timing or ratio), at its
    own line, with the sentence it is in."""

    role: str
    content: str
    line: int | None = None
    sentence: str = ""


@model_class
class PageText(Loadable):
    """What a page's text gives the claims and the review list."""

    #: the page's docname and its source file (as ``NotebookRecord.source`` names it)
    page: str = ""
    source: str | None = None
    #: :func:`text_digest` of the text it was read from
    digest: str = ""
    roles: list[TextRole] = dataclasses.field(default_factory=list)
    candidates: list[PageSentence] = dataclasses.field(default_factory=list)
    headings: list[PagePlace] = dataclasses.field(default_factory=list)

    def sentences(self) -> list[Sentence]:
        return [Sentence(s.text, Place(s.position, s.line), s.section)
                for s in self.candidates]

    def heading_places(self) -> list[Place]:
        return [Place(h.position, h.line) for h in self.headings]


# -- reading a page -----------------------------------------------------------------------
def wanted_text(timed: bool, has_roles: bool) -> str | None:
    """What of a page to read: :data:`FULL` for a notebook with timed cells,
    :data:`CLAIMS_ONLY` for another page with timing roles, None for the rest."""
    return FULL if timed else CLAIMS_ONLY if has_roles else None


def text_blocks(text: str, suffix: str) -> list[TextBlock]:
    """The Markdown of a page file: its text (``.md``), or each Markdown cell of a
    notebook at its place among the cells (``.ipynb``: no line means anything there)."""
    if suffix != ".ipynb":
        return [TextBlock(text)] if suffix in TEXT_SUFFIXES else []
    try:
        cells = json.loads(text).get("cells") or []
    except (ValueError, AttributeError):
        return []
    blocks = []
    for position, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source")
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        if isinstance(source, str):
            blocks.append(TextBlock(source, None, position))
    return blocks


def text_digest(text: str, suffix: str, what: str) -> str:
    """The name of a page's reading: its text, its kind and what was read of it."""
    digest = hashlib.sha1(f"{TEXT_VERSION}\0{what}\0{suffix}\0".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _only_roles(markdown: str) -> bool:
    return "timing" in markdown


def read_page_text(text: str, suffix: str, what: str) -> PageText:
    """The reading of a page's ``text`` (``what``: :data:`FULL` or :data:`CLAIMS_ONLY`),
    without its page and source (:func:`page_text` sets them)."""
    found, headings = sentences(text_blocks(text, suffix),
                                may_matter if what == FULL else _only_roles)
    roles = [TextRole(role.name, role.content, role.line, sentence.text)
             for sentence in found for role in sentence.roles if role.name in TIMING_ROLES]
    candidates = ([PageSentence(s.text, s.place.line, s.place.position, s.section)
                   for s in review_candidates(found)] if what == FULL else [])
    return PageText(digest=text_digest(text, suffix, what), roles=roles,
                    candidates=candidates,
                    headings=[PagePlace(h.position, h.line) for h in headings]
                    if what == FULL else [])


def _load(path: Path, digest: str) -> PageText | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = PageText.from_dict(data)
    except (OSError, ValueError, SchemaError):  # ValueError: not JSON; a new reading
        return None
    return found if found.digest == digest else None


def page_text(page: str, source: str | None, text: str, suffix: str, what: str,
              folder: Path | None = None) -> tuple[PageText, str | None]:
    """The reading of page ``page`` (docname) from its source file's ``text``, kept in
    ``folder`` by its digest (None: not kept), and why it could not be kept (a folder
    that cannot be written costs the next build the reading, never this one)."""
    digest = text_digest(text, suffix, what)
    path = folder / f"{digest}.json" if folder is not None else None
    found = _load(path, digest) if path is not None and path.is_file() else None
    problem = None
    if found is None:
        found = read_page_text(text, suffix, what)
        if path is not None:
            problem = _save(path, found)
    found.page, found.source = page, source
    return found, problem


def _save(path: Path, found: PageText) -> str | None:
    data = dumper(PageText)(dataclasses.replace(found, page="", source=None))
    return write_or_warn(path, json.dumps(data, ensure_ascii=False, sort_keys=True))


def forget_other_texts(folder: Path, digests: Iterable[str]) -> None:
    """Remove the readings in ``folder`` of texts no page has now (edited since)."""
    kept = {f"{digest}.json" for digest in digests}
    try:
        for path in folder.glob("*.json"):
            if path.name not in kept:
                path.unlink(missing_ok=True)
    except OSError:
        return


# -- the book's claims ----------------------------------------------------------------------
def placed(roles: Sequence[ClaimRole], text: PageText | None
           ) -> list[tuple[ClaimRole, TextRole | None]]:
    """Each role of a page (in its order) with the same role of its text: at the same
    line, else the next one not taken at or after the role's line (an engine that
    knows only the paragraph's first line), else the next one not taken (a line the
    engine or the text does not know: an ``.ipynb``)."""
    written = [(number, found) for number, found in enumerate(text.roles if text else [])]
    used: set[int] = set()
    result = []
    for role in roles:
        same = [(n, found) for n, found in written if n not in used and found.role == role.role
                and " ".join(found.content.split()) == " ".join(role.expression.split())]
        after = [(n, found) for n, found in same if role.line is None or found.line is None
                 or found.line >= role.line]
        match = next(((n, f) for n, f in same if f.line == role.line and role.line), None) \
            or next(iter(after), None) or next(iter(same), None)
        if match is not None:
            used.add(match[0])
        result.append((role, match[1] if match is not None else None))
    return result


def claim_sites(page: str, source: str | None, roles: Sequence[ClaimRole],
                text: PageText | None) -> list[ClaimSite]:
    """The claims of a page (its claim roles, in their order), each at its line in the
    text, with its sentence."""
    return [ClaimSite(page, role.expression,
                      (found.line if found is not None and found.line else role.line),
                      source, found.sentence if found is not None else "")
            for role, found in placed([r for r in roles if r.role == CLAIM_ROLE], text)]


def book_claims(sites: Iterable[ClaimSite], texts: Mapping[str, PageText],
                builds: Sequence[Build], rules: ClaimRules
                ) -> tuple[list[Claim], list[TimingStatement]]:
    """Every claim checked against ``builds`` (this build first), in the order given,
    and the review list of the pages read in full, by page."""
    claims = check_claims(sites, builds, rules)
    statements: list[TimingStatement] = []
    for page in sorted(texts):
        text = texts[page]
        if text.candidates:
            statements += statements_to_review(page, text.sentences(), text.heading_places(),
                                               builds, text.source)
    return claims, statements
