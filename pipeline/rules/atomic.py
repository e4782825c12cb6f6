"""story.non-atomic: the want joins two actions ("export and email the report")."""

from __future__ import annotations

import re

from pipeline.rules.document import Document
from pipeline.rules.text import Ranges
from pipeline.rules.verbs import VERBS, is_action
from pipeline.schemas import Finding

CHECK_ID = "story.non-atomic"

_CONJ_RE = re.compile(r"(?<![\w/&])(?:and\s+then|and|or|&|as\s+well\s+as|then|plus)(?![\w/&])", re.IGNORECASE)
_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")
_FILLERS = frozenset({"also", "then", "to", "can", "could", "will", "would", "should", "be", "able"})
# Fixed pairs that name one action or one thing.
_BINOMIALS = re.compile(
    r"copy (?:and|&) paste|cut (?:and|&) paste|drag (?:and|&) drop|search (?:and|&) replace|find (?:and|&) "
    r"replace|pros (?:and|&) cons|terms (?:and|&) conditions|read (?:and|&) write|trial (?:and|&) error|"
    r"black (?:and|&) white|back (?:and|&) forth|up (?:and|&) running|log (?:in|on) (?:and|&) out|"
    r"sign (?:in|on) (?:and|&) out|plug (?:and|&) play|check (?:in|out) (?:and|&) check (?:in|out)|"
    r"search (?:and|&) filter|sort (?:and|&) filter|save (?:and|&) close|"
    r"(?:add|create),? edit,? (?:and|or|&) (?:delete|remove)|view (?:and|or|&) edit|zoom in (?:and|&) out",
    re.IGNORECASE,
)
_SUGGESTION = ("Split it into one story per action, so each can be estimated, tested and shipped on its "
               "own; keep this story for the first action.")


def find(doc: Document) -> list[Finding]:
    story = doc.story
    if not doc.story_like or story is None or story.want is None:
        return []
    text = doc.masked
    want_start, want_end = story.want.start, story.want.end
    pairs = Ranges([(m.start(), m.end()) for m in _BINOMIALS.finditer(text, want_start, want_end)])
    findings: list[Finding] = []
    for conj in _CONJ_RE.finditer(text, want_start, want_end):
        if pairs.contains(conj.start(), conj.end()):
            continue
        if text.startswith("/", conj.end()) or text[max(0, conj.start() - 1)] == "/":
            continue  # "and/or" is wording.vague's
        prev = _previous_word(text, want_start, conj.start())
        nxt = _next_word(text, conj.end(), want_end)
        if nxt is None:
            continue
        following = _WORD_RE.search(text, nxt.end(), want_end)
        following_word = following.group(0) if following and not text[nxt.end():following.start()].strip() \
            else None
        earlier = _WORD_RE.findall(text, want_start, conj.start())
        if not is_action(nxt.group(0), following_word, prev, earlier):
            continue
        findings.append(doc.finding(CHECK_ID, f"'{doc.text[conj.start():nxt.end()]}' adds a second action",
                                    _SUGGESTION, conj.start(), nxt.end()))
    return findings


def _previous_word(text: str, floor: int, pos: int) -> str | None:
    m = re.search(r"([A-Za-z][\w'’-]*)[\s,]*$", text[max(floor, pos - 40):pos])
    return m.group(1) if m else None


def _next_word(text: str, pos: int, end: int) -> re.Match[str] | None:
    """The first word after `pos`, past auxiliaries and adverbs ("and then quickly email")."""
    for word in _WORD_RE.finditer(text, pos, end):
        if text[pos:word.start()].strip():
            return None  # punctuation: a list item, not a verb phrase
        lower = word.group(0).lower()
        if lower in _FILLERS or (lower.endswith("ly") and lower not in VERBS and len(lower) > 4):
            pos = word.end()
            continue
        return word
    return None
