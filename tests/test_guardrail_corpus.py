"""The labelled corpus, both ways: every marked value redacted exactly, no negative line touched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.guardrail import mask, screen
from reqgate.pipeline.guardrail.detect import KIND_BY_NAME, detect
from reqgate.pipeline.schemas import RequirementPacket

CORPUS = Path(__file__).parent / "corpus" / "guardrail"
_MARK = re.compile(r"⟦([a-z_]+)\|(.*?)⟧", re.DOTALL)


def _unmark(line: str) -> tuple[str, list[tuple[int, int, str]]]:
    """The line without its marks, and (start, end, kind) of every marked value in it."""
    pieces: list[str] = []
    expected = []
    position = 0
    for match in _MARK.finditer(line):
        pieces.append(line[position:match.start()])
        start = sum(map(len, pieces))
        pieces.append(match.group(2))
        expected.append((start, start + len(match.group(2)), match.group(1)))
        position = match.end()
    pieces.append(line[position:])
    return "".join(pieces), expected


def _load(name: str) -> list[str]:
    return yaml.safe_load((CORPUS / name).read_text(encoding="utf-8"))


POSITIVE = [_unmark(line) for line in _load("positive.yml")]
NEGATIVE = _load("negative.yml")
CONFIG = load_default_config()


def test_corpus_is_substantial_and_covers_every_kind():
    assert len(POSITIVE) >= 100 and len(NEGATIVE) >= 100
    assert {kind for _, expected in POSITIVE for *_, kind in expected} == set(KIND_BY_NAME)
    assert all(expected for _, expected in POSITIVE)


@pytest.mark.parametrize(("text", "expected"), POSITIVE, ids=[t[:40] for t, _ in POSITIVE])
def test_positive_values_are_redacted_exactly(text, expected):
    hits = detect(text, KIND_BY_NAME)
    assert [(h.start, h.end, h.kind) for h in hits] == expected
    masked = mask(text)
    for start, end, kind in expected:
        assert text[start:end] not in masked
        assert f"[REDACTED:{kind}]" in masked


@pytest.mark.parametrize(("text", "expected"), POSITIVE, ids=[t[:40] for t, _ in POSITIVE])
def test_positive_values_never_leave_through_the_report(text, expected):
    report = screen(RequirementPacket(title="Ticket", body=text), CONFIG)
    dumped = report.model_dump_json()
    for start, end, _ in expected:
        value = text[start:end]
        assert value not in dumped
        assert all(value not in f.message + (f.suggestion or "") for f in report.findings)
    assert report.redaction_count == len(report.redacted_ranges) == len(expected)


@pytest.mark.parametrize("text", NEGATIVE, ids=[t[:40] for t in NEGATIVE])
def test_negative_lines_are_untouched(text):
    assert detect(text, KIND_BY_NAME) == []
    assert mask(text) == text
    report = screen(RequirementPacket(title="Ticket", body=text), CONFIG)
    assert report.redacted.body == text and report.redaction_count == 0


def test_masking_is_idempotent_on_the_corpus():
    for text, _ in POSITIVE:
        once = mask(text)
        assert mask(once) == once
