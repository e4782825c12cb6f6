"""What every tracker adapter provides, so that the bot's workflow, commands and publishing are written once.

A webhook route verifies and parses a delivery into a `Trigger`; the durable workflow then talks to the
tracker only through the `Tracker` protocol. Each method is one I/O step that the workflow checkpoints.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from reqgate.pipeline.config_loader import LoadedConfig
from reqgate.pipeline.schemas import RequirementPacket

TrackerName = Literal["github", "jira"]
CommandName = Literal["recheck", "help", "config", "unknown"]


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TicketRef(Frozen):
    source: TrackerName
    project: str  # "owner/repo" on GitHub, the project key on Jira
    key: str  # the issue number on GitHub, the issue key (or id until fetched) on Jira
    installation_id: int | None = None  # GitHub App installation that delivered the event
    issue_id: str | None = None  # Jira's numeric issue id: the one name every Jira payload carries

    @property
    def ticket_id(self) -> str:
        """Stable id of the ticket across events: the per-ticket state key."""
        return f"{self.source}:{self.project}#{self.key}"

    @property
    def queue_key(self) -> str:
        """The per-ticket queue partition, known before any lookup. A Jira Data Center comment event names
        its issue by id only, so Jira partitions by id, or events for one ticket could run side by side."""
        return f"{self.source}:id:{self.issue_id}" if self.issue_id else self.ticket_id


class Trigger(Frozen):
    """A verified, parsed delivery that asks for work."""

    delivery_id: str
    source: TrackerName
    kind: Literal["review", "command"]
    reason: str  # opened, reopened, edited, created, comment
    ref: TicketRef
    command: CommandName | None = None
    command_line: str | None = None
    actor: str | None = None
    actor_association: str | None = None
    comment_id: str | None = None

    @property
    def workflow_id(self) -> str:
        return f"{'gh' if self.source == 'github' else 'jira'}:{self.delivery_id}"


class Ignored(Frozen):
    """A verified delivery that needs no work, with the reason (logged, counted in metrics)."""

    reason: str


class Tracker(Protocol):
    """Tracker I/O used by the workflow. Implementations retry transient failures themselves."""

    name: TrackerName
    comment_limit: int

    def fetch_ticket(self, ref: TicketRef) -> RequirementPacket:
        """The ticket as it is now (never the webhook's copy, which may be stale or reduced)."""

    def load_config(self, ref: TicketRef) -> LoadedConfig:
        """Defaults merged with the tracker's config files; raises `ConfigError` for an invalid file."""

    def upsert_comment(self, ref: TicketRef, body: str, known_comment_id: str | None) -> str:
        """Edit the bot's sticky comment (found by id or by marker and authorship) or create it; its id."""

    def sync_labels(self, ref: TicketRef, add: list[str], remove: list[str], color: str) -> None:
        """Add and remove exactly these labels; never touch any other label."""

    def acknowledge(self, trigger: Trigger) -> None:
        """Show that a command was accepted (a reaction on GitHub; nothing on Jira)."""

    def reply(self, ref: TicketRef, body: str) -> None:
        """A short, separate comment (help text, refusals)."""

    def is_authorised(self, trigger: Trigger) -> bool:
        """May this actor run commands on this ticket?"""

    def is_member(self, trigger: Trigger) -> bool:
        """Is the actor one of the project's people (for `cost.llm_reviews_for: members`)?"""
