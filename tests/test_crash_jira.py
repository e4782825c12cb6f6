"""Crash tests for Jira: `reqgate serve` killed with SIGKILL mid-review, then started again on the same data
directory. The GitHub crash tests (tests/test_crash_github.py) run for Jira as well: DBOS resumes the
delivery after its last recorded step, a finished LLM call is not paid for again, and the sticky comment is
found again in Jira (by the bot's authorship and the wiki-escaped marker) rather than posted twice.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import Response

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import BotServer
from tests.fakes.fake_anthropic import FakeAnthropic, Reply
from tests.fakes.fake_jira import FakeJira
from tests.jira_e2e_support import (
    CLOUD_CREATED,
    GOOD_WIKI,
    capture,
    capture_issue,
    cloud_authorization,
    deliver_jira,
    jira_env,
    ours,
)

pytestmark = pytest.mark.server

KEY, ISSUE_ID = capture_issue(CLOUD_CREATED)


class HoldingJira(FakeJira):
    """Stores a new comment, then holds the answer until released: the caller never learns the comment id."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.hold_comment_create = False
        self.held = threading.Event()
        self.release = threading.Event()

    async def _comments_route(self, request: Request) -> Response:
        response = await super()._comments_route(request)
        if self.hold_comment_create and request.method == "POST":
            self.hold_comment_create = False
            self.held.set()
            while not self.release.is_set():
                await asyncio.sleep(0.02)
        return response


@pytest.fixture
def jira() -> Iterator[HoldingJira]:
    with HoldingJira(expected_authorization=cloud_authorization()) as fake:
        fake.add_issue(KEY, id=ISSUE_ID, summary="Export workspace tasks to CSV", description=GOOD_WIKI)
        yield fake
        fake.release.set()


@pytest.fixture
def server(jira: HoldingJira, fake_anthropic: FakeAnthropic, tmp_path: Path) -> Iterator[BotServer]:
    (tmp_path / "config").mkdir()
    bot = BotServer(tmp_path, {**jira_env(jira, tmp_path / "config"), **fake_anthropic.env()})
    yield bot
    bot.stop()



def test_killed_while_llm_call_2_is_held(server: BotServer, jira: HoldingJira,
                                         fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.default())
    hold = fake_anthropic.hold_next()
    server.start()
    assert deliver_jira(server, capture(CLOUD_CREATED), "crash-llm").status_code == 202
    assert hold.wait_arrived(timeout=60), server.logs()[-3000:]
    assert fake_anthropic.structure_calls() == 1 and len(fake_anthropic.requests) == 2

    server.kill()
    hold.release()
    # The labels went on between call 1 and call 2 (bot/flow.py); the comment waits for call 2.
    assert jira.comments(KEY) == [] and ours(jira.issue(KEY).labels) == {"reqgate:ready"}
    server.start()
    outcome = server.wait_done("jira:crash-llm")

    assert outcome["status"] == "published"
    assert fake_anthropic.structure_calls() == 1  # call 1 was recorded before the kill: not made again
    assert len(fake_anthropic.requests) == 3  # call 2 held and lost, then made once more
    (comment,) = jira.comments(KEY)
    assert comment.author is jira.bot and isinstance(comment.body, str) and is_sticky(comment.body)
    assert comment.body.startswith("h3. ReqGate: ✅ Ready") and outcome["comment_id"] == comment.id
    assert ours(jira.issue(KEY).labels) == {"reqgate:ready"}
    assert server.steps("jira:crash-llm").count("llm_structure") == 1


def test_killed_after_the_comment_was_created_but_before_the_step_was_recorded(
    server: BotServer, jira: HoldingJira, fake_anthropic: FakeAnthropic
) -> None:
    jira.hold_comment_create = True
    server.start()
    assert deliver_jira(server, capture(CLOUD_CREATED), "crash-comment").status_code == 202
    assert jira.held.wait(60), server.logs()[-3000:]
    assert len(jira.comments(KEY)) == 1  # Jira has it; the bot never heard back

    server.kill()
    jira.release.set()
    llm_calls = len(fake_anthropic.requests)
    server.start()
    outcome = server.wait_done("jira:crash-comment")

    assert outcome["status"] == "published"
    (comment,) = jira.comments(KEY)  # found again by its wiki-escaped marker, not posted twice
    assert isinstance(comment.body, str) and is_sticky(comment.body) and outcome["comment_id"] == comment.id
    assert len(jira.calls("POST", f"/issue/{KEY}/comment")) == 1
    assert len(fake_anthropic.requests) == llm_calls  # both LLM calls were recorded before the kill
    assert ours(jira.issue(KEY).labels) == {"reqgate:ready"}
