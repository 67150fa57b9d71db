"""Timing claims on Sphinx: each page's text read once, the book's claims checked once.

1. ``doctree-read`` (:class:`PageTextCollector`, after the records' collector): what
   the page's text gives the claims (:func:`..model.page_claims.page_text`): a notebook
   with timed cells in full, any other page with a ``{timing-claim}`` for its claims'
   sentences; kept in the environment, and by its text's digest in the capture folder
   (``texts/``), so that a page read again with the same text (a cache-hit rebuild, a
   fresh environment) does not read it again.
2. ``env-updated`` (main process, before the status page's analysis): the claims of
   every page (its roles, :mod:`.timing_roles`) checked against this build and each
   build of ``gpu_runtime_sources``, and the review list (:func:`book_claims`, kept in
   the build state for the analysis, the pages and the reports); a warning
   (``gpu_admonition.claim``) at the line of each claim that fails or cannot be checked
   and of each ``{timing}`` / ``{timing-ratio}`` without a value; the pages to write
   again (those with timing roles, and the status pages, when what they show changed).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import NamedTuple

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util import logging

from ..model import page_claims
from ..model.claims import Build
from ..model.files import repository_path
from ..model.page_claims import (
    ClaimRole,
    PageText,
    claim_sites,
    forget_other_texts,
    page_text,
    placed,
    wanted_text,
)
from ..model.schema import dumper
from ..model.timing_quotes import Quotes
from ..model.timing_record import Claim, ClaimRules, TimingStatement
from ..render import claims_text
from ..render.runtime_text import stale_pages
from .capture import capture_folder, get_record, stored_records
from .changes import records_changed
from .config import get_config
from .runtime import other_builds, source_paths, sources_digest
from .state import build_state, env_data
from .support import status_pages
from .timing_roles import timing_roles
from .warnings import warn

logger = logging.getLogger(__name__)

#: env attribute: docname -> :class:`..model.page_claims.PageText`
PAGE_TEXTS = "gpu_page_texts"
#: env attribute: the digest of what the claims' pages showed last build
_SHOWN_DIGEST = "gpu_claims_shown_digest"
#: the folder of the capture folder that keeps the pages' readings
TEXTS_FOLDER = "texts"


def page_texts(env: BuildEnvironment) -> dict[str, PageText]:
    return env_data(env, PAGE_TEXTS, dict)


def texts_folder(app: Sphinx) -> Path:
    return capture_folder(app) / TEXTS_FOLDER


# -- each page's text, once per read -------------------------------------------------------
def _roles(env: BuildEnvironment, docname: str) -> list[ClaimRole]:
    """The page's timing roles, in their order (:mod:`.timing_roles`)."""
    return [ClaimRole(text, line, role) for role, text, line in
            timing_roles(env).get(docname, ())]


class PageTextCollector(EnvironmentCollector):
    """The pages' readings and timing roles; merged and purged with the environment."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        page_texts(env).pop(docname, None)
        timing_roles(env).pop(docname, None)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: set[str],
                    other: BuildEnvironment) -> None:
        for data in (page_texts, timing_roles):
            mine, theirs = data(env), data(other)
            for docname in docnames & theirs.keys():
                mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        env = app.env
        docname = env.docname
        record = get_record(env, docname)
        what = wanted_text(bool(record and record.timings), docname in timing_roles(env))
        if what is None:
            return
        path = Path(env.doc2path(docname))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return  # the claims keep no sentence; the review list has no page
        found, problem = page_text(docname, repository_path(path, Path(env.srcdir)), text,
                                   path.suffix, what, texts_folder(app))
        if problem:
            warn(logger, f"the page's timing statements are read again next build: {problem}",
                 "output", location=docname)
        page_texts(env)[docname] = found


# -- the book's claims, once per build --------------------------------------------------
class BookClaims(NamedTuple):
    """The build's claims and review list, and what they were checked against."""

    builds: list[Build]
    rules: ClaimRules
    claims: list[Claim]
    statements: list[TimingStatement]
    #: (page, the claim's number among the page's claims) -> the claim
    by_role: dict[tuple[str, int], Claim]
    #: the quoting roles' values, worked out once for their warnings and their text
    quotes: Quotes

    def claim_of(self, page: str, number: int, expression: str) -> Claim | None:
        claim = self.by_role.get((page, number))
        if claim is not None and claim.expression == expression:
            return claim
        return next((c for c in self.claims if c.page == page
                     and c.expression == expression), None)


def _source(env: BuildEnvironment, docname: str) -> str:
    """The page's source file as its record names it (relative to the repository)."""
    record = get_record(env, docname)
    if record is not None and record.source:
        return record.source
    return repository_path(Path(env.doc2path(docname)), Path(env.srcdir))


def _source_mtime(env: BuildEnvironment, docname: str) -> float | None:
    try:
        return Path(env.doc2path(docname)).stat().st_mtime
    except OSError:
        return None


def builds(app: Sphinx) -> list[Build]:
    """This build, then each readable ``gpu_runtime_sources`` file, named as configured
    (the status file keeps the name, not this machine's path)."""
    env = app.env
    records = stored_records(env)
    names = {str(path): configured for configured, path in source_paths(app)}
    found = [Build(records)]
    for path, others in other_builds(app):
        found.append(Build(others, names.get(path, Path(path).name),
                           stale_pages(others, records,
                                       lambda docname: _source_mtime(env, docname))))
    return found


def book_claims(app: Sphinx) -> BookClaims:
    """The build's :class:`BookClaims`, made once the records are final."""
    state = build_state(app)
    if state.claims is not None:
        return state.claims
    env = app.env
    texts = page_texts(env)
    checked_against = builds(app)
    rules = ClaimRules.from_config(get_config(app))
    sites, keys = [], []
    for docname in sorted(timing_roles(env)):
        found = claim_sites(docname, _source(env, docname), _roles(env, docname),
                            texts.get(docname))
        sites += found
        keys += [(docname, number) for number in range(len(found))]
    claims, statements = page_claims.book_claims(sites, texts, checked_against, rules)
    state.claims = BookClaims(checked_against, rules, claims, statements,
                              dict(zip(keys, claims, strict=True)),
                              Quotes(checked_against, rules))
    return state.claims


def forget_claims(app: Sphinx) -> None:
    """The records and texts are about to change (``env-get-outdated``)."""
    build_state(app).claims = None


# -- warnings, once per build --------------------------------------------------------------
def _location(docname: str, line: int | None) -> tuple[str, int] | str:
    return (docname, line) if line else docname


def emit_warnings(app: Sphinx, checked: BookClaims) -> None:
    """A warning at the line of each claim that fails (with both values on each device it
    fails on) or that this build cannot check because of the text or the book, and of
    each quoting role without a value here: in the order of the pages."""
    env = app.env
    for claim in checked.claims:
        message = claims_text.claim_warning(claim) or claims_text.problem_warning(claim)
        if message:
            warn(logger, message, "claim", location=_location(claim.page, claim.line))
    for docname in sorted(timing_roles(env)):
        for role, written in placed(_roles(env, docname), page_texts(env).get(docname)):
            why = _quote_problem(role.role, role.expression, docname, checked)
            if why:
                line = written.line if written is not None and written.line else role.line
                warn(logger, claims_text.quote_warning(role.role, role.expression, why),
                     "claim", location=_location(docname, line))


def _quote_problem(role: str, text: str, docname: str, checked: BookClaims) -> str | None:
    """Why this build states no value for a ``{timing}`` or ``{timing-ratio}``, when the
    text or the book can fix it."""
    check = checked.quotes.problem(role, text, docname)
    return claims_text.reason_text(check) if check is not None else None


# -- pages to write again --------------------------------------------------------------
def _shown_digest(app: Sphinx, checked: BookClaims) -> str:
    """What the pages of timing roles and the status pages show of the claims."""
    digest = hashlib.sha1(sources_digest(app).encode())
    digest.update(repr(tuple(checked.rules)).encode())
    # one text of them all (the dumpers keep the fields' order): a text a claim took
    # twice as long, and this runs on every build
    shown = ([dumper(Claim)(claim) for claim in checked.claims],
             [dumper(TimingStatement)(statement) for statement in checked.statements])
    digest.update(json.dumps(shown, separators=(",", ":")).encode())
    return digest.hexdigest()


def _env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Check the claims once (before the analysis, which keeps them), warn, forget the
    readings of texts no page has now, and return the pages to write again."""
    forget_claims(app)
    checked = book_claims(app)
    emit_warnings(app, checked)
    if build_state(app).saved_environ is not None or texts_folder(app).is_dir():
        forget_other_texts(texts_folder(app), (text.digest for text in page_texts(env).values()))
    digest = _shown_digest(app, checked)
    changed = getattr(env, _SHOWN_DIGEST, None) != digest
    setattr(env, _SHOWN_DIGEST, digest)
    if not (changed or records_changed(app, env)):
        return []
    pages = set(timing_roles(env))
    if changed:
        pages.update(status_pages(env))
    return sorted(pages & env.found_docs)


def _forget(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
            removed: set[str]) -> list[str]:
    forget_claims(app)
    return []


def setup_claims(app: Sphinx) -> None:
    app.add_env_collector(PageTextCollector)
    app.connect("env-get-outdated", _forget)
    # before the status page's analysis (priority 500), which keeps the claims
    app.connect("env-updated", _env_updated, priority=400)
