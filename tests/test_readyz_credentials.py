"""/readyz answers 503 with the reason when a configured tracker credential cannot be used: a GitHub App key
that does not parse, a GitHub token or a Jira API token that the (fake) tracker refuses with 401. The same
servers with good credentials answer 200, so the 503s are the credentials' doing."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from reqgate.bot.credentials import CredentialChecks, github_app_key_problem
from tests.e2e_support import REPO_ROOT, BotServer
from tests.fakes.fake_github import DEFAULT_TOKEN, FakeGitHub, generate_app_key
from tests.fakes.github_fixture import fake_github_server  # noqa: F401 - a fixture
from tests.fakes.fake_jira import FakeJira
from tests.jira_e2e_support import cloud_authorization, jira_env

PLACEHOLDER_KEY = "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----\n"


def readiness(bot: BotServer, timeout: float = 60.0) -> httpx.Response:
    """The first settled /readyz answer: a 503 about a credential, or a 200 once every identity lookup (the
    call that tries the credentials) has succeeded."""
    log = bot.log_path.open("ab")
    bot.process = subprocess.Popen(
        [sys.executable, "-m", "reqgate.bot.cli", "serve", "--host", "127.0.0.1", "--port", str(bot.port)],
        cwd=REPO_ROOT, env=bot.env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + timeout
    answer: httpx.Response | None = None
    while time.monotonic() < deadline and bot.process.poll() is None:
        try:
            answer = bot.client.get("/readyz")
            data = answer.json()
            if answer.status_code == 503 and "credential" in data["reason"]:
                return answer
            if answer.status_code == 200 and all(data["identities"].values()):
                return answer
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"no settled /readyz answer; last {answer and answer.text}\n{bot.logs()[-3000:]}")


def test_key_parsing_names_the_problem_not_the_key() -> None:
    private, _public = generate_app_key()
    assert github_app_key_problem(private) is None
    problem = github_app_key_problem(PLACEHOLDER_KEY)
    assert problem is not None and "cannot be parsed" in problem and "..." not in problem


def test_only_a_refusal_counts() -> None:
    checks = CredentialChecks()
    checks.observe("jira", ConnectionError("down"))
    assert checks.problem() is None  # unreachable is not a credential problem

    class Refused(Exception):
        status = 401

    checks.observe("jira", Refused())
    assert checks.problem() == "jira refused the configured credentials (HTTP 401)"
    checks.observe("jira", None)
    assert checks.problem() is None


@pytest.mark.server
def test_placeholder_app_key_is_not_ready(tmp_path: Path, fake_github_server: FakeGitHub) -> None:  # noqa: F811
    bot = BotServer(tmp_path, {"REQGATE_GITHUB_APP_ID": "4242", "REQGATE_GITHUB_PRIVATE_KEY": PLACEHOLDER_KEY,
                               "REQGATE_GITHUB_API_URL": fake_github_server.url})
    try:
        answer = readiness(bot)
        assert answer.status_code == 503
        assert "the GitHub App private key cannot be parsed" in answer.json()["reason"]
        assert "BEGIN RSA" not in bot.logs()
    finally:
        bot.stop()


@pytest.mark.server
@pytest.mark.parametrize("token", ["ghp_not_the_right_one", DEFAULT_TOKEN])
def test_refused_github_token_is_not_ready(tmp_path: Path, fake_github_server: FakeGitHub,  # noqa: F811
                                           token: str) -> None:
    bot = BotServer(tmp_path, {"REQGATE_GITHUB_TOKEN": token, "REQGATE_GITHUB_API_URL": fake_github_server.url})
    try:
        answer = readiness(bot)
        if token == DEFAULT_TOKEN:
            assert answer.status_code == 200, answer.text
        else:
            assert answer.status_code == 503
            assert answer.json()["reason"] == ("a tracker credential cannot be used: github refused the configured "
                                               "credentials (HTTP 401)")
    finally:
        bot.stop()


@pytest.mark.server
@pytest.mark.parametrize("good", [False, True])
def test_refused_jira_token_is_not_ready(tmp_path: Path, good: bool) -> None:
    with FakeJira(expected_authorization=cloud_authorization()) as jira:
        (tmp_path / "bot").mkdir()
        env = jira_env(jira, tmp_path)
        if not good:
            env["REQGATE_JIRA_API_TOKEN"] = "not-the-token"
        bot = BotServer(tmp_path / "bot", env)
        try:
            answer = readiness(bot)
            if good:
                assert answer.status_code == 200, answer.text
            else:
                assert answer.status_code == 503
                assert "jira refused the configured credentials (HTTP 401)" in answer.json()["reason"]
        finally:
            bot.stop()
