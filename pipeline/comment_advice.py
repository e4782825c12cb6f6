"""What the comment asks about each finding: one question or concrete request per finding, in code.

The rules' own `suggestion` texts are not shown: they were generic ("Say who needs it, e.g. 'As a warehouse
manager ...'"), and a rule cannot know the ticket's domain, so it must not invent an example. A rule's item
here names what is missing or quotes the words concerned, and asks. A finding this table does not know (the
model's, or a check added later) speaks for itself: its own suggestion, else its message.

Also here: the short topic of a finding, for "Resolved since the last review: ...".
"""

from __future__ import annotations

from reqgate.pipeline.comment_safety import safe_inline
from reqgate.pipeline.schemas import Finding, TicketType

QUOTE_CHARS = 80

# {quotes} is the finding's quoted words, each in double quotes, already made safe.
_BY_CHECK: dict[str, str] = {
    "template.placeholder": "Replace the unfilled placeholder {quotes} with the real content, or delete it.",
    "bug.steps.missing": "How can a developer reproduce this? List the steps, command, request or test that "
                         "triggers it.",
    "bug.actual.missing": "What actually happens? Quote the error message, or name the wrong value or symptom.",
    "bug.expected.missing": "What should happen instead?",
    "bug.environment.missing": "Which version, platform or configuration does this happen on?",
    "acceptance-criteria.untestable": "How would a tester check {quotes}? Name the observable result or "
                                      "number instead.",
    "wording.vague": "What exactly is meant by {quotes}? Name the concrete case, value or list.",
    "wording.unmeasurable": "What number makes {quotes} true: a time, size or count a test can check?",
    "story.role.missing": "Who needs this: which user or role?",
    "story.benefit.missing": "Why is this needed: what does it let the user do or avoid?",
    "story.non-atomic": "Is {quotes} one deliverable or several? If several, split them into separate "
                        "tickets.",
    "story.solution-leakage": "Is {quotes} a requirement or a design idea? If it is an idea, state the need "
                              "and leave the design to the team.",
    "story.minimal": "Move {quotes} out of the story sentence, into the description or the criteria.",
    "guardrail.injection": "Remove the text that reads as instructions to the reviewer ({quotes}), then "
                           "recheck.",
    "guardrail.secret": "Remove the secret from the ticket and rotate it (its value is not shown here).",
    "guardrail.pii": "Remove the personal data from the ticket unless the work needs it (it was redacted "
                     "before the review).",
    "guardrail.length": "The ticket is too short or too long to review: say what should change and how to "
                        "tell it is done, and move logs out of the description.",
}
_DONE_BY_TYPE: dict[TicketType, str] = {
    TicketType.story: "How will you tell this is done? List the results a tester can check.",
    TicketType.task: "How will you tell this task is done? Name the state or check that shows it.",
    TicketType.spike: "What should the spike produce: a decision, a document or a prototype, by when?",
    TicketType.bug: "How will you tell the fix works? Name the result a tester can check.",
    TicketType.other: "How will you tell this is done? Name the result a tester can check.",
}
_BY_CATEGORY: dict[str, str] = {
    "repro": _BY_CHECK["bug.steps.missing"],
    "observed": _BY_CHECK["bug.actual.missing"],
    "expected": _BY_CHECK["bug.expected.missing"],
    "environment": _BY_CHECK["bug.environment.missing"],
    "ambiguous": _BY_CHECK["wording.vague"],
    "why": _BY_CHECK["story.benefit.missing"],
    "split": _BY_CHECK["story.non-atomic"],
    "placeholder": _BY_CHECK["template.placeholder"],
    "open_question": "The ticket leaves {quotes} open: what is the decision?",
    "incomplete": "The ticket is too short to act on: what should change, for whom, and how will you tell it "
                  "is done?",
}
_TOPIC_BY_CHECK: dict[str, str] = {
    "bug.steps.missing": "steps to reproduce",
    "bug.actual.missing": "what actually happens",
    "bug.expected.missing": "expected behaviour",
    "bug.environment.missing": "environment",
    "acceptance-criteria.missing": "acceptance criteria",
    "story.role.missing": "user role",
    "story.benefit.missing": "benefit",
    "guardrail.injection": "instructions to the reviewer",
    "guardrail.secret": "secret",
    "guardrail.pii": "personal data",
    "guardrail.length": "length",
}
_TOPIC_BY_CATEGORY: dict[str, str] = {
    "repro": "steps to reproduce", "observed": "what actually happens", "expected": "expected behaviour",
    "environment": "environment", "done": "how to tell it is done", "why": "benefit", "split": "split",
    "incomplete": "too little text",
}


def known(finding: Finding) -> bool:
    """Does the comment word this finding itself (a rule it knows), rather than let it speak for itself?"""
    return finding.check_id in _BY_CHECK or finding.check_id == "acceptance-criteria.missing"


def quotes_of(findings: list[Finding], limit: int = 3) -> list[str]:
    seen: dict[str, None] = {}
    for finding in findings:
        if finding.span is not None and not finding.redacted:
            seen.setdefault(" ".join(finding.span.quote.split()), None)
    return list(seen)[:limit]


def _quoted(quotes: list[str]) -> str:
    return ", ".join(f'"{safe_inline(q, QUOTE_CHARS)}"' for q in quotes)


def ask(group: list[Finding], ticket_type: TicketType) -> str:
    """The item text for findings of one check (same check id), made safe."""
    first = group[0]
    quotes = quotes_of(group)
    if first.check_id == "acceptance-criteria.missing" or (first.category == "done" and not known(first)
                                                            and not first.suggestion):
        return _DONE_BY_TYPE.get(ticket_type, _DONE_BY_TYPE[TicketType.other])
    template = _BY_CHECK.get(first.check_id)
    if template is None and not first.suggestion:
        template = _BY_CATEGORY.get(first.category)
    if template is not None:
        # Words withheld (they overlap a redacted secret) are still pointed at, without being shown.
        return template.format(quotes=_quoted(quotes) if quotes else "the words concerned")
    # The model's finding (or an unknown check): its own question, with the words it is about.
    text = safe_inline(first.suggestion or first.message, 240)
    return f"{text} ({_quoted(quotes)})" if quotes and quotes[0] not in (first.suggestion or "") else text


def topic(finding: Finding) -> str:
    """A few words naming what a finding was about: "steps to reproduce", '"fast"'."""
    if finding.check_id in _TOPIC_BY_CHECK:
        return _TOPIC_BY_CHECK[finding.check_id]
    if finding.span is not None and not finding.redacted:
        return f'"{safe_inline(finding.span.quote, 40)}"'
    return _TOPIC_BY_CATEGORY.get(finding.category) or safe_inline(finding.message, 60)
