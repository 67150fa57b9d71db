"""A page's prose: the sentences of its Markdown text, each with its line, and the
roles in them.

Both engines read the same Markdown (a MyST page's text, a notebook's Markdown
cells), so the sentences, their lines and the claims in them are the same on
Sphinx and on mystmd.  What is not prose is left out: front matter, code (fenced
blocks, ``{code-cell}`` and other code directives), headings (they start a
section), math blocks, tables, comments, targets (``(label)=``), directive
options.  Directives that hold text (notes, admonitions, exercises, dropdowns)
are prose.  Inline markup becomes its text: ``**bold**`` and ``` `code` ``` their
words, ``[text](link)`` its text, ``{role}`content` `` its content (``{doc}`title
<target>` `` the title); a sentence's roles are kept beside it (:class:`Role`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple


class TextBlock(NamedTuple):
    """Markdown of a page: a text page's source, or one Markdown cell of a notebook."""

    text: str
    #: the line of ``text``'s first line in the source file (None: not known, .ipynb)
    line: int | None = 1
    #: the cell's place among the page's cells (None: the whole page's text)
    position: int | None = None


class Place(NamedTuple):
    """Where on a page: a cell's position and a line (either may be unknown)."""

    position: int | None
    line: int | None


class Role(NamedTuple):
    """A role in a sentence: ``{timing-claim}`a < b` ``."""

    name: str
    content: str
    line: int | None


class Sentence(NamedTuple):
    """A sentence of prose: plain text on one line."""

    text: str
    place: Place
    #: the heading count before it (sentences and cells of one section share it)
    section: int
    roles: tuple[Role, ...] = ()


#: directives whose content is not prose
CODE_DIRECTIVES = frozenset({
    "code-cell", "code-block", "code", "sourcecode", "literalinclude", "math", "raw",
    "toctree", "eval-rst", "eval-md", "mermaid", "graphviz", "csv-table", "include",
    "image", "glue", "glue:any", "glue:figure", "glue:math", "glue:text", "execution-status",
    "execution-environment", "bibliography", "tableofcontents", "contents", "jupyter-execute",
    "ipython", "doctest", "testcode", "testoutput", "prf:algorithm", "embed",
})
#: words that end with a period without ending a sentence
ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "fig", "figs", "eq", "eqs",
                           "sec", "ch", "approx", "resp", "no", "nos", "dr", "mr", "mrs",
                           "ms", "prof", "al", "ca", "incl", "viz", "et"})


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    """Compiled at the first page (not at import)."""
    return {
        "fence": re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*)$"),
        "heading": re.compile(r"^ {0,3}#{1,6}(?:\s|$)"),
        "setext": re.compile(r"^ {0,3}(?:=+|-+)\s*$"),
        "rule": re.compile(r"^ {0,3}(?:(?:\*\s*){3,}|(?:_\s*){3,})$"),
        "target": re.compile(r"^\s*\([^()\s]+\)=\s*$"),
        "comment": re.compile(r"^\s*%"),
        "table": re.compile(r"^\s*\|"),
        "item": re.compile(r"^\s*(?:[*+-]|[0-9]+[.)])\s+"),
        "quote": re.compile(r"^\s*>\s?"),
        "option": re.compile(r"^\s*:[\w-]+:(?:\s|$)"),
        "role": re.compile(r"\{(?P<name>[\w:.+-]+)\}(?P<ticks>`+)(?P<content>.+?)(?P=ticks)"
                           r"|:(?P<rst>[\w:.+-]+):`(?P<rstcontent>[^`]+)`"),
        "code": re.compile(r"(?P<ticks>`+)(?P<content>.+?)(?P=ticks)"),
        "image": re.compile(r"!\[[^\]]*\]\([^)]*\)"),
        "link": re.compile(r"\[(?P<text>[^\]]*)\](?:\([^)]*\)|\[[^\]]*\])"),
        "footnote": re.compile(r"\[\^[^\]]+\]"),
        "autolink": re.compile(r"<(?P<url>https?://[^>\s]+)>"),
        "html": re.compile(r"</?[A-Za-z][^>]*>|<!--.*?-->"),
        "emphasis": re.compile(r"(\*{1,3}|(?<![\w\\])_{1,3})(?=\S)(?P<text>.+?)(?<=\S)\1"),
        "titled": re.compile(r"^(?P<title>.*?)\s*<[^<>]+>$", re.DOTALL),
        "boundary": re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*_`{$]*[A-Z0-9{\[(])"),
    }


# -- blocks of prose ----------------------------------------------------------------------
def _directive(info: str) -> str | None:
    found = re.match(r"\{([^}]+)\}", info.strip())
    return found.group(1).strip().lower() if found else None


#: the characters a line that is not plain prose starts with (after spaces): fences,
#: math, comments, options, targets, tables, rules, jupytext's cell breaks, headings
_SPECIAL_STARTS = frozenset("`~:$<%(|*_+#")


def _prose_lines(lines: list[str], first: int) -> Iterator[tuple[str, int | None, bool]]:
    """(line, number, is heading) of every line that may be prose; a "" line ends a
    paragraph.  Code, comments, math, tables and directive options give "" lines.

    Most lines are prose: they are told by their first character, without a pattern."""
    patterns = _patterns()
    fences: list[tuple[str, bool]] = []  # open fences: (the fence, whether its text is prose)
    in_math = in_comment = False
    at_directive_start = False
    for offset, raw in enumerate(lines):
        number = first + offset
        line = raw.rstrip()
        stripped = line.lstrip()
        lead = stripped[:1]
        if in_comment:
            in_comment = "-->" not in line
            yield "", number, False
            continue
        fence = patterns["fence"].match(line) if lead in "`~:" and lead else None
        if fences and fence and fence.group("fence")[0] == fences[-1][0][0] and \
                len(fence.group("fence")) >= len(fences[-1][0]) and not fence.group("info"):
            fences.pop()
            at_directive_start = False
            yield "", number, False
            continue
        if fences and not fences[-1][1]:
            yield "", number, False  # inside code
            continue
        if fence:
            name = _directive(fence.group("info"))
            prose = name is not None and name not in CODE_DIRECTIVES
            fences.append((fence.group("fence"), prose))
            at_directive_start = prose
            yield "", number, False
            continue
        if in_math:
            in_math = not stripped.endswith("$$")
            yield "", number, False
            continue
        if at_directive_start and (lead == ":" and patterns["option"].match(line)
                                   or stripped == "---"):
            yield "", number, False  # a directive's options (":class: x", YAML between ---)
            continue
        at_directive_start = False
        if lead not in _SPECIAL_STARTS:
            yield line, number, False
            continue
        if stripped.startswith("$$"):
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            yield "", number, False
        elif stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
            yield "", number, False
        elif (patterns["target"].match(line) or lead in "%|" or patterns["rule"].match(line)
              or stripped == "+++" or stripped.startswith("+++ ")):
            yield "", number, False
        elif lead == "#" and patterns["heading"].match(line):
            yield stripped, number, True
        else:
            yield line, number, False


def _front_matter_end(lines: list[str]) -> int:
    if not lines or lines[0].strip() != "---":
        return 0
    for offset, line in enumerate(lines[1:], 1):
        if line.strip() in ("---", "..."):
            return offset + 1
    return 0


class _Paragraph(NamedTuple):
    text: str
    #: (offset in ``text``, line) where each source line starts
    starts: tuple[tuple[int, int | None], ...]


class _Heading(NamedTuple):
    line: int | None


def _paragraphs(block: TextBlock) -> Iterator[_Paragraph | _Heading]:
    """The block's paragraphs and headings, in order."""
    patterns = _patterns()
    lines = block.text.splitlines()
    skip = _front_matter_end(lines) if block.position is None and block.line == 1 else 0
    first = block.line or 1
    known = block.line is not None
    pending: list[tuple[str, int | None]] = []

    def flush() -> _Paragraph | None:
        if not pending:
            return None
        text, starts = "", []
        for line, number in pending:
            if text:
                text += " "
            starts.append((len(text), number))
            text += line
        pending.clear()
        return _Paragraph(text, tuple(starts))

    for line, number, heading in _prose_lines(lines[skip:], first + skip):
        number = number if known else None
        lead = line.lstrip()[:1]
        if heading or not lead:
            paragraph = flush()
            if paragraph is not None:
                yield paragraph
            if heading:
                yield _Heading(number)
        elif lead in "=-" and patterns["setext"].match(line):
            if pending:  # the paragraph above is a heading ("Title" over "=====")
                heading_line = pending[0][1]
                pending.clear()
                yield _Heading(heading_line)
            # else: "-----" alone is a thematic break
        else:
            item = patterns["item"].match(line) if lead in "*+-0123456789" else None
            if item:  # each list item is a paragraph of its own
                paragraph = flush()
                if paragraph is not None:
                    yield paragraph
                line = line[item.end():]
                lead = line.lstrip()[:1]
            if lead == ">":
                line = line[patterns["quote"].match(line).end():]
            pending.append((line.strip(), number))
    paragraph = flush()
    if paragraph is not None:
        yield paragraph


# -- sentences --------------------------------------------------------------------------------
def _masked(text: str) -> str:
    """``text`` with roles and code spans blanked out (same length): no sentence ends
    inside them."""
    def blank(match: re.Match[str]) -> str:
        # the first character stays: a sentence may start with a role or code
        return match.group(0)[0] + "X" * (len(match.group(0)) - 1)

    if "`" not in text:
        return text
    patterns = _patterns()
    return patterns["code"].sub(blank, patterns["role"].sub(blank, text))


def _boundaries(text: str) -> list[int]:
    """Where sentences start in a paragraph (0 first)."""
    masked = _masked(text)
    starts = [0]
    for match in _patterns()["boundary"].finditer(masked):
        before = masked[: match.start()].rstrip("\"')]")
        word = re.search(r"([A-Za-z.]+)\.$", before)
        if word and word.group(1).lower().rstrip(".") in ABBREVIATIONS:
            continue  # "e.g. NumPy": no sentence ends here
        if re.search(r"\b[A-Z]\.$", before):
            continue  # an initial ("J. Smith")
        starts.append(match.end())
    return starts


def _line_at(paragraph: _Paragraph, offset: int) -> int | None:
    line = paragraph.starts[0][1]
    for start, number in paragraph.starts:
        if start > offset:
            break
        line = number
    return line


#: the timing roles, the same on every engine: a claim (a mark after its sentence), a
#: named timing's value, the ratio of two
CLAIM_ROLE, TIMING_ROLE, RATIO_ROLE = "timing-claim", "timing", "timing-ratio"
#: the three roles of the timing claims, as the mystmd plugin declares them
CLAIM_ROLES = (TIMING_ROLE, RATIO_ROLE, CLAIM_ROLE)
#: roles that render as no words
SILENT_ROLES = frozenset({CLAIM_ROLE})


def plain_text(markup: str) -> str:
    """Inline MyST markup as a reader reads it, on one line."""
    patterns = _patterns()

    def role(match: re.Match[str]) -> str:
        if (match.group("name") or match.group("rst")).lower() in SILENT_ROLES:
            return ""
        content = match.group("content") if match.group("name") else match.group("rstcontent")
        titled = patterns["titled"].match(content)
        return titled.group("title") if titled and titled.group("title") else content

    # each pattern only where its characters are (most sentences have little markup)
    text = markup
    if "\\" in text:  # escaped characters are not markup: kept aside as private-use ones
        text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!$<>])", lambda m: chr(0xE000 + ord(m.group(1))),
                      text)
    if "`" in text:
        text = patterns["role"].sub(role, text)
        text = patterns["code"].sub(lambda match: match.group("content").strip(), text)
    if "[" in text:
        text = patterns["image"].sub("", text)
        text = patterns["footnote"].sub("", text)
        text = patterns["link"].sub(lambda match: match.group("text"), text)
    if "<" in text:
        text = patterns["autolink"].sub(lambda match: match.group("url"), text)
        text = patterns["html"].sub("", text)
    if "*" in text or "_" in text:
        for _ in range(2):  # "***bold italic***", nested emphasis
            text = patterns["emphasis"].sub(lambda match: match.group("text"), text)
    if "\\" in markup:
        text = re.sub("[\ue000-\ue07f]", lambda m: chr(ord(m.group(0)) - 0xE000), text)
    return " ".join(text.split())


def _roles(paragraph: _Paragraph, start: int, end: int) -> tuple[Role, ...]:
    if "`" not in paragraph.text:
        return ()
    found = []
    for match in _patterns()["role"].finditer(paragraph.text, start, end):
        name = match.group("name") or match.group("rst")
        content = match.group("content") if match.group("name") else match.group("rstcontent")
        found.append(Role(name.lower(), content.strip(), _line_at(paragraph, match.start())))
    return tuple(found)


def _leading_roles(paragraph: _Paragraph, start: int, end: int) -> int:
    """Where the words of the sentence at ``start`` begin, after the roles it starts with."""
    role = _patterns()["role"]
    position = start
    while True:
        while position < end and paragraph.text[position].isspace():
            position += 1
        match = role.match(paragraph.text, position, end)
        if match is None:
            return position
        position = match.end()


def sentences(blocks: Iterable[TextBlock], wanted: Callable[[str], bool] | None = None
              ) -> tuple[list[Sentence], list[Place]]:
    """The page's sentences, in order, and where its headings are.

    Roles that start a sentence (``Faster. {timing-claim}`a < b` Then ...``) belong
    to the sentence before them in the paragraph: a mark after a sentence is its.
    ``wanted``: a test of a paragraph's Markdown; the sentences of the paragraphs it
    refuses are left out (most of a lecture says nothing about speed: not split into
    sentences, not made plain text).
    """
    found: list[Sentence] = []
    headings: list[Place] = []
    for block in blocks:
        for paragraph in _paragraphs(block):
            if isinstance(paragraph, _Heading):
                headings.append(Place(block.position, paragraph.line))
                continue
            if wanted is not None and not wanted(paragraph.text):
                continue
            first_of_paragraph = len(found)
            starts = _boundaries(paragraph.text)
            for start, end in zip(starts, [*starts[1:], len(paragraph.text)], strict=True):
                words = _leading_roles(paragraph, start, end)
                if words > start and len(found) > first_of_paragraph:
                    found[-1] = found[-1]._replace(
                        roles=found[-1].roles + _roles(paragraph, start, words))
                    start = words
                plain = plain_text(paragraph.text[start:end])
                if plain.strip(" .,;:") or _roles(paragraph, start, end):
                    found.append(Sentence(plain, Place(block.position,
                                                       _line_at(paragraph, start)),
                                          len(headings), _roles(paragraph, start, end)))
    return found, headings
