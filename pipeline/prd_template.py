"""The deterministic PRD draft: what a rules-only review proposes, and what call 2 falls back to when the
model's draft cannot be trusted (render_prd.py)."""

from __future__ import annotations

from reqgate.pipeline.comment_safety import safe_inline
from reqgate.pipeline.schemas import EvidencedItem, GateDecision, StructureOutput, TicketType


def _provenance(item: EvidencedItem) -> str:
    if not item.evidence:
        return "_(inferred)_"
    if " ".join(item.evidence.split()).casefold() == " ".join(item.text.split()).casefold():
        return "_(your words)_"
    return f'_(from: "{safe_inline(item.evidence)}")_'


def _bullets(items: list[EvidencedItem], empty: str) -> list[str]:
    return [f"- {safe_inline(item.text)} {_provenance(item)}" for item in items] or [f"- {empty}"]


# What "done" is called for each type: the draft's checklist under the heading a PM of that type expects.
_CRITERIA_HEADING: dict[TicketType, str] = {
    TicketType.story: "Acceptance criteria",
    TicketType.bug: "Fixed when",
    TicketType.task: "Done when",
    TicketType.spike: "Expected output",
    TicketType.other: "Done when",
}


def template_prd(structure: StructureOutput, decision: GateDecision) -> str:
    """The deterministic draft for the ticket's type: used offline and whenever call 2 cannot be trusted.

    Only what can be proposed from the text: what is missing is asked by the comment's items, once, and
    the verdict is the comment's header, so neither is repeated here. `decision` is kept for the callers'
    sake (call 2 is bound to it); the template itself states no verdict. Every text in it, the ticket's or
    the model's, passes `safe_inline`: the draft is inert as built and the comment adds it as it is (see
    `RenderOutcome.used_template`), without the markdown re-rendering a model-written draft needs.
    """
    prd = structure.prd
    story = prd.user_story
    ticket_type = structure.ticket_type

    def part(item: EvidencedItem | None) -> str:
        return f"*{safe_inline(item.text)}*" if item else "_(not stated)_"

    lines = [f"**Title:** {safe_inline(prd.title)}"]
    # A bug or a task rarely reads as a user story: there, a want alone is a parser's guess, not a story.
    has_story = story.role or story.want or story.benefit
    if has_story if ticket_type is TicketType.story else (story.role and story.want):
        sentence = f"As a {part(story.role)}, I want {part(story.want)}, so that {part(story.benefit)}."
        lines += ["", f"**User story:** {sentence}"]
    if prd.acceptance_criteria:
        lines += ["", f"**{_CRITERIA_HEADING[ticket_type]}** (proposed from your text: confirm or edit)"]
        lines += [f"- [ ] {safe_inline(item.text)} {_provenance(item)}" for item in prd.acceptance_criteria]
    if prd.edge_cases:
        lines += ["", "**Edge cases:**", *_bullets(prd.edge_cases, "")]
    if prd.dependencies:
        lines += ["", "**Dependencies:**", *_bullets(prd.dependencies, "")]
    if prd.missing_info:
        lines += ["", "**Missing information:**", *[f"- {safe_inline(info)}" for info in prd.missing_info]]
    return "\n".join(lines)
