"""The deterministic gate: the LLM rates, code decides."""

from __future__ import annotations

from reqgate.pipeline.schemas import Finding, GateDecision, ScoreReport

INJECTION_REASON = (
    "The ticket contains text that reads like instructions to the reviewer (possible prompt injection); "
    "a ticket like that is never marked ready automatically. Remove it and run `/reqgate recheck`."
)


def decide(
    score: ScoreReport,
    findings: list[Finding],
    threshold: int,
    *,
    injection_suspected: bool,
    rejected: bool = False,
) -> GateDecision:
    # A finding the model disproved with a verified quote no longer blocks; it stays listed as dismissed.
    blocking = [f for f in findings if f.mode == "error" and f.dismissed_by is None]
    reasons: list[str] = []
    if rejected:
        reasons.append("The ticket was rejected by the input guardrail before any LLM call.")
    if injection_suspected:
        reasons.append(INJECTION_REASON)
    if blocking:
        noun = "finding blocks" if len(blocking) == 1 else "findings block"
        reasons.append(f"{len(blocking)} {noun} the verdict.")
    if score.score < threshold:
        reasons.append(f"The score {score.score} is below the threshold {threshold}.")
    verdict = "needs_info" if reasons else "ready"
    return GateDecision(verdict=verdict, score=score.score, threshold=threshold, blocking=blocking,
                        reasons=reasons)
