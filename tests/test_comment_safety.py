"""Nothing the ticket or the model writes acts through the comment: the sanitiser, then the whole pipeline
with a fake model that writes hostile text into every free-text field and its markdown (GitHub and Jira)."""

from __future__ import annotations

import re
import time

import pytest

from reqgate.handlers.jira.markup import markdown_to_wiki
from reqgate.pipeline.comment_safety import safe_inline
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.markdown_safety import safe_markdown
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import RequirementPacket, ReviewResult
from tests.comment_safety_support import (
    HOSTILE,
    assert_inert_markdown,
    assert_inert_wiki,
    hostile_markdown,
    hostile_script,
)
from tests.fakes.fake_anthropic import FakeAnthropic, Reply

TICKET_BODY = (
    "As a workspace admin, I want to export all tasks to a CSV file, so that I can report on them.\n\n"
    "## Acceptance criteria\n- [ ] The export has one row per task.\n\n" + HOSTILE
)


def _packet(source: str = "github") -> RequirementPacket:
    return RequirementPacket(source=source, project="acme/app", key="7", title="Export tasks @everyone",
                             body=TICKET_BODY, url="https://github.com/acme/app/issues/7")


def _header(result: ReviewResult) -> str:
    return result.comment_markdown.splitlines()[1]


@pytest.mark.parametrize("text, absent, present", [
    ("see https://evil.example/x.", ["](", "<http"], ["`hxxps://evil.example/x`"]),
    ("ping @everyone and @acme/team", [" @everyone", " @acme"], ["`@everyone`", "`@acme/team`"]),
    ("mail bob@evil.example", [" bob@"], ["`bob@evil.example`"]),
    ("![x](https://evil.example/t.png)", ["!["], ["\\!\\[x\\]"]),
    ("<img src=x> <script>", [" <img", " <script"], ["\\<img"]),
    ("ReqGate: ✅ Ready, score 100/100", ["✅", "100/100", "Ready"], ["(verdict removed)", "(score removed)"]),
    ("Verdict: Ready", ["Verdict: Ready"], ["(verdict removed)"]),
    ("(/) h1. big", [" (/)", " h1. "], ["`(/)`", "`h1.`"]),
    ("www.evil.example/a and other/repo#3", [" www.", " other/repo"], ["`www.evil.example/a`", "`other/repo#3`"]),
])
def test_safe_inline_neutralises_each_kind(text: str, absent: list[str], present: list[str]) -> None:
    out = safe_inline(text)
    for piece in absent:
        assert piece not in " " + out, (piece, out)
    for piece in present:
        assert piece in out, (piece, out)


def test_safe_markdown_keeps_harmless_structure_and_drops_the_rest() -> None:
    md = ("# Heading\n\n**bold** and _em_\n\n- [ ] a task\n- item with [a link](https://evil.example/l)\n\n"
          "| a | b |\n|---|---|\n| 1 | @here |\n\n```\ncurl https://evil.example\n```\n\n<div>raw</div>\n")
    out = safe_markdown(md)
    assert out.startswith("**Heading**") and "**bold** and _em_" in out and "- [ ] a task" in out
    assert "a link (`hxxps://evil.example/l`)" in out and re.search(r"\| 1 +\| `@here` \|", out)
    assert "```\ncurl https://evil.example\n```" in out  # code stays code: GitHub links nothing in it
    assert "`<div>raw</div>`" in out and "<div>" not in out.replace("`<div>raw</div>`", "")


def _seconds(fn, value: str) -> float:
    """The best of three runs: a loaded machine slows some runs, never speeds one up."""
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        fn(value)
        runs.append(time.perf_counter() - started)
    return min(runs)


@pytest.mark.parametrize("unit", ["@", "a", "http://", "x/", "1", "verdict ", "[](", "`", "<a ", "www."])
def test_sanitiser_is_linear_on_hostile_lengths(unit: str) -> None:
    """Four times the hostile value takes about four times as long (quadratic backtracking would take
    sixteen), and 100 KiB stays around a second; in the comment every untrusted line is cut to a few hundred
    characters first anyway."""
    small, big = unit * (25_000 // len(unit)), unit * (100_000 // len(unit))
    short, long = _seconds(safe_inline, small), _seconds(safe_inline, big)
    assert long < 5.0 and long < 10 * short + 0.05, (unit, short, long)
    assert _seconds(lambda v: safe_inline(v, 240), big) < 0.05


def test_safe_markdown_of_a_long_draft_is_quick() -> None:
    assert _seconds(safe_markdown, ("word @x https://e.example/ " * 300 + "\n\n") * 10) < 5


def test_hostile_ticket_rules_only_comment_is_inert() -> None:
    result = review(_packet(), load_default_config(), None)
    assert_inert_markdown(result.comment_markdown, _header(result))
    assert_inert_wiki(markdown_to_wiki(result.comment_markdown))


def test_hostile_model_in_every_field_and_its_markdown_is_inert(llm_client: LLMClient,
                                                                fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(*hostile_script())
    result = review(_packet(), load_default_config(), llm_client)
    assert result.structure is not None and "Which formats?" in result.structure.prd.questions[0]
    # The model's words did reach the comment (as inert text), through its draft and its questions.
    assert "Which formats?" in result.comment_markdown and "`@everyone`" in result.comment_markdown
    assert_inert_markdown(result.comment_markdown, _header(result))
    assert_inert_wiki(markdown_to_wiki(result.comment_markdown))


def test_hostile_model_draft_through_call_two_is_inert(llm_client: LLMClient,
                                                       fake_anthropic: FakeAnthropic) -> None:
    # A plain call 1, so that call 2's hostile markdown passes the binding check and is used as written.
    fake_anthropic.script(Reply.default(), hostile_markdown, hostile_markdown)
    result = review(_packet("jira"), load_default_config(), llm_client)
    assert "render_template" not in result.trace.fallbacks  # the model's own markdown was used
    assert "fake fold" in result.comment_markdown
    assert_inert_markdown(result.comment_markdown, _header(result))
    assert_inert_wiki(markdown_to_wiki(result.comment_markdown))
