"""The whole review through the real anthropic client against the fake Messages API on 127.0.0.1."""

import io
import json
import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reqgate.bot import logging as bot_logging
from reqgate.bot.cli import read_ticket
from reqgate.pipeline.cache import MemoryCache
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.review import prepare, review
from reqgate.pipeline.schemas import RequirementPacket
from tests.fakes.fake_anthropic import Reply

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LEAKED = ["ghp_R8c2XbQmZt7LkP4wN9sVd3HyFj6Ua1Ge0Ko5", "dana.miller@example.com"]


def example(name: str) -> RequirementPacket:
    return read_ticket(str(EXAMPLES / name), None)


def test_fresh_review_makes_two_calls_and_an_unchanged_one_none(fake_anthropic, llm_client, fast_llm_config):
    cache = MemoryCache()
    first = review(example("good-story.md"), fast_llm_config, llm_client, cache=cache)
    assert len(fake_anthropic.requests) == 2
    assert [c.call for c in first.trace.llm_calls] == ["structure", "render"]
    assert first.structure is not None and not first.trace.fallbacks
    assert "Who is the primary user of this change?" in first.comment_markdown
    second = review(example("good-story.md"), fast_llm_config, llm_client, cache=cache)
    assert len(fake_anthropic.requests) == 2
    assert second.trace.from_cache and second.trace.llm_calls == []
    assert "reuses the LLM review of" in second.comment_markdown
    assert "no LLM call and no cost now" in second.comment_markdown
    assert second.decision == first.decision and second.trace.run_id != first.trace.run_id


def test_a_re_ask_makes_three_calls(fake_anthropic, llm_client, fast_llm_config):
    fake_anthropic.script(Reply.invalid_json())
    result = review(example("good-story.md"), fast_llm_config, llm_client)
    assert [c.call for c in result.trace.llm_calls] == ["structure", "structure_reask", "render"]
    assert result.structure is not None


@pytest.mark.parametrize(
    "script",
    [
        [Reply.invalid_json(), Reply.invalid_json()],
        [Reply.refusal()],
        [Reply.overloaded("0"), Reply.overloaded("0"), Reply.overloaded("0")],
        [Reply.bad_request()],
    ],
    ids=["invalid-twice", "refusal", "overloaded", "bad-request"],
)
def test_call_one_failing_for_good_still_ends_in_a_rules_only_review(
    fake_anthropic, llm_client, fast_llm_config, script
):
    fake_anthropic.script(*script)
    result = review(example("vague-story.md"), fast_llm_config, llm_client)
    assert result.structure is None and result.trace.fallbacks == ["structure_failed"]
    assert "Rules-only review: the LLM could not be used this time" in result.comment_markdown
    # An unfilled "TBD" is shown and asked about; it does not block on its own.
    assert any(f.check_id == "template.placeholder" and f.mode == "warn" and f.category == "placeholder"
               for f in result.findings)


def test_call_two_failing_renders_the_template(fake_anthropic, llm_client, fast_llm_config):
    fake_anthropic.script(Reply.default(), Reply.markdown("nothing useful"), Reply.markdown("still nothing"))
    result = review(example("good-story.md"), fast_llm_config, llm_client)
    assert "render_template" in result.trace.fallbacks
    assert "laid out by a template" in result.comment_markdown
    for criterion in result.structure.prd.acceptance_criteria:
        assert criterion.text in result.comment_markdown


def test_injection_stays_needs_info_even_with_top_ratings(fake_anthropic, llm_client, fast_llm_config):
    result = review(example("injection.md"), fast_llm_config, llm_client)
    assert all(r.score == 5 for r in result.structure.ratings)
    assert result.decision.verdict == "needs_info"
    assert any("injection" in reason for reason in result.decision.reasons)
    sent = "\n".join(r.raw for r in fake_anthropic.requests)
    assert "Ignore all previous instructions" not in sent  # sanitised before it left


def test_no_secret_reaches_the_llm_the_logs_or_the_output(fake_anthropic, llm_client, fast_llm_config, caplog,
                                                         capsys):
    caplog.set_level(logging.DEBUG)
    log_stream = io.StringIO()
    bot_logging.configure("DEBUG", stream=log_stream)
    try:
        result = review(example("leaked-token.md"), fast_llm_config, llm_client)
    finally:
        bot_logging.configure()
    assert len(fake_anthropic.requests) == 2
    sent = "\n".join(r.raw for r in fake_anthropic.requests)
    output = result.model_dump_json() + result.comment_markdown
    captured = capsys.readouterr()
    logs = caplog.text + captured.out + captured.err + log_stream.getvalue()
    assert "llm.call" in logs  # the LLM layer did log; none of it may carry a secret
    for secret in LEAKED:
        assert secret not in sent and secret not in output and secret not in logs
    assert "[REDACTED:" in sent
    assert {f.check_id for f in result.findings} >= {"guardrail.secret", "guardrail.pii"}


def test_offline_review_is_rules_only_and_says_so():
    result = review(example("vague-story.md"), load_default_config(), None)
    assert result.trace.fallbacks == ["offline"] and result.trace.llm_calls == []
    assert "offline: no LLM was asked" in result.comment_markdown


def test_result_is_json_round_trippable_and_traced(fake_anthropic, llm_client, fast_llm_config):
    result = review(example("bug-report.md"), fast_llm_config, llm_client)
    data = json.loads(result.model_dump_json())
    stages = [s["stage"] for s in data["trace"]["stages"]]
    assert stages == ["classify", "guardrail", "rules", "structure", "score_and_gate", "render"]
    call = data["trace"]["llm_calls"][0]
    assert call["model"] == fast_llm_config.llm.structure_model and call["input_tokens"] > 0
    assert data["trace"]["prompt_version"] and len(data["trace"]["content_hash"]) == 64


CONFIG = load_default_config()


@settings(max_examples=60, deadline=None)
@given(title=st.text(max_size=80), body=st.text(max_size=600))
def test_prepare_never_raises_and_quotes_slice_the_original(title, body):
    packet = RequirementPacket(title=title, body=body)
    prepared = prepare(packet, CONFIG)
    for finding in prepared.findings:
        if finding.span is not None:
            assert packet.text[finding.span.start:finding.span.end] == finding.span.quote


def _unquotable(request):
    from tests.fakes.fake_anthropic import smart_structure

    data = smart_structure(request)
    for item in data["prd"]["acceptance_criteria"]:
        item["evidence"] = "words that are nowhere in the ticket"
    return Reply.json(data)


@pytest.mark.parametrize(
    ("script", "calls", "fallbacks"),
    [
        ([Reply.rate_limited("0"), Reply.default()], ["structure", "render"], []),
        ([Reply.overloaded("0"), Reply.default()], ["structure", "render"], []),
        ([Reply.slow(3.0), Reply.default()], ["structure", "render"], []),
        ([Reply.truncated()], ["structure", "structure_reask", "render"], []),
        ([_unquotable], ["structure", "render"], []),
    ],
    ids=["429-retry-after-0", "529", "timeout", "max-tokens", "quotes-not-in-ticket"],
)
def test_every_transient_or_bad_answer_ends_in_a_complete_review(
    fake_anthropic, llm_client, fast_llm_config, script, calls, fallbacks
):
    fake_anthropic.script(*script)
    result = review(example("good-story.md"), fast_llm_config, llm_client)
    assert [c.call for c in result.trace.llm_calls] == calls and result.trace.fallbacks == fallbacks
    assert result.structure is not None and result.comment_markdown.startswith("<!-- reqgate:review v1 -->")
    if script[0] is _unquotable:
        assert all(c.inferred and c.evidence is None for c in result.structure.prd.acceptance_criteria)
    if calls[0] == "structure" and len(script) == 2:
        assert result.trace.llm_calls[0].attempts == 2
