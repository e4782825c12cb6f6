"""acceptance-criteria.missing, acceptance-criteria.open-ended and acceptance-criteria.untestable.

`open-ended` is the blocking form of `missing`: the ticket asks for an activity that has no end of its own
("Investigate X", "Code review the plugin", "Improve Y") and says nothing more that tells when it is done.
A ticket that asks for a change ("Replace Netty with Grizzly") has its end in its words; one that asks for
an activity needs the output named (a decision, a list of findings, a measure), or nobody can close it.
"""

from __future__ import annotations

import re

from reqgate.pipeline.rules import unmeasurable, vague
from reqgate.pipeline.rules.document import Document, lexicon, phrases
from reqgate.pipeline.rules.sections import sections
from reqgate.pipeline.schemas import Finding

MISSING = "acceptance-criteria.missing"
OPEN_ENDED = "acceptance-criteria.open-ended"
UNTESTABLE = "acceptance-criteria.untestable"
CHECK_IDS = (MISSING, OPEN_ENDED, UNTESTABLE)

_AC_HEADING = re.compile(
    r"(?:acceptance|success|exit|completion|done)[ -]criteri(?:a|on|as)|a/?c|acs?|acceptance tests?"
    r"|definition of done|dod|done when|conditions? of satisfaction|test (?:cases|scenarios)|scenarios?"
    r"|expected (?:outcome|results?|behaviou?r)|outcomes?|deliverables?|requirements",
    re.IGNORECASE,
)
# "Acceptance criteria: the CSV lists every row" on one line.
_INLINE_RE = re.compile(r"^[ \t>*_\-+•#]*(?:h[1-6]\.[ \t]*)?[*_]*(?i:acceptance criteri(?:a|on)|a/?c"
                        r"|definition of done|dod|done when)[*_]*[ \t]*:[*_]*[ \t]*(\S[^\n]*)$", re.MULTILINE)
_GHERKIN_RE = re.compile(r"^[ \t>*_\-+•\d.)]*(?:\[[ xX]\][ \t]*)?[*_]*(?:given|when|then|and|but|scenario)\b"
                         r"[^\n]*$", re.IGNORECASE | re.MULTILINE)
_ITEM_RE = re.compile(r"[ \t]*(?:[-*+•]|\d+[.)]|\[[ xX]\]|(?i:given|when|then|and|but)\b)")
_THEN_RE = re.compile(r"\bthen\b", re.IGNORECASE)
_CHECKLIST_RE = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[[ xX]\][^\n]*$", re.MULTILINE)
_WEAK = phrases(r"should(?: not|n['’]t)?", r"may", r"might", r"could", r"would", r"possibly", r"ideally",
              r"optionally", r"hopefully", r"try to", r"attempt to", r"where possible")
_WEAK_SUGGESTION = "State the observable result: 'the export contains every row', not 'should export'."
_WEAK_LEXICON = lexicon([(_WEAK, _WEAK_SUGGESTION)])
_MISSING_SUGGESTION = (
    "Add an 'Acceptance criteria' section with checkable items, e.g. '- [ ] Given a signed-in manager, when "
    "they export the stock list, then a CSV with every item and its quantity downloads within 5 s.'"
)


def _items(doc: Document) -> tuple[list[tuple[int, int]], bool]:
    """Line ranges of acceptance criteria, and whether an (even empty) criteria heading exists."""
    text = doc.masked
    items: list[tuple[int, int]] = []
    found = sections(text, doc.headings, _AC_HEADING)
    for section in found:
        pos = section.content_start
        after_blank = False
        for line in text[section.content_start:section.content_end].split("\n"):
            if not line.strip():
                after_blank = True
            elif after_blank and items and not _ITEM_RE.match(line):
                break  # a new paragraph after the list is prose, not a criterion
            else:
                items.append((pos, pos + len(line)))
                after_blank = False
            pos += len(line) + 1
    items += [(m.start(1), m.end(1)) for m in _INLINE_RE.finditer(text)]
    gherkin = list(_GHERKIN_RE.finditer(text))
    if any(_THEN_RE.search(m.group(0)) for m in gherkin):
        items += [(m.start(), m.end()) for m in gherkin]
    items += [(m.start(), m.end()) for m in _CHECKLIST_RE.finditer(text)]
    return sorted(set(items)), bool(found)


_ITEM_LEAD = re.compile(r"^[ \t>*_\-+•\d.)]*(?:\[[ xX]\][ \t]*)?")


def criteria(text: str) -> list[str]:
    """The acceptance criteria the author wrote, one line each, without bullets or checkboxes."""
    items, _ = _items(Document(text))
    lines = (text[start:end] for start, end in items)
    return [cleaned for line in lines if (cleaned := _ITEM_LEAD.sub("", line).strip(" \t*_"))]


# A description precise enough to test against: a list or table, code or an identifier, a version, a
# path, a ticket key, a number with a unit.
_LIST_RE = re.compile(r"^[ \t>]*(?:[-*+•]|#+|\d+[.)])[ \t]+\S", re.MULTILINE)
_TABLE_RE = re.compile(r"^[ \t]*\|[^\n]*\|[ \t]*$", re.MULTILINE)
_SPECIFIC_RE = re.compile(
    r"`[^`\n]+`|\{\{[^}\n]+\}\}|\{(?:code|noformat)"
    r"|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*"  # camelCase, CamelCase
    r"|\b\w+_\w+|\b\w+\.\w+\(|\b\w+(?:\.\w+){2,}"  # snake_case, calls, dotted names
    r"|\b[A-Z][A-Z0-9]+-\d+\b|\bv?\d+\.\d+|(?<![\w/])/[\w.-]+|\b\w+=\w+"
    r"|\b\d+\s*(?:%|ms|s|px|kb|mb|gb)\b|\"[^\"\n]{2,60}\"|'[^'\n]{2,60}'",
)
_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")
# Prose at least this long can state a testable outcome without any of the markers above.
_PRECISE_WORDS = 30


def described(doc: Document) -> bool:
    """Whether the ticket says precisely enough what done is, without a criteria section."""
    body = doc.text[doc.body_start:]
    if len(_LIST_RE.findall(body)) >= 2 or _TABLE_RE.search(body):
        return True
    if len(_WORD_RE.findall(doc.masked[doc.body_start:])) >= _PRECISE_WORDS:
        return True
    return _SPECIFIC_RE.search(doc.text) is not None


# Verbs of work that has no end state of its own, opening the title or the body's first line (after a "Spike:"-like
# tag).
_OPEN_ENDED_RE = re.compile(
    r"[ \t]*(?:\[[^\]\n]{1,30}\][ \t]*)?(?:(?:spike|research|investigation|task|todo)[ \t]*[:\-][ \t]*)?"
    r"(?P<verb>investigate|look(?:ing)? into|research|explore|evaluate|assess|study|analy[sz]e|(?:code )?review"
    r"|consider|think about|discuss|revisit|follow[ -]up on|assist (?:in|with)|help (?:in|with)"
    r"|improve|enhance|optimi[sz]e)\b",
    re.IGNORECASE,
)
# The output of an activity, named: then done is checkable ("write up a design doc", "file tickets for what
# is found", "enable or remove each skipped test", "create a reproducible series of steps", "determine the
# root cause", "improve X so that it's writable").
_OUTPUT_RE = re.compile(
    r"\b(?:write[- ]?up|(?:design |a |the )?doc(?:ument)?s?\b(?! (?:says|states|mentions))|summary|report|"
    r"recommend(?:ation)?s?|decide|decision|proposals?|propose|prototype|proof[- ]of[- ]concept|poc|"
    r"(?:file|open|create|raise)s? (?:\w+ ){0,2}(?:tickets|issues|jiras|bugs)|a list of|"
    r"(?:and|or|then|,) (?:fix|remove|enable|disable|implement|update|add|replace|delete|merge)\b|"
    r"(?:create|write|produce|deliver)s? (?:an? |the )?(?:\w+ ){0,3}(?:tests?|steps|scripts?|benchmarks?|plan)\b|"
    r"root cause|so (?:that )?(?:it|they|the \w+)(?: is|['’]s| are| can| does| do)\b|to (?:include|support|cover|add)\b)",
    re.IGNORECASE,
)
# A body longer than one short sentence mostly says enough that a reader can tell when the work ends: in a
# blind reading of the 37 unlabelled dev tickets flagged before this limit, a second reader agreed on 17 of
# 20 with at most 12 words and on 9 of 17 with more.
_OPEN_ENDED_WORDS = 15
_OPEN_ENDED_SUGGESTION = "What output ends the work: a decision, a list of findings or fixes, or a number to reach?"


_GOAL_HEADING = re.compile(r"goals?|summary|description|objective|task|what", re.IGNORECASE)


def _first_lines(doc: Document) -> list[int]:
    """Where the work is named: the title, and the body's first line (under a heading such as "Goal")."""
    starts = [0]
    body = doc.body_start if doc.title_end else doc.text.find("\n") + 1
    first_heading = next((h for h in doc.headings if h.start >= body), None)
    if first_heading is not None and not doc.text[body:first_heading.start].strip() and (
            _GOAL_HEADING.fullmatch(first_heading.label)):
        body = first_heading.end + 1
    while body < len(doc.text) and doc.text[body] in " \t\n":
        body += 1
    if 0 < body < len(doc.text):
        starts.append(body)
    return starts


def _open_ended(doc: Document) -> Finding | None:
    """An open-ended verb naming the work, when the ticket says nothing else about when the work ends."""
    if _OUTPUT_RE.search(doc.masked) or len(_WORD_RE.findall(doc.masked[doc.body_start:])) > _OPEN_ENDED_WORDS:
        return None
    for start in _first_lines(doc):
        line_end = doc.text.find("\n", start)
        match = _OPEN_ENDED_RE.match(doc.text, start, len(doc.text) if line_end < 0 else line_end)
        if match is not None:
            verb = match.group("verb")
            return doc.finding(OPEN_ENDED, f"'{verb}' names an activity, not a result: nothing says when it is "
                               "done", _OPEN_ENDED_SUGGESTION, match.start("verb"), match.end("verb"))
    return None


def find(doc: Document) -> list[Finding]:
    items, has_heading = _items(doc)
    if not items:
        if described(doc) and not has_heading:
            return []
        if (open_ended := _open_ended(doc)) is not None:
            return [open_ended]
        if not doc.text[doc.body_start:].strip():
            return []  # an empty body is incomplete (guardrail.length), not a question of criteria
        message = ("The acceptance criteria section is empty" if has_heading
                   else "No way to tell when this is done: no criteria and no precise description")
        return [doc.finding(MISSING, message, _MISSING_SUGGESTION)]
    findings: list[Finding] = []
    for start, end in items:
        findings += doc.term_findings(UNTESTABLE, _WEAK_LEXICON, start, end,
                                      "'{quote}' makes the criterion optional")
        findings += doc.term_findings(UNTESTABLE, vague.LEXICON, start, end, "'{quote}' cannot be tested")
        if not unmeasurable.measured(doc.masked, start, end):
            findings += doc.term_findings(UNTESTABLE, unmeasurable.LEXICON, start, end,
                                          "'{quote}' cannot be tested without a number")
    return findings
