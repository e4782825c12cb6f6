"""template.placeholder: unfilled template slots and markers (TBD, TODO, ???, <role>, [describe here]...)."""

from __future__ import annotations

import re

from reqgate.pipeline.rules.document import Document
from reqgate.pipeline.schemas import Finding

CHECK_ID = "template.placeholder"

_SUGGESTION = "Replace it with the real content, or delete it if it does not apply."

_MARKER_RE = re.compile(
    r"(?=[TtFfXxLl?'\"‘“])(?:"  # every marker starts with one of these: skip other positions fast
    r"(?<![\w-])(?i:TBD|TBC|TBA|to be (?:decided|determined|defined|confirmed))(?![\w-])"
    # Upper-case only, and not the product feature ("TODO list", "todo app").
    r"|(?<![\w-])(?:TODO|FIXME|XXX+)(?![\w-])(?!\s+(?i:lists?|apps?|items?|application)\b)"
    r"|(?<![\w-])(?i:todo|fixme)\s*:"
    r"|\?{3,}|(?<!\S)\?\?(?!\S)"
    r"|(?i:lorem\s+ipsum)"
    r"|(?<![\w.])[xX](?:\.[xX]){1,3}(?![\w.])"  # version "x.x.x"
    r"|(?<![\w/])X/Y(?:/Z)?(?![\w/])"
    r"|['\"‘“](?:\.{3,}|…)['\"’”])",  # GitHub's "Go to '...'"
    re.MULTILINE,
)
_ELLIPSIS_VALUE_RE = re.compile(r":[ \t]*(\.{3,}|…)[ \t]*$", re.MULTILINE)  # "Version: ..."
# Sentences of GitHub's and Jira's default issue templates that are meant to be overwritten.
_TEMPLATE_TEXT_RE = re.compile(
    r"(?<!\w)(?:a clear and concise description of [^.\n]*"
    r"|add any other context (?:about the problem|or screenshots about the feature request) here"
    r"|if applicable, add screenshots to help explain your problem"
    r"|describe (?:the bug|your (?:issue|problem|feature|request)) here"
    r"|(?:write|describe|enter|type|insert|add|put) (?:your|the|a) [\w ]{1,40} here"
    r"|your (?:text|description|story|answer) here)",
    re.IGNORECASE,
)
_ANGLE_RE = re.compile(r"(?<![\w<])<([A-Za-z][^<>\n]{0,60})>")
_SQUARE_RE = re.compile(r"(?<!\[)\[([^\[\]\n]{1,60})\](?![(\[:])")
_HTML_TAGS = frozenset(re.split(
    r"\s+",
    "a abbr b blockquote br button code dd del details div dl dt em h1 h2 h3 h4 h5 h6 hr i img input ins "
    "kbd label li mark ol p pre q s samp small span strike strong sub summary sup table tbody td tfoot th "
    "thead tr tt u ul video audio source iframe script style meta link html head body form select option "
    "textarea svg path g picture figure figcaption section article nav header footer main aside",
))
_SLOT_RE = re.compile(
    r"(?:insert|describe|add|enter|fill(?: in)?|put|type|write|specify|explain|provide|replace|choose|"
    r"select|your|e\.g\.?|eg|example|placeholder|tbd|todo|tba|optional|name of|link to|short|brief)\b"
    r"|(?:role|user(?: type)?|type of (?:user|role)|persona|actor|stakeholder|feature|functionality|"
    r"capability|goal|benefit|reason|value|outcome|result|action|something|some(?:thing|one)|description|"
    r"name|title|date|time|version|link|url|details?|text|here|summary|component|module|product|"
    r"customer|number|amount|value|steps?|expected(?: behaviou?r)?|actual(?: behaviou?r)?|environment|"
    r"browser|os|device|priority|owner|team|project|epic|ticket|id|email|x|y|z|n|\.\.\.|…)$",
    re.IGNORECASE,
)


# The last word of a slot's label: "[here - link]", "`GitLab Handle`".
_SLOT_END_RE = re.compile(r"(?:handle|name|link|url|date|title|description|email|username|details|text)$",
                          re.IGNORECASE)
# An unchecked template item left as shipped: "- [ ] Deliverable 1".
_DUMMY_ITEM_RE = re.compile(r"^[ \t]*[-*+][ \t]+\[ \][ \t]+((?:Deliverable|Item|Requirement|Task|Goal) \d+)[ \t]*$",
                            re.MULTILINE | re.IGNORECASE)
# A code span holding a label rather than code: "DRI: `GitLab Handle`".
# Two or three capitalised words: a single one (`ItemName`) is an identifier, and code is code.
_CODE_SLOT_RE = re.compile(r"`([A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*){1,2})`")


def _angle_is_slot(text: str, m: re.Match[str]) -> bool:
    """ "<role>", "<your name>": a label in brackets. "<init>" in a stack trace, "<jaxws:features>", a
    "<BUILD-KEY>" inside a path or a message, are code or a variable part the author meant."""
    inner = m.group(1)
    if any(ch in inner for ch in "=@:.\\/|") or text[m.start() - 1:m.start()] in ("/", "\\", "$"):
        return False
    if text[m.end():m.end() + 1] in ("/", "\\", "("):
        return False
    first = re.split(r"[\s/]", inner, maxsplit=1)[0].lower()
    if first in _HTML_TAGS:
        return False
    return bool(_SLOT_RE.match(inner.strip())) or (" " in inner.strip() and not inner.isupper())


def _square_is_slot(inner: str) -> bool:
    stripped = inner.strip()
    if not stripped or stripped.lower() in {"x", "✓", "✔"} and len(inner) <= 3:
        return False  # a checklist box "[ ]" / "[x]"
    return bool(_SLOT_RE.match(stripped)) or bool(_SLOT_END_RE.search(stripped) and " " in stripped)


def _story_slots(doc: Document) -> list[tuple[int, int]]:
    """ "As a X, I want Y so that Z": single letters or ellipses left in a story's slots."""
    story = doc.story
    if story is None:
        return []
    slots = []
    for part in (story.role, story.want, story.benefit):
        if part is not None and re.fullmatch(r"[A-Z]|\.{2,}|…|\[[^\]]*\]|<[^>]*>", part.quote):
            slots.append((part.start, part.end))
    return slots


def find(doc: Document) -> list[Finding]:
    text = doc.masked
    hits: list[tuple[int, int]] = []
    hits += [(m.start(), m.end()) for m in _MARKER_RE.finditer(text) if m.end() > m.start()]
    hits += [(m.start(), m.end()) for m in _TEMPLATE_TEXT_RE.finditer(text)]
    hits += [(m.start(1), m.end(1)) for m in _ELLIPSIS_VALUE_RE.finditer(text)]
    hits += [(m.start(), m.end()) for m in _ANGLE_RE.finditer(text) if _angle_is_slot(text, m)]
    hits += [(m.start(1), m.end(1)) for m in _DUMMY_ITEM_RE.finditer(text)]
    hits += [(m.start(), m.end()) for m in _CODE_SLOT_RE.finditer(doc.text)
             if _SLOT_END_RE.search(m.group(1)) and text[m.start():m.end()].isspace()]
    hits += [(m.start(), m.end()) for m in _SQUARE_RE.finditer(text) if _square_is_slot(m.group(1))]
    hits += _story_slots(doc)

    findings: list[Finding] = []
    covered_until = -1
    for start, end in sorted(hits, key=lambda h: (h[0], -h[1])):
        if start < covered_until:
            continue  # "[TBD]" is one placeholder, not two
        start, end = _strip_blank(doc.text, start, end)
        if end <= start:
            continue
        covered_until = end
        quote = doc.text[start:end]
        findings.append(doc.finding(CHECK_ID, f"'{_short(quote)}' is an unfilled placeholder", _SUGGESTION,
                                    start, end))
    return findings


def _strip_blank(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    return start, end


def _short(quote: str, limit: int = 60) -> str:
    return quote if len(quote) <= limit else quote[: limit - 1] + "…"
