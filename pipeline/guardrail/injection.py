"""Prompt-injection screening: the built-in families and the configured patterns, matched on the normalised
view, reported in original offsets."""

from __future__ import annotations

import re
from functools import lru_cache

from reqgate.pipeline.config import InjectionSettings
from reqgate.pipeline.guardrail.injection_families import compiled_families
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
    gated += [(None, pattern) for pattern in compile_patterns(tuple(settings.patterns))]
    return _find(text, gated)


def find_injections(text: str, patterns: tuple[str, ...]) -> list[tuple[int, int]]:
    """Original-offset ranges of every match of `patterns` alone, overlapping matches merged, in text order."""
    return _find(text, [(None, pattern) for pattern in compile_patterns(patterns)])


def _find(text: str, gated: list[tuple[frozenset[str] | None, re.Pattern[str]]]) -> list[tuple[int, int]]:
    """Matches of each pattern whose trigger strings (None: always) occur in the normalised view."""
    if not gated or not text:
        return []
    view = normalize(text)
    present: dict[str, bool] = {}

    def occurs(trigger: str) -> bool:
        found = present.get(trigger)
        if found is None:
            found = present[trigger] = trigger in view.text
        return found

    ranges = []
    for triggers, pattern in gated:
        if triggers is not None and not any(occurs(trigger) for trigger in triggers):
            continue
        for match in pattern.finditer(view.text):
            if match.end() > match.start():
                ranges.append(view.to_original(match.start(), match.end()))
    return merge_ranges(ranges)


def merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
