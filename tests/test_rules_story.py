"""parse_story: the user-story parser the story checks and the bench rely on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reqgate.pipeline.rules import ParsedStory, parse_story
from reqgate.pipeline.rules.text import decode_bytes

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
BACKLOGS = DATA / "dalpiaz-user-stories"


def parts(text: str) -> tuple[str | None, str | None, str | None]:
    story = parse_story(text)
    assert story is not None
    return tuple(p.quote if p else None for p in (story.role, story.want, story.benefit))  # type: ignore[return-value]


def assert_spans_slice(text: str, story: ParsedStory) -> None:
    for span in (story.role, story.want, story.benefit, story.extent):
        if span is not None:
            assert text[span.start:span.end] == span.quote


@pytest.mark.parametrize(("text", "expected"), [
    ("As a user, I want to log in, so that I see my data.", ("user", "log in", "I see my data")),
    ("As an admin I want to ban users so that the forum stays civil",
     ("admin", "ban users", "the forum stays civil")),
    ("As the owner I need to see costs so I can budget.", ("owner", "see costs", "I can budget")),
    ("As a moderator, I'd like to reset a game, so that we can start again.",
     ("moderator", "reset a game", "we can start again")),
    ("As a reviewer, I would like to comment on a line in order to explain my concern.",
     ("reviewer", "comment on a line", "explain my concern")),
    ("As a player, I can undo my last move.", ("player", "undo my last move", None)),
    ("As a user, I am able to export my data, so that I can switch providers.",
     ("user", "export my data", "I can switch providers")),
    ("As a user, I want to be able to print receipts.", ("user", "print receipts", None)),
    ("As a user, I don't want to see ads.", ("user", "don't want to see ads", None)),
    ("As an user i want to see charts", ("user", "see charts", None)),
    ("As a Developer , I want tests to run in CI.", ("Developer", "tests to run in CI", None)),
])
def test_connextra_variants(text: str, expected: tuple[str | None, ...]) -> None:
    assert parts(text) == expected
    story = parse_story(text)
    assert story is not None
    assert_spans_slice(text, story)


def test_bom_and_bullets_and_extra_whitespace() -> None:
    text = "\ufeff  - As   a   busy parent ,   I   want   reminders   so   that   I   do not forget."
    role, want, benefit = parts(text)
    assert (role, want, benefit) == ("busy parent", "reminders", "I   do not forget")


@pytest.mark.parametrize("bullet", ["- ", "* ", "• ", "1. ", "2) ", "> "])
def test_line_leading_bullets(bullet: str) -> None:
    assert parts(f"{bullet}As a buyer, I want to save my cart, so that I can buy later.") == (
        "buyer", "save my cart", "I can buy later")


def test_cp1252_decoded_text() -> None:
    raw = b"As a moderator, I\x92d like to see \x93all\x94 items, so that I can plan\xad ahead."
    text = decode_bytes(raw)
    role, want, benefit = parts(text)
    assert role == "moderator"
    assert want == "see “all” items"
    assert benefit is not None and benefit.startswith("I can plan")


def test_decode_bytes_prefers_utf8_and_drops_the_bom() -> None:
    assert decode_bytes("\ufeffAs a café owner".encode()) == "As a café owner"
    assert decode_bytes(b"caf\xe9") == "café"


def test_story_over_several_lines_with_markdown_emphasis() -> None:
    text = "**As a** shopper\n**I want** to save my cart\n**So that** I can buy later"
    assert parts(text) == ("shopper", "save my cart", "I can buy later")


def test_story_inside_a_ticket_with_other_sentences() -> None:
    text = "Cart\n\nCarts get lost. As a shopper, I want to save my cart, so that I can buy later. Thanks!"
    story = parse_story(text)
    assert story is not None
    assert (story.role.quote, story.want.quote, story.benefit.quote) == (  # type: ignore[union-attr]
        "shopper", "save my cart", "I can buy later")
    assert story.extent.quote == "As a shopper, I want to save my cart, so that I can buy later"


def test_benefit_in_a_later_sentence_is_not_the_story_benefit() -> None:
    assert parts("As a user, I want to export data. Other teams do it so that they can audit.") == (
        "user", "export data", None)


def test_want_without_role_and_phrases_that_are_not_roles() -> None:
    assert parts("I want to save my cart so that I can buy later.") == (
        None, "save my cart", "I can buy later")
    assert parts("As a result, we need to rethink. As an analyst, I want charts.") == (
        "analyst", "charts", None)


def test_no_story() -> None:
    assert parse_story("") is None
    assert parse_story("Fix the flaky login test.") is None


def test_backlogs_parse_with_role_and_want() -> None:
    """>= 95% of the real backlog lines starting with "As a/an/the" (cp1252 and BOM files included)."""
    parsed = total = 0
    for path in sorted(BACKLOGS.glob("*.txt")):
        text = decode_bytes(path.read_bytes())
        assert "\ufeff" not in text[:1]
        for line in text.splitlines():
            if re.match(r"\s*as\s+(?:an?|the)\b", line, re.IGNORECASE):
                total += 1
                story = parse_story(line)
                if story is not None and story.role is not None and story.want is not None:
                    parsed += 1
                    assert_spans_slice(line, story)
    assert total > 800
    assert parsed / total >= 0.95
