"""A matching view of ticket text that look-alike tricks cannot dodge, with a map back to original offsets.

Injection patterns are matched on this view so that "ｉｇｎｏｒｅ", "іgnоrе" (Cyrillic), "ig\u200bnore" and
"ignore   \n previous" all read as "ignore previous", while findings still quote the ticket verbatim.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

# Letters of other scripts drawn like Latin ones. NFKD leaves them alone (they are letters in their own
# right, not compatibility variants), so they need an explicit map. Upper case is mapped before folding
# because some pairs differ by case: Greek capital eta looks like H, its small form like n.
_CONFUSABLES = str.maketrans({
    # Cyrillic capitals
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Ӏ": "I",
    # Cyrillic small
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "х": "x", "у": "y", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "ү": "y", "ѵ": "v", "ԍ": "g", "ь": "b", "п": "n", "г": "r", "ё": "e", "ї": "i",
    # Greek capitals
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Greek small
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ω": "w", "γ": "y", "ϲ": "c", "ϳ": "j",
    # Latin letters that pass for others
    "ı": "i", "ȷ": "j", "ɡ": "g", "ɑ": "a", "ɩ": "i", "ʀ": "r", "ꞇ": "t", "ſ": "s",
})

# Characters that render as nothing: a word split by them must still match.
_INVISIBLE = frozenset("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")

# Printable ASCII needs no work except runs of spaces; every other run (control characters, line breaks,
# anything non-ASCII, with the spaces around it) is folded one character at a time.
_SPECIAL = re.compile(r"(?: ?[^\x20-\x7e]|  )[^\x21-\x7e]*")


@lru_cache(maxsize=8192)
def _fold(char: str) -> str:
    """The matching form of one character: "" for invisible ones, " " for any space, else folded letters."""
    if char in _INVISIBLE or unicodedata.category(char) in ("Cf", "Mn", "Me"):
        return ""
    if char.isspace():
        return " "
    folded = unicodedata.normalize("NFKD", char.translate(_CONFUSABLES)).casefold()
    # Casefolding can bring combining marks back (capital I with dot above), so drop them afterwards.
    folded = "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))
    return folded.translate(_CONFUSABLES)


@dataclass(frozen=True)
class NormalizedText:
    """`text` plus, per output segment, where it starts in `text` and which original slice produced it."""

    text: str
    norm_starts: tuple[int, ...]
    orig_starts: tuple[int, ...]
    orig_ends: tuple[int, ...]
    # A verbatim segment was copied unchanged, so offsets inside it map one to one.
    verbatim: tuple[bool, ...]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of the normalised slice `[start, end)` (non-empty)."""
        i = bisect_right(self.norm_starts, start) - 1
        j = bisect_right(self.norm_starts, end - 1) - 1
        orig_start = self.orig_starts[i] + (start - self.norm_starts[i]) if self.verbatim[i] else self.orig_starts[i]
        orig_end = self.orig_starts[j] + (end - self.norm_starts[j]) if self.verbatim[j] else self.orig_ends[j]
        return orig_start, orig_end


def normalize(text: str) -> NormalizedText:
    parts: list[str] = []
    norm_starts: list[int] = []
    orig_starts: list[int] = []
    orig_ends: list[int] = []
    verbatim: list[bool] = []
    size = 0
    last_space = True  # leading whitespace is dropped as if a space had just been written

    def emit(piece: str, orig_start: int, orig_end: int, copied: bool) -> None:
        nonlocal size, last_space
        parts.append(piece)
        norm_starts.append(size)
        orig_starts.append(orig_start)
        orig_ends.append(orig_end)
        verbatim.append(copied)
        size += len(piece)
        last_space = piece.endswith(" ")

    position = 0
    for run in _SPECIAL.finditer(text):
        if run.start() > position:
            emit(text[position:run.start()], position, run.start(), True)
        for offset, char in enumerate(run.group(), run.start()):
            piece = _fold(char)
            if piece == " " and last_space:
                continue
            if piece:
                emit(piece, offset, offset + 1, False)
        position = run.end()
    if position < len(text):
        emit(text[position:], position, len(text), True)
    return NormalizedText("".join(parts), tuple(norm_starts), tuple(orig_starts), tuple(orig_ends),
                          tuple(verbatim))
