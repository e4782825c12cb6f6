"""Webhook senders. A route is the same for every tracker (bot/app.py); what differs is here: how a delivery
is authenticated, what names it for deduplication, and how it is parsed. `/webhooks/jira` is a second
instance of the same shape, not a second mechanism."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from reqgate.handlers.base import Ignored, TrackerName, Trigger
from reqgate.handlers.github import webhook as github_webhook
from reqgate.handlers.jira import webhook as jira_webhook

Headers = Mapping[str, str]


class WebhookSource(Protocol):
    name: TrackerName

    def verify(self, headers: Headers, body: bytes) -> bool:
        """Is the raw body authentic? Called before anything parses it."""

    def delivery_id(self, headers: Headers, payload: Mapping[str, Any]) -> str | None:
        """What names this delivery across the sender's retries; None when it cannot be named (a 400)."""

    def parse(self, headers: Headers, payload: dict[str, Any], delivery_id: str) -> Trigger | Ignored:
        """Raises ValueError for a payload the sender should not have sent (a 400)."""


@dataclass
class GitHubSource:
    """`secret` None accepts unsigned deliveries: only with REQGATE_DEV_INSECURE."""

    secret: str | None
    identity: Callable[[], github_webhook.BotIdentity]
    name: TrackerName = "github"

    def verify(self, headers: Headers, body: bytes) -> bool:
        if self.secret is None:
            return True
        return github_webhook.verify_signature(self.secret, body, headers.get("x-hub-signature-256"))

    def delivery_id(self, headers: Headers, payload: Mapping[str, Any]) -> str | None:
        value = (headers.get("x-github-delivery") or "").strip()
        return value or None

    def parse(self, headers: Headers, payload: dict[str, Any], delivery_id: str) -> Trigger | Ignored:
        event = (headers.get("x-github-event") or "").strip()
        if not event:
            raise ValueError("the X-GitHub-Event header is missing")
        return github_webhook.parse_delivery(event, delivery_id, payload, self.identity())


@dataclass
class JiraSource:
    """Neither secret set accepts unauthenticated deliveries: only with REQGATE_DEV_INSECURE."""

    webhook_secret: str | None
    automation_token: str | None
    identity: Callable[[], jira_webhook.JiraIdentity]
    name: TrackerName = "jira"

    def verify(self, headers: Headers, body: bytes) -> bool:
        if self.webhook_secret is None and self.automation_token is None:
            return True
        return jira_webhook.verify_request(
            headers, body, webhook_secret=self.webhook_secret, automation_token=self.automation_token
        )

    def delivery_id(self, headers: Headers, payload: Mapping[str, Any]) -> str | None:
        return jira_webhook.delivery_id(headers, payload)

    def parse(self, headers: Headers, payload: dict[str, Any], delivery_id: str) -> Trigger | Ignored:
        return jira_webhook.parse_delivery(delivery_id, payload, self.identity())
