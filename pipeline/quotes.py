"""The model's quotes found again in the ticket, whatever their case and whitespace: evidence is only what the
ticket itself says. Used by call 1's verification and by the findings merged from the model's answer."""

from __future__ import annotations

from reqgate.pipeline.schemas import Span


class Quotes:
    """Finds quotes in the ticket regardless of case and whitespace, and returns the ticket's own span."""

    def __init__(self, text: str):
        chars: list[str] = []
        origin: list[int] = []
        for index, char in enumerate(text):
            if char.isspace():
                if chars and chars[-1] != " ":
                    chars.append(" ")
                    origin.append(index)
                continue
            for folded in char.casefold():
                chars.append(folded)
                origin.append(index)
        self._text = text
        self._norm = "".join(chars)
        self._origin = origin

    @staticmethod
    def _normalise(quote: str) -> str:
        return " ".join(quote.casefold().split())

    def locate(self, quote: str | None) -> Span | None:
        """The ticket's own words matching `quote`, with their offsets in the ticket text."""
        if not quote:
            return None
        candidates = [quote.strip(), quote.strip().strip("\"'“”‘’«»").strip()]
        for candidate in candidates:
            needle = self._normalise(candidate)
            if not needle:
                continue
            at = self._norm.find(needle)
            if at >= 0:
                start, end = self._origin[at], self._origin[at + len(needle) - 1] + 1
                return Span(quote=self._text[start:end], start=start, end=end)
        return None

    def find(self, quote: str | None) -> str | None:
        span = self.locate(quote)
        return span.quote if span else None
