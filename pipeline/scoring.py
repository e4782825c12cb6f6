"""Score a ticket from the LLM's rubric ratings and the rule findings. Pure: same inputs, same score."""

from __future__ import annotations

from reqgate.pipeline.config import Config, Rubric
from reqgate.pipeline.schemas import DimensionScore, Finding, Rating, ScoreReport, TicketType

# How much one finding lowers its dimension's 0-5 rating. An error empties the dimension on its own; a
# warning asks (work can start), and a collapsed `info` finding is a hint that costs nothing, so that only
# what a reviewer would block on can take a rules-only review below the threshold.
FINDING_PENALTY = {"error": 5.0, "warn": 1.0, "info": 0.0, "off": 0.0}


def rules_rating(dimension_checks: list[str], findings: list[Finding]) -> float:
    """A 0-5 rating that starts full and loses points for each finding of the dimension's checks."""
    lost = sum(FINDING_PENALTY[f.mode] for f in findings
               if f.check_id in dimension_checks and f.dismissed_by is None)
    return max(0.0, 5.0 - lost)


def _dimension(name: str, rubric: Rubric, findings: list[Finding], ratings: dict[str, Rating]) -> DimensionScore:
    spec = rubric.dimensions[name]
    from_rules = rules_rating(spec.checks, findings)
    llm = ratings.get(name)
    # Deterministic findings are evidence: the LLM may rate a dimension lower than the rules, never higher.
    if llm is not None and llm.score <= from_rules:
        return DimensionScore(dimension=name, weight=spec.weight, rating=llm.score, source="llm",
                              rationale=llm.rationale)
    rationale = f"{from_rules:g}/5 from the rule findings" + (f"; the LLM rated {llm.score}" if llm else "")
    return DimensionScore(dimension=name, weight=spec.weight, rating=from_rules, source="rules",
                          rationale=rationale)


def score(ticket_type: TicketType, findings: list[Finding], ratings: list[Rating], config: Config) -> ScoreReport:
    rubric_name, rubric = config.rubric_for(ticket_type)
    by_dimension = {r.dimension: r for r in ratings}
    dimensions = [_dimension(name, rubric, findings, by_dimension) for name in rubric.dimensions]
    total_weight = sum(d.weight for d in dimensions)
    value = sum(d.weight * d.rating for d in dimensions) / (5.0 * total_weight) * 100.0
    # Half up, not Python's round-half-even: 92.5 reads as 93 to a person.
    return ScoreReport(score=int(value + 0.5), dimensions=dimensions, rubric=rubric_name)
