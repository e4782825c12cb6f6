"""One ticket of an export, whatever tracker it came from, and how it becomes a RequirementPacket."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reqgate.handlers.jira.markup import wiki_to_markdown
from reqgate.pipeline.schemas import RequirementPacket, TicketType

BodyFormat = Literal["markdown", "jira-wiki"]


class ExportRecord(BaseModel):
    """A ticket as an export gives it: the body still in its tracker's markup, the type still the tracker's
    word (`Bug`, `Improvement`, ...) or one of ours (`bug`, `story`, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1)
    title: str = ""
    body: str = ""
    format: BodyFormat = "markdown"
    type: str | None = None
    labels: list[str] = Field(default_factory=list)

    @field_validator("key", mode="before")
    @classmethod
    def _key_as_text(cls, value: object) -> object:
        # GitHub and GitLab number their issues; a key is text everywhere else.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def type_hint(record: ExportRecord) -> TicketType | None:
    """The tracker's type, else the first label that names one; None lets the text decide. A type name
    nobody knows ("Documentation") is not a type either: the text decides rather than the `other` rubric."""
    candidates = ([record.type] if record.type else []) + record.labels
    for word in candidates:
        kind = TicketType.coerce(word)
        if kind is not TicketType.other:
            return kind
    return None


def to_packet(record: ExportRecord) -> RequirementPacket:
    body = wiki_to_markdown(record.body) if record.format == "jira-wiki" else record.body
    return RequirementPacket(source="cli", key=record.key, title=record.title.strip(), body=body,
                             type_hint=type_hint(record), labels=list(record.labels))
