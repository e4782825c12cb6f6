"""Prompt-injection screening: configured patterns matched on the normalised view, reported in original offsets."""

from __future__ import annotations

import re
from functools import lru_cache

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


def find_injections(text: str, patterns: tuple[str, ...]) -> list[tuple[int, int]]:
    """Original-offset ranges of every pattern match, overlapping matches merged, in text order."""
    compiled = compile_patterns(patterns)
    if not compiled or not text:
        return []
    view = normalize(text)
    ranges = []
    for pattern in compiled:
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
