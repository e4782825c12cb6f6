"""Publishing rules shared by the trackers: the sticky comment's marker, label deltas, the comment cap."""

from __future__ import annotations

import re

from reqgate.pipeline.comment import MARKER
from reqgate.pipeline.config import Labels
from reqgate.pipeline.schemas import Verdict

# The comment frame built by the pipeline starts with exactly this line; it is how the bot finds its comment.
STICKY_MARKER = MARKER
# Its Jira form: an anchor macro, which Jira renders as nothing (wiki markup has no hidden comment).
WIKI_STICKY_MARKER = "{anchor:reqgate-review-v1}"

# Raw, HTML-escaped (`&lt;!--`) and wiki-escaped (`\<!\-\-`) spellings of the marker, and the Jira anchor:
# the same comment must be recognised when read back, including comments posted by earlier versions.
_STICKY_RE = re.compile(r"\\?(?:<|&lt;|&#60;)\\?!(?:\\?-){2}\s*reqgate:review\b|\{anchor:reqgate-review-v\d+\}")
_DETAILS_OPEN_RE = re.compile(r"<details\b", re.IGNORECASE)
_DETAILS_CLOSE_RE = re.compile(r"</details\s*>", re.IGNORECASE)


def is_sticky(body: str) -> bool:
    """Does this comment carry the review marker (in any of the forms a tracker may store it)?"""
    return bool(_STICKY_RE.search(body))


def label_changes(
    current: list[str], verdict: Verdict | None, labels: Labels, error: bool = False
) -> tuple[list[str], list[str]]:
    """(labels to add, labels to remove) so that exactly one of ours reflects the outcome.

    `error` wins over a verdict; with neither, none of our labels should remain. Only our three labels
    are ever removed, spelled as they are on the ticket; names compare case-insensitively as on GitHub.
    """
    target = (
        labels.error if error else {"ready": labels.ready, "needs_info": labels.needs_info}.get(verdict or "")
    )
    ours = {name.casefold() for name in (labels.ready, labels.needs_info, labels.error)}
    present = {name.casefold() for name in current}
    add = [target] if target and target.casefold() not in present else []
    keep = target.casefold() if target else None
    remove = [name for name in current if name.casefold() in ours and name.casefold() != keep]
    return add, remove


def _closers(kept: str) -> str:
    """Markup that closes what a cut left open: a code fence, then every unclosed `<details>`."""
    closing = ""
    fences = sum(1 for line in kept.splitlines() if line.lstrip().startswith(("```", "~~~")))
    if fences % 2:
        closing += "\n```"
    unclosed = len(_DETAILS_OPEN_RE.findall(kept)) - len(_DETAILS_CLOSE_RE.findall(kept))
    closing += "\n\n</details>" * max(unclosed, 0)
    return closing


def cap_comment(body: str, limit: int) -> str:
    """`body` if it fits, else cut at a line boundary with open blocks closed and a note; never over `limit`.

    The first line (the marker) is kept so that the comment is still found and edited next time.
    """
    if len(body) <= limit:
        return body
    note = (
        f"\n\n---\n… trimmed: {len(body) - limit} characters over the limit; "
        "see the full review with `reqgate review`"
    )
    budget = limit - len(note)
    first_line_end = body.find("\n")
    floor = first_line_end if 0 <= first_line_end <= budget else 0
    while True:
        cut = body.rfind("\n", floor, budget + 1)
        if cut <= floor:  # a single line longer than the budget: cut inside it rather than drop it all
            cut = max(budget, floor)
        capped = body[:cut] + _closers(body[:cut]) + note
        if len(capped) <= limit or budget <= floor:
            return capped
        budget -= len(capped) - limit
