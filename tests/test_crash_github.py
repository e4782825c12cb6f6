"""Crash tests: `reqgate serve` killed with SIGKILL mid-review, then started again on the same data directory.

DBOS recovers the unfinished workflow on launch and resumes it after its last recorded step: a finished LLM
call is not paid for again and the sticky comment is found again rather than posted twice.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import Response

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import REPO, BotServer, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic, Reply
from tests.fakes.fake_github import FakeGitHub
from tests.test_e2e_github import GOOD_BODY

pytestmark = pytest.mark.server

_COMMENT_CREATE = re.compile(r"/repos/[^/]+/[^/]+/issues/\d+/comments")


class HoldingGitHub(FakeGitHub):
    """Stores a new comment, then holds the answer until released: the caller never learns the comment id."""

    def __init__(self) -> None:
        super().__init__()
        self.hold_comment_create = False
        self.held = threading.Event()
        self.release = threading.Event()

    async def _dispatch(self, request: Request) -> Response:
        response = await super()._dispatch(request)
        if self.hold_comment_create and request.method == "POST" and _COMMENT_CREATE.fullmatch(request.url.path):
            self.hold_comment_create = False
            self.held.set()
            while not self.release.is_set():
                await asyncio.sleep(0.02)
        return response


@pytest.fixture
def github() -> Iterator[HoldingGitHub]:
    with HoldingGitHub() as fake:
        fake.add_repo(REPO)
        fake.add_issue(REPO, title="Export workspace tasks to CSV", body=GOOD_BODY, author="Codertocat", number=1)
        yield fake
        fake.release.set()


@pytest.fixture
def server(github: HoldingGitHub, fake_anthropic: FakeAnthropic, tmp_path: Path) -> Iterator[BotServer]:
    bot = BotServer(tmp_path, {"REQGATE_GITHUB_TOKEN": github.token, "REQGATE_GITHUB_API_URL": github.url,
                               **fake_anthropic.env()})
    yield bot
    bot.stop()



def test_killed_while_llm_call_2_is_held(server: BotServer, github: HoldingGitHub,
                                         fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.default())
    hold = fake_anthropic.hold_next()
    server.start()
    assert server.deliver("issues", issue_event("opened", 1), delivery="crash-llm").status_code == 202
    assert hold.wait_arrived(timeout=60), server.logs()[-3000:]
    assert fake_anthropic.structure_calls() == 1 and len(fake_anthropic.requests) == 2

    server.kill()
    hold.release()
    assert github.comments(REPO, 1) == []
    server.start()
    outcome = server.wait_done("gh:crash-llm")

    assert outcome["status"] == "published"
    assert fake_anthropic.structure_calls() == 1  # call 1 was recorded before the kill: not made again
    assert len(fake_anthropic.requests) == 3  # call 2 held and lost, then made once more
    (comment,) = github.comments(REPO, 1)
    assert is_sticky(comment.body)
    assert {n for n in github.issue(REPO, 1).labels if n.startswith("reqgate:")} == {"reqgate:ready"}
    assert server.steps("gh:crash-llm").count("llm_structure") == 1


def test_killed_after_the_comment_was_created_but_before_the_step_was_recorded(
    server: BotServer, github: HoldingGitHub, fake_anthropic: FakeAnthropic
) -> None:
    github.hold_comment_create = True
    server.start()
    assert server.deliver("issues", issue_event("opened", 1), delivery="crash-comment").status_code == 202
    assert github.held.wait(60), server.logs()[-3000:]
    assert len(github.comments(REPO, 1)) == 1  # GitHub has it; the bot never heard back

    server.kill()
    github.release.set()
    llm_calls = len(fake_anthropic.requests)
    server.start()
    outcome = server.wait_done("gh:crash-comment")

    assert outcome["status"] == "published"
    (comment,) = github.comments(REPO, 1)
    assert is_sticky(comment.body) and outcome["comment_id"] == str(comment.id)
    assert len(github.requests_to("POST", rf"/repos/{REPO}/issues/1/comments")) == 1
    assert len(fake_anthropic.requests) == llm_calls  # both LLM calls were recorded before the kill
    assert {n for n in github.issue(REPO, 1).labels if n.startswith("reqgate:")} == {"reqgate:ready"}
