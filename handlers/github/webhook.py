"""GitHub deliveries: signature check over the raw body, then a verified payload into a `Trigger` or `Ignored`.

Only the fields the bot needs are validated; a handled event that lacks one raises `ValueError` (the route
answers 400). Events and actions the bot does not handle are `Ignored` without looking deeper.
"""

from __future__ import annotations

import hmac
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from reqgate.handlers.base import Ignored, TicketRef, Trigger
from reqgate.handlers.commands import parse_command
from reqgate.handlers.publish import is_sticky

SIGNATURE_PREFIX = "sha256="


class BotIdentity(BaseModel):
    """Who the bot is on GitHub, to recognise (and ignore) what it caused itself."""

    model_config = ConfigDict(frozen=True)

    login: str | None = None  # "reqgate[bot]" for an App, the token owner's login otherwise
    app_id: int | None = None


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """Check `X-Hub-Signature-256` (`sha256=<hex>`) against HMAC-SHA256 of the raw body, in constant time."""
    if not header or not header.startswith(SIGNATURE_PREFIX):
        return False
    # The one-shot form runs in OpenSSL; `hmac.new` builds the HMAC in Python, several times slower.
    expected = hmac.digest(secret.encode(), body, "sha256").hex().encode()
    # Bytes, because compare_digest refuses non-ASCII str and a header can carry anything.
    given = header[len(SIGNATURE_PREFIX) :].strip().lower().encode("utf-8", "replace")
    return hmac.compare_digest(expected, given)


class _Payload(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Account(_Payload):
    login: str
    type: str | None = None


class _App(_Payload):
    id: int


class _Issue(_Payload):
    number: int
    pull_request: dict[str, Any] | None = None
    performed_via_github_app: _App | None = None


class _Comment(_Payload):
    id: int
    body: str | None = None
    user: _Account
    author_association: str | None = None
    performed_via_github_app: _App | None = None


class _Repository(_Payload):
    full_name: str


class _Installation(_Payload):
    id: int


class _Envelope(_Payload):
    action: str


class _IssuesEvent(_Envelope):
    issue: _Issue
    repository: _Repository
    sender: _Account
    installation: _Installation | None = None
    changes: dict[str, Any] | None = None


class _CommentEvent(_IssuesEvent):
    comment: _Comment


# "typed" / "untyped": the issue type decides the rubric, so a new type is a new review.
_REVIEW_ACTIONS = frozenset({"opened", "reopened", "edited", "typed", "untyped"})
_LABEL_ACTIONS = frozenset({"labeled", "unlabeled"})
_IGNORED_EVENTS = {
    "ping": "ping",
    "installation": "installation event",
    "installation_repositories": "installation event",
    "installation_target": "installation event",
    "github_app_authorization": "installation event",
    "pull_request": "pull request event",
    "pull_request_review": "pull request event",
    "pull_request_review_comment": "pull request event",
    "pull_request_review_thread": "pull request event",
    "label": "label event",
}


M = TypeVar("M", bound=_Payload)


def _validate(model: type[M], event: str, payload: dict[str, Any]) -> M:
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(payload)'}: {error['msg']}"
            for error in exc.errors()
        )
        raise ValueError(f"malformed {event} payload: {fields}") from None


def _caused_by_bot(sender: _Account, app: _App | None, identity: BotIdentity) -> bool:
    if identity.login and sender.login.casefold() == identity.login.casefold():
        return True
    return (
        sender.type == "Bot" and app is not None and identity.app_id is not None and app.id == identity.app_id
    )


def _ref(event: _IssuesEvent) -> TicketRef:
    return TicketRef(
        source="github",
        project=event.repository.full_name,
        key=str(event.issue.number),
        installation_id=event.installation.id if event.installation else None,
    )


def parse_delivery(
    event: str, delivery_id: str, payload: dict[str, Any], identity: BotIdentity
) -> Trigger | Ignored:
    """Decide what a verified delivery asks for. Raises ValueError when a handled event lacks a field."""
    if event in _IGNORED_EVENTS:
        return Ignored(reason=_IGNORED_EVENTS[event])
    if event not in ("issues", "issue_comment"):
        return Ignored(reason=f"event {event!r} not handled")
    action = _validate(_Envelope, event, payload).action
    if event == "issues":
        return _issues(delivery_id, action, payload, identity)
    return _issue_comment(delivery_id, action, payload, identity)


def _issues(
    delivery_id: str, action: str, payload: dict[str, Any], identity: BotIdentity
) -> Trigger | Ignored:
    if action in _LABEL_ACTIONS:
        return Ignored(reason="label event")
    if action not in _REVIEW_ACTIONS:
        return Ignored(reason=f"issues.{action} not handled")
    parsed = _validate(_IssuesEvent, "issues", payload)
    if _caused_by_bot(parsed.sender, parsed.issue.performed_via_github_app, identity):
        return Ignored(reason="caused by the bot itself")
    if action == "edited" and not {"title", "body"} & set(parsed.changes or {}):
        return Ignored(reason="edit changed neither title nor body")
    return Trigger(
        delivery_id=delivery_id,
        source="github",
        kind="review",
        reason=action,
        ref=_ref(parsed),
        actor=parsed.sender.login,
    )


def _issue_comment(
    delivery_id: str, action: str, payload: dict[str, Any], identity: BotIdentity
) -> Trigger | Ignored:
    if action != "created":
        return Ignored(reason=f"comment {action}")
    parsed = _validate(_CommentEvent, "issue_comment", payload)
    comment = parsed.comment
    if parsed.issue.pull_request is not None:
        return Ignored(reason="comment on a pull request")
    body = comment.body or ""
    if (
        _caused_by_bot(parsed.sender, comment.performed_via_github_app, identity)
        or _caused_by_bot(comment.user, comment.performed_via_github_app, identity)
        or is_sticky(body)
    ):
        return Ignored(reason="caused by the bot itself")
    command = parse_command(body)
    if command is None:
        return Ignored(reason="comment without a command")
    name, line = command
    return Trigger(
        delivery_id=delivery_id,
        source="github",
        kind="command",
        reason="comment",
        ref=_ref(parsed),
        command=name,
        command_line=line,
        actor=comment.user.login,
        actor_association=comment.author_association,
        comment_id=str(comment.id),
    )
