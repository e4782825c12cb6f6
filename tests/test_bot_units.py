"""Settings, log scrubbing and the webhook route's answers, without a database or a tracker."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import structlog
from starlette.testclient import TestClient

from reqgate.bot import logging as bot_logging
from reqgate.bot.app import create_app
from reqgate.bot.settings import Settings, SettingsError
from reqgate.bot.sources import GitHubSource, JiraSource
from reqgate.handlers.base import Trigger
from reqgate.handlers.github.webhook import BotIdentity
from reqgate.handlers.jira.webhook import JiraIdentity
from tests.e2e_support import SECRET, comment_event, issue_event, sign


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_serve_refuses_to_start_without_a_webhook_secret() -> None:
    with pytest.raises(SettingsError, match="REQGATE_GITHUB_WEBHOOK_SECRET"):
        settings(github_token="t").check_serveable()
    settings(github_token="t", dev_insecure=True).check_serveable()
    settings(github_token="t", role="worker").check_serveable()


def test_a_clear_error_without_app_credentials_or_token() -> None:
    with pytest.raises(SettingsError, match="neither App credentials nor a token"):
        settings(github_webhook_secret="s").check_serveable()
    with pytest.raises(SettingsError, match="private key is not"):
        settings(github_webhook_secret="s", github_app_id=1).check_serveable()
    with pytest.raises(SettingsError, match="no tracker is configured"):
        settings().check_serveable()
    settings(github_webhook_secret="s", github_app_id=1, github_private_key="pem").check_serveable()


def test_jira_needs_credentials_and_an_authenticated_route() -> None:
    problems = settings(jira_url="https://jira.example.com").problems()
    assert any("REQGATE_JIRA_PAT" in p for p in problems)
    assert any("REQGATE_JIRA_WEBHOOK_SECRET" in p for p in problems)
    assert settings(jira_url="https://j", jira_pat="p", jira_automation_token="t").problems() == []


def test_settings_come_from_the_environment_and_hide_secrets(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.setenv("REQGATE_GITHUB_TOKEN", "ghp_supersecret")
    monkeypatch.setenv("REQGATE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REQGATE_MAX_BODY_BYTES", "")  # empty means unset, not an error
    loaded = Settings()
    assert "ghp_supersecret" not in repr(loaded)
    assert loaded.system_database_url() == f"sqlite:///{tmp_path / 'reqgate.sqlite'}"
    assert loaded.max_body_bytes == 1024 * 1024
    monkeypatch.setenv("REQGATE_DATABASE_URL", "postgresql://u:p@db/reqgate")
    assert Settings().system_database_url() == "postgresql://u:p@db/reqgate"


def test_logs_drop_bodies_and_secret_keys_and_scrub_token_shapes() -> None:
    out = io.StringIO()
    bot_logging.configure("INFO")
    structlog.configure(logger_factory=structlog.WriteLoggerFactory(file=out), cache_logger_on_first_use=False)
    log = bot_logging.get_logger("t")
    with bot_logging.bind(delivery_id="d1", workflow_id="gh:d1"):
        log.info("x", body="the ticket text", webhook_secret="s3", note="token ghp_" + "a" * 36,
                 error="failed for https://user:hunter2@example.com/x")
    record = json.loads(out.getvalue())
    assert record["delivery_id"] == "d1" and record["workflow_id"] == "gh:d1"
    assert "body" not in record and "webhook_secret" not in record
    assert "ghp_" not in record["note"] and "hunter2" not in record["error"]
    bot_logging.configure("INFO")


class Recorder:
    def __init__(self) -> None:
        self.seen: list[Trigger] = []

    async def accept(self, trigger: Trigger) -> bool:
        fresh = trigger.delivery_id not in {t.delivery_id for t in self.seen}
        self.seen.append(trigger)
        return fresh

    def ready(self) -> str | None:
        return None


def post(client: TestClient, data: dict[str, object] | bytes, event: str = "issues", delivery: str = "d",
         secret: str | None = SECRET, path: str = "/webhooks/github", **headers: str):  # type: ignore[no-untyped-def]
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    sent = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "Content-Type": "application/json", **headers}
    if secret:
        sent["X-Hub-Signature-256"] = sign(body, secret)
    return client.post(path, content=body, headers=sent)


@pytest.fixture
def client() -> tuple[TestClient, Recorder]:
    recorder = Recorder()
    github = GitHubSource(secret=SECRET, identity=lambda: BotIdentity(login="reqgate[bot]", app_id=7))
    jira = JiraSource(webhook_secret="jira-secret", automation_token=None, identity=lambda: JiraIdentity())
    return TestClient(create_app([github, jira], recorder, max_body_bytes=64 * 1024)), recorder


def test_route_answers(client: tuple[TestClient, Recorder]) -> None:
    http, recorder = client
    assert post(http, issue_event("opened", 3), delivery="a").status_code == 202
    assert post(http, issue_event("opened", 3), delivery="a").status_code == 200
    assert post(http, issue_event("opened", 3), secret="nope").status_code == 401
    assert post(http, b"{", delivery="b").status_code == 400
    assert post(http, {"zen": "x"}, event="ping").status_code == 204
    assert post(http, comment_event("/reqgate help", 3, login="reqgate[bot]", user_type="Bot"),
                event="issue_comment").status_code == 204
    assert post(http, b"x" * (64 * 1024 + 1)).status_code == 413
    assert [t.workflow_id for t in recorder.seen] == ["gh:a", "gh:a"]
    assert recorder.seen[0].ref.ticket_id == "github:Codertocat/Hello-World#3"


def test_form_encoded_github_deliveries_are_accepted(client: tuple[TestClient, Recorder]) -> None:
    from urllib.parse import urlencode

    http, recorder = client
    body = urlencode({"payload": json.dumps(issue_event("opened", 4))}).encode()
    answer = post(http, body, delivery="form", **{"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 202 and recorder.seen[-1].ref.key == "4"


def test_the_jira_route_is_the_same_route_with_another_source(client: tuple[TestClient, Recorder]) -> None:
    http, recorder = client
    payload = {"webhookEvent": "jira:issue_created", "timestamp": 1,
               "issue": {"id": "10001", "key": "PROJ-7", "fields": {"project": {"key": "PROJ"}}}}
    body = json.dumps(payload).encode()
    headers = {"X-Atlassian-Webhook-Identifier": "jira-1", "Content-Type": "application/json"}
    assert http.post("/webhooks/jira", content=body, headers=headers).status_code == 401
    import hashlib
    import hmac

    signature = "sha256=" + hmac.new(b"jira-secret", body, hashlib.sha256).hexdigest()
    answer = http.post("/webhooks/jira", content=body, headers={**headers, "X-Hub-Signature": signature})
    assert answer.status_code == 202 and answer.json()["workflow_id"] == "jira:jira-1"
    assert recorder.seen[-1].ref.ticket_id == "jira:PROJ#PROJ-7"


def test_metrics_and_health(client: tuple[TestClient, Recorder]) -> None:
    http, _ = client
    post(http, issue_event("opened", 5), delivery="m")
    assert http.get("/healthz").status_code == 200
    assert http.get("/readyz").json()["status"] == "ready"
    metrics = http.get("/metrics").text
    assert 'reqgate_webhooks_total{outcome="accepted",source="github"}' in metrics
