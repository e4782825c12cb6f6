"""guess_type: the ticket type when the tracker did not say.

Order of evidence: bug-report structure (steps / expected / actual, a stack trace) beats a user story
("As a ... I want"), which beats spike words in the title, then failure words, then feature-request
phrasing; anything else is a task, whose defaults ask for a definition of done and little more.
"""

from __future__ import annotations

import re

from reqgate.pipeline.rules.story import parse_story
from reqgate.pipeline.schemas import RequirementPacket, TicketType

_BUG_STRUCTURE_RE = re.compile(
    r"steps? to (?:reproduce|repro)|repro(?:duction)? steps|expected (?:result|behaviou?r|outcome)"
    r"|actual (?:result|behaviou?r|outcome)|^[ \t*_#]*(?:expected|actual|observed)[*_]*[ \t]*:"
    r"|stack ?trace|traceback \(most recent call last\)|^\s+at [\w.$]+\(",
    re.IGNORECASE | re.MULTILINE,
)
_SPIKE_RE = re.compile(
    r"\b(?:spike|investigat(?:e|ion)|research|evaluat(?:e|ion)|explore|exploration|poc|proof of concept"
    r"|feasibility|assess(?:ment)?|compare|comparison|find out|look into|time-?box(?:ed)?)\b",
    re.IGNORECASE,
)
_BUG_WORDS_RE = re.compile(
    r"\b(?:bug|crash(?:es|ed|ing)?|errors?|exceptions?|fail(?:s|ed|ing|ure)?|broken|regression|defect"
    r"|doesn['’]t work|does not work|not working|no longer|hangs?|freezes|50[0-3]|404|incorrect(?:ly)?"
    r"|wrong)\b",
    re.IGNORECASE,
)
_FEATURE_RE = re.compile(
    r"\b(?:I|we)(?:['’]d| would) (?:like|love)\b|\bI want\b"
    r"|\b(?:users?|customers?|admins?|we) (?:should|need to|"
    r"want to|would like to) be able to\b|\bfeature request\b|\bit would be (?:nice|great|helpful|useful)\b"
    r"|\ballow (?:users?|me|us|admins?) to\b|\bso that\b",
    re.IGNORECASE,
)


def guess_type(packet: RequirementPacket) -> TicketType:
    """`packet.type_hint` if set, else a heuristic over title and body (see the module docstring)."""
    if packet.type_hint is not None:
        return packet.type_hint
    text = packet.text
    if _BUG_STRUCTURE_RE.search(text):
        return TicketType.bug
    story = parse_story(text)
    if story is not None and story.role is not None and story.want is not None:
        return TicketType.story
    head = packet.title or text.lstrip().split("\n", 1)[0]
    if _SPIKE_RE.search(head) or re.search(r"\bspike\b", text, re.IGNORECASE):
        return TicketType.spike
    if _BUG_WORDS_RE.search(head) or len({m.group(0).lower() for m in _BUG_WORDS_RE.finditer(text)}) >= 2:
        return TicketType.bug
    if _FEATURE_RE.search(text):
        return TicketType.story
    return TicketType.task
