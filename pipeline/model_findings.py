"""Call 1's verdict-relevant answers turned into findings on the same footing as the rules':

- the model's issues become findings (`origin="model"`) that quote the ticket or name an absence; they may
  add to the verdict's blockers, never remove one;
- a dismissal moves a rule's "missing X" finding aside (`dismissed_by`) when the model quoted, verbatim and
  substantially, the text that supplies X; never on a ticket flagged for injection, never a placeholder,
  guardrail or injection finding (structure.verify already refused any other);
- a verified injection flag becomes a finding that shows the quote and says what to remove.

Everything here is a pure function of the prepared findings and the verified structure.
"""

from __future__ import annotations

from reqgate.pipeline.categories import ASK_ONLY_CATEGORIES, category_of, dismissible, same_problem
from reqgate.pipeline.config import Config
from reqgate.pipeline.quotes import Quotes
from reqgate.pipeline.schemas import (
    MODE_SEVERITY,
    Finding,
    Mode,
    ModelIssue,
    Span,
    StructureOutput,
    TicketType,
)

INJECTION_CHECK = "llm.injection"
INJECTION_MODE_CHECK = "guardrail.injection"  # the model's flag is shown like the guardrail's


def injection_finding(span: Span, ticket_type: TicketType, config: Config) -> Finding:
    return Finding(
        check_id=INJECTION_CHECK, mode=config.mode_for(INJECTION_MODE_CHECK, ticket_type), category="other",
        origin="model", span=span,
        message="This text reads like instructions to the reviewer, so the ticket cannot be marked ready.",
        suggestion="Remove this text from the ticket (or rephrase it as a requirement), then run "
                   "`/reqgate recheck`.",
    )


def _issue_mode(issue: ModelIssue) -> Mode:
    if issue.severity == "block" and issue.category not in ASK_ONLY_CATEGORIES:
        return "error"
    return "warn"


def _duplicate(issue: ModelIssue, span: Span | None, standing: list[Finding]) -> bool:
    """A model issue the rules already raised at least as strongly: same category and the rule's an absence, or
    quoting the same words. A rule's finding shown less strongly (a collapsed `info`, a `warn`) does not stand for the
    model's block: the rule is shown so because it cannot judge, and the model's judgement is what the verdict
    then needs; the comment asks the model's instead of the rule's."""
    mode = _issue_mode(issue)
    for finding in standing:
        if MODE_SEVERITY[finding.mode] < MODE_SEVERITY[mode]:
            continue
        # A rule's absence said again by the model, quoting or not, adds nothing; nor do its words raised again,
        # or words a rule already blocks on.
        if same_problem(finding, issue.category, span) or (
                finding.mode == "error" and span is not None and span.overlaps(finding.span)):
            return True
    return False


def issue_finding(issue: ModelIssue, span: Span | None) -> Finding:
    question = issue.question.strip() or None
    return Finding(check_id=f"llm.{issue.category}", mode=_issue_mode(issue), category=issue.category,
                   origin="model", span=span, message=issue.note.strip() or issue.category,
                   suggestion=question)


def merge(
    findings: list[Finding],
    output: StructureOutput | None,
    ticket_text: str,
    ticket_type: TicketType,
    config: Config,
    *,
    injection_detected: bool,
) -> list[Finding]:
    """The review's findings once the model's answer is in: dismissed rule findings marked, model issues
    and a verified injection flag added. `ticket_text` is the redacted text the model saw."""
    if output is None:
        return findings
    quotes = Quotes(ticket_text)
    flagged = injection_detected or output.suspected_injection
    merged = list(findings)
    if not flagged:
        by_check = {d.check_id: d for d in output.dismissals}
        for index, finding in enumerate(merged):
            dismissal = by_check.get(finding.check_id)
            span = quotes.locate(dismissal.quote) if dismissal else None
            if span is not None and dismissible(finding):
                merged[index] = finding.model_copy(update={"dismissed_by": span})
    added: list[Finding] = []
    if output.suspected_injection:
        span = quotes.locate(output.injection_evidence)
        if span is not None:
            added.append(injection_finding(span, ticket_type, config))
    dismissed = {category_of(f) for f in merged if f.dismissed_by is not None}
    standing = [f for f in merged if f.dismissed_by is None and f.mode != "off"]
    for issue in output.issues:
        span = quotes.locate(issue.quote) if issue.quote else None
        if issue.quote and span is None:
            continue
        # An absence the model itself showed to be present is a contradiction: the quote wins.
        if span is None and issue.category in dismissed:
            continue
        if _duplicate(issue, span, standing + added):
            continue
        added.append(issue_finding(issue, span))
    return merged + added


def rests_on_model_injection(findings: list[Finding], blocking: list[Finding], other_reasons: bool) -> bool:
    """Would the verdict be different without the model's injection flag? Such a verdict is re-examined
    rather than replayed: the flag is the model's judgement, and a false one must not stick."""
    flagged = any(f.check_id == INJECTION_CHECK for f in findings)
    others = [f for f in blocking if f.check_id != INJECTION_CHECK]
    return flagged and not others and not other_reasons
