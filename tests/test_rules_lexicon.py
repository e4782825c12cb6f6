"""The lexicons' letter-first shortcut finds exactly what the full pattern finds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reqgate.pipeline.rules import acceptance, unmeasurable, vague
from reqgate.pipeline.rules.document import _LETTER_FIRST, Lexicon

ROOT = Path(__file__).resolve().parents[1]
LEXICONS = {"vague": vague.LEXICON, "unmeasurable": unmeasurable.LEXICON, "weak": acceptance._WEAK_LEXICON}
# Prose full of the lexicons' words, in every position a word can take: after punctuation, markup, digits.
TEXT = "\n".join(path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *sorted((ROOT / "examples").glob("*.md"))])
TEXT += "\n(some) 'various' *fast* _etc._ 3fast -easy [as needed] \"user-friendly\" #simple 24/7 real-time."


def hits(pattern: re.Pattern[str]) -> list[tuple[int, int, str | None]]:
    return [(m.start(), m.end(), m.lastgroup) for m in pattern.finditer(TEXT)]


@pytest.mark.parametrize("name", sorted(LEXICONS))
def test_the_letter_first_shortcut_changes_no_hit(name: str) -> None:
    lexicon: Lexicon = LEXICONS[name]
    full = re.compile(lexicon.pattern.pattern.removeprefix(_LETTER_FIRST), re.IGNORECASE)
    assert full.pattern != lexicon.pattern.pattern
    found = hits(lexicon.pattern)
    assert found and found == hits(full)
