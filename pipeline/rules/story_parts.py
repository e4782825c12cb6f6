"""story.role.missing and story.benefit.missing: who needs it, and why."""

from __future__ import annotations

import re

from reqgate.pipeline.rules.document import Document
from reqgate.pipeline.schemas import Finding, TicketType

ROLE_MISSING = "story.role.missing"
BENEFIT_MISSING = "story.benefit.missing"
CHECK_IDS = (ROLE_MISSING, BENEFIT_MISSING)

# A "why" stated outside the story sentence: a motivation section, or a purpose clause anywhere.
_WHY_RE = re.compile(
    r"^[ \t#>*_-]*(?:h\d\.\s*)?(?:why|motivation|rationale|business value|value|goal|purpose|problem"
    r"(?: statement)?|background|context|benefits?)\b[ \t*_]*(?::|$)"
    r"|\bso\s+that\b|\bin\s+order\s+(?:to|that)\b",
    re.IGNORECASE | re.MULTILINE,
)


def find(doc: Document) -> list[Finding]:
    is_story_type = doc.ticket_type is TicketType.story
    if not (is_story_type or doc.story_like):
        return []
    story = doc.story
    findings: list[Finding] = []
    if story is None or story.role is None:
        findings.append(doc.finding(
            ROLE_MISSING,
            "No user role: the ticket does not say who needs this",
            "Say who needs it, e.g. 'As a warehouse manager, I want to export the stock list, "
            "so that I can reorder before we run out.'",
        ))
    has_benefit = story is not None and story.benefit is not None
    if not has_benefit and not _WHY_RE.search(doc.masked):
        findings.append(doc.finding(
            BENEFIT_MISSING,
            "No benefit: the ticket does not say why this is needed",
            "Add the reason with 'so that ...', e.g. '..., so that I can reorder before we run out.'",
        ))
    return findings
