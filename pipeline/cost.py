"""Cost controls: may this review spend money on the LLM? A pure decision from the configuration and facts
the bot looks up (the actor's membership, the month's spend, the ticket's LLM reviews today); the answer says
why not, in words the comment shows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from reqgate.pipeline.config import CostSettings
from reqgate.pipeline.schemas import Model

Withheld = Literal["not_member", "not_allowlisted", "budget_exhausted", "ticket_cap"]
# The StructureOutcome failure and the Trace fallback flag of a review that was rules-only on purpose.
WITHHELD_FLAG = "llm_withheld"


class LLMAccess(Model):
    allowed: bool = True
    reason: Withheld | None = None
    message: str = ""  # for the comment: why this review is rules-only
    spent_usd: float = 0.0
    budget_usd: float | None = None

    @property
    def remaining_usd(self) -> float | None:
        return None if self.budget_usd is None else max(self.budget_usd - self.spent_usd, 0.0)


def month_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def day_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def needs_membership(cost: CostSettings) -> bool:
    return cost.llm_reviews_for == "members"


def decide_access(
    cost: CostSettings,
    *,
    actor: str | None,
    member: bool | None,
    spent_usd: float,
    reviews_today: int,
) -> LLMAccess:
    """`member` is the tracker's answer for `actor` (None when not asked); `spent_usd` this month's spend of
    the installation or site; `reviews_today` the ticket's LLM reviews since midnight UTC."""
    common = {"spent_usd": round(spent_usd, 6), "budget_usd": cost.monthly_budget_usd}
    who = f"`{actor}`" if actor else "an unknown user"
    if cost.llm_reviews_for == "members" and not member:
        return LLMAccess(allowed=False, reason="not_member", **common, message=(
            f"LLM reviews here are for organisation members and collaborators (`cost.llm_reviews_for: "
            f"members`), and this review was triggered by {who}, so only the rules ran. A member's "
            "`/reqgate recheck` gets the full review."))
    if cost.llm_reviews_for == "allowlist" and (actor is None or actor.casefold() not in
                                                {name.casefold() for name in cost.allowlist}):
        return LLMAccess(allowed=False, reason="not_allowlisted", **common, message=(
            f"LLM reviews here are for the users in `cost.allowlist`, and this review was triggered by {who}, "
            "so only the rules ran."))
    if cost.monthly_budget_usd is not None and spent_usd >= cost.monthly_budget_usd:
        return LLMAccess(allowed=False, reason="budget_exhausted", **common, message=(
            f"The monthly LLM budget of ${cost.monthly_budget_usd:,.2f} (`cost.monthly_budget_usd`) is spent "
            f"(${spent_usd:,.2f} this month), so this review is rules-only until the month ends."))
    cap = cost.max_llm_reviews_per_ticket_per_day
    if cap is not None and reviews_today >= cap:
        return LLMAccess(allowed=False, reason="ticket_cap", **common, message=(
            f"This ticket already had {reviews_today} LLM review(s) today, the daily cap "
            "(`cost.max_llm_reviews_per_ticket_per_day`), so this review is rules-only until tomorrow (UTC)."))
    return LLMAccess(**common)


def budget_line(cost: CostSettings, spent_usd: float) -> str:
    """One line for `/reqgate config`."""
    if cost.monthly_budget_usd is None:
        return f"LLM spend this month: ${spent_usd:,.2f} (no monthly budget set: `cost.monthly_budget_usd`)."
    left = max(cost.monthly_budget_usd - spent_usd, 0.0)
    return (f"LLM budget this month: ${left:,.2f} left of ${cost.monthly_budget_usd:,.2f} "
            f"(${spent_usd:,.2f} spent, estimated from `llm.prices`).")
