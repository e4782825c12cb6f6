"""Jira webhook authentication, delivery ids and parsing, driven by the real captures in ../shared/data."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest

from reqgate.handlers.base import Ignored, Trigger
from reqgate.handlers.jira.webhook import JiraIdentity, delivery_id, parse_delivery, verify_request

PAYLOADS = Path("../shared/data/jira-payloads")
CLOUD_CREATED = "mattermost-webhook-cloud-issue-created-many-fields.json"
CLOUD_COMMENT = "mattermost-webhook-cloud-comment-created.json"
SERVER_COMMENT = "mattermost-webhook-server-comment-created.json"
BOT = JiraIdentity(account_id="bot-account", name="reqgate-bot")


def raw(name: str) -> bytes:
    return (PAYLOADS / name).read_bytes()


def load(name: str) -> dict[str, Any]:
    return json.loads(raw(name))


def sign(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def with_comment(name: str, body: str) -> dict[str, Any]:
    payload = load(name)
    payload["comment"]["body"] = body
    return payload


def updated(items: list[dict[str, Any]], user: dict[str, Any] | None = None) -> dict[str, Any]:
    payload = load(CLOUD_CREATED)
    payload["webhookEvent"] = "jira:issue_updated"
    payload["issue_event_type_name"] = "issue_updated"
    payload["changelog"] = {"id": "1", "items": items}
    if user is not None:
        payload["user"] = user
    return payload


def item(field: str) -> dict[str, Any]:
    return {"field": field, "fieldtype": "jira", "fieldId": field, "fromString": "a", "toString": "b"}


# -- verify_request -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [CLOUD_CREATED, CLOUD_COMMENT, SERVER_COMMENT])
def test_signature_over_the_raw_capture_is_accepted(name: str) -> None:
    body = raw(name)
    headers = {"X-Hub-Signature": sign(body, "s3cret")}
    assert verify_request(headers, body, webhook_secret="s3cret", automation_token=None)


def test_signature_header_name_is_case_insensitive_and_method_prefix_is_parsed() -> None:
    body = raw(CLOUD_COMMENT)
    digest = sign(body, "s3cret").split("=", 1)[1]
    assert verify_request(
        {"x-hub-signature": f"SHA256={digest.upper()}"}, body, webhook_secret="s3cret", automation_token=None
    )


@pytest.mark.parametrize(
    "headers",
    [
        {},  # missing
        {"X-Hub-Signature": "sha256=" + "0" * 64},  # wrong digest
        {"X-Hub-Signature": "sha1=" + hmac.new(b"s3cret", b"", hashlib.sha1).hexdigest()},  # unknown method
        {"X-Hub-Signature": "garbage"},
    ],
)
def test_bad_or_missing_signature_is_refused(headers: dict[str, str]) -> None:
    assert not verify_request(headers, raw(CLOUD_COMMENT), webhook_secret="s3cret", automation_token=None)


def test_signature_with_the_wrong_secret_or_a_changed_body_is_refused() -> None:
    body = raw(CLOUD_CREATED)
    assert not verify_request(
        {"X-Hub-Signature": sign(body, "other")}, body, webhook_secret="s3cret", automation_token=None
    )
    assert not verify_request(
        {"X-Hub-Signature": sign(body, "s3cret")}, body + b" ", webhook_secret="s3cret", automation_token=None
    )


def test_signature_is_refused_when_no_secret_is_configured() -> None:
    body = raw(CLOUD_CREATED)
    assert not verify_request(
        {"X-Hub-Signature": sign(body, "")}, body, webhook_secret=None, automation_token=None
    )


def test_automation_token() -> None:
    body = raw(CLOUD_CREATED)
    assert verify_request(
        {"X-ReqGate-Token": "tok-123"}, body, webhook_secret=None, automation_token="tok-123"
    )
    assert not verify_request(
        {"X-ReqGate-Token": "tok-124"}, body, webhook_secret=None, automation_token="tok-123"
    )
    assert not verify_request({"X-ReqGate-Token": ""}, body, webhook_secret=None, automation_token=None)
    assert not verify_request({}, body, webhook_secret="s3cret", automation_token="tok-123")


def test_either_configured_mechanism_suffices() -> None:
    body = raw(CLOUD_CREATED)
    headers = {"X-Hub-Signature": sign(body, "wrong"), "X-ReqGate-Token": "tok-123"}
    assert verify_request(headers, body, webhook_secret="s3cret", automation_token="tok-123")


# -- delivery_id --------------------------------------------------------------------------------------


def test_delivery_id_prefers_the_atlassian_identifier() -> None:
    payload = load(CLOUD_CREATED)
    assert delivery_id({"X-Atlassian-Webhook-Identifier": "abc-123"}, payload) == "abc-123"
    assert delivery_id({"x-atlassian-webhook-identifier": "abc-123"}, payload) == "abc-123"


def test_delivery_id_without_the_header_hashes_event_subject_and_time() -> None:
    created, comment, server = load(CLOUD_CREATED), load(CLOUD_COMMENT), load(SERVER_COMMENT)
    ids = {delivery_id({}, p) for p in (created, comment, server)}
    assert len(ids) == 3 and all(len(i) == 64 for i in ids)
    assert delivery_id({}, created) == delivery_id({}, copy.deepcopy(created))
    later = copy.deepcopy(created)
    later["timestamp"] += 1
    assert delivery_id({}, later) != delivery_id({}, created)


# -- parse_delivery: the real captures ----------------------------------------------------------------


def test_cloud_issue_created_is_a_review() -> None:
    result = parse_delivery("d1", load(CLOUD_CREATED), BOT)
    assert isinstance(result, Trigger)
    assert (result.kind, result.reason, result.source) == ("review", "created", "jira")
    assert (result.ref.project, result.ref.key) == ("KT", "KT-22")
    assert result.actor == "5cedcb4355a88a0fc86388ba"
    assert result.workflow_id == "jira:d1"


def test_issue_created_by_the_bot_is_ignored() -> None:
    me = JiraIdentity(account_id="5cedcb4355a88a0fc86388ba")
    assert isinstance(parse_delivery("d1", load(CLOUD_CREATED), me), Ignored)


def test_cloud_comment_without_a_command_is_ignored() -> None:
    result = parse_delivery("d2", load(CLOUD_COMMENT), BOT)
    assert isinstance(result, Ignored)


@pytest.mark.parametrize(
    ("body", "command"),
    [
        ("/reqgate recheck", "recheck"),
        ("Edited the AC.\n/reqgate recheck please", "recheck"),
        ("/reqgate", "help"),
        ("/reqgate config", "config"),
        ("/reqgate frobnicate", "unknown"),
    ],
)
def test_cloud_comment_with_a_command(body: str, command: str) -> None:
    result = parse_delivery("d2", with_comment(CLOUD_COMMENT, body), BOT)
    assert isinstance(result, Trigger)
    assert (result.kind, result.reason, result.command) == ("command", "comment", command)
    assert (result.ref.project, result.ref.key) == ("TES", "TES-41")
    assert result.actor == "5c5f880629be9642ba529340"
    assert result.comment_id == "10019"
    assert result.command_line and result.command_line.startswith("/reqgate")


def test_comment_in_adf_is_read_too() -> None:
    adf = {
        "type": "doc",
        "version": 1,
        "content": [{"type": "paragraph", "content": [{"type": "text", "text": "/reqgate recheck"}]}],
    }
    result = parse_delivery("d2", with_comment(CLOUD_COMMENT, adf), BOT)  # type: ignore[arg-type]
    assert isinstance(result, Trigger) and result.command == "recheck"


def test_server_comment_without_issue_takes_the_id_from_comment_self() -> None:
    result = parse_delivery("d3", with_comment(SERVER_COMMENT, "/reqgate recheck"), BOT)
    assert isinstance(result, Trigger)
    assert (result.ref.project, result.ref.key) == ("", "10013")
    assert result.actor == "levbrouk"
    assert result.comment_id == "10082"


def test_server_comment_without_a_command_is_ignored() -> None:
    assert isinstance(parse_delivery("d3", load(SERVER_COMMENT), BOT), Ignored)


def test_comments_by_the_bot_are_ignored_on_cloud_and_server() -> None:
    cloud_bot = JiraIdentity(account_id="5c5f880629be9642ba529340")
    server_bot = JiraIdentity(name="levbrouk")
    assert isinstance(
        parse_delivery("d", with_comment(CLOUD_COMMENT, "/reqgate recheck"), cloud_bot), Ignored
    )
    assert isinstance(
        parse_delivery("d", with_comment(SERVER_COMMENT, "/reqgate recheck"), server_bot), Ignored
    )


def test_an_identity_without_ids_matches_nobody() -> None:
    result = parse_delivery("d", with_comment(CLOUD_COMMENT, "/reqgate recheck"), JiraIdentity())
    assert isinstance(result, Trigger)


def test_a_comment_carrying_the_review_marker_is_ignored() -> None:
    body = "h3. ReqGate\n/reqgate recheck\n{color:#97a0af}\\<\\!\\-\\- reqgate:review v1 \\-\\->{color}"
    assert isinstance(parse_delivery("d", with_comment(CLOUD_COMMENT, body), BOT), Ignored)


def test_legacy_issue_commented_update_carries_the_comment() -> None:
    payload = load(CLOUD_CREATED)
    payload["webhookEvent"] = "jira:issue_updated"
    payload["issue_event_type_name"] = "issue_commented"
    payload["comment"] = copy.deepcopy(load(CLOUD_COMMENT)["comment"])
    payload["comment"]["body"] = "/reqgate recheck"
    result = parse_delivery("d4", payload, BOT)
    assert isinstance(result, Trigger)
    assert (result.kind, result.command, result.ref.key, result.ref.project) == (
        "command",
        "recheck",
        "KT-22",
        "KT",
    )


# -- parse_delivery: edits --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields", [["summary"], ["description"], ["labels", "description"], ["assignee", "summary"]]
)
def test_summary_or_description_change_is_an_edit(fields: list[str]) -> None:
    result = parse_delivery("d5", updated([item(f) for f in fields]), BOT)
    assert isinstance(result, Trigger)
    assert (result.kind, result.reason, result.ref.key) == ("review", "edited", "KT-22")


@pytest.mark.parametrize("fields", [["labels"], ["assignee"], ["status", "resolution"], []])
def test_other_changes_are_ignored(fields: list[str]) -> None:
    assert isinstance(parse_delivery("d5", updated([item(f) for f in fields]), BOT), Ignored)


def test_changes_made_by_the_bot_are_ignored() -> None:
    payload = updated([item("description")], user={"accountId": "bot-account", "displayName": "ReqGate"})
    assert isinstance(parse_delivery("d5", payload, BOT), Ignored)


def test_comment_edits_and_other_events_are_ignored() -> None:
    edited = with_comment(CLOUD_COMMENT, "/reqgate recheck")
    edited["webhookEvent"] = "comment_updated"
    assert isinstance(parse_delivery("d", edited, BOT), Ignored)
    legacy = updated([])
    legacy["issue_event_type_name"] = "issue_comment_edited"
    legacy["comment"] = with_comment(CLOUD_COMMENT, "/reqgate recheck")["comment"]
    assert isinstance(parse_delivery("d", legacy, BOT), Ignored)
    deleted = load(CLOUD_CREATED)
    deleted["webhookEvent"] = "jira:issue_deleted"
    assert isinstance(parse_delivery("d", deleted, BOT), Ignored)


# -- parse_delivery: malformed ------------------------------------------------------------------------


def test_malformed_payloads_raise_value_error() -> None:
    no_event = load(CLOUD_CREATED)
    del no_event["webhookEvent"]
    no_issue = load(CLOUD_CREATED)
    del no_issue["issue"]
    no_self = with_comment(SERVER_COMMENT, "/reqgate recheck")
    del no_self["comment"]["self"]
    bad_items = updated([])
    bad_items["changelog"]["items"] = "summary"
    bad_body = with_comment(CLOUD_COMMENT, "x")
    bad_body["comment"]["body"] = 42
    for payload, words in [
        (no_event, "webhookEvent"),
        (no_issue, "issue"),
        (no_self, "comment.self"),
        (bad_items, "changelog.items"),
        (bad_body, "comment.body"),
        ([], "JSON object"),
    ]:
        with pytest.raises(ValueError, match=words.replace(".", r"\.")):
            parse_delivery("d", payload, BOT)  # type: ignore[arg-type]


def test_every_jira_event_queues_by_issue_id_so_one_ticket_runs_one_event_at_a_time() -> None:
    created = parse_delivery("d1", load(CLOUD_CREATED), BOT)
    server = parse_delivery("d2", with_comment(SERVER_COMMENT, "/reqgate recheck"), BOT)
    assert isinstance(created, Trigger) and isinstance(server, Trigger)
    issue_id = str(load(CLOUD_CREATED)["issue"]["id"])
    assert created.ref.issue_id == issue_id and created.ref.queue_key == f"jira:id:{issue_id}"
    # The Data Center comment names its issue by id only, inside comment.self: same partition scheme.
    assert server.ref.issue_id == server.ref.key and server.ref.queue_key == f"jira:id:{server.ref.key}"


# -- hostile ADF at the door ------------------------------------------------------------------------------


class _Recorder:
    def __init__(self) -> None:
        self.seen: list[Trigger] = []

    async def accept(self, trigger: Trigger) -> bool:
        self.seen.append(trigger)
        return True

    def ready(self) -> str | None:
        return None


@pytest.mark.parametrize("number", [b"1e999", b"-1e999", b"1e308", b"\"NaN\""])
def test_signed_recheck_with_a_non_finite_number_in_its_adf_is_accepted(number: bytes) -> None:
    from starlette.testclient import TestClient

    from reqgate.bot.app import create_app
    from reqgate.bot.sources import JiraSource

    adf = {"type": "doc", "version": 1, "content": [
        {"type": "heading", "attrs": {"level": "@N"}, "content": [{"type": "text", "text": "Done"}]},
        {"type": "orderedList", "attrs": {"order": "@N"}, "content": [
            {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "x"}]}]}]},
        {"type": "paragraph", "content": [{"type": "text", "text": "/reqgate recheck"}]},
    ]}
    # json.dumps writes infinity as `Infinity`; Jira's sender may write any valid JSON number, `1e999` included.
    body = json.dumps(with_comment(CLOUD_COMMENT, adf)).replace('"@N"', "@N").encode().replace(b"@N", number)
    recorder = _Recorder()
    jira = JiraSource(webhook_secret="s3cret", automation_token=None, identity=lambda: BOT)
    http = TestClient(create_app([jira], recorder, max_body_bytes=64 * 1024))
    answer = http.post("/webhooks/jira", content=body, headers={
        "X-Hub-Signature": sign(body, "s3cret"), "X-Atlassian-Webhook-Identifier": "adf-1",
        "Content-Type": "application/json"})
    assert answer.status_code == 202, answer.text
    assert recorder.seen[-1].command == "recheck"
