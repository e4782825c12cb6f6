"""Which tickets get reviewed, decided from the effective configuration, the same on every tracker."""

from __future__ import annotations

from reqgate.pipeline.config import Config
from reqgate.pipeline.rules import decide_type
from reqgate.pipeline.schemas import RequirementPacket


def _folded(values: list[str]) -> set[str]:
    # Label names, logins and project keys compare case-insensitively on both trackers.
    return {value.casefold() for value in values}


def skip_reason(packet: RequirementPacket, config: Config, issue_type: str | None = None) -> str | None:
    """Why this ticket must not be reviewed, or None to review it.

    `issue_type` is the tracker's own type name (Jira's "Story", "Bug"…), by default the packet's; without
    one, the type set by hand or by a type label (`types.labels`) is matched. A type filter skips tickets whose type is unknown.
    """
    if not config.enabled:
        return "ReqGate is disabled for this project (`enabled: false`)"
    filters = config.filters
    labels = _folded(packet.labels)
    skipping = [label for label in filters.skip_labels if label.casefold() in labels]
    if skipping:
        return f"the ticket has the label `{skipping[0]}` (filters.skip_labels)"
    if filters.include_labels and not labels & _folded(filters.include_labels):
        return "the ticket has none of the labels in filters.include_labels"
    if packet.author and packet.author.casefold() in _folded(filters.skip_authors):
        return f"tickets by `{packet.author}` are skipped (filters.skip_authors)"
    if filters.issue_types:
        issue_type = issue_type or packet.issue_type
        # Without a tracker type, the type set by hand or by a label; never the text's guess.
        decided = decide_type(packet, config) if not issue_type else None
        mapped = decided.ticket_type.value if decided and decided.source in ("flag", "label") else None
        types = {name.casefold() for name in (issue_type, mapped) if name}
        if not types & _folded(filters.issue_types):
            shown = issue_type or mapped or "unknown"
            return f"the ticket type `{shown}` is not in filters.issue_types"
    if filters.projects and packet.project.casefold() not in _folded(filters.projects):
        return f"the project `{packet.project}` is not in filters.projects"
    return None
