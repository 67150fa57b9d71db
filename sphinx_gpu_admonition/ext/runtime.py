"""Tell readers how long a page takes to run, and on what.

Two places say it, both from the execution records (the status page's
notebook time, :attr:`~.record.NotebookRecord.seconds`, rounded for readers):

* the ``runtime`` roles in the text::

      It runs in {runtime}`this page`.      about 2 minutes on a CPU (AMD EPYC 7763)
      {runtime-time}`this page`             about 2 minutes
      {runtime-device}`this page`           a CPU (AMD EPYC 7763)
      {runtime-all}`other/page`             the same for this build and for every
                                            build in gpu_runtime_sources

  The target is ``this page`` (or ``.``) or a document name, relative to the
  page like ``{doc}`` (``/`` starts at the source folder).

* the ``{gpu}`` notice, with its ``:runtime:`` option or
  ``gpu_admonition_runtime = True``: "It runs in about 2 minutes on a GPU
  (Tesla T4) and about 25 minutes on a CPU (...)."

A page's record exists only once it has been read (executed), another page's
only once all pages are read, so the role and the notice insert a
:class:`RuntimePlaceholder` that :class:`ResolveRuntime` (a post-transform)
replaces with text; like MyST-NB's ``{nb-exec-table}``, ``env-updated``
returns the pages to write again: those whose placeholders refer to a page
that was read again, and, when the other builds' status files changed, those
that state other builds (written again, not read again: no re-execution).
The other builds' status files are read once per build, in the main process.

Measurements of other builds are *stale* when the page changed since: their
code cells' first lines differ from this build's, or (when this build has no
cells to compare) they are older than the page's source file.  Stale figures
are stated, labelled "measured on an earlier version".
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import docname_join, logging
from sphinx.util.docutils import SphinxRole

from ..model.files import read_other_builds
from ..model.record import NotebookRecord
from ..render import runtime_text
from ..render.runtime_text import (
    ROLES,
    THIS_PAGE,
    Measurement,
    device_kind,
    device_name,
    exact_figures,
    is_stale,
    usable,
)
from .capture import get_record
from .config import get_config
from .i18n import ngettext, translate
from .state import app_of, build_state, env_data
from .support import html_tree_may_hold
from .warnings import warn

logger = logging.getLogger(__name__)

#: the texts and rules of render/runtime_text.py, named here for the Sphinx side's users
__all__ = ["ROLES", "THIS_PAGE", "Measurement", "ResolveRuntime", "RuntimeRole", "device_kind",
           "device_name", "device_phrase", "exact_figures", "is_stale", "reader_time",
           "run_phrase", "setup_runtime", "usable"]

RUNTIME_CLASS = "gpu-runtime"

REFERENCES_ATTRIBUTE = "gpu_runtime_references"
SOURCES_DIGEST_ATTRIBUTE = "gpu_runtime_sources_digest"


# -- the texts (one owner, for every engine: render/runtime_text.py) ------------------
def reader_time(seconds: float) -> str:
    """A duration as a reader wants it ("about 2 minutes"), in the book's language."""
    return runtime_text.reader_time(seconds, translate, ngettext)


def device_phrase(record: NotebookRecord) -> str:
    """``"a GPU (Tesla T4)"``, ``"a CPU (AMD EPYC 7763)"`` (translated)."""
    return runtime_text.device_phrase(record, translate)


def run_phrase(measurement: Measurement) -> str:
    """``"about 2 minutes on a GPU (Tesla T4)"``; time only when the device is unknown."""
    return runtime_text.run_phrase(measurement, translate, ngettext)


def source_paths(app: Sphinx) -> list[tuple[str, Path]]:
    """(configured value, absolute path) of each ``gpu_runtime_sources`` entry."""
    return [(configured, (Path(app.srcdir) / configured).resolve())
            for configured in get_config(app).runtime_sources]


def other_builds(app: Sphinx) -> list[tuple[str, dict[str, NotebookRecord]]]:
    """(path, records by docname) of each readable ``gpu_runtime_sources`` file.

    Read once per build; a missing or bad file warns once and is left out.
    """
    cached = build_state(app).runtime_sources
    if cached is not None:
        return cached
    builds, problems = read_other_builds(source_paths(app), "gpu_runtime_sources")
    for problem in problems:
        warn(logger, problem, "runtime")
    build_state(app).runtime_sources = builds
    return builds


def _source_mtime(env: BuildEnvironment, docname: str) -> float | None:
    try:
        return Path(env.doc2path(docname)).stat().st_mtime
    except OSError:
        return None


def measurements(app: Sphinx, env: BuildEnvironment, docname: str,
                 with_other_builds: bool) -> list[Measurement]:
    """This build's measurement of ``docname`` and, optionally, other builds' ones.

    One per device (kind and name), this build first, stale ones last.
    """
    others = ([(path, records.get(docname)) for path, records in other_builds(app)]
              if with_other_builds else [])
    return runtime_text.measurements(get_record(env, docname), others,
                                     _source_mtime(env, docname) if others else None)


def missing_reason(env: BuildEnvironment, docname: str) -> str:
    """Why this build has no usable run time of ``docname`` (for the warning)."""
    if docname not in env.all_docs:
        return "no such document"
    record = get_record(env, docname)
    if record is None:
        return "not an executed notebook, or its execution data is missing"
    if not record.executed:
        return f"not executed in this build (status {record.status!r})"
    return f"its execution failed ({record.status})"


# -- the placeholder -----------------------------------------------------------------
class RuntimePlaceholder(nodes.inline):
    """Replaced by :class:`ResolveRuntime`; an inline, so a stray one still renders."""


def placeholder(part: str, target: str) -> RuntimePlaceholder:
    return RuntimePlaceholder("", "", part=part, target=target)


class RuntimeRole(SphinxRole):
    """``{runtime}`this page```, ``{runtime-time}`...```, ``{runtime-device}`...```,
    ``{runtime-all}`...```."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        target = self.text.strip()
        if target.lower() in THIS_PAGE:
            target = self.env.docname
        else:
            for suffix in self.config.source_suffix:
                target = target.removesuffix(suffix)
            target = docname_join(self.env.docname, target).lstrip("/")
        part = ROLES[self.name.lower()]
        node = placeholder(part, target)
        self.set_source_info(node)
        note_reference(self.env, part, target)
        return [node], []


def notice_paragraph(env: BuildEnvironment, requested: bool) -> nodes.paragraph:
    """The ``{gpu}`` notice's run-time sentence for the page being read, filled in at
    resolve time.

    ``requested``: the directive asked for it (a page without data warns);
    a site default alone leaves it out silently on pages that are not notebooks.
    """
    node = placeholder("notice", env.docname)
    node["requested"] = requested
    note_reference(env, "notice", env.docname)
    return nodes.paragraph("", "", node, classes=[RUNTIME_CLASS])


# -- resolving ----------------------------------------------------------------------
class ResolveRuntime(SphinxPostTransform):
    """Replace every placeholder with the run time and device, for every builder."""

    default_priority = 8  # before references are resolved, like {nb-exec-table}

    def run(self, **kwargs: Any) -> None:
        self.building_app = app_of(self.env)
        html = self.building_app.builder.format == "html"
        if html and not html_tree_may_hold(self.env, self.env.docname, references(self.env)):
            return
        for node in list(self.document.findall(RuntimePlaceholder)):
            try:
                if node["part"] == "notice":
                    self._notice(node, html)
                else:
                    node.replace_self(self._role(node, html))
            except Exception as error:  # odd data in a record must not stop the build
                self._warn(node, f"could not state the run time of {node['target']!r}: "
                                 f"{type(error).__name__}: {error}")
                if node["part"] == "notice":
                    node.parent.parent.remove(node.parent)
                else:
                    node.replace_self(nodes.Text(runtime_text.unknown_time(translate)))

    def _measured(self, measurement: Measurement, text: str, html: bool) -> nodes.Node:
        # exact figures in the HTML tooltip only: other writers print an
        # abbreviation's explanation into the text
        if html:
            return nodes.abbreviation(text, text, explanation=exact_figures(measurement))
        return nodes.Text(text)

    def _pieces(self, pieces: list[runtime_text.RunPiece], html: bool) -> list[nodes.Node]:
        return [nodes.Text(piece) if isinstance(piece, str)
                else self._measured(piece[0], piece[1], html) for piece in pieces]

    def _runs(self, found: list[Measurement], html: bool) -> list[nodes.Node]:
        return self._pieces(runtime_text.runs(found, translate, ngettext), html)

    def _warn(self, node: RuntimePlaceholder, message: str) -> None:
        warn(logger, message, "runtime", location=node)

    def _role(self, node: RuntimePlaceholder, html: bool) -> nodes.Element:
        part, target = node["part"], node["target"]
        found = measurements(self.building_app, self.env, target, with_other_builds=part == "all")
        this_build = [m for m in found if m.source is None]
        result = nodes.inline("", "", classes=[RUNTIME_CLASS])
        result.source, result.line = node.source, node.line
        if part == "all" and found:
            result.extend(self._runs(found, html))
        elif not this_build:
            self._warn(node, f"no run time of {target!r} is known yet "
                             f"({missing_reason(self.env, target)}); the text says "
                             "'an unknown time' instead")
            result += nodes.Text(runtime_text.unknown_device(translate) if part == "device"
                                 else runtime_text.unknown_time(translate))
        elif part == "device" and not this_build[0].device_known:
            self._warn(node, f"the device {target!r} ran on is not known (no capture "
                             "data); the text says 'an unknown device' instead")
            result += nodes.Text(runtime_text.unknown_device(translate))
        else:
            measurement = this_build[0]
            if part == "time":
                text = reader_time(measurement.record.seconds)
            elif part == "device":
                text = device_phrase(measurement.record)
            else:
                text = run_phrase(measurement)
            result += self._measured(measurement, text, html)
        return result

    def _notice(self, node: RuntimePlaceholder, html: bool) -> None:
        paragraph = node.parent
        found = measurements(self.building_app, self.env, node["target"], with_other_builds=True)
        if not found:
            if node["requested"]:
                self._warn(node, "the gpu notice cannot state the run time: "
                                 f"{missing_reason(self.env, node['target'])}; "
                                 "the sentence is left out")
            paragraph.parent.remove(paragraph)
            return
        content = self._pieces(runtime_text.notice_sentence(found, translate, ngettext), html)
        node.replace_self(content)


# -- pages to rewrite ------------------------------------------------------------------
def references(env: BuildEnvironment) -> dict[str, dict[str, Any]]:
    """docname -> ``{"pages": [other documents it states], "other_builds": bool}``."""
    return env_data(env, REFERENCES_ATTRIBUTE, dict)


class RuntimeReferenceCollector(EnvironmentCollector):
    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        references(env).pop(docname, None)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: set[str],
                    other: BuildEnvironment) -> None:
        mine, theirs = references(env), references(other)
        for docname in docnames:
            if docname in theirs:
                mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        """Nothing: the roles and notices note their pages while the page is parsed
        (:func:`note_reference`), so no page's doctree is walked for them."""


def note_reference(env: BuildEnvironment, part: str, target: str) -> None:
    """Note in :func:`references` that the page being read states ``target``'s run
    time (``part``: what of it; the page itself is not noted among its ``pages``)."""
    docname = env.docname
    uses = references(env).setdefault(docname, {"pages": [], "other_builds": False})
    if target != docname and target not in uses["pages"]:
        uses["pages"] = sorted([*uses["pages"], target])
    uses["other_builds"] = uses["other_builds"] or part in ("all", "notice")


def _note_reread(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    build_state(app).runtime_reread.add(docname)


def sources_digest(app: Sphinx) -> str:
    """A digest of the configured status files' contents (a missing file counts too)."""
    digest = hashlib.sha1()
    for configured, path in source_paths(app):
        digest.update(configured.encode("utf-8") + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"\0missing")
    return digest.hexdigest()


def _pages_to_rewrite(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Pages not read again that state a page that was (or is gone), or other
    builds whose status files changed since the last build."""
    state = build_state(app)
    reread, state.runtime_reread = state.runtime_reread, set()
    digest = sources_digest(app)
    sources_changed = getattr(env, SOURCES_DIGEST_ATTRIBUTE, None) != digest
    setattr(env, SOURCES_DIGEST_ATTRIBUTE, digest)
    return sorted(docname for docname, uses in references(env).items()
                  if docname not in reread and (reread.intersection(uses["pages"])
                                                or (sources_changed and uses["other_builds"])))


def _read_sources_once(app: Sphinx) -> None:
    other_builds(app)  # in the main process, before parallel writers fork


def setup_runtime(app: Sphinx) -> None:
    for name in ROLES:
        app.add_role(name, RuntimeRole())
    app.add_post_transform(ResolveRuntime)
    app.add_env_collector(RuntimeReferenceCollector)
    app.connect("builder-inited", _read_sources_once)
    app.connect("env-purge-doc", _note_reread)
    app.connect("env-updated", _pages_to_rewrite)
