"""Offset-preserving text helpers shared by the checks: decoding, masking of code and URLs, sentences."""

from __future__ import annotations

import bisect
import codecs
import re

# Code, URLs and HTML comments are not prose: placeholders or vague words inside them are not the PM's
# wording. Masking replaces them with spaces of the same length so every offset stays valid.
_MASK_RE = re.compile(
    r"```.*?(?:```|\Z)"  # fenced code (an unclosed fence runs to the end)
    r"|~~~.*?(?:~~~|\Z)"
    r"|\{(code|noformat)(?::[^}\n]*)?\}.*?(?:\{\1\}|\Z)"  # Jira wiki code blocks
    r"|<!--.*?(?:-->|\Z)"  # issue-template comments are hidden from readers
    r"|`[^`\n]+`"  # inline code
    r"|\{\{[^}\n]+\}\}"  # Jira monospace
    r"|\b(?:https?|ftp|file)://[^\s\"')\]]+"  # "<id>" slots in a URL are part of the URL
    r"|\bwww\.[^\s\"')\]]+",
    re.DOTALL | re.IGNORECASE,
)

# A sentence ends at ".", "!" or "?" followed by space or end, or at a line break, except a markdown soft
# wrap: a line that goes on in lower case continues the sentence. Abbreviations that carry a period do
# not end one.
_SENTENCE_END_RE = re.compile(
    r"(?=[.!?\n])(?:"  # fail fast on the other characters before the look-behinds run
    r"(?<!\b[eE]\.[gG])(?<!\b[iI]\.[eE])(?<!\betc)(?<!\bvs)(?<!\bapprox)(?<!\bcf)(?<!\bMr)(?<!\bDr)"
    r"[.!?]+(?=\s|$)"
    r"|\n(?![ \t]*[a-z(]))"
)

_MASK_MARKERS = ("`", "://", "www.", "{", "<!--", "~~~")
_TRIM_CHARS = " \t\r\n\f\v\u00a0\ufeff*_`,;:-–—•>"


def decode_bytes(data: bytes) -> str:
    """Decode a backlog file: UTF-8, else cp1252, which maps almost every byte; a leading BOM is dropped."""
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def mask(text: str) -> str:
    """The text with code, URLs and HTML comments blanked out (same length, same offsets)."""
    if not any(marker in text for marker in _MASK_MARKERS):
        return text
    return _MASK_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def trim(text: str, start: int, end: int, extra: str = "") -> tuple[int, int]:
    """Shrink [start, end) past surrounding whitespace, markdown emphasis and stray punctuation."""
    chars = _TRIM_CHARS + extra
    while start < end and text[start] in chars:
        start += 1
    while end > start and text[end - 1] in chars:
        end -= 1
    return start, end


class Sentences:
    """Sentence boundaries of a text, found once; lookups by offset are logarithmic."""

    def __init__(self, text: str):
        self._text_len = len(text)
        self._ends = [m.end() for m in _SENTENCE_END_RE.finditer(text)]

    def around(self, pos: int) -> tuple[int, int]:
        """Start and end offsets of the sentence holding `pos`."""
        i = bisect.bisect_right(self._ends, pos)
        start = self._ends[i - 1] if i > 0 else 0
        end = self._ends[i] if i < len(self._ends) else self._text_len
        return start, end



class Ranges:
    """Non-overlapping [start, end) ranges with a logarithmic containment test."""

    def __init__(self, ranges: list[tuple[int, int]]):
        self._ranges = sorted(ranges)
        self._starts = [start for start, _ in self._ranges]

    def contains(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start) - 1
        return i >= 0 and self._ranges[i][1] >= end


def sentence_end_before(text: str, start: int, limit: int) -> int | None:
    """Offset of the first sentence terminator in text[start:limit], or None."""
    m = _SENTENCE_END_RE.search(text, start, limit)
    return m.start() if m else None
