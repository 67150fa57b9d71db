"""The timing roles on Sphinx: ``{timing}`NAME```, ``{timing-ratio}`A / B``` and
``{timing-claim}`A < B```.

Each role leaves a :class:`TimingPlaceholder` and notes itself in the environment
(:func:`timing_roles`: the page's roles in their order, with their lines), which
:mod:`.claims` reads once the records are final (``env-updated``) to check the claims
and warn about what cannot be stated.  :class:`ResolveTimings` (a post-transform,
before references are resolved, as the runtime roles) replaces each placeholder from
that one check of the build (:func:`.claims.book_claims`, kept in the build state):

* ``{timing}`` and ``{timing-ratio}``: the rounded text (:mod:`..render.claims_text`);
  in HTML the exact figures and their builds are the hover (an abbreviation), in
  every other builder the text alone;
* ``{timing-claim}``: in HTML a small mark (✓ ✗ ≈ ?) with the figures on hover and
  a link to the claim's row on the status page; in printed output its verdict in
  words ("(timing claim: holds)": LaTeX has no such symbols).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxRole

from ..model.page_text import CLAIM_ROLE, RATIO_ROLE, TIMING_ROLE
from ..model.timing_record import Claim
from ..render import claims_text
from ..render.claims_view import claim_anchor
from ..render.templates import render as render_template
from .i18n import translate
from .state import app_of, build_state, env_data
from .support import add_assets, html_tree_may_hold, link_target

ROLE_NAMES = (TIMING_ROLE, RATIO_ROLE, CLAIM_ROLE)
TIMING_CLASS = "gpu-timing"
#: env attribute: docname -> its timing roles in their order, ``[role, text, line]``
ROLES_ATTRIBUTE = "gpu_timing_roles"


def timing_roles(env: Any) -> dict[str, list[list[Any]]]:
    return env_data(env, ROLES_ATTRIBUTE, dict)


class TimingPlaceholder(nodes.inline):
    """Replaced by :class:`ResolveTimings`; an inline, so a stray one still renders."""


class TimingRole(SphinxRole):
    """``{timing}``, ``{timing-ratio}``, ``{timing-claim}``: a placeholder, noted."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        role = self.name.lower()
        text = " ".join(self.text.split())
        node = TimingPlaceholder("", "", role=role, target=text, docname=self.env.docname)
        self.set_source_info(node)
        page = timing_roles(self.env).setdefault(self.env.docname, [])
        node["number"] = sum(1 for noted in page if noted[0] == role)
        page.append([role, text, node.line])
        return [node], []


class ResolveTimings(SphinxPostTransform):
    """Replace every placeholder with its text or mark, for every builder."""

    default_priority = 8  # before references are resolved, like the runtime roles

    def run(self, **kwargs: Any) -> None:
        app = app_of(self.env)
        html = app.builder.format == "html"
        if html and not html_tree_may_hold(self.env, self.env.docname, timing_roles(self.env)):
            return
        found = list(self.document.findall(TimingPlaceholder))
        if not found:
            return
        checked = build_state(app).claims  # the build's one check (ext.claims)
        for node in found:
            try:
                node.replace_self(self._resolved(node, checked, html))
            except Exception:  # odd data in a record must not stop the build
                node.replace_self(nodes.Text(claims_text.unknown_text(node["role"], translate)))
        if html:
            add_assets(self.document, "css")

    def _resolved(self, node: TimingPlaceholder, checked: Any, html: bool) -> nodes.Node:
        role, text = node["role"], node["target"]
        # the page the role is on (a single-page build joins every page's tree)
        page = node.get("docname") or self.env.docname
        if role == CLAIM_ROLE:
            claim = checked.claim_of(page, node["number"], text) if checked else None
            return self._mark(claim, html)
        shown, hover = claims_text.quoted_text(role, text, page,
                                               checked.quotes if checked else None, translate)
        result = nodes.inline("", "", classes=[TIMING_CLASS])
        result.source, result.line = node.source, node.line
        # the exact figures in the HTML tooltip only: other writers print an
        # abbreviation's explanation into the text
        result += (nodes.abbreviation(shown, shown, explanation=hover) if html and hover
                   else nodes.Text(shown))
        return result

    def _mark(self, claim: Claim | None, html: bool) -> nodes.Node:
        if not html:
            return nodes.Text(claims_text.mark_text(claim, translate))
        target = link_target(self.env)
        href = None
        if claim is not None and target is not None:
            builder = app_of(self.env).builder
            href = (f"{builder.get_relative_uri(self.env.docname, target)}"
                    f"#{claim_anchor(claim)}")
        verdict = claim.verdict if claim is not None else "not_checked"
        markup = render_template(
            "claim_mark.html", verdict=verdict, href=href,
            mark=claims_text.VERDICT_MARKS.get(verdict, "?"),
            label=claims_text.mark_label(claim, translate) if claim is not None
            else claims_text.mark_text(None, translate),
            hover=claims_text.hover_text(claim, translate) if claim is not None else "")
        return nodes.raw("", markup, format="html")


def setup_timing_roles(app: Any) -> None:
    for name in ROLE_NAMES:
        app.add_role(name, TimingRole())
    app.add_post_transform(ResolveTimings)
