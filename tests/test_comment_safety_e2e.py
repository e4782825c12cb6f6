"""Nothing injected acts through the posted comment, end to end: `reqgate serve` as a subprocess, the fake
GitHub and the fake Jira, and a fake model that writes images, links, mentions, raw HTML, forged verdicts,
scores and headers into every free-text field of call 1 and into call 2's markdown, on a ticket that
carries the same. The comment as the tracker stores it must carry none of them in a form that acts."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.comment_safety_support import HOSTILE, assert_inert_markdown, assert_inert_wiki, hostile_script
from tests.e2e_support import REPO, BotServer, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub
from tests.fakes.fake_jira import FakeJira
from tests.jira_e2e_support import (
    CLOUD_CREATED,
    bot_comments,
    capture,
    cloud_authorization,
    deliver_jira,
    jira_env,
    retarget,
)

pytestmark = pytest.mark.server

TICKET = (
    "As a workspace admin, I want to export all tasks to a CSV file, so that I can report on them.\n\n"
    "Acceptance criteria:\n- The export has one row per task.\n\n" + HOSTILE
)
_numbers = itertools.count(300)


@pytest.fixture(scope="module")
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        yield fake


@pytest.fixture(scope="module")
def github_bot(github: FakeGitHub, fake_anthropic_server: FakeAnthropic,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotServer]:
    bot = BotServer(tmp_path_factory.mktemp("bot-gh"), {
        "REQGATE_GITHUB_TOKEN": github.token, "REQGATE_GITHUB_API_URL": github.url, **fake_anthropic_server.env(),
    })
    bot.start()
    yield bot
    bot.stop()


@pytest.fixture(scope="module")
def jira() -> Iterator[FakeJira]:
    with FakeJira(expected_authorization=cloud_authorization()) as fake:
        yield fake


@pytest.fixture(scope="module")
def jira_bot(jira: FakeJira, fake_anthropic_server: FakeAnthropic,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotServer]:
    config_dir: Path = tmp_path_factory.mktemp("jira-config")
    (config_dir / "projects").mkdir()
    bot = BotServer(tmp_path_factory.mktemp("bot-jira"), {**jira_env(jira, config_dir),
                                                           **fake_anthropic_server.env()})
    bot.start()
    yield bot
    bot.stop()


def test_github_comment_carries_nothing_that_acts(github_bot: BotServer, github: FakeGitHub,
                                                  fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(*hostile_script())
    number = next(_numbers)
    github.add_issue(REPO, title="Export tasks @everyone https://evil.example/t", body=TICKET,
                     author="Codertocat", number=number)
    github_bot.deliver("issues", issue_event("opened", number), delivery=f"safety-{number}")
    assert github_bot.wait_done(f"gh:safety-{number}")["status"] == "published"
    (comment,) = github.comments(REPO, number)
    assert len(fake_anthropic.requests) >= 2  # the hostile model was asked
    assert "Which formats?" in comment.body and "`@everyone`" in comment.body  # and its words got through
    assert_inert_markdown(comment.body)


def test_jira_comment_carries_nothing_that_acts(jira_bot: BotServer, jira: FakeJira,
                                                fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(*hostile_script())
    number = next(_numbers)
    key, issue_id = f"SAFE-{number}", str(number)
    jira.add_issue(key, id=issue_id, summary="Export tasks @everyone https://evil.example/t",
                   description=TICKET, reporter=jira.bot)
    assert deliver_jira(jira_bot, retarget(capture(CLOUD_CREATED), key, issue_id), f"safety-{number}"
                        ).status_code == 202
    assert jira_bot.wait_done(f"jira:safety-{number}")["status"] == "published"
    (comment,) = bot_comments(jira, key)
    assert isinstance(comment.body, str) and len(fake_anthropic.requests) >= 2
    assert "Which formats?" in comment.body
    assert_inert_wiki(comment.body)
