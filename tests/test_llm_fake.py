"""The fake Anthropic API itself: API-like refusals of bad requests, hold mode, use from another process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from reqgate.pipeline.llm import LLMClient, Turn
from tests.fakes.fake_anthropic import FakeAnthropic, Reply

ROOT = Path(__file__).resolve().parent.parent


def post(fake: FakeAnthropic, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{fake.url}/v1/messages", json=body, timeout=5,
                      headers={"x-api-key": "k", **(headers or {})})


def minimal(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], **extra}


def test_answers_look_like_the_api(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.markdown("hello"))
    response = post(fake_anthropic, minimal())
    assert response.status_code == 200 and response.headers["request-id"].startswith("req_")
    body = response.json()
    assert body["type"] == "message" and body["role"] == "assistant" and body["model"] == "m"
    assert body["content"] == [{"type": "text", "text": "hello"}]
    assert body["stop_reason"] == "end_turn" and body["stop_sequence"] is None
    assert set(body["usage"]) == {"input_tokens", "output_tokens", "cache_creation_input_tokens",
                                  "cache_read_input_tokens"}


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        (minimal(temperature=0.2), 400, "temperature"),
        ({"model": "m", "messages": []}, 400, "max_tokens"),
        (minimal(messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]), 400,
         "prefill"),
        (minimal(output_config={"format": {"type": "json_schema", "schema": {
            "type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
            "additionalProperties": False}}}), 400, "minimum"),
        (minimal(output_config={"format": {"type": "json_schema", "schema": {
            "type": "object", "properties": {}}}}), 400, "additionalProperties"),
        (minimal(system=[{"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}}
                         for i in range(5)]), 400, "cache_control"),
    ],
)
def test_requests_the_api_would_refuse(fake_anthropic: FakeAnthropic, body: dict[str, Any], status: int,
                                       fragment: str) -> None:
    fake_anthropic.script(Reply.markdown("kept for the next valid request"))
    response = post(fake_anthropic, body)
    assert response.status_code == status
    error = response.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert fragment in error["error"]["message"]
    assert fake_anthropic.pending == 1  # a refused request does not eat the script


def test_missing_key_is_401(fake_anthropic: FakeAnthropic) -> None:
    response = httpx.post(f"{fake_anthropic.url}/v1/messages", json=minimal(), timeout=5)
    assert response.status_code == 401 and response.json()["error"]["type"] == "authentication_error"


def test_hold_blocks_until_released(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    hold = fake_anthropic.hold_next(then=Reply.markdown("released"))
    results: list[str] = []
    worker = threading.Thread(target=lambda: results.append(
        llm_client.complete_text("render", "m", ["s"], [Turn("user", "u")], 10).text))
    worker.start()
    assert hold.wait_arrived(5)
    worker.join(0.2)
    assert worker.is_alive() and results == []
    hold.release()
    worker.join(5)
    assert results == ["released"]


def test_reset_releases_held_requests(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    hold = fake_anthropic.hold_next()
    worker = threading.Thread(
        target=lambda: llm_client.complete_text("render", "m", ["s"], [Turn("user", "u")], 10))
    worker.start()
    assert hold.wait_arrived(5)
    fake_anthropic.reset()
    worker.join(5)
    assert not worker.is_alive()


def test_callable_script_items_see_the_request(llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(lambda request: Reply.markdown(f"you said {request.last_user_text}"))
    reply = llm_client.complete_text("render", "m", ["s"], [Turn("user", "ping")], 10)
    assert reply.text == "you said ping"


def test_usable_from_another_process(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.json({"answer": "from the parent"}))
    code = textwrap.dedent("""
        import json
        from reqgate.pipeline.config_loader import load_default_config
        from reqgate.pipeline.llm import LLMClient, Turn
        client = LLMClient.from_env(load_default_config().llm)
        schema = {"type": "object", "properties": {"answer": {"type": "string"}},
                  "required": ["answer"], "additionalProperties": False}
        reply = client.complete_json("structure", "claude-sonnet-5-5", ["s"], [Turn("user", "hi")], schema, 50)
        print(json.dumps({"text": reply.text, "cost": reply.record.cost_usd}))
    """)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **fake_anthropic.env()}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["text"] == '{"answer": "from the parent"}' and out["cost"] > 0
    assert fake_anthropic.requests[0].body["model"] == "claude-sonnet-5-5"
