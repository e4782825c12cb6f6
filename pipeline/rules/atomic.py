"""story.non-atomic: the want joins two actions ("export and email the report"), or the role two roles.

Following AQUSA's atomicity rule (Lucassen et al.): a conjunction ("and", "or", "&", "+") in the want is a
defect when the parts it separates each carry a verb of their own, whether the second is a bare verb
("and delete"), or a clause ("a car that uses AI and real-time data to react", "the people and what
roles they have"); a list of objects without a verb ("title, assignee and status") is one want. A
conjunction in the role ("As a buyer or seller") names two roles.
"""

from __future__ import annotations

import re

from reqgate.pipeline.rules.document import Document
from reqgate.pipeline.rules.text import Ranges
from reqgate.pipeline.rules.verbs import VERBS, first_verb, has_verb, is_action
from reqgate.pipeline.schemas import Finding

CHECK_ID = "story.non-atomic"

_CONJ_RE = re.compile(r"(?<![\w/&+])(?:and\s+then|and|or|&|\+|as\s+well\s+as|then|plus)(?![\w/&+])",
                      re.IGNORECASE)
_ROLE_CONJ_RE = re.compile(r"(?<![\w/])(?:and|or)(?![\w/])|(?<=\s)[&+](?=\s)", re.IGNORECASE)
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
_ROLE_SUGGESTION = "Write one story per role, so each is answered for the person who has the need."


def find(doc: Document) -> list[Finding]:
    story = doc.story
    if not doc.story_like or story is None or story.want is None:
        return []
    text = doc.masked
    want_start, want_end = story.want.start, story.want.end
    pairs = Ranges([(m.start(), m.end()) for m in _BINOMIALS.finditer(text, want_start, want_end)])
    findings = _role_findings(doc)
    conjunctions = [conj for conj in _CONJ_RE.finditer(text, want_start, want_end)
                    if not pairs.contains(conj.start(), conj.end())
                    and not text.startswith("/", conj.end()) and text[max(0, conj.start() - 1)] != "/"]
    # The parts between splitting conjunctions, and whether each carries a verb of its own.
    splits = [c for c in conjunctions if c.group(0).lower() != "then"]  # AQUSA's splitters, less "/" and "<>"
    bounds = [want_start] + [x for c in splits for x in (c.start(), c.end())] + [want_end]
    lead = _previous_word(text, max(0, want_start - 40), want_start)
    verbs = [has_verb(_WORD_RE.findall(text, bounds[2 * k], bounds[2 * k + 1]), lead if k == 0 else None)
             for k in range(len(splits) + 1)]
    split_index = {c.start(): k + 1 for k, c in enumerate(splits)}
    verb_before = [False] + _running_any(verbs)[:-1]  # some earlier part has a verb
    for conj in conjunctions:  # "and/or" is wording.vague's
        nxt = _next_word(text, conj.end(), want_end)
        if nxt is not None and _joins_action(text, conj, nxt, want_start, want_end):
            findings.append(doc.finding(CHECK_ID, f"'{doc.text[conj.start():nxt.end()]}' adds a second action",
                                        _SUGGESTION, conj.start(), nxt.end()))
            continue
        k = split_index.get(conj.start())
        if k is not None and verbs[k] and verb_before[k]:
            verb = _first_verb(text, bounds[2 * k], bounds[2 * k + 1])
            findings.append(doc.finding(
                CHECK_ID, f"'{doc.text[conj.start():verb]}' adds a second clause with its own verb",
                _SUGGESTION, conj.start(), verb))
    return findings


def _joins_action(text: str, conj: re.Match[str], nxt: re.Match[str], want_start: int, want_end: int) -> bool:
    """The word after the conjunction starts a second verb phrase ("and delete", "and then email it")."""
    prev = _previous_word(text, want_start, conj.start())
    following = _WORD_RE.search(text, nxt.end(), want_end)
    following_word = following.group(0) if following and not text[nxt.end():following.start()].strip() \
        else None
    earlier = _WORD_RE.findall(text, want_start, conj.start())
    return is_action(nxt.group(0), following_word, prev, earlier)


def _running_any(flags: list[bool]) -> list[bool]:
    out, seen = [], False
    for flag in flags:
        seen = seen or flag
        out.append(seen)
    return out


def _first_verb(text: str, start: int, end: int) -> int:
    """End offset of the first verb in text[start:end] (the part is known to have one)."""
    matches = list(_WORD_RE.finditer(text, start, end))
    words = [m.group(0) for m in matches]
    i = first_verb(words)
    return matches[i].end() if i is not None else end


def _role_findings(doc: Document) -> list[Finding]:
    role = doc.story.role if doc.story else None
    if role is None:
        return []
    text = doc.masked
    pairs = Ranges([(m.start(), m.end()) for m in _BINOMIALS.finditer(text, role.start, role.end)])
    for conj in _ROLE_CONJ_RE.finditer(text, role.start, role.end):
        if pairs.contains(conj.start(), conj.end()):
            continue
        nxt = _next_word(text, conj.end(), role.end)
        if nxt is None or _previous_word(text, role.start, conj.start()) is None:
            continue
        return [doc.finding(CHECK_ID, f"'{doc.text[conj.start():nxt.end()]}' names a second role",
                            _ROLE_SUGGESTION, conj.start(), nxt.end())]
    return []


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
