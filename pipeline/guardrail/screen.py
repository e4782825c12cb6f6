"""`screen()`: one pass over a packet that yields the only copy of its text allowed to leave the process."""

from __future__ import annotations

from collections import Counter

from reqgate.pipeline.config import Config
from reqgate.pipeline.guardrail import length
from reqgate.pipeline.guardrail.detect import KIND_BY_NAME, KINDS, PII_CHECK, Hit, detect, placeholder
from reqgate.pipeline.guardrail.injection import detect_injections
from reqgate.pipeline.schemas import Finding, GuardrailReport, Mode, RequirementPacket, Span, TicketType

INJECTION_CHECK = "guardrail.injection"
REMOVED = "[REMOVED:instruction]"
# A ticket stuffed with trigger phrases should not bury the comment in findings; all are still acted on.
MAX_INJECTION_FINDINGS = 10

_INJECTION_OUTCOME = {
    "reject": "the ticket was not sent for review",
    "sanitize": "it was removed before review",
    "warn": "the ticket was reviewed as written",
}

Edit = tuple[int, int, str]


def _merge(edits: list[Edit]) -> list[Edit]:
    """Overlapping edits become one over their union; removing an instruction wins over a placeholder."""
    merged: list[Edit] = []
    for start, end, replacement in sorted(edits):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_replacement = merged[-1]
            keep = REMOVED if REMOVED in (replacement, last_replacement) else last_replacement
            merged[-1] = (last_start, max(end, last_end), keep)
        else:
            merged.append((start, end, replacement))
    return merged


def _apply(segment: str, offset: int, edits: list[Edit]) -> str:
    """Apply the edits (offsets into the packet text) that fall inside `segment`, which starts at `offset`."""
    pieces = []
    position = 0
    for start, end, replacement in edits:
        start, end = max(start - offset, 0), min(end - offset, len(segment))
        if start >= end or end <= position:
            continue
        pieces.append(segment[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(segment[position:])
    return "".join(pieces)


def _kind_findings(hits: list[Hit], config: Config, ticket_type: TicketType) -> list[Finding]:
    counts = Counter(hit.kind for hit in hits)
    findings = []
    for kind in KINDS:
        count = counts.get(kind.name, 0)
        mode = config.mode_for(kind.check_id, ticket_type)
        if not count or mode == "off":
            continue
        noun = kind.singular if count == 1 else kind.plural
        if kind.check_id == PII_CHECK:
            suggestion = ("Remove payment details from the ticket; use documented test numbers in examples."
                          if kind.name in ("card", "iban")
                          else "Keep personal data out of tickets; refer to people by role or team.")
        else:
            them = "it" if count == 1 else "them"
            suggestion = (f"Treat the {noun} as leaked: rotate or revoke {them} now, and delete {them} from "
                          "the ticket and its edit history.")
        findings.append(Finding(check_id=kind.check_id, mode=mode, message=f"{count} {noun} redacted before review",
                                redacted=True, suggestion=suggestion))
    return findings


def _injection_findings(text: str, ranges: list[tuple[int, int]], hits: list[Hit], action: str,
                        mode: Mode) -> list[Finding]:
    outcome = _INJECTION_OUTCOME.get(action, _INJECTION_OUTCOME["warn"])
    suggestion = "Remove text addressed to the review bot; describe the requirement itself."
    findings = []
    for start, end in ranges[:MAX_INJECTION_FINDINGS]:
        # Quoting a passage that contains a redacted value would print that value after all.
        if any(hit.start < end and start < hit.end for hit in hits):
            span = None
            message = (f"Text that reads as instructions to the reviewer was found (not quoted: it contains "
                       f"redacted data); {outcome}.")
        else:
            span = Span(quote=text[start:end], start=start, end=end)
            message = f"Text that reads as instructions to the reviewer was found; {outcome}."
        findings.append(Finding(check_id=INJECTION_CHECK, mode=mode, message=message, span=span,
                                suggestion=suggestion))
    extra = len(ranges) - MAX_INJECTION_FINDINGS
    if extra > 0:
        findings.append(Finding(check_id=INJECTION_CHECK, mode=mode, suggestion=suggestion,
                                message=f"{extra} more passages read as instructions to the reviewer; {outcome}."))
    return findings


def screen(packet: RequirementPacket, config: Config, ticket_type: TicketType | None = None) -> GuardrailReport:
    """`ticket_type` picks the check modes (the review's decided type); without it, the packet's hint."""
    settings = config.guardrail
    ticket_type = ticket_type or TicketType.coerce(packet.type_hint)
    text = packet.text
    title, body = packet.title, packet.body
    body_offset = len(title) + 2 if title else 0

    hits: list[Hit] = []
    if settings.pii.enabled:
        kinds = {name for name in settings.pii.kinds if name in KIND_BY_NAME}
        # Title and body are scanned apart so that no redaction straddles the blank line between them.
        regions = settings.pii.phone_regions
        hits = detect(title, kinds, regions) + [hit.shifted(body_offset) for hit in detect(body, kinds, regions)]
    action = settings.injection.action
    injections = detect_injections(text, settings.injection)

    edits: list[Edit] = [(hit.start, hit.end, placeholder(hit.kind)) for hit in hits]
    if action == "sanitize":
        edits += [(start, end, REMOVED) for start, end in injections]
    edits = _merge(edits)
    new_title = _apply(title, 0, edits)
    new_body = _apply(body, body_offset, edits)

    findings: list[Finding] = []
    length_mode = config.mode_for(length.CHECK_ID, ticket_type)
    size = len(text.strip())
    if size < settings.min_chars and length_mode != "off":
        findings.append(length.too_short(size, settings.min_chars, length_mode))
    elif not body.strip() and length_mode != "off":
        # A title alone (a GitHub issue with a null body) says nothing a reviewer could check.
        findings.append(length.no_description(length_mode))
    elif size > settings.max_chars:
        # Cut after redaction, so that a value straddling the cut is never left half visible.
        new_title, new_body = length.truncate(new_title, new_body, settings.max_chars)
        if length_mode != "off":
            findings.append(length.too_long(size, settings.max_chars, length_mode))

    injection_mode = config.mode_for(INJECTION_CHECK, ticket_type)
    if injections and injection_mode != "off":
        findings += _injection_findings(text, injections, hits, action, injection_mode)
    findings += _kind_findings(hits, config, ticket_type)

    return GuardrailReport(
        redacted=packet.model_copy(update={"title": new_title, "body": new_body}),
        findings=findings,
        injection_detected=bool(injections),
        rejected=action == "reject" and bool(injections),
        redaction_count=len(hits),
        redacted_ranges=[(hit.start, hit.end) for hit in hits],
    )
