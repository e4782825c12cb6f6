"""The ticket type: the tracker's when it gives one, else a guess from the text.

`decide_type` takes the type set by hand, then the tracker's (through `types.issue_types`), then a label's
(`types.labels`); only without them does the text decide. Order of evidence in the text: bug-report
structure (steps / expected / actual, a stack trace) beats a user story ("As a ... I want"), which beats
spike words in the title (unless it opens with a chore's verb), then failure words, then the title's verb (a
new capability or a chore), then feature-request phrasing. With none of them it is a task and the guess is
unsure: the review applies the lenient modes of `other` (type-specific checks off) and says so.
"""

from __future__ import annotations

import re

from reqgate.pipeline.config import Config
from reqgate.pipeline.rules.story import parse_story
from reqgate.pipeline.schemas import Model, RequirementPacket, TicketType, TypeSource


class TypeDecision(Model):
    """The type the review uses, where it came from, and whether the evidence was clear."""

    ticket_type: TicketType
    source: TypeSource
    sure: bool = True

    @property
    def rules_type(self) -> TicketType:
        """The type whose check modes apply: when the text left the type open, the lenient `other`."""
        return self.ticket_type if self.sure else TicketType.other


# "type: bug", "kind/feature", "Type - Bug": the prefix some projects put on type labels.
_LABEL_PREFIX_RE = re.compile(r"^\s*(?:type|kind|issue[ -]?type)\s*[:/\-]\s*", re.IGNORECASE)


def _lookup(mapping: dict[str, str], name: str) -> TicketType | None:
    wanted = name.strip().casefold()
    for key, value in mapping.items():
        if key.casefold() == wanted:
            return TicketType(value)
    return None


def decide_type(packet: RequirementPacket, config: Config) -> TypeDecision:
    """A type set by hand, else the tracker's type, else a type label, else the text (see the module
    docstring); a tracker type the map does not know falls through to the labels and the text."""
    if packet.type_hint is not None:
        return TypeDecision(ticket_type=packet.type_hint, source="flag")
    if packet.issue_type:
        mapped = _lookup(config.types.issue_types, packet.issue_type)
        if mapped is None and packet.issue_type.strip().lower() in TicketType.__members__:
            mapped = TicketType(packet.issue_type.strip().lower())
        if mapped is not None:
            return TypeDecision(ticket_type=mapped, source="tracker")
    for label in packet.labels:
        mapped = _lookup(config.types.labels, _LABEL_PREFIX_RE.sub("", label))
        if mapped is not None:
            return TypeDecision(ticket_type=mapped, source="label")
    guessed, sure = guess_from_text(packet.title, packet.body)
    return TypeDecision(ticket_type=guessed, source="text", sure=sure)

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
    r"|wrong|invalid|unable to|can['’]?t|cannot|isn['’]t correct|is not correct|not (?:shown|displayed|saved)"
    r"|instead of|truncated|missing|overlap(?:s|ping)?|describe the bug|it does not|unexpected(?:ly)?"
    r"|(?:does|do|is|are|was|were)n['’]t|(?:does|do|is|are|was|were) not|I expected|differing|inconsistent)\b",
    re.IGNORECASE,
)
_FEATURE_RE = re.compile(
    r"\b(?:I|we)(?:['’]d| would) (?:like|love)\b|\bI want\b"
    r"|\b(?:users?|customers?|admins?|we) (?:should|need to|"
    r"want to|would like to) be able to\b|\bfeature request\b|\bit would be (?:nice|great|helpful|useful)\b"
    r"|\ballow (?:users?|me|us|admins?) to\b|\bso that\b|\bwould be (?:nice|great|useful|helpful)\b"
    r"|\bas suggested\b|\bability to\b|\badd (?:a way|an? option|support|the ability)\b",
    re.IGNORECASE,
)
# Titles that name a new capability, and titles that name a chore on what exists.
_FEATURE_TITLE_RE = re.compile(r"^\W*(?:\[[^\]]*\]\s*)?(?:add|allow|support|implement|introduce|create|"
                               r"provide|show|display|enable|new)\b", re.IGNORECASE)
_TASK_VERBS = (r"(?:update|upgrade|bump|remove|delete|refactor|migrate|move|rename|clean ?up|replace|apply|"
               r"transition|document|backport|port|deprecate|convert|externali[sz]e|consolidate|configure|set ?up|"
               r"install|test|release|review|audit|dogfood|merge|split|extract|use)\b")
_TASK_TITLE_RE = re.compile(r"\b" + _TASK_VERBS, re.IGNORECASE)
# A title that opens with a chore's verb, after a tag ("[ENG]", "ENG:"): its spike words are the object of
# the chore ("Update subtitle on comparison infographic", "Use MVEL to evaluate expressions").
_TASK_LEAD_RE = re.compile(r"^\W*(?:\[[^\]]*\]\s*|\w+:\s+)?" + _TASK_VERBS, re.IGNORECASE)


def guess_type(packet: RequirementPacket) -> TicketType:
    """`packet.type_hint` if set, else the type the text points at (see `guess_from_text`)."""
    if packet.type_hint is not None:
        return packet.type_hint
    return guess_from_text(packet.title, packet.body)[0]


def guess_from_text(title: str, body: str) -> tuple[TicketType, bool]:
    """The type the words of a ticket point at, and whether any evidence decided it (else a task, unsure)."""
    text = f"{title}\n\n{body}" if title else body
    head = title or text.lstrip().split("\n", 1)[0]
    if _BUG_STRUCTURE_RE.search(text):
        return TicketType.bug, True
    story = parse_story(text)
    if story is not None and story.role is not None and story.want is not None:
        return TicketType.story, True
    if _SPIKE_RE.search(head) and not _TASK_LEAD_RE.match(head) or re.search(r"\bspike\b", text, re.IGNORECASE):
        return TicketType.spike, True
    bug_words = {m.group(0).lower() for m in _BUG_WORDS_RE.finditer(body)}
    if _BUG_WORDS_RE.search(head) or len(bug_words) >= 2:
        return TicketType.bug, True
    if _FEATURE_TITLE_RE.search(head):
        return TicketType.story, True
    if _TASK_TITLE_RE.search(head):
        return TicketType.task, True
    if _FEATURE_RE.search(text):
        return TicketType.story, True
    return TicketType.task, False
