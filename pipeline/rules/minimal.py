"""story.minimal: the story sentence carries detail that belongs in notes or acceptance criteria."""

from __future__ import annotations

import re

from reqgate.pipeline.rules.document import Document, words
from reqgate.pipeline.rules.text import Ranges, sentence_end_before, trim
from reqgate.pipeline.schemas import Finding

CHECK_ID = "story.minimal"

_BRACKETS_RE = re.compile(r"\([^()\n]{1,200}\)|\[[^\[\]\n]{1,200}\]|\{[^{}\n]{1,200}\}")
_EXAMPLE = words(r"e\.g\.?", r"eg\.", r"i\.e\.?", r"for (?:example|instance)", r"such as", r"n\.?b\.?",
                 r"note:", r"including")
_WORDS_RE = re.compile(r"\w+")
_SUGGESTION = ("Keep the story to role, want and benefit; move {what} to the description or the acceptance "
               "criteria.")


def find(doc: Document) -> list[Finding]:
    story = doc.story
    if not doc.story_like or story is None:
        return []
    text = doc.masked
    start = story.extent.start
    line_end = text.find("\n", story.extent.end)
    line_end = len(text) if line_end < 0 else line_end
    findings: list[Finding] = []
    brackets = [(m.start(), m.end()) for m in _BRACKETS_RE.finditer(text, start, line_end)]
    in_brackets = Ranges(brackets)
    for s, e in brackets:
        findings.append(doc.finding(CHECK_ID, f"'{_short(doc.text[s:e])}' adds detail in brackets",
                                    _SUGGESTION.format(what="the bracketed detail"), s, e))
    for m in _EXAMPLE.finditer(text, start, line_end):
        if in_brackets.contains(m.start(), m.end()):
            continue  # "(e.g. weekly)" is one finding
        findings.append(doc.finding(CHECK_ID, f"'{doc.text[m.start():m.end()]}' adds examples to the story",
                                    _SUGGESTION.format(what="the examples"), m.start(), m.end()))
    findings += _extra_sentences(doc, start, story.extent.end, line_end)
    return findings


def _extra_sentences(doc: Document, start: int, story_end: int, line_end: int) -> list[Finding]:
    """Sentences inside the story or after it on the same line."""
    text = doc.masked
    found = []
    inner = sentence_end_before(text, start, story_end)
    if inner is not None and inner + 1 < story_end:
        s, e = trim(doc.text, start, inner + 1, ".!?")
        found.append(doc.finding(CHECK_ID, "The story is spread over several sentences",
                                 _SUGGESTION.format(what="the extra sentence"), s, e))
    tail_start = story_end
    while tail_start < line_end and text[tail_start] in ".!?":
        tail_start += 1
    s, e = trim(doc.text, tail_start, line_end)
    if len(_WORDS_RE.findall(text, s, e)) >= 3:
        found.append(doc.finding(CHECK_ID, f"'{_short(doc.text[s:e])}' is extra text after the story",
                                 _SUGGESTION.format(what="the extra text"), s, e))
    return found


def _short(quote: str, limit: int = 60) -> str:
    return quote if len(quote) <= limit else quote[: limit - 1] + "…"
