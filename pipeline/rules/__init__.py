"""The rules engine: deterministic checks that always run, each finding quoting the ticket verbatim.

`run_rules` runs every check whose mode for the ticket type is not "off". Checks live one per module and
expose their check id(s) and a `find(doc)` function; a `Document` prepares the text once for all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reqgate.pipeline.config import Config
from reqgate.pipeline.rules import (
    acceptance,
    atomic,
    bug,
    leakage,
    minimal,
    placeholder,
    questions,
    story_parts,
    unmeasurable,
    vague,
)
from reqgate.pipeline.rules.acceptance import criteria
from reqgate.pipeline.rules.classify import TypeDecision, decide_type, guess_type
from reqgate.pipeline.rules.document import Document
from reqgate.pipeline.rules.story import ParsedStory, parse_story
from reqgate.pipeline.rules.text import Ranges
from reqgate.pipeline.schemas import MODE_SEVERITY, Finding, Mode, RequirementPacket, TicketType

__all__ = ["CHECKS", "Check", "ParsedStory", "TypeDecision", "criteria", "decide_type", "guess_type", "parse_story",
           "run_rules"]


@dataclass(frozen=True)
class Check:
    ids: tuple[str, ...]
    find: Callable[[Document], list[Finding]]


# Order matters only where two checks quote the same words: the earlier, more specific one is kept.
CHECKS: tuple[Check, ...] = (
    Check((placeholder.CHECK_ID,), placeholder.find),
    Check(story_parts.CHECK_IDS, story_parts.find),
    Check((leakage.CHECK_ID,), leakage.find),
    Check((atomic.CHECK_ID,), atomic.find),
    Check((minimal.CHECK_ID,), minimal.find),
    Check(acceptance.CHECK_IDS, acceptance.find),
    Check((unmeasurable.CHECK_ID,), unmeasurable.find),
    Check((vague.CHECK_ID,), vague.find),
    Check(bug.CHECK_IDS, bug.find),
    Check((questions.CHECK_ID,), questions.find),
)



def run_rules(packet: RequirementPacket, ticket_type: TicketType, config: Config) -> list[Finding]:
    """Findings of every enabled check on `packet.text`, sorted by span start (findings without a span last).

    Where several checks quote exactly the same words, only the most severe (then the earliest) is kept;
    words inside an unfilled placeholder ("<some goal>") are template text, not the author's wording.
    """
    ids = [check_id for check in CHECKS for check_id in check.ids]
    modes: dict[str, Mode] = {check_id: config.mode_for(check_id, ticket_type) for check_id in ids}
    categories = {check_id: config.category_for(check_id) for check_id in ids}
    title_end = len(packet.title) if packet.title else 0
    doc = Document(packet.text, ticket_type, modes, categories, title_end)
    best: dict[tuple[int, int], Finding] = {}
    unspanned: list[Finding] = []
    for check in CHECKS:
        if all(modes[check_id] == "off" for check_id in check.ids):
            continue
        for finding in check.find(doc):
            if finding.mode == "off":
                continue
            if finding.span is None:
                unspanned.append(finding)
                continue
            key = (finding.span.start, finding.span.end)
            kept = best.get(key)
            if kept is None or MODE_SEVERITY[finding.mode] > MODE_SEVERITY[kept.mode]:
                best[key] = finding
    slots = Ranges([(f.span.start, f.span.end) for f in best.values()
                    if f.span is not None and f.check_id == placeholder.CHECK_ID])
    spanned = [f for f in best.values() if f.span is not None
               and (f.check_id == placeholder.CHECK_ID or not slots.contains(f.span.start, f.span.end))]
    spanned.sort(key=lambda f: (f.span.start, f.span.end) if f.span else (0, 0))
    return spanned + unspanned
