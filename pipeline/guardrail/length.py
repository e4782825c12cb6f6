"""Length bounds: too short to review is an error finding; too long is reviewed in part and said so."""

from __future__ import annotations

from reqgate.pipeline.schemas import Finding, Mode

CHECK_ID = "guardrail.length"


def too_short(length: int, min_chars: int, mode: Mode) -> Finding:
    return Finding(
        check_id=CHECK_ID,
        mode=mode,
        message=f"The ticket has {length} characters of text; at least {min_chars} are needed for a review.",
        suggestion="Say who needs what and why, and how to tell that it is done.",
    )


def no_description(mode: Mode) -> Finding:
    return Finding(
        check_id=CHECK_ID,
        mode=mode,
        message="The ticket has a title but no description.",
        suggestion="Describe who needs what and why, and how to tell that it is done.",
    )


def too_long(length: int, max_chars: int, mode: Mode) -> Finding:
    return Finding(
        check_id=CHECK_ID,
        mode=mode,
        message=f"The ticket has {length:,} characters of text; only the first {max_chars:,} were reviewed.",
        suggestion="Split the ticket, or move logs and long attachments out of the description.",
    )


def truncation_note(max_chars: int) -> str:
    return f"\n\n[TRUNCATED: the ticket is longer than {max_chars} characters; the rest was not reviewed]"


def truncate(title: str, body: str, max_chars: int) -> tuple[str, str]:
    """Cut title and body so that `title + "\\n\\n" + body` stays within `max_chars`, then add the note."""
    title = title[:max_chars]
    room = max(0, max_chars - len(title) - 2) if title else max_chars
    return title, body[:room] + truncation_note(max_chars)
