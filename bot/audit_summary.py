"""What `reqgate audit` keeps of a backlog while it streams past: counts, and the tickets most in need.

Memory is bounded whatever the backlog's size: counters per type and category, a score histogram, and a
heap of the `keep` neediest tickets with no more than their top issues.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter

from pydantic import BaseModel, Field

from reqgate.pipeline.schemas import Finding, ReviewResult

SHOWN_MODES = ("error", "warn")  # what the PM sees; `info` is collapsed and `off` never shown
TOP_ISSUES = 3
QUOTE_CHARS = 160
SCORE_BUCKETS = 10


class IssueDigest(BaseModel):
    category: str
    mode: str
    check_id: str
    message: str
    quote: str | None = None


class TicketDigest(BaseModel):
    key: str
    title: str
    ticket_type: str
    verdict: str
    score: int
    blocking: int
    warnings: int
    issues: list[IssueDigest] = Field(default_factory=list)

    def need(self) -> tuple[int, int, int, int]:
        """Higher is more in need: not ready first, then more blocking findings, more warnings, a lower score."""
        return (self.verdict != "ready", self.blocking, self.warnings, -self.score)


def shown(findings: list[Finding]) -> list[Finding]:
    """The findings a PM sees, blocking ones first, in the review's order otherwise."""
    return sorted((f for f in findings if f.mode in SHOWN_MODES), key=lambda f: f.mode != "error")


def _quote(finding: Finding) -> str | None:
    if finding.span is None or finding.redacted:
        return None
    text = " ".join(finding.span.quote.split())
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def digest(key: str, result: ReviewResult) -> TicketDigest:
    visible = shown(result.findings)
    # A check that fires on three spans says one thing three times; the report lists distinct issues.
    distinct: dict[tuple[str, str], Finding] = {}
    for finding in visible:
        distinct.setdefault((finding.check_id, finding.message), finding)
    return TicketDigest(
        key=key, title=result.packet.title, ticket_type=result.ticket_type.value,
        verdict=result.decision.verdict, score=result.decision.score,
        blocking=sum(f.mode == "error" for f in visible), warnings=sum(f.mode == "warn" for f in visible),
        issues=[IssueDigest(category=f.category, mode=f.mode, check_id=f.check_id, message=f.message,
                            quote=_quote(f)) for f in list(distinct.values())[:TOP_ISSUES]],
    )


class Tally:
    def __init__(self, keep: int = 50) -> None:
        self.keep = keep
        self.total = 0
        self.per_type: dict[str, list[int]] = {}  # type -> [tickets, ready]
        # Tickets with at least one shown finding of the category, not findings: one word list must not
        # outweigh a category that blocks a hundred tickets.
        self.categories: Counter[str] = Counter()
        self.scores = [0] * SCORE_BUCKETS
        self._heap: list[tuple[tuple[int, int, int, int], int, TicketDigest]] = []
        self._order = itertools.count()

    def add(self, key: str, result: ReviewResult) -> None:
        self.total += 1
        counts = self.per_type.setdefault(result.ticket_type.value, [0, 0])
        counts[0] += 1
        counts[1] += result.decision.verdict == "ready"
        self.categories.update({f.category for f in result.findings if f.mode in SHOWN_MODES})
        self.scores[min(result.decision.score * SCORE_BUCKETS // 100, SCORE_BUCKETS - 1)] += 1
        if self.keep <= 0:
            return
        ticket = digest(key, result)
        # Among equally needy tickets the earlier one stays, so the report follows the export's order.
        entry = (ticket.need(), -next(self._order), ticket)
        if len(self._heap) < self.keep:
            heapq.heappush(self._heap, entry)
        elif entry[:2] > self._heap[0][:2]:
            heapq.heapreplace(self._heap, entry)

    @property
    def ready(self) -> int:
        return sum(ready for _, ready in self.per_type.values())

    def neediest(self) -> list[TicketDigest]:
        return [ticket for *_, ticket in sorted(self._heap, key=lambda e: e[:2], reverse=True)]

    def summary(self, categories: int = 5) -> str:
        if not self.total:
            return "No tickets in the export.\n"
        ready = f"{self.ready} ready ({percent(self.ready, self.total)})"
        lines = [f"{self.total} tickets: {ready}, {self.total - self.ready} need info."]
        lines.append(f"  {'type':<8}{'tickets':>8}{'ready':>8}")
        for name, (count, ready) in sorted(self.per_type.items(), key=lambda item: -item[1][0]):
            lines.append(f"  {name:<8}{count:>8}{percent(ready, count):>8}")
        if self.categories:
            lines.append("Most frequent issues (tickets with a shown finding of the category):")
            for category, count in self.categories.most_common(categories):
                lines.append(f"  {category:<14}{count:>8}{percent(count, self.total):>8}")
        else:
            lines.append("No shown findings.")
        return "\n".join(lines) + "\n"


def percent(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "-"
