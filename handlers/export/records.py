"""One ticket of an export, whatever tracker it came from, and how it becomes a RequirementPacket."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reqgate.handlers.jira.markup import wiki_to_markdown
from reqgate.pipeline.schemas import RequirementPacket

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


def to_packet(record: ExportRecord) -> RequirementPacket:
    """The tracker's type word and the labels go on as they are: the review maps them to a rubric
    (`types.issue_types`, `types.labels`) as it does for a webhook, and says where the type came from."""
    body = wiki_to_markdown(record.body) if record.format == "jira-wiki" else record.body
    return RequirementPacket(source="cli", key=record.key, title=record.title.strip(), body=body,
                             issue_type=record.type, labels=list(record.labels))
