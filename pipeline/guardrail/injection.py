"""Prompt-injection screening: the built-in families and the configured patterns, matched on the normalised
view, reported in original offsets."""

from __future__ import annotations

import base64
import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from reqgate.pipeline.config import InjectionSettings
from reqgate.pipeline.guardrail.budget import capped
from reqgate.pipeline.guardrail.injection_families import Gated, Trigger, compiled_families
from reqgate.pipeline.guardrail.normalize import normalize
from reqgate.pipeline.guardrail.shapes import code_ranges, inside


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
    plan = _plan(compiled_families(tuple(settings.families)) + _configured(tuple(settings.patterns)))
    return merge_ranges(_find(text, plan) + _encoded(text, plan) + _spelled(text, plan))


@lru_cache(maxsize=32)
def _configured(patterns: tuple[str, ...]) -> tuple[Gated, ...]:
    """The configured patterns, gated by nothing; the same objects every time, so the plan is cached."""
    return tuple(Gated((), pattern.pattern, pattern.flags) for pattern in compile_patterns(patterns))


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


def _encoded(text: str, plan: _Plan) -> list[tuple[int, int]]:
    ranges = []
    for pattern, kind in _ENCODED:
        for match in pattern.finditer(text):
            decoded = _decode(match.group(), kind)
            if decoded and _find(decoded, plan):
                ranges.append(match.span())
    return ranges


# Words spelled out one letter at a time to slip past word patterns: "I|g|n|o|r|e| |a|l|l", "i g n o r e  a l l",
# "시@스@템". Within such a run the commonest separator joins letters and any other one parts words.
_SPELLED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ |@*.\-_~+/^#]{1,3}){4,}[^\W\d_](?![^\W\d_])")
_LETTER = re.compile(r"[^\W\d_]")


def _spelled(text: str, plan: _Plan) -> list[tuple[int, int]]:
    """Passages of `text` flagged once its spelled-out runs are written as words."""
    runs = list(capped(_SPELLED.finditer(text)))
    if not runs:
        return []
    joined: list[str] = []
    origin: list[int] = []  # the original offset of each character of `joined`
    position = 0
    for run in runs:
        joined.append(text[position:run.start()])
        origin.extend(range(position, run.start()))
        letters = list(_LETTER.finditer(text, run.start(), run.end()))
        gaps = [text[a.end():b.start()] for a, b in pairwise(letters)]
        counts = Counter(gaps)
        most = max(counts.values())
        # The first of the commonest, so that every process joins a tie the same way.
        joiner = next(gap for gap in gaps if counts[gap] == most)
        for letter, gap in zip(letters, [*gaps, joiner], strict=True):
            joined.append(letter.group())
            origin.append(letter.start())
            if gap != joiner:
                joined.append(" ")
                origin.append(letter.end())
        position = run.end()
    joined.append(text[position:])
    origin.extend(range(position, len(text)))
    origin.append(len(text))
    return [(origin[start], origin[end - 1] + 1) for start, end in _find("".join(joined), plan)]


def _find(text: str, plan: _Plan) -> list[tuple[int, int]]:
    """Matches of each pattern of which one trigger string of every set occurs in the normalised view."""
    if not plan.candidates or not text:
        return []
    view = normalize(text)
    words = _Words(view.text, plan.lengths)
    ranges = []
    code: list[tuple[int, int]] | None = None
    # Written out rather than all(any(...)): this loop runs for every pattern of every text screened.
    for candidate, groups in plan.candidates:
        for group, first_words in groups:
            if first_words is not None and first_words.isdisjoint(words.prefixes):
                break
            if not words.any_of(group):
                break
        else:
            for match in candidate.pattern.finditer(view.text):
                if match.end() > match.start():
                    start, end = view.to_original(match.start(), match.end())
                    if candidate.mention_in_code:
                        code = code_ranges(text, closed=True) if code is None else code
                        if inside(code, start, end):
                            continue
                    ranges.append((start, end))
    return merge_ranges(ranges)


@dataclass(frozen=True)
class _Plan:
    """Each pattern's trigger sets, each with the word beginnings one of its triggers needs (None when a
    trigger needs none), and the lengths of those beginnings: most sets of most texts are ruled out by one
    set operation against the beginnings of the text's words."""

    candidates: tuple[tuple[Gated, tuple[tuple[tuple[Trigger, ...], frozenset[str] | None], ...]], ...]
    lengths: frozenset[int]


# Keyed by the Gated objects themselves (identity): the families' are cached by compiled_families, so the
# plan is built once per families setting; a configured pattern has no trigger sets and costs nothing here.
@lru_cache(maxsize=32)
def _plan(gated: tuple[Gated, ...]) -> _Plan:
    candidates = []
    lengths: set[int] = set()
    for candidate in gated:
        groups = []
        for group in candidate.triggers:
            keys = [_word_start_key(trigger) for trigger in group]
            first_words = None if None in keys else frozenset(key for key in keys if key is not None)
            lengths.update(map(len, first_words or ()))
            groups.append((group, first_words))
        # The sets a set operation can rule out go first: one of them failing settles the pattern.
        candidates.append((candidate, tuple(sorted(groups, key=lambda item: item[1] is None))))
    return _Plan(tuple(candidates), frozenset(lengths))


# Word beginnings are compared on at most this many characters: enough to tell most trigger words apart,
# few enough that listing the beginnings of a text's words stays cheap.
_KEY_CHARS = 4


def _word_start_key(trigger: Trigger) -> str | None:
    """The beginning of a part of the trigger that must begin a word of the text, if any (see
    _Words._has)."""
    _, parts, first_begins = trigger
    if parts and first_begins:
        return parts[0][:_KEY_CHARS]
    return parts[1][:_KEY_CHARS] if len(parts) > 1 else None


class _Words:
    """Answers "could one of these trigger strings occur in the text?" from the text's distinct words, which
    for long or repetitive text is far cheaper than scanning the text once per string."""

    def __init__(self, text: str, lengths: frozenset[int]) -> None:
        self._text = text
        distinct = set(_WORD_RUN.findall(text))
        self._sorted = sorted(distinct)
        self._joined = " ".join(self._sorted)
        # Every beginning of a word of the text, of the lengths the plan's word beginnings have.
        self.prefixes = {word[:n] for word in distinct for n in lengths if n <= len(word)}
        self._groups: dict[tuple[Trigger, ...], bool] = {}
        self._seen: dict[Trigger, bool] = {}

    def any_of(self, group: tuple[Trigger, ...]) -> bool:
        found = self._groups.get(group)
        if found is None:
            found = self._groups[group] = any(self.has(trigger) for trigger in group)
        return found

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
