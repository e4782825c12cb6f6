"""Jira webhooks: authenticate a delivery, name it for deduplication, and parse it into a `Trigger`.

Two senders exist. Admin webhooks (Cloud and Data Center) sign the raw body when a secret is set, as
`X-Hub-Signature: sha256=<hex>`. Jira Automation's "Send web request" cannot sign, so it authenticates with a
shared secret in a header the rule sends. Nothing else is accepted.

Payload shapes differ between Cloud and Server / Data Center: Cloud comment events carry a reduced issue,
Server comment events may carry no issue at all (the issue id is only inside `comment.self`), and legacy
`jira:issue_updated` events with `issue_event_type_name: issue_commented` carry the comment.

Automation's built-in bodies ("Issue data") name no event, so an Automation rule sends custom data in the
webhook shape, at least: `{"webhookEvent": "jira:issue_created", "timestamp": {{now.asMillis}},
"issue": {"id": "{{issue.id}}", "key": "{{issue.key}}"}}`; for comments also `"comment": {"id": ...,
"body": ..., "author": {"accountId": ...}}` with `"webhookEvent": "comment_created"`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from reqgate.handlers.base import Ignored, TicketRef, Trigger
from reqgate.handlers.commands import parse_command
from reqgate.handlers.jira.markup import adf_to_text
from reqgate.handlers.publish import is_sticky

SIGNATURE_HEADER = "X-Hub-Signature"
AUTOMATION_TOKEN_HEADER = "X-ReqGate-Token"
IDENTIFIER_HEADER = "X-Atlassian-Webhook-Identifier"

_COMMENT_SELF = re.compile(r"/rest/api/(?:2|3|latest)/issue/([^/]+)/comment/([^/?#]+)")
_REVIEWED_FIELDS = frozenset({"summary", "description"})


class MalformedPayload(ValueError):
    """The body is JSON but not a Jira event this adapter can read (the route answers 400)."""


class JiraIdentity(BaseModel):
    """The bot's own Jira account, from `myself()`: Cloud knows it by accountId, Data Center by name."""

    model_config = ConfigDict(frozen=True)

    account_id: str | None = None
    name: str | None = None

    def is_me(self, user: Mapping[str, Any] | None) -> bool:
        if not isinstance(user, Mapping):
            return False
        if self.account_id and user.get("accountId") == self.account_id:
            return True
        return bool(self.name) and self.name in (user.get("name"), user.get("key"))


def _header(headers: Mapping[str, str], name: str) -> str | None:
    # Starlette's headers are case-insensitive, a plain dict is not.
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value


def _obj(value: Any) -> Mapping[str, Any]:
    """`value` when it is an object, else an empty one: for optional parts of a payload."""
    return value if isinstance(value, Mapping) else {}


def _valid_signature(header: str, body: bytes, secret: str) -> bool:
    method, sep, received = header.strip().partition("=")
    if not sep or method.strip().lower() != "sha256":
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    # Bytes, not str: compare_digest raises TypeError for non-ASCII str, and a header may carry Latin-1.
    return hmac.compare_digest(expected.encode(), received.strip().lower().encode("utf-8", "replace"))


def verify_request(
    headers: Mapping[str, str], body: bytes, *, webhook_secret: str | None, automation_token: str | None
) -> bool:
    """Is this delivery from our Jira: a valid admin-webhook signature or the Automation shared secret?"""
    signature = _header(headers, SIGNATURE_HEADER)
    if signature is not None and webhook_secret and _valid_signature(signature, body, webhook_secret):
        return True
    token = _header(headers, AUTOMATION_TOKEN_HEADER)
    return (
        token is not None
        and bool(automation_token)
        and hmac.compare_digest(token.encode("utf-8", "replace"), (automation_token or "").encode())
    )


def delivery_id(headers: Mapping[str, str], payload: Mapping[str, Any]) -> str:
    """Jira's webhook identifier (stable across its retries), else a hash of event, subject and time."""
    identifier = _header(headers, IDENTIFIER_HEADER)
    if identifier and identifier.strip():
        return identifier.strip()
    issue, comment = _obj(payload.get("issue")), _obj(payload.get("comment"))
    subject = comment.get("self") or comment.get("id") or issue.get("id") or issue.get("key") or ""
    material = json.dumps(
        [payload.get("webhookEvent"), str(subject), payload.get("timestamp")], separators=(",", ":")
    )
    return hashlib.sha256(material.encode()).hexdigest()


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedPayload(f"malformed Jira payload: `{what}` must be an object")
    return value


def _issue_ref(payload: Mapping[str, Any]) -> TicketRef:
    issue = _mapping(payload.get("issue"), "issue")
    key = issue.get("key") or issue.get("id")
    if not isinstance(key, str | int) or not str(key):
        raise MalformedPayload("malformed Jira payload: `issue` has neither `key` nor `id`")
    project_key = _obj(_obj(issue.get("fields")).get("project")).get("key")
    if not isinstance(project_key, str):
        project_key = ""
    if not project_key and isinstance(key, str) and "-" in key:
        project_key = key.rsplit("-", 1)[0]
    issue_id = issue.get("id")
    return TicketRef(source="jira", project=project_key, key=str(key),
                     issue_id=str(issue_id) if isinstance(issue_id, str | int) and str(issue_id) else None)


def _comment_ref(payload: Mapping[str, Any], comment: Mapping[str, Any]) -> TicketRef:
    if isinstance(payload.get("issue"), Mapping):
        return _issue_ref(payload)
    # Server / Data Center: no issue object; the tracker resolves the id to a key and project later.
    match = _COMMENT_SELF.search(str(comment.get("self") or ""))
    if not match:
        raise MalformedPayload("malformed Jira payload: a comment event without `issue` needs `comment.self`")
    return TicketRef(source="jira", project="", key=match.group(1), issue_id=match.group(1))


def _comment_body(comment: Mapping[str, Any]) -> str:
    body = comment.get("body")
    if isinstance(body, Mapping):
        return adf_to_text(dict(body))
    if body is None:
        return ""
    if not isinstance(body, str):
        raise MalformedPayload("malformed Jira payload: `comment.body` must be text or an ADF document")
    return body


def _from_comment(delivery: str, payload: Mapping[str, Any], identity: JiraIdentity) -> Trigger | Ignored:
    comment = _mapping(payload.get("comment"), "comment")
    author = _obj(comment.get("author"))
    if identity.is_me(author) or identity.is_me(payload.get("user")):
        return Ignored(reason="comment by the bot itself")
    body = _comment_body(comment)
    if is_sticky(body):
        return Ignored(reason="comment carries the review marker")
    parsed = parse_command(body)
    if parsed is None:
        return Ignored(reason="comment without a /reqgate command")
    command, line = parsed
    ref = _comment_ref(payload, comment)
    comment_id = comment.get("id")
    return Trigger(
        delivery_id=delivery,
        source="jira",
        kind="command",
        reason="comment",
        ref=ref,
        command=command,
        command_line=line,
        actor=_user_id(author),
        comment_id=str(comment_id) if comment_id is not None else None,
    )


def _user_id(user: Any) -> str | None:
    """How commands and filters name a user: the accountId on Cloud, the user name on Data Center."""
    user = _obj(user)
    value = user.get("accountId") or user.get("name") or user.get("key")
    return str(value) if value else None


def _changed_fields(payload: Mapping[str, Any]) -> set[str]:
    changelog = payload.get("changelog")
    if not isinstance(changelog, Mapping):
        return set()
    items = changelog.get("items")
    if not isinstance(items, list):
        raise MalformedPayload("malformed Jira payload: `changelog.items` must be a list")
    fields: set[str] = set()
    for item in items:
        item = _mapping(item, "changelog.items[]")
        name = item.get("fieldId") or item.get("field")
        if isinstance(name, str):
            fields.add(name.lower())
    return fields


def parse_delivery(delivery_id: str, payload: dict[str, Any], identity: JiraIdentity) -> Trigger | Ignored:
    """What a verified delivery asks for. Raises `MalformedPayload` (a ValueError) for a non-Jira body."""
    if not isinstance(payload, Mapping):
        raise MalformedPayload("malformed Jira payload: the body must be a JSON object")
    event = payload.get("webhookEvent")
    if not isinstance(event, str) or not event:
        raise MalformedPayload("malformed Jira payload: `webhookEvent` is missing")

    if event == "comment_created":
        return _from_comment(delivery_id, payload, identity)
    if event == "jira:issue_updated" and payload.get("issue_event_type_name") == "issue_commented":
        if isinstance(payload.get("comment"), Mapping):
            return _from_comment(delivery_id, payload, identity)
        return Ignored(reason="issue_commented without a comment")
    if event not in ("jira:issue_created", "jira:issue_updated"):
        return Ignored(reason=f"event {event} is not handled")

    ref = _issue_ref(payload)
    if identity.is_me(payload.get("user")):
        return Ignored(reason="change made by the bot itself")
    if event == "jira:issue_updated":
        changed = _changed_fields(payload)
        if payload.get("issue_event_type_name") == "issue_comment_edited" or "comment" in payload:
            return Ignored(reason="comment updates are not commands")
        if changed and changed <= {"labels"}:
            return Ignored(reason="only labels changed")
        if not changed & _REVIEWED_FIELDS:
            return Ignored(reason="neither summary nor description changed")
    return Trigger(
        delivery_id=delivery_id,
        source="jira",
        kind="review",
        reason="created" if event == "jira:issue_created" else "edited",
        ref=ref,
        actor=_user_id(payload.get("user")),
    )
