"""Prompt-injection screening: the built-in families and the configured patterns, matched on the normalised
view, reported in original offsets."""

from __future__ import annotations

import base64
import re
from bisect import bisect_left
from functools import lru_cache

from reqgate.pipeline.config import InjectionSettings
from reqgate.pipeline.guardrail.injection_families import Gated, Trigger, compiled_families
from reqgate.pipeline.guardrail.normalize import normalize


@lru_cache(maxsize=32)
def compile_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compiled patterns; one that does not compile is skipped so that screening never fails at review time.

    The config model rejects such patterns when a file is loaded; this only matters for configs built
    without validation.
    """
    compiled = []
    for pattern in patterns:
        # The normalised view is lower case already; IGNORECASE is only needed for a pattern that spells a
        # capital (or an escape such as \S), and it costs a fourfold slower scan.
        flags = re.IGNORECASE if any(c.isupper() for c in pattern) else 0
        try:
            compiled.append(re.compile(pattern, flags))
        except (re.error, OverflowError, RecursionError):
            continue
    return tuple(compiled)


def detect_injections(text: str, settings: InjectionSettings) -> list[tuple[int, int]]:
    """Original-offset ranges of the enabled families' and the configured patterns' matches, merged."""
    gated = list(compiled_families(tuple(settings.families)))
    gated += [Gated((), pattern.pattern, pattern.flags) for pattern in compile_patterns(tuple(settings.patterns))]
    return merge_ranges(_find(text, gated) + _encoded(text, gated))


# Instructions smuggled in base64, hex or 8-bit binary: each such token is decoded (its first part only, so
# work stays bounded) and screened like text; the whole token is the passage reported.
_ENCODED = (
    (re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}"), "base64"),
    (re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Fa-f])"), "hex"),
    (re.compile(r"(?<![01])(?:[01]{8} ){7,}[01]{8}(?![01])"), "binary"),
)
_MAX_DECODED_CHARS = 8192


def _decode(token: str, kind: str) -> str | None:
    token = token[:_MAX_DECODED_CHARS]
    try:
        if kind == "base64":
            raw = base64.b64decode(token[: len(token) // 4 * 4])
        elif kind == "hex":
            raw = bytes.fromhex(token[: len(token) // 2 * 2])
        else:
            raw = bytes(int(byte, 2) for byte in token.split())
        decoded = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    # Random bytes (an image, a hash) seldom decode as UTF-8 at all; text is mostly printable.
    printable = sum(char.isprintable() or char.isspace() for char in decoded)
    return decoded if decoded and printable >= 0.9 * len(decoded) else None


def _encoded(text: str, gated: list[Gated]) -> list[tuple[int, int]]:
    ranges = []
    for pattern, kind in _ENCODED:
        for match in pattern.finditer(text):
            decoded = _decode(match.group(), kind)
            if decoded and _find(decoded, gated):
                ranges.append(match.span())
    return ranges


def _find(text: str, gated: list[Gated]) -> list[tuple[int, int]]:
    """Matches of each pattern of which one trigger string of every set occurs in the normalised view."""
    if not gated or not text:
        return []
    view = normalize(text)
    words = _Words(view.text)
    ranges = []
    for candidate in gated:
        if not all(any(words.has(trigger) for trigger in group) for group in candidate.triggers):
            continue
        for match in candidate.pattern.finditer(view.text):
            if match.end() > match.start():
                ranges.append(view.to_original(match.start(), match.end()))
    return merge_ranges(ranges)


class _Words:
    """Answers "could this trigger string occur in the text?" from the text's distinct words, which for long
    or repetitive text is far cheaper than scanning the text once per string."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._sorted = sorted(set(_WORD_RUN.findall(text)))
        self._joined = " ".join(self._sorted)
        self._seen: dict[Trigger, bool] = {}

    def has(self, trigger: Trigger) -> bool:
        found = self._seen.get(trigger)
        if found is None:
            found = self._seen[trigger] = self._has(*trigger)
        return found

    def _begins_a_word(self, part: str) -> bool:
        index = bisect_left(self._sorted, part)
        return index < len(self._sorted) and self._sorted[index].startswith(part)

    def _has(self, string: str, parts: tuple[str, ...], first_begins: bool) -> bool:
        if not parts:
            return string in self._text
        # A part after a non-word character begins a word of the text; the first one may otherwise sit
        # anywhere inside a word.
        if not (self._begins_a_word(parts[0]) if first_begins else parts[0] in self._joined):
            return False
        if not all(self._begins_a_word(part) for part in parts[1:]):
            return False
        return len(parts) == 1 or string in self._text


_WORD_RUN = re.compile(r"\w+")


def merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
