"""What every check reads: the text, its masked form, sentences, the parsed story, and a finding factory."""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from reqgate.pipeline.rules.sections import Heading, headings
from reqgate.pipeline.rules.story import ParsedStory, parse_story
from reqgate.pipeline.rules.text import Sentences, mask
from reqgate.pipeline.schemas import Category, Finding, Mode, Span, TicketType

Term = tuple[str, str]  # a `phrases` pattern and its suggestion
_WORD_START = r"(?<![\w-])"


@dataclass(frozen=True, eq=False)
class Lexicon:
    """Word lists, each with its suggestion, compiled into one pattern so a text is scanned once."""

    pattern: re.Pattern[str]
    suggestions: tuple[str, ...]


# Every term of a lexicon starts with a letter: testing that first fails at once at every other position,
# before the word-start test and the alternatives (about three times faster over prose).
_LETTER_FIRST = r"(?=[^\W\d_])"


def lexicon(terms: list[Term]) -> Lexicon:
    # One shared word-start test instead of one per list: the scan is the rules' hot loop.
    joined = "|".join(f"(?P<t{i}>{pattern.removeprefix(_WORD_START)})"
                      for i, (pattern, _) in enumerate(terms))
    return Lexicon(re.compile(f"{_LETTER_FIRST}{_WORD_START}(?:{joined})", re.IGNORECASE),
                   tuple(suggestion for _, suggestion in terms))


class Document:
    """One ticket text prepared once for all checks; expensive parts are computed on first use."""

    def __init__(self, text: str, ticket_type: TicketType = TicketType.other,
                 modes: Mapping[str, Mode] | None = None, categories: Mapping[str, Category] | None = None,
                 title_end: int = 0):
        self.text = text
        self.ticket_type = ticket_type
        self._modes = modes or {}
        self._categories = categories or {}
        # The title ends here; the body starts after the blank line that follows it.
        self.title_end = title_end
        self._hits: dict[int, tuple[list[int], list[tuple[int, int, str]]]] = {}

    @property
    def body_start(self) -> int:
        """Where the body starts: after the title and the blank line that follows it."""
        return min(len(self.text), self.title_end + 2) if self.title_end else 0

    @cached_property
    def masked(self) -> str:
        return mask(self.text)

    @cached_property
    def sentences(self) -> Sentences:
        return Sentences(self.masked)

    @cached_property
    def headings(self) -> list[Heading]:
        return headings(self.masked)

    @cached_property
    def story(self) -> ParsedStory | None:
        return parse_story(self.text)

    @property
    def story_like(self) -> bool:
        """A user story is present: "As a ..., I want ...", or any want in a ticket typed as a story."""
        story = self.story
        if story is None or story.want is None:
            return False
        return story.role is not None or self.ticket_type is TicketType.story

    def span(self, start: int, end: int) -> Span:
        return Span(quote=self.text[start:end], start=start, end=end)

    def finding(self, check_id: str, message: str, suggestion: str,
                start: int | None = None, end: int | None = None) -> Finding:
        span = self.span(start, end) if start is not None and end is not None else None
        return Finding(check_id=check_id, mode=self._modes.get(check_id, "warn"),
                       category=self._categories.get(check_id, "other"), message=message, span=span,
                       suggestion=suggestion)

    def term_findings(self, check_id: str, terms: Lexicon, start: int, end: int,
                      message: str) -> list[Finding]:
        """One finding per lexicon hit inside masked[start:end]; `message` is formatted with the quote."""
        starts, hits = self._lexicon_hits(terms)
        found: list[Finding] = []
        for i in range(bisect.bisect_left(starts, start), len(hits)):
            hit_start, hit_end, suggestion = hits[i]
            if hit_start >= end:
                break
            if hit_end <= end:
                quote = self.text[hit_start:hit_end]
                found.append(self.finding(check_id, message.format(quote=quote), suggestion,
                                          hit_start, hit_end))
        return found

    def scan(self, check_id: str, pattern: re.Pattern[str], start: int, end: int, message: str,
             suggestion: str) -> list[Finding]:
        """One finding per match of `pattern` in masked[start:end], for short ranges scanned once."""
        return [self.finding(check_id, message.format(quote=self.text[m.start():m.end()]), suggestion,
                             m.start(), m.end())
                for m in pattern.finditer(self.masked, start, end) if m.end() > m.start()]

    def _lexicon_hits(self, terms: Lexicon) -> tuple[list[int], list[tuple[int, int, str]]]:
        """Every hit of a lexicon in the whole masked text, found once and shared by all checks."""
        cached = self._hits.get(id(terms))
        if cached is None:
            hits = [(m.start(), m.end(), terms.suggestions[int(m.lastgroup[1:])])
                    for m in terms.pattern.finditer(self.masked) if m.lastgroup and m.end() > m.start()]
            cached = ([h[0] for h in hits], hits)
            self._hits[id(terms)] = cached
        return cached


def phrases(*alternatives: str, prefix: bool = False) -> str:
    """A pattern matching any of the phrases as whole words, to be compiled case-insensitively: by `words`,
    or by `lexicon` with the other terms of its list (compiling each term alone too would be wasted).

    With `prefix`, a phrase may also open a hyphenated compound ("AI-powered", "CNN-based").
    """
    after = r"(?![\w])" if prefix else r"(?![\w-])"
    return _WORD_START + "(?:" + "|".join(alternatives) + ")" + after


def words(*alternatives: str, prefix: bool = False) -> re.Pattern[str]:
    """`phrases` compiled, case-insensitive."""
    return re.compile(phrases(*alternatives, prefix=prefix), re.IGNORECASE)
