"""Signature check and delivery parsing on GitHub's own example payloads and variants built from them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from reqgate.handlers.base import Ignored, TicketRef, Trigger
from reqgate.handlers.github.webhook import BotIdentity, parse_delivery, verify_signature
from reqgate.handlers.publish import STICKY_MARKER

PAYLOADS = Path(__file__).resolve().parent.parent / ".." / "shared" / "data" / "github-payloads"
BOT = BotIdentity(login="reqgate[bot]", app_id=4242)


def load(name: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((PAYLOADS / name).read_text(encoding="utf-8"))
    return payload


def parse(event: str, payload: dict[str, Any], identity: BotIdentity = BOT) -> Trigger | Ignored:
    return parse_delivery(event, "delivery-1", payload, identity)


def as_bot_comment(payload: dict[str, Any], body: str = "Thanks!") -> dict[str, Any]:
    bot = {**payload["comment"]["user"], "login": "reqgate[bot]", "type": "Bot", "id": 99}
    payload["comment"].update(user=bot, body=body, performed_via_github_app={"id": 4242, "slug": "reqgate"})
    payload["sender"] = bot
    return payload


# ---- signature -----------------------------------------------------------------------------------------


def test_signature_matches_githubs_published_vector() -> None:
    header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert verify_signature("It's a Secret to Everybody", b"Hello, World!", header)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "sha256=",
        "sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        "sha256=857107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        "sha256=not-hex-at-all-é",
    ],
)
def test_signature_rejects_missing_malformed_or_wrong_headers(header: str | None) -> None:
    assert not verify_signature("It's a Secret to Everybody", b"Hello, World!", header)


def test_signature_covers_every_byte_and_the_secret() -> None:
    header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert not verify_signature("It's a Secret to Everybody", b"Hello, World!\n", header)
    assert not verify_signature("another secret", b"Hello, World!", header)


# ---- reviews -------------------------------------------------------------------------------------------


def test_opened_issue_starts_a_review_of_that_issue() -> None:
    trigger = parse("issues", load("issues.opened.json"))
    assert trigger == Trigger(
        delivery_id="delivery-1",
        source="github",
        kind="review",
        reason="opened",
        ref=TicketRef(source="github", project="Codertocat/Hello-World", key="1"),
        actor="Codertocat",
    )
    assert trigger.workflow_id == "gh:delivery-1"


@pytest.mark.parametrize("action", ["typed", "untyped"])
def test_a_new_issue_type_starts_a_review_since_the_type_picks_the_rubric(action: str) -> None:
    payload = load("issues.opened.json")
    payload["action"] = action
    trigger = parse("issues", payload)
    assert isinstance(trigger, Trigger) and trigger.kind == "review" and trigger.reason == action


def test_reopened_issue_starts_a_review() -> None:
    payload = load("issues.opened.json")
    payload["action"] = "reopened"
    trigger = parse("issues", payload)
    assert isinstance(trigger, Trigger) and trigger.reason == "reopened"


def test_app_delivery_carries_the_installation_id() -> None:
    payload = load("issues.opened.json")
    payload["installation"] = {"id": 777, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNzc3"}
    trigger = parse("issues", payload)
    assert isinstance(trigger, Trigger) and trigger.ref.installation_id == 777


def test_edit_without_title_or_body_change_is_ignored() -> None:
    # The octokit example has `changes: {}`, as GitHub sends for e.g. a milestone change.
    assert isinstance(parse("issues", load("issues.edited.json")), Ignored)


@pytest.mark.parametrize("field", ["title", "body"])
def test_edit_of_title_or_body_is_a_review_with_reason_edited(field: str) -> None:
    payload = load("issues.edited.json")
    payload["changes"] = {field: {"from": "before"}}
    trigger = parse("issues", payload)
    assert isinstance(trigger, Trigger) and (trigger.kind, trigger.reason) == ("review", "edited")


def test_null_issue_body_still_parses() -> None:
    payload = load("issues.opened.json")
    payload["issue"]["body"] = None
    assert isinstance(parse("issues", payload), Trigger)


def test_issue_opened_by_the_bot_itself_is_ignored() -> None:
    payload = load("issues.opened.json")
    payload["sender"] = {**payload["sender"], "login": "reqgate[bot]", "type": "Bot"}
    assert isinstance(parse("issues", payload), Ignored)


@pytest.mark.parametrize("action", ["labeled", "unlabeled"])
def test_label_events_are_ignored(action: str) -> None:
    payload = load("issues.opened.json")
    payload["action"] = action
    payload["label"] = payload["issue"]["labels"][0]
    result = parse("issues", payload)
    assert isinstance(result, Ignored) and "label" in result.reason


@pytest.mark.parametrize("action", ["closed", "assigned", "milestoned", "transferred", "deleted"])
def test_other_issue_actions_are_ignored(action: str) -> None:
    payload = load("issues.opened.json")
    payload["action"] = action
    assert isinstance(parse("issues", payload), Ignored)


# ---- comments and commands -----------------------------------------------------------------------------


def test_command_from_the_owner_is_a_command_trigger() -> None:
    payload = load("issue_comment.created.json")
    payload["comment"]["body"] = "Fixed the wording.\n/reqgate recheck please"
    trigger = parse("issue_comment", payload)
    assert isinstance(trigger, Trigger)
    assert (trigger.kind, trigger.reason, trigger.command) == ("command", "comment", "recheck")
    assert trigger.command_line == "/reqgate recheck please"
    assert (trigger.actor, trigger.actor_association) == ("Codertocat", "OWNER")
    assert trigger.comment_id == "492700400"
    assert trigger.ref == TicketRef(source="github", project="Codertocat/Hello-World", key="1")


@pytest.mark.parametrize(
    ("line", "command"),
    [("/reqgate help", "help"), ("/reqgate config", "config"), ("/reqgate frobnicate", "unknown")],
)
def test_each_command_word_is_recognised(line: str, command: str) -> None:
    payload = load("issue_comment.created.json")
    payload["comment"]["body"] = line
    trigger = parse("issue_comment", payload)
    assert isinstance(trigger, Trigger) and trigger.command == command


def test_plain_comment_is_ignored() -> None:
    # The octokit example: "You are totally right! I'll get this fixed right away."
    assert isinstance(parse("issue_comment", load("issue_comment.created.json")), Ignored)


def test_comment_on_a_pull_request_is_ignored() -> None:
    payload = load("issue_comment.created.json")
    payload["comment"]["body"] = "/reqgate recheck"
    payload["issue"]["pull_request"] = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
    result = parse("issue_comment", payload)
    assert isinstance(result, Ignored) and "pull request" in result.reason


def test_bots_own_comment_is_ignored_by_login() -> None:
    payload = as_bot_comment(load("issue_comment.created.json"), "/reqgate recheck")
    result = parse("issue_comment", payload, BotIdentity(login="reqgate[bot]"))
    assert isinstance(result, Ignored) and "bot" in result.reason


def test_bots_own_comment_is_ignored_by_app_id_before_the_login_is_known() -> None:
    payload = as_bot_comment(load("issue_comment.created.json"), "/reqgate recheck")
    assert isinstance(parse("issue_comment", payload, BotIdentity(login=None, app_id=4242)), Ignored)


def test_another_apps_bot_is_not_mistaken_for_us() -> None:
    payload = as_bot_comment(load("issue_comment.created.json"), "/reqgate recheck")
    payload["comment"]["performed_via_github_app"] = {"id": 1}
    payload["sender"]["login"] = payload["comment"]["user"]["login"] = "other[bot]"
    assert isinstance(parse("issue_comment", payload, BotIdentity(login=None, app_id=4242)), Trigger)


def test_comment_carrying_the_sticky_marker_is_ignored_whoever_sent_it() -> None:
    payload = load("issue_comment.created.json")
    payload["comment"]["body"] = f"{STICKY_MARKER}\n### ReqGate: Ready\n/reqgate recheck"
    assert isinstance(parse("issue_comment", payload, BotIdentity()), Ignored)


def test_null_comment_body_is_not_a_command() -> None:
    payload = load("issue_comment.created.json")
    payload["comment"]["body"] = None
    assert isinstance(parse("issue_comment", payload), Ignored)


@pytest.mark.parametrize("action", ["edited", "deleted"])
def test_comment_edits_and_deletions_are_ignored(action: str) -> None:
    payload = load("issue_comment.created.json")
    payload["action"] = action
    payload["comment"]["body"] = "/reqgate recheck"
    assert isinstance(parse("issue_comment", payload), Ignored)


# ---- other events --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "name"), [("ping", "ping.json"), ("installation", "installation.created.json")]
)
def test_ping_and_installation_are_ignored(event: str, name: str) -> None:
    assert isinstance(parse(event, load(name)), Ignored)


@pytest.mark.parametrize("event", ["pull_request", "push", "label", "star", "something_new"])
def test_other_events_are_ignored_without_reading_the_payload(event: str) -> None:
    assert isinstance(parse(event, {}), Ignored)


# ---- malformed -----------------------------------------------------------------------------------------


def _without(payload: dict[str, Any], *path: str) -> dict[str, Any]:
    broken = copy.deepcopy(payload)
    node = broken
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return broken


@pytest.mark.parametrize(
    ("event", "name", "path"),
    [
        ("issues", "issues.opened.json", ("action",)),
        ("issues", "issues.opened.json", ("issue",)),
        ("issues", "issues.opened.json", ("issue", "number")),
        ("issues", "issues.opened.json", ("repository", "full_name")),
        ("issues", "issues.opened.json", ("sender",)),
        ("issue_comment", "issue_comment.created.json", ("comment",)),
        ("issue_comment", "issue_comment.created.json", ("comment", "id")),
        ("issue_comment", "issue_comment.created.json", ("comment", "user")),
    ],
)
def test_handled_event_missing_a_required_field_raises_value_error(
    event: str, name: str, path: tuple[str, ...]
) -> None:
    with pytest.raises(ValueError, match=rf"malformed {event} payload: .*{path[-1]}"):
        parse(event, _without(load(name), *path))


def test_wrong_types_raise_value_error() -> None:
    payload = load("issues.opened.json")
    payload["issue"]["number"] = "one"
    with pytest.raises(ValueError, match="issue.number"):
        parse("issues", payload)
