"""The Jira counterpart of tests/e2e_support.py: the real Jira captures, retargeted at seeded fake issues and
signed as a Jira admin webhook signs them, delivered to `reqgate serve` (the same `BotServer`)."""

from __future__ import annotations

import base64
import copy
import json
import re
import uuid
from pathlib import Path
from typing import Any

import httpx

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import REPO_ROOT, BotServer, sign
from tests.fakes.fake_jira import FakeComment, FakeJira

JIRA_PAYLOADS = REPO_ROOT.parent / "shared" / "data" / "jira-payloads"
CLOUD_CREATED = "mattermost-webhook-cloud-issue-created-many-fields"
CLOUD_COMMENT = "mattermost-webhook-cloud-comment-created"
SERVER_COMMENT = "mattermost-webhook-server-comment-created"

JIRA_SECRET = "jira-webhook-secret-for-tests"
AUTOMATION_TOKEN = "jira-automation-token-for-tests"
JIRA_EMAIL = "reqgate-bot@example.com"
JIRA_API_TOKEN = "jira-api-token-for-tests"
JIRA_PAT = "jira-pat-for-tests"

# Ticket descriptions as Jira stores them (wiki markup).
# A story with no description: what today's defaults block on (`incomplete`), with or without the model.
VAGUE_WIKI = ""
GOOD_WIKI = (
    "As a workspace admin, I want to export all tasks of a workspace to a CSV file, so that I can report on "
    "them in a spreadsheet.\n\nh2. Acceptance criteria\n* The export has one row per task with its title, "
    "status and assignee.\n* A workspace with 10,000 tasks exports in under 5 seconds.\n* Only workspace "
    "admins see the *Export* button.\n"
)
# Ready all the same, with a finding that the comment's findings table lists.
WARNED_WIKI = GOOD_WIKI + "* The download starts fast.\n"

_ISSUE_IN_PATH = re.compile(r"(/rest/api/\w+/issue/)[^/]+")


def cloud_authorization() -> str:
    return "Basic " + base64.b64encode(f"{JIRA_EMAIL}:{JIRA_API_TOKEN}".encode()).decode()


def jira_env(fake: FakeJira, config_dir: Path, **extra: str) -> dict[str, str]:
    """Settings of a Jira-only bot (GitHub switched off) pointed at `fake`: Cloud credentials, or a personal
    access token when the fake answers as Data Center."""
    credentials = (
        {"REQGATE_JIRA_PAT": JIRA_PAT}
        if fake.deployment == "Server"
        else {"REQGATE_JIRA_EMAIL": JIRA_EMAIL, "REQGATE_JIRA_API_TOKEN": JIRA_API_TOKEN}
    )
    return {
        "REQGATE_GITHUB_WEBHOOK_SECRET": "",  # BotServer sets it; empty is unset, so GitHub is off
        "REQGATE_JIRA_URL": fake.url,
        "REQGATE_JIRA_WEBHOOK_SECRET": JIRA_SECRET,
        "REQGATE_JIRA_AUTOMATION_TOKEN": AUTOMATION_TOKEN,
        "REQGATE_JIRA_CONFIG_DIR": str(config_dir),
        **credentials,
        **extra,
    }


def capture(name: str) -> dict[str, Any]:
    return json.loads((JIRA_PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))


def capture_issue(name: str) -> tuple[str, str]:
    """(key, id) of the issue a capture names; a Server comment capture names only the id."""
    data = capture(name)
    issue = data.get("issue")
    if isinstance(issue, dict):
        return str(issue["key"]), str(issue["id"])
    match = _ISSUE_IN_PATH.search(data["comment"]["self"])
    assert match is not None
    return "", data["comment"]["self"][match.end(1) : match.end()]


def retarget(data: dict[str, Any], key: str, issue_id: str) -> dict[str, Any]:
    """A copy of a capture about issue `key` / `issue_id`, every place that names the issue changed."""
    data = copy.deepcopy(data)
    issue = data.get("issue")
    if isinstance(issue, dict):
        issue["key"], issue["id"] = key, issue_id
        issue["self"] = _ISSUE_IN_PATH.sub(rf"\g<1>{issue_id}", issue.get("self", ""))
        project = (issue.get("fields") or {}).get("project")
        if isinstance(project, dict):
            project["key"] = key.rsplit("-", 1)[0]
    comment = data.get("comment")
    if isinstance(comment, dict) and "self" in comment:
        comment["self"] = _ISSUE_IN_PATH.sub(rf"\g<1>{issue_id}", comment["self"])
    return data


def with_comment(data: dict[str, Any], body: str, author: dict[str, Any] | None = None) -> dict[str, Any]:
    """A copy of a comment capture with another body (and author, replacing the capture's identifiers)."""
    data = copy.deepcopy(data)
    data["comment"]["body"] = body
    if author is not None:
        for role in ("author", "updateAuthor"):
            who = {k: v for k, v in data["comment"][role].items() if k not in ("accountId", "name", "key")}
            data["comment"][role] = {**who, **author}
    return data


def deliver_jira(
    server: BotServer,
    data: dict[str, Any] | bytes,
    identifier: str | None = None,
    *,
    secret: str | None = JIRA_SECRET,
    token: str | None = None,
    **headers: str,
) -> httpx.Response:
    """POST to /webhooks/jira as Jira does: `X-Hub-Signature: sha256=<hmac>` over the exact bytes sent (when
    `secret`), `X-Atlassian-Webhook-Identifier` (fresh unless given; "" leaves it out) and, as an
    Automation rule sends it, `X-ReqGate-Token` (when `token`)."""
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    sent = {"Content-Type": "application/json", "User-Agent": "Atlassian Webhook HTTP Client"}
    identifier = str(uuid.uuid4()) if identifier is None else identifier
    if identifier:
        sent["X-Atlassian-Webhook-Identifier"] = identifier
    if secret is not None:
        sent["X-Hub-Signature"] = sign(body, secret)
    if token is not None:
        sent["X-ReqGate-Token"] = token
    return server.client.post("/webhooks/jira", content=body, headers={**sent, **headers})


def bot_comments(fake: FakeJira, key: str) -> list[FakeComment]:
    return [c for c in fake.comments(key) if c.author is fake.bot]


def stickies(fake: FakeJira, key: str) -> list[FakeComment]:
    return [c for c in bot_comments(fake, key) if isinstance(c.body, str) and is_sticky(c.body)]


def ours(labels: list[str]) -> set[str]:
    return {name for name in labels if name.startswith("reqgate:")}
