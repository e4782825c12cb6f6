"""A tolerant parser for "As a <role>, I want <want>, so that <benefit>" and its everyday variants.

Offsets point into the text given, so a part's `Span` can be quoted back verbatim. The want excludes its
lead-in ("to", "be able to") and every part excludes its trailing punctuation.
"""

from __future__ import annotations

import re


from reqgate.pipeline.rules.text import sentence_end_before, trim
from reqgate.pipeline.schemas import Model, Span

_SUBJECT = r"(?:I|we)"
_WANT_RE = re.compile(
    rf"\b{_SUBJECT}\s*(?:"
    r"['’]d\s+(?:like|love|want|prefer)"
    r"|\s(?:really\s+|also\s+|only\s+|just\s+|would\s+|then\s+|(?P<neg>do\s+not\s+|don['’]t\s+|never\s+))?"
    r"(?:want|wanna|wish|need|require|expect|would\s+(?:like|love|want|prefer))"
    r"|\s(?:can|could)(?!['’]t|not)"
    r"|\s(?:am|['’]m|are|['’]re)\s+(?:able\s+to|interested\s+in|looking\s+(?:for|to))"
    r"|['’](?:m|re)\s+(?:able\s+to|interested\s+in|looking\s+(?:for|to))"
    r"|\s(?:should|must|shall|will)(?:\s+be\s+able\s+to)?"
    r")\b",
    re.IGNORECASE,
)
# "As a", "As an", "As the", or a bare "As Product Owner" at the start of a line.
_ROLE_RE = re.compile(r"\bas\s+(?:(?:an?|the|one)\b\s*)?", re.IGNORECASE)
_BARE_ROLE_OK = re.compile(r"[\s\-*•>#\d.)\ufeff]*$")
_NOT_A_ROLE = re.compile(
    r"(?:result|whole|consequence|rule|example|workaround|side effect|first step|fallback|default|"
    r"well|soon|far|long|much|many|such|if|though|of|per|part|mentioned|discussed|described|usual|"
    r"expected|before|above|below|shown|follows|needed|required|possible)\b",
    re.IGNORECASE,
)
_LEAD_IN_RE = re.compile(r"[\s*_]*(?:(?:to|that)\s+)?(?:be\s+able\s+to\s+)?", re.IGNORECASE)
# A benefit opens with "so that", "in order to", "so as to", "because", or a bare "so" before a clause
# ("so I can", "so patrons are able", or any clause after ", so"), never the intensifier ("so many",
# "so far").
_BENEFIT_RE = re.compile(
    r"[\s,;:\-–—*_]*(?P<paren>\()?[\s*_]*\b(?:so\s+that|in\s+order\s+(?:to|that|for)|so\s+as\s+to|(?<=,\s)because"
    r"|(?<=,\s)so(?!\s+(?:much|many|far|on|long|forth|called|as|very|too|few|little|often|well)\b)(?=\s+\w)"
    r"|so(?!\s+(?:much|many|far|on|long|forth|called|as|very|too|few|little|often|well)\b)"
    r"(?=\s+(?:I|we|you|they|he|she|it|my|our|their|the|this|that|these|those|users?|people|everyone|others?"
    r"|a|an|all|each|any|no|nobody|customers?|clients?)\b"
    r"|\s+\w+(?:\s+\w+)?\s+(?:can|could|will|would|may|might|are|is|do|does|don['’]t|won['’]t|can['’]t"
    r"|have|has|know|get|need|must|should)\b))\b"
    r"(?:[\s,]+(?:so\s+that|so)\b)*",  # a stuttered "so that, so that" is one marker
    re.IGNORECASE,
)
_PARAGRAPH_END_RE = re.compile(r"\n[ \t]*\n")
_MAX_ROLE_CHARS = 120
_MAX_ROLE_DISTANCE = 400
_MAX_STORY_CHARS = 2000


class ParsedStory(Model):
    """Role, want and benefit of a user story; `extent` runs from its first to its last word."""

    role: Span | None = None
    want: Span | None = None
    benefit: Span | None = None
    extent: Span


def _span(text: str, start: int, end: int) -> Span | None:
    start, end = trim(text, start, end)
    if end <= start:
        return None
    return Span(quote=text[start:end], start=start, end=end)


def _find_role(text: str, marker_start: int) -> tuple[int, Span] | None:
    """The last "As a <role>" before the want marker in the same paragraph: (offset of "As", role)."""
    window_start = max(0, marker_start - _MAX_ROLE_DISTANCE)
    para = text.rfind("\n\n", window_start, marker_start)
    if para >= 0:
        window_start = para
    best: tuple[int, Span] | None = None
    for m in _ROLE_RE.finditer(text, window_start, marker_start):
        has_article = m.group(0).strip().lower() != "as"
        if not has_article and not _BARE_ROLE_OK.match(text[max(0, m.start() - 8):m.start()]):
            continue
        if _NOT_A_ROLE.match(text, m.end()):
            continue
        stop = min(marker_start, m.end() + _MAX_ROLE_CHARS)
        end = stop
        for ch_pos in range(m.end(), stop):
            if text[ch_pos] in ",\n;.!?(":
                end = ch_pos
                break
        if end == stop and stop < marker_start:
            continue  # no comma or line break within a role's length: not a role clause
        role = _span(text, m.end(), end)
        if role is not None:
            best = (m.start(), role)
    return best


def parse_story(text: str) -> ParsedStory | None:
    """Role, want and benefit of the first user story in `text`, or None when it has no want.

    A story without "As a" still yields its want (role None). Tolerates a BOM, cp1252 quotes, bullets,
    markdown emphasis, missing commas, line breaks between the parts and extra sentences.
    """
    if not text:
        return None
    first: tuple[re.Match[str], tuple[int, Span] | None] | None = None
    for marker in _WANT_RE.finditer(text):
        role = _find_role(text, marker.start())
        if role is not None:
            first = (marker, role)
            break
        if first is None:
            first = (marker, None)
    if first is None:
        return None
    marker, role = first
    para = _PARAGRAPH_END_RE.search(text, marker.end())
    limit = min(para.start() if para else len(text), marker.end() + _MAX_STORY_CHARS)

    # A negated want keeps its negation: "don't want to see ads" is not "see ads".
    lead_in = _LEAD_IN_RE.match(text, marker.end())
    want_start = marker.start("neg") if marker.group("neg") else lead_in.end() if lead_in else marker.end()
    benefit_m = _BENEFIT_RE.search(text, want_start, limit)
    stop = sentence_end_before(text, want_start, limit)
    if stop is None:
        stop = limit
    if benefit_m is not None and benefit_m.start() > stop and not text[stop:benefit_m.start()].isspace():
        benefit_m = None  # the "so that" belongs to a later sentence
    want_end = benefit_m.start() if benefit_m else stop
    want = _span(text, want_start, want_end)

    benefit = None
    story_end = want.end if want else marker.end()
    if benefit_m is not None:
        benefit_stop = sentence_end_before(text, benefit_m.end(), limit)
        if benefit_stop is None:
            benefit_stop = limit
        if benefit_m.group("paren"):
            close = text.find(")", benefit_m.end(), benefit_stop)
            benefit_stop = close if close >= 0 else benefit_stop
        benefit = _span(text, benefit_m.end(), benefit_stop)
        if benefit is not None:
            story_end = benefit.end
    story_start = role[0] if role else marker.start()
    extent = Span(quote=text[story_start:story_end], start=story_start, end=story_end)
    return ParsedStory(role=role[1] if role else None, want=want, benefit=benefit, extent=extent)
