"""What every check reads: the text, its masked form, sentences, the parsed story, and a finding factory."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cached_property

from pipeline.rules.sections import Heading, headings
from pipeline.rules.story import ParsedStory, parse_story
from pipeline.rules.text import Sentences, mask
from pipeline.schemas import Finding, Mode, Span, TicketType

Term = tuple[re.Pattern[str], str]


class Document:
    """One ticket text prepared once for all checks; expensive parts are computed on first use."""

    def __init__(self, text: str, ticket_type: TicketType = TicketType.other,
                 modes: Mapping[str, Mode] | None = None):
        self.text = text
        self.ticket_type = ticket_type
        self._modes = modes or {}

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
        return Finding(check_id=check_id, mode=self._modes.get(check_id, "warn"), message=message,
                       span=span, suggestion=suggestion)

    def term_findings(self, check_id: str, terms: Iterable[Term], start: int, end: int,
                      message: str) -> list[Finding]:
        """One finding per lexicon hit in masked[start:end]; `message` is formatted with the quote."""
        found: list[Finding] = []
        for pattern, suggestion in terms:
            for m in pattern.finditer(self.masked, start, end):
                quote = self.text[m.start():m.end()]
                found.append(self.finding(check_id, message.format(quote=quote), suggestion,
                                          m.start(), m.end()))
        return found


def words(*alternatives: str, prefix: bool = False) -> re.Pattern[str]:
    """A case-insensitive pattern matching any of the phrases as whole words.

    With `prefix`, a phrase may also open a hyphenated compound ("AI-powered", "CNN-based").
    """
    after = r"(?![\w])" if prefix else r"(?![\w-])"
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + ")" + after, re.IGNORECASE)
