"""The review comment for each example ticket survives Jira: markdown -> wiki markup (what the bot posts) ->
markdown (what `jira2markdown` reads back) keeps every numbered item, every acceptance criterion, every
question and every row of the findings table, with the LLM (the fake Anthropic API) and offline, and no text
of the marker is visible.

The expected items come from the review itself (the validated structure, or the rules-only draft the
template lays out, and the findings), not from parsing the comment, so a conversion that drops or garbles
an item cannot also hide it from the test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from reqgate.handlers.jira.markup import markdown_to_wiki, wiki_to_markdown
from reqgate.handlers.publish import WIKI_STICKY_MARKER, is_sticky
from reqgate.pipeline.comment import VERDICT_TITLE
from reqgate.pipeline.config import Config
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.review import prepare, review, rules_draft
from reqgate.pipeline.schemas import RequirementPacket, ReviewResult, StructureOutput
from tests.fakes.fake_anthropic import FakeAnthropic

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.md"))
_CHECKLIST = re.compile(r"^\s*[-*] \[[ xX]\] (.+)$", re.MULTILINE)
_NUMBERED = re.compile(r"^\s*\d+\. (.+)$", re.MULTILINE)
_BULLET = re.compile(r"^\s*[-*] (?!\[[ xX]\])(.+)$", re.MULTILINE)
_TABLE_DIVIDER = re.compile(r"^\|[-:| ]+\|$")


def normalise(text: str) -> str:
    """Text as a reader sees it: no escapes, no emphasis or code marks, no repeated blanks, one quote style."""
    text = re.sub(r"\\(.)", r"\1", text)
    text = re.sub(r"[*_`]", "", text)
    text = text.replace("'", '"').replace("’", '"')
    return " ".join(text.split())


def checklist(md: str) -> list[str]:
    return [normalise(item) for item in _CHECKLIST.findall(md)]


def numbered(md: str) -> list[str]:
    return [normalise(item) for item in _NUMBERED.findall(md)]


def bullets(md: str) -> list[str]:
    return [normalise(item) for item in _BULLET.findall(md)]


def table_rows(md: str) -> list[list[str]]:
    """Each table row's cells, normalised; the divider row left out."""
    rows = [line.strip() for line in md.splitlines() if line.strip().startswith("|")]
    cells = [
        [normalise(cell) for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        for row in rows
        if not _TABLE_DIVIDER.match(row)
    ]
    # jira2markdown pads a header row with an empty cell when a body row has an escaped pipe; Jira does not.
    return [row[:-1] if row and not row[-1] and len(row) > 4 else row for row in cells]


def packet_of(path: Path) -> RequirementPacket:
    first, _, rest = path.read_text(encoding="utf-8").partition("\n")
    return RequirementPacket(source="jira", project="PROJ", key="PROJ-1", title=first.lstrip("# ").strip(),
                             body=rest.strip())


@dataclass
class Expected:
    criteria: list[str]
    questions: list[str]
    rows: list[list[str]]  # category, check id, mode, the start of the message


def expected(result: ReviewResult, draft: StructureOutput, config: Config) -> Expected:
    shown = [f for f in result.findings if f.mode != "off"][: config.limits.max_findings_shown]
    rows: list[list[str]] = []
    keys: list[tuple[str, ...]] = []
    for f in shown:
        key = (f.check_id, f.mode, f.message, f.span.quote if f.span and not f.redacted else "")
        if key not in keys:  # identical findings share a row
            keys.append(key)
            rows.append([f.category, normalise(f.check_id), f.mode, normalise(f.message)[:40]])
    return Expected(
        criteria=[normalise(item.text) for item in draft.prd.acceptance_criteria],
        questions=[normalise(question) for question in draft.prd.questions],
        rows=rows,
    )


def assert_survives_jira(md: str, want: Expected, to_wiki: Callable[[str], str] = markdown_to_wiki) -> None:
    wiki = to_wiki(md)
    back = wiki_to_markdown(wiki)

    # What Jira shows: wiki syntax, nothing it would print literally, the marker only as an invisible macro.
    assert wiki.startswith("h3. ReqGate: ") and is_sticky(wiki)
    for html in ("<details", "</details", "<summary", "<sub>", "<!--"):
        assert html not in wiki, html
    assert "reqgate:review" not in wiki and wiki.count(WIKI_STICKY_MARKER) == 1
    # jira2markdown does not know the anchor macro Jira renders as nothing; beyond it, no marker text.
    back = back.replace(WIKI_STICKY_MARKER, "").replace(" \n", "\n")
    assert "reqgate-review" not in back and "reqgate:review" not in back
    header = re.search(r"^### (ReqGate: .+)$", md, re.MULTILINE)
    assert header is not None
    assert re.search(rf"^#+ {re.escape(header.group(1))}\s*$", back, re.MULTILINE), header.group(1)

    # Every acceptance criterion is still a checklist item, in the same places.
    before, after = checklist(md), checklist(back)
    assert after == before
    for item in want.criteria:
        assert any(item in line for line in before), (item, before)  # the review did put it in
        assert any(item in line for line in after), (item, after)
    # Every question is asked once, visible or folded, and is still there.
    asked_before = numbered(md) + bullets(md)
    asked_after = numbered(back) + bullets(back)
    for question in want.questions:
        assert sum(question in line for line in asked_before) == 1, (question, asked_before)
        assert sum(question in line for line in asked_after) == 1, (question, asked_after)

    # The numbered asks, in order, and the folded ones.
    assert numbered(back) == numbered(md)
    assert bullets(back) == bullets(md)

    # The findings table, row by row, cell by cell.
    rows = table_rows(back)
    assert rows == table_rows(md)
    if want.rows:
        assert rows[0] == ["category", "check", "mode", "finding", "quote"]
        body = rows[1:]
        assert len(body) == len(want.rows)
        for (category, check_id, mode, message), row in zip(want.rows, body, strict=True):
            assert row[:3] == [category, check_id, mode] and row[3].startswith(message.rstrip("…")[:30]), row
    else:
        assert rows == []


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_offline_comment_round_trips(path: Path) -> None:
    config = load_default_config()
    packet = packet_of(path)
    result = review(packet, config, None)
    assert result.structure is None  # rules-only: the template lays out the draft below
    draft = rules_draft(prepare(packet, config))
    assert_survives_jira(result.comment_markdown, expected(result, draft, config))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_comment_written_with_the_llm_round_trips(path: Path, llm_client: LLMClient,
                                                  fake_anthropic: FakeAnthropic) -> None:
    config = load_default_config()
    packet = packet_of(path)
    result = review(packet, config, llm_client)
    if result.structure is None:
        # The guardrail kept the ticket from the LLM: the comment is the rules-only one, and says so.
        assert result.guardrail.rejected and fake_anthropic.requests == []
        draft = rules_draft(prepare(packet, config))
    else:
        assert len(fake_anthropic.requests) == 2 and not result.trace.fallbacks
        draft = result.structure
        typed = draft.prd.acceptance_criteria or draft.prd.bug or draft.prd.task or draft.prd.spike
        assert typed and draft.prd.questions
    assert_survives_jira(result.comment_markdown, expected(result, draft, config))


def test_the_examples_cover_both_verdicts_and_a_findings_table(llm_client: LLMClient) -> None:
    """Without this the checks above could pass on comments that have nothing to lose."""
    config = load_default_config()
    results = [review(packet_of(path), config, llm_client) for path in EXAMPLES]
    assert len(EXAMPLES) >= 5
    assert {r.decision.verdict for r in results} == set(VERDICT_TITLE)
    assert sum(bool(expected(r, r.structure, config).rows) for r in results if r.structure) >= 2
    assert sum(len(r.structure.prd.acceptance_criteria) for r in results if r.structure) >= 5


def test_a_lost_or_changed_item_is_noticed(llm_client: LLMClient) -> None:
    """The check itself: a wiki form that drops or changes one criterion, question or table row fails it."""
    config = load_default_config()
    for path in EXAMPLES:
        result = review(packet_of(path), config, llm_client)
        if result.structure is not None:
            want = expected(result, result.structure, config)
            if want.criteria and want.questions and want.rows:
                break
    else:
        pytest.fail("no example has criteria, questions and findings")
    md = result.comment_markdown
    assert_survives_jira(md, want)
    lines = markdown_to_wiki(md).splitlines()
    boxes = [n for n, line in enumerate(lines) if line.startswith("* ☐ ")]
    asks = [n for n, line in enumerate(lines) if line.startswith("# ")]
    rows = [n for n, line in enumerate(lines) if line.startswith("|") and not line.startswith("||")]
    assert len(boxes) == len(want.criteria) and len(rows) == len(want.rows) and asks
    # An ask dropped, a criterion changed, a row dropped (each round trip costs jira2markdown a second).
    criterion = next(n for n in boxes if want.criteria[0] in normalise(lines[n]))
    changes = {
        asks[0]: [],
        criterion: [re.sub(r"\w{4,}", "word", lines[criterion], count=1)],
        rows[-1]: [],
    }
    for n, replacement in changes.items():
        lossy = "\n".join(lines[:n] + replacement + lines[n + 1 :])
        with pytest.raises(AssertionError):
            assert_survives_jira(md, want, lambda _md, lossy=lossy: lossy)
