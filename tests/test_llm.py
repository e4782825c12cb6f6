"""LLMClient against the fake Anthropic API over real HTTP: request shape, retries, deadline, errors, usage."""

from __future__ import annotations

import email.utils
import socket
import time

import pytest

from reqgate.pipeline.config import LLMSettings, Price
from reqgate.pipeline.llm import LLMClient, LLMError, Turn, estimate_cost, parse_retry_after
from reqgate.pipeline.schemas import LLMCallRecord
from tests.fakes.fake_anthropic import FakeAnthropic, Reply

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def ask(client: LLMClient, model: str = "claude-sonnet-5-5") -> str:
    return client.complete_json("structure", model, ["static rules"], [Turn("user", "hi")], SCHEMA, 100).text


def test_request_shape(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.json({"answer": "yes"}))
    reply = llm_client.complete_json(
        "structure", "claude-sonnet-5-5", ["instructions", "rubric"], [Turn("user", "the ticket")], SCHEMA, 321
    )
    assert reply.text == '{"answer": "yes"}' and reply.stop_reason == "end_turn"
    [request] = fake_anthropic.requests
    body = request.body
    assert body["model"] == "claude-sonnet-5-5" and body["max_tokens"] == 321
    assert "temperature" not in body
    assert body["system"] == [
        {"type": "text", "text": "instructions", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "rubric", "cache_control": {"type": "ephemeral"}},
    ]
    assert body["messages"] == [{"role": "user", "content": "the ticket"}]
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    # The SDK's own retries are off: every retry is ours and visible.
    assert request.headers["x-stainless-retry-count"] == "0"
    assert request.headers["authorization"] == "Bearer sk-ant-fake-key"


def test_text_call_has_no_output_config(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.markdown("**Title:** x"))
    reply = llm_client.complete_text("render", "claude-haiku-5-5", ["rules"], [Turn("user", "json")], 50)
    assert reply.text == "**Title:** x"
    assert "output_config" not in fake_anthropic.requests[0].body
    assert reply.record.call == "render" and reply.record.model == "claude-haiku-5-5"


def test_usage_and_cost(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 3000,
             "cache_creation_input_tokens": 500}
    fake_anthropic.script(Reply.json({"answer": "a"}, usage=usage), Reply.json({"answer": "b"}, usage=usage))
    record = llm_client.complete_json("structure", "claude-sonnet-5-5", ["s"], [Turn("user", "u")], SCHEMA,
                                      10).record
    assert (record.input_tokens, record.output_tokens) == (1000, 200)
    assert (record.cache_read_tokens, record.cache_creation_tokens) == (3000, 500)
    # sonnet: 3.0 in, 15.0 out, 0.3 cache read, 3.75 cache write per million
    assert record.cost_usd == pytest.approx((1000 * 3.0 + 200 * 15.0 + 3000 * 0.3 + 500 * 3.75) / 1e6)
    assert record.ok and record.attempts == 1 and record.latency_ms > 0
    unknown = llm_client.complete_json("structure", "claude-unknown-9", ["s"], [Turn("user", "u")], SCHEMA, 10)
    assert unknown.record.cost_usd == 0.0 and unknown.record.input_tokens == 1000


def test_fake_simulates_prompt_caching(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    first = llm_client.complete_text("render", "claude-haiku-5-5", ["static " * 200], [Turn("user", "a")], 50)
    second = llm_client.complete_text("render", "claude-haiku-5-5", ["static " * 200], [Turn("user", "b")], 50)
    assert first.record.cache_creation_tokens > 0 and first.record.cache_read_tokens == 0
    assert second.record.cache_read_tokens == first.record.cache_creation_tokens


def test_429_with_retry_after_zero_is_retried(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.rate_limited(retry_after="0"), Reply.json({"answer": "ok"}))
    reply = llm_client.complete_json("structure", "claude-sonnet-5-5", ["s"], [Turn("user", "u")], SCHEMA, 10)
    assert reply.text == '{"answer": "ok"}'
    assert reply.record.attempts == 2 and len(fake_anthropic.requests) == 2


@pytest.mark.parametrize("failure", [Reply.overloaded(), Reply.server_error(), Reply.error(408, "timeout_error")])
def test_overloaded_and_server_errors_are_retried(
    llm_client: LLMClient, fake_anthropic: FakeAnthropic, failure: Reply
) -> None:
    fake_anthropic.script(failure, failure, Reply.json({"answer": "ok"}))
    reply = llm_client.complete_json("structure", "claude-sonnet-5-5", ["s"], [Turn("user", "u")], SCHEMA, 10)
    assert reply.record.attempts == 3 and len(fake_anthropic.requests) == 3


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (Reply.bad_request("messages: bad"), "HTTP 400 invalid_request_error"),
        (Reply.error(401, "authentication_error"), "HTTP 401 authentication_error"),
        (Reply.error(403, "permission_error"), "HTTP 403 permission_error"),
    ],
)
def test_client_errors_fail_at_once(
    llm_client: LLMClient, fake_anthropic: FakeAnthropic, failure: Reply, reason: str
) -> None:
    fake_anthropic.script(failure, Reply.json({"answer": "never"}))
    with pytest.raises(LLMError) as caught:
        ask(llm_client)
    assert caught.value.reason == reason
    assert caught.value.record.ok is False and caught.value.record.attempts == 1
    assert len(fake_anthropic.requests) == 1


def test_retries_are_bounded(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(*[Reply.rate_limited()] * 5)
    with pytest.raises(LLMError) as caught:
        ask(llm_client)
    # max_retries=2: one attempt and two retries.
    assert caught.value.reason == "HTTP 429 rate_limit_error after 3 attempts"
    assert caught.value.record.attempts == 3 and len(fake_anthropic.requests) == 3
    assert caught.value.record.error == caught.value.reason


def test_timeouts_are_retried_then_stop_at_the_deadline(
    fake_anthropic: FakeAnthropic, fast_llm_settings: LLMSettings
) -> None:
    settings = fast_llm_settings.model_copy(update={"timeout_s": 0.3, "deadline_s": 1.0, "max_retries": 10})
    client = LLMClient("sk-ant-fake-key", settings, base_url=fake_anthropic.url)
    client.backoff_base_s = 0.01
    fake_anthropic.script(*[Reply.slow(3.0)] * 10)
    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        ask(client)
    elapsed = time.monotonic() - started
    assert elapsed < 1.5
    assert caught.value.reason.startswith("timeout after") or "deadline" in caught.value.reason
    assert 2 <= caught.value.record.attempts <= 4 and len(fake_anthropic.requests) >= 2
    client.close()


def test_timeout_then_success(fake_anthropic: FakeAnthropic, fast_llm_settings: LLMSettings) -> None:
    settings = fast_llm_settings.model_copy(update={"timeout_s": 0.3})
    client = LLMClient("sk-ant-fake-key", settings, base_url=fake_anthropic.url)
    client.backoff_base_s = 0.01
    fake_anthropic.script(Reply.slow(2.0), Reply.json({"answer": "late"}))
    assert ask(client) == '{"answer": "late"}'
    client.close()


def test_retry_after_past_the_deadline_fails_without_sleeping(
    llm_client: LLMClient, fake_anthropic: FakeAnthropic
) -> None:
    slept: list[float] = []
    llm_client._sleep = slept.append
    fake_anthropic.script(Reply.rate_limited(retry_after="3600"))
    with pytest.raises(LLMError) as caught:
        ask(llm_client)
    assert "no time left" in caught.value.reason and slept == []


def test_retry_after_ms_and_date_are_honoured(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    slept: list[float] = []
    llm_client._sleep = slept.append
    soon = email.utils.formatdate(time.time() + 4, usegmt=True)
    fake_anthropic.script(
        Reply.rate_limited(retry_after="7", retry_after_ms="1500"),
        Reply.rate_limited(retry_after=soon),
        Reply.json({"answer": "ok"}),
    )
    ask(llm_client)
    assert slept[0] == pytest.approx(1.5)
    assert 2.0 < slept[1] <= 4.0


def test_backoff_without_retry_after_grows_and_is_capped(
    llm_client: LLMClient, fake_anthropic: FakeAnthropic, fast_llm_settings: LLMSettings
) -> None:
    client = LLMClient("k", fast_llm_settings.model_copy(update={"max_retries": 4, "deadline_s": 100}),
                       base_url=fake_anthropic.url)
    client.backoff_base_s, client.backoff_cap_s = 1.0, 3.0
    slept: list[float] = []
    client._sleep = slept.append
    fake_anthropic.script(*[Reply.overloaded()] * 4, Reply.json({"answer": "ok"}))
    ask(client)
    assert len(slept) == 4
    for delay, ceiling in zip(slept, [1.0, 2.0, 3.0, 3.0], strict=True):
        assert ceiling / 2 <= delay <= ceiling
    client.close()


def test_connection_errors_are_retried_then_fail(fast_llm_settings: LLMSettings) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = LLMClient("k", fast_llm_settings, base_url=f"http://127.0.0.1:{port}")
    client.backoff_base_s = 0.01
    with pytest.raises(LLMError) as caught:
        ask(client)
    assert caught.value.reason == "connection error after 3 attempts"
    client.close()


def test_refusal_is_a_reply_not_an_error(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.refusal())
    reply = llm_client.complete_json("structure", "claude-sonnet-5-5", ["s"], [Turn("user", "u")], SCHEMA, 10)
    assert reply.stop_reason == "refusal" and reply.text == ""


def test_from_env(monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropic,
                  fast_llm_settings: LLMSettings) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert LLMClient.from_env(fast_llm_settings) is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    assert LLMClient.from_env(fast_llm_settings) is None
    for name, value in fake_anthropic.env("sk-ant-from-env").items():
        monkeypatch.setenv(name, value)
    client = LLMClient.from_env(fast_llm_settings)
    assert client is not None
    fake_anthropic.script(Reply.json({"answer": "ok"}))
    ask(client)
    assert fake_anthropic.requests[0].headers["authorization"] == "Bearer sk-ant-from-env"
    client.close()


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    past = email.utils.formatdate(time.time() - 60, usegmt=True)
    assert parse_retry_after({"retry-after": past}) == 0.0


def test_estimate_cost_unknown_price_is_zero() -> None:
    record = LLMCallRecord(call="render", model="m", input_tokens=10, output_tokens=10)
    assert estimate_cost(None, record) == 0.0
    assert estimate_cost(Price(input=1, output=2, cache_read=0, cache_write=0), record) == pytest.approx(3e-5)
