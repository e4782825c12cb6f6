"""The rubric's issue categories as the model-facing code needs them: which rule finding is an absence the
model may dismiss, and which category a rule finding belongs to while a rule does not set one itself."""

from __future__ import annotations

from reqgate.pipeline.schemas import Category, Finding, Span

# "Missing X" categories: the model may show, by quoting the ticket, that X is there after all.
ABSENCE_CATEGORIES: frozenset[Category] = frozenset({"repro", "observed", "expected", "environment", "done"})
# Categories an issue is only about when it can point at words: an absence of these is not an issue.
QUOTED_CATEGORIES: frozenset[Category] = frozenset({"ambiguous", "placeholder", "open_question", "split"})
# Categories the rubric never lets block (REVIEW-RUBRIC.md, "typical severity").
ASK_ONLY_CATEGORIES: frozenset[Category] = frozenset({"environment", "why"})

# Used only for a finding whose rule left `category` at its default.
_CHECK_CATEGORIES: dict[str, Category] = {
    "bug.steps.missing": "repro",
    "bug.actual.missing": "observed",
    "bug.expected.missing": "expected",
    "bug.environment.missing": "environment",
    "acceptance-criteria.missing": "done",
    "template.placeholder": "placeholder",
    "story.benefit.missing": "why",
    "story.non-atomic": "split",
    "wording.vague": "ambiguous",
    "wording.unmeasurable": "ambiguous",
    "guardrail.length": "incomplete",
}


def category_of(finding: Finding) -> Category:
    if finding.category != "other":
        return finding.category
    return _CHECK_CATEGORIES.get(finding.check_id, "other")


def dismissible(finding: Finding) -> bool:
    """A rule's "missing X" finding, still standing, that a verified quote could show to be wrong."""
    return (finding.origin == "rules" and finding.dismissed_by is None and finding.mode != "off"
            and not finding.check_id.startswith("guardrail.") and category_of(finding) in ABSENCE_CATEGORIES)


def same_problem(finding: Finding, category: Category, span: Span | None) -> bool:
    """Whether a rule's finding speaks of the problem an issue of `category` quoting `span` (None: an absence)
    raises: same category, and the rule's finding an absence or on the same words."""
    return category_of(finding) == category and (
        finding.span is None or span is not None and span.overlaps(finding.span))
