"""The ticket types ReqGate reviews. A module of its own, without pydantic, so that the command line can list
them in `--help` without loading the review's models; `reqgate.pipeline.schemas` re-exports it."""

from __future__ import annotations

from enum import Enum


class TicketType(str, Enum):
    story = "story"
    bug = "bug"
    task = "task"
    spike = "spike"
    other = "other"

    @classmethod
    def coerce(cls, value: object) -> TicketType:
        """Map tracker words and unknown values onto our types; unknown becomes `other`, never an error."""
        if isinstance(value, TicketType):
            return value
        word = str(value or "").strip().lower()
        aliases = {
            "feature": "story", "user story": "story", "story": "story", "improvement": "story",
            "enhancement": "story", "new feature": "story", "epic": "story",
            "bug": "bug", "defect": "bug", "incident": "bug",
            "task": "task", "sub-task": "task", "subtask": "task", "chore": "task",
            "spike": "spike", "research": "spike", "investigation": "spike",
        }
        return cls(aliases.get(word, "other"))
