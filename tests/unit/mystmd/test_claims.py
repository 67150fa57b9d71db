"""mystmd's quoting roles (``mystmd/claims.py``): what a placeholder says when its page
is not known, worded as Sphinx words it."""

from __future__ import annotations

from pathlib import Path

from sphinx_gpu_admonition.model.timing_record import ClaimRules
from sphinx_gpu_admonition.mystmd import claims
from sphinx_gpu_admonition.render import claims_text


def _page_without_file(role: str, text: str) -> dict:
    """A page whose placeholders no page file was found for (their ``page`` is not set)."""
    return {"type": "root", "children": [{"type": "paragraph", "children": claims.role(
        role, {"body": text, "node": {"position": {"start": {"line": 3}}}})}]}


def test_a_ratio_on_a_page_of_unknown_file_says_an_unknown_ratio(tmp_path: Path) -> None:
    checked = claims.check_book([], [], [], ClaimRules(), tmp_path)
    said = {}
    for role in ("timing", "timing-ratio"):
        tree = _page_without_file(role, "a / b")
        assert claims.resolve(tree, checked, []) == []
        span = tree["children"][0]["children"][0]  # the placeholder, replaced
        said[role] = span["children"][0]["value"]
    assert said == {"timing": "an unknown time (not measured yet)",
                    "timing-ratio": "an unknown ratio (not measured yet)"}
    # the words Sphinx gives the same roles (ext/timing_roles.py takes the same function)
    assert said["timing-ratio"] == claims_text.ratio_text([])
    assert said["timing"] == claims_text.timing_text([])
