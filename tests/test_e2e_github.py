"""End to end over HTTP: `reqgate serve` as a subprocess, the real PyGithub talking to the fake GitHub, the
real Anthropic SDK talking to the fake Anthropic, the octokit example payloads signed as GitHub signs them.

One server per module (starting one costs seconds); each test works on its own issue number.
"""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import REPO, SECRET, BotServer, comment_event, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub

pytestmark = pytest.mark.server

BROKEN_REPO = "Codertocat/Broken-Config"
# A title and nothing else: what today's defaults block on (`incomplete`), with or without the model.
EMPTY_BODY = ""
GOOD_BODY = (
    "As a workspace admin, I want to export all tasks of a workspace to a CSV file, so that I can report on "
    "them in a spreadsheet.\n\n## Acceptance criteria\n- [ ] The export has one row per task with its title, "
    "status and assignee.\n- [ ] A workspace with 10,000 tasks exports in under 5 seconds.\n- [ ] Only "
    "workspace admins see the Export button.\n"
)
_numbers = itertools.count(10)


@pytest.fixture(scope="module")
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        fake.add_repo(BROKEN_REPO)
        fake.add_file(BROKEN_REPO, ".github/reqgate.yml", "threshold: 70\nlabels:\n  ready: ok\n  colour: red\n")
        fake.set_role(REPO, "Codertocat", "admin")
        fake.account("mallory")
        yield fake


@pytest.fixture(scope="module")
def server(github: FakeGitHub, fake_anthropic_server: FakeAnthropic,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotServer]:
    bot = BotServer(tmp_path_factory.mktemp("bot"), {
        "REQGATE_GITHUB_TOKEN": github.token, "REQGATE_GITHUB_API_URL": github.url, **fake_anthropic_server.env(),
    })
    bot.start()
    yield bot
    bot.stop()


def new_issue(github: FakeGitHub, body: str | None = GOOD_BODY, repo: str = REPO,
              title: str = "Export workspace tasks to CSV", **kw: object) -> int:
    number = next(_numbers)
    github.add_issue(repo, title=title, body=body, author="Codertocat", number=number,
                     **kw)  # type: ignore[arg-type]
    return number


def command(github: FakeGitHub, number: int, body: str, login: str = "Codertocat",
            association: str = "OWNER", **issue: object) -> dict[str, object]:
    """The comment exists on the fake (so the 👀 reaction has a target) and the event names it."""
    comment = github.add_comment(REPO, number, body, author=login)
    event = comment_event(body, number, login=login, association=association, **issue)
    event["comment"]["id"] = comment.id  # type: ignore[index]
    return event


def ours(labels: list[str]) -> set[str]:
    return {name for name in labels if name.startswith("reqgate:")}


def stickies(github: FakeGitHub, number: int, repo: str = REPO) -> list[str]:
    return [c.body for c in github.comments(repo, number) if is_sticky(c.body)]


def test_opened_gives_one_comment_and_one_label(server: BotServer, github: FakeGitHub,
                                                 fake_anthropic: FakeAnthropic) -> None:
    number = new_issue(github)
    answer = server.deliver("issues", issue_event("opened", number), delivery="open-1")
    assert answer.status_code == 202 and answer.json()["workflow_id"] == "gh:open-1"
    outcome = server.wait_done("gh:open-1")
    assert outcome["status"] == "published"
    (comment,) = github.comments(REPO, number)
    assert is_sticky(comment.body) and comment.author == github.bot_login
    label = {"ready": "reqgate:ready", "needs_info": "reqgate:needs-info"}[outcome["verdict"]]
    assert ours(github.issue(REPO, number).labels) == {label}
    assert len(fake_anthropic.requests) == 2  # structure, then render
    assert server.steps("gh:open-1") == ["started_at", "load_config", "fetch_and_prepare", "load_state",
                                         "llm_structure", "sync_labels", "llm_render", "upsert_comment",
                                         "save_state"]


def test_recheck_after_an_edit_edits_the_same_comment_and_swaps_the_label(
    server: BotServer, github: FakeGitHub, fake_anthropic: FakeAnthropic
) -> None:
    number = new_issue(github, body=EMPTY_BODY)
    server.deliver("issues", issue_event("opened", number), delivery="edit-1")
    assert server.wait_done("gh:edit-1")["verdict"] == "needs_info"
    (first,) = github.comments(REPO, number)
    first_id, first_body = first.id, first.body
    assert ours(github.issue(REPO, number).labels) == {"reqgate:needs-info"}

    github.issue(REPO, number).body = GOOD_BODY
    event = command(github, number, "Done, please look again.\n/reqgate recheck")
    assert server.deliver("issue_comment", event, delivery="edit-2").status_code == 202
    outcome = server.wait_done("gh:edit-2")
    assert outcome["status"] == "published" and outcome["comment_id"] == str(first_id)
    (edited,) = stickies(github, number)
    assert edited != first_body and "Ready" in edited
    assert ours(github.issue(REPO, number).labels) == {"reqgate:ready"}
    (recheck,) = [c for c in github.comments(REPO, number) if "look again" in c.body]
    assert [r.content for r in recheck.reactions] == ["eyes"]


def test_recheck_of_unchanged_text_makes_no_llm_call(server: BotServer, github: FakeGitHub,
                                                      fake_anthropic: FakeAnthropic) -> None:
    number = new_issue(github)
    server.deliver("issues", issue_event("opened", number), delivery="cache-1")
    server.wait_done("gh:cache-1")
    calls = len(fake_anthropic.requests)
    server.deliver("issue_comment", command(github, number, "/reqgate recheck"), delivery="cache-2")
    assert server.wait_done("gh:cache-2")["status"] == "cached"
    assert len(fake_anthropic.requests) == calls
    (body,) = stickies(github, number)
    assert "no LLM call" in body or "cache" in body.lower()


def test_the_same_delivery_twice_runs_once(server: BotServer, github: FakeGitHub) -> None:
    number = new_issue(github)
    event = issue_event("opened", number)
    assert server.deliver("issues", event, delivery="dup-1").status_code == 202
    assert server.deliver("issues", event, delivery="dup-1").status_code == 200
    server.wait_done("gh:dup-1")
    assert server.deliver("issues", event, delivery="dup-1").json()["status"] == "duplicate"
    assert len(github.comments(REPO, number)) == 1
    assert len(github.requests_to("GET", rf"/repos/{REPO}/issues/{number}")) == 1


def test_the_bots_own_comment_does_nothing(server: BotServer, github: FakeGitHub) -> None:
    number = new_issue(github)
    event = comment_event("<!-- reqgate:review v1 -->\n/reqgate recheck", number, login=github.bot_login,
                          association="NONE")
    answer = server.deliver("issue_comment", event, delivery="self-1")
    assert answer.status_code == 204
    assert "gh:self-1" not in server.workflows()
    assert github.comments(REPO, number) == []


def test_a_pull_request_comment_does_nothing(server: BotServer, github: FakeGitHub) -> None:
    number = new_issue(github)
    event = comment_event("/reqgate recheck", number, pull_request={"url": "https://example.invalid/pulls/1"})
    assert server.deliver("issue_comment", event, delivery="pr-1").status_code == 204
    assert "gh:pr-1" not in server.workflows()


def test_an_unauthorised_command_gets_a_reply_and_no_review(server: BotServer, github: FakeGitHub,
                                                             fake_anthropic: FakeAnthropic) -> None:
    number = new_issue(github)
    event = command(github, number, "/reqgate recheck", login="mallory", association="CONTRIBUTOR")
    assert server.deliver("issue_comment", event, delivery="auth-1").status_code == 202
    assert server.wait_done("gh:auth-1")["status"] == "refused"
    (reply,) = [c for c in github.comments(REPO, number) if c.author == github.bot_login]
    assert "@mallory" in reply.body and not is_sticky(reply.body)
    assert ours(github.issue(REPO, number).labels) == set()
    assert fake_anthropic.requests == []


def test_help_and_config_commands_reply_with_a_reaction(server: BotServer, github: FakeGitHub) -> None:
    number = new_issue(github)
    server.deliver("issue_comment", command(github, number, "/reqgate help"), delivery="help-1")
    server.deliver("issue_comment", command(github, number, "/reqgate config"), delivery="conf-1")
    server.deliver("issue_comment", command(github, number, "/reqgate frobnicate"), delivery="unk-1")
    for delivery in ("help-1", "conf-1", "unk-1"):
        assert server.wait_done(f"gh:{delivery}")["status"] == "replied"
    comments = github.comments(REPO, number)
    bodies = [c.body for c in comments if c.author == github.bot_login]
    assert any("ReqGate commands" in b for b in bodies)
    assert any("ReqGate configuration" in b and "```yaml" in b for b in bodies)
    assert any("does not know `/reqgate frobnicate`" in b for b in bodies)
    reacted = {c.body: [r.content for r in c.reactions] for c in comments if c.author == "Codertocat"}
    assert reacted == {"/reqgate help": ["eyes"], "/reqgate config": ["eyes"], "/reqgate frobnicate": []}


def test_an_invalid_config_gives_an_error_comment_and_no_llm_call(server: BotServer, github: FakeGitHub,
                                                                  fake_anthropic: FakeAnthropic) -> None:
    number = new_issue(github, repo=BROKEN_REPO)
    event = issue_event("opened", number)
    event["repository"]["full_name"] = BROKEN_REPO
    server.deliver("issues", event, delivery="conf-bad-1")
    assert server.wait_done("gh:conf-bad-1")["status"] == "config_error"
    (body,) = stickies(github, number, BROKEN_REPO)
    assert "labels.colour" in body and "line 4" in body and "/reqgate recheck" in body
    assert ours(github.issue(BROKEN_REPO, number).labels) == {"reqgate:error"}
    assert fake_anthropic.requests == []


def test_a_null_issue_body_is_a_needs_info_review(server: BotServer, github: FakeGitHub) -> None:
    # A title alone that the fake LLM rates highly can pass the gate today (reported to the pipeline's
    # owner); the crash-free path is what this test is about, with a title as short as most such issues.
    number = new_issue(github, body=None, title="CSV export")
    answer = server.deliver("issues", issue_event("opened", number, body=None), delivery="null-1")
    assert answer.status_code == 202
    outcome = server.wait_done("gh:null-1")
    assert (outcome["status"], outcome["verdict"]) == ("published", "needs_info")
    assert ours(github.issue(REPO, number).labels) == {"reqgate:needs-info"}


def test_an_edit_is_not_reviewed_unless_the_config_asks(server: BotServer, github: FakeGitHub) -> None:
    number = new_issue(github)
    assert server.deliver("issues", issue_event("edited", number), delivery="edited-1").status_code == 202
    assert server.wait_done("gh:edited-1") == {"workflow_id": "gh:edited-1", "status": "skipped", "verdict": None,
                                               "comment_id": None, "detail": "review_on_edit is off"}
    assert github.comments(REPO, number) == []


def test_http_answers_for_what_a_sender_can_send(server: BotServer) -> None:
    event = json.dumps(issue_event("opened", 1)).encode()
    assert server.deliver("issues", event, secret="wrong").status_code == 401
    assert server.deliver("issues", event, secret=None).status_code == 401
    assert server.deliver("issues", b"{not json", delivery="bad-json").status_code == 400
    assert server.deliver("issues", b"[1, 2]").status_code == 400
    assert server.deliver("issues", {"action": "opened"}).status_code == 400
    assert server.deliver("ping", {"zen": "Keep it logically awesome."}).status_code == 204
    assert server.deliver("issues", issue_event("labeled", 1)).status_code == 204
    assert server.deliver("issues", event, **{"X-GitHub-Delivery": ""}).status_code == 400
    too_big = b" " * (1024 * 1024 + 1)
    assert server.deliver("issues", too_big).status_code == 413
    # GitHub's published test vector: the secret is this suite's secret, the body is not JSON.
    vector = server.client.post("/webhooks/github", content=b"Hello, World!", headers={
        "X-GitHub-Event": "issues", "X-GitHub-Delivery": "vector",
        "X-Hub-Signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"})
    assert vector.status_code == 400 and SECRET == "It's a Secret to Everybody"
    # A declared length over the cap is refused before any body is read (httpx will not send such a lie).
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"X-GitHub-Event: issues\r\nContent-Length: 99999999\r\n\r\n{}")
        assert raw.recv(4096).startswith(b"HTTP/1.1 413")


def test_health_readiness_and_metrics(server: BotServer) -> None:
    assert server.client.get("/healthz").json() == {"status": "ok"}
    ready = server.client.get("/readyz").json()
    assert ready["status"] == "ready" and ready["identities"] == {"github": True}
    text = server.client.get("/metrics").text
    for name in ("reqgate_webhooks_total", "reqgate_reviews_total", "reqgate_review_seconds",
                 "reqgate_llm_tokens_total", "reqgate_rate_limit_wait_seconds_total", "reqgate_queue_depth"):
        assert name in text
    assert 'reqgate_webhooks_total{outcome="accepted",source="github"}' in text
    assert "Codertocat" not in text


def test_logs_are_json_without_bodies_or_secrets(server: BotServer) -> None:
    lines = [line for line in server.logs().splitlines() if line.startswith("{")]
    assert lines, server.logs()[-2000:]
    records = [json.loads(line) for line in lines]
    assert any(r.get("event") == "webhook" and r.get("delivery_id") for r in records)
    assert any(r.get("workflow_id", "").startswith("gh:") and r.get("issue") for r in records)
    text = server.logs()
    for secret in (SECRET, "ghp_fake_token_for_tests", "sk-ant-fake-key", "one row per task"):
        assert secret not in text


def test_replay_posts_a_signed_payload(server: BotServer, github: FakeGitHub, tmp_path: Path) -> None:
    import subprocess
    import sys

    number = new_issue(github)
    path = tmp_path / "opened.json"
    path.write_text(json.dumps(issue_event("opened", number)))
    done = subprocess.run(
        [sys.executable, "-m", "reqgate.bot.cli", "replay", str(path), "--event", "issues", "--url",
         f"{server.url}/webhooks/github"],
        env={**server.env}, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("202 Accepted")
    workflow_id = json.loads(done.stdout.splitlines()[1])["workflow_id"]
    server.wait_done(workflow_id)
    assert len(stickies(github, number)) == 1
