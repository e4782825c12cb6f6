"""Typed models passed between the review stages. No dicts cross a stage boundary."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from reqgate.pipeline.records import Before, Bounds, Record
from reqgate.pipeline.ticket_type import TicketType

Mode = Literal["off", "info", "warn", "error"]
# How strongly each mode speaks: when two findings say the same, the stronger is kept and listed first.
MODE_SEVERITY: dict[str, int] = {"off": 0, "info": 1, "warn": 2, "error": 3}
# The issue categories of REVIEW-RUBRIC.md: every finding, the rules' and the model's, is one of these.
Category = Literal[
    "repro", "observed", "expected", "environment", "done", "ambiguous", "why", "split", "placeholder",
    "open_question", "incomplete", "other",
]
# Where the ticket type the rubric used came from.
TypeSource = Literal["tracker", "label", "text", "model", "flag"]
Verdict = Literal["ready", "needs_info"]
Source = Literal["github", "jira", "cli"]


class Model(Record):
    """A value passed between review stages; see pipeline/records.py."""


class RequirementPacket(Model):
    """A ticket as the pipeline sees it, whatever tracker it came from."""

    source: Source = "cli"
    project: str = ""
    key: str = ""
    title: str = ""
    body: str = ""
    type_hint: TicketType | None = None  # a type chosen by hand (`--type`): wins over everything
    issue_type: str | None = None  # the tracker's own type name (Jira's "Bug", GitHub's issue type)
    labels: list[str] = field(default_factory=list)
    author: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        # A caller building a packet by hand may name the type as a string, as pydantic let it; anything that
        # is no type is refused here (ValueError), not deep inside the review.
        if self.type_hint is not None and not isinstance(self.type_hint, TicketType):
            self.type_hint = TicketType(self.type_hint)

    @property
    def text(self) -> str:
        """The original text every finding's offsets point into: title, blank line, body."""
        return f"{self.title}\n\n{self.body}" if self.title else self.body


class Span(Model):
    """A verbatim slice of the original text: `text[start:end] == quote`."""

    quote: str
    start: Annotated[int, Bounds(ge=0)]
    end: Annotated[int, Bounds(ge=0)]

    def overlaps(self, other: Span | None) -> bool:
        return other is not None and self.start < other.end and other.start < self.end


class Finding(Model):
    check_id: str
    mode: Mode
    category: Category = "other"
    message: str
    span: Span | None = None
    # Guardrail findings about secrets and PII never carry the value; the comment shows "(not shown)".
    redacted: bool = False
    suggestion: str | None = None
    # Who raised it: the deterministic rules, the guardrail, or the model (call 1's issues).
    origin: Literal["rules", "guardrail", "model"] = "rules"
    # Set when the model showed, by a quote verified in the ticket, that this "missing X" finding is wrong:
    # the finding no longer counts for the score or the gate and belongs to the collapsed list.
    dismissed_by: Span | None = None


class EvidencedItem(Model):
    """One extracted item with the ticket words that support it."""

    text: str
    evidence: str | None = None
    inferred: bool = False


class UserStory(Model):
    role: EvidencedItem | None = None
    want: EvidencedItem | None = None
    benefit: EvidencedItem | None = None


class BugDetails(Model):
    observed: EvidencedItem | None = None
    expected: EvidencedItem | None = None
    steps: list[EvidencedItem] = field(default_factory=list)
    environment: EvidencedItem | None = None


class TaskDetails(Model):
    change: EvidencedItem | None = None
    done: list[EvidencedItem] = field(default_factory=list)


class SpikeDetails(Model):
    question: EvidencedItem | None = None
    expected_output: EvidencedItem | None = None
    timebox: EvidencedItem | None = None


class PRDDraft(Model):
    """The draft of call 1. Its shape follows the ticket type: a story fills `user_story` and
    `acceptance_criteria`, a bug `bug`, a task `task`, a spike `spike`; the other parts stay empty."""

    title: str
    user_story: UserStory = field(default_factory=UserStory)
    acceptance_criteria: list[EvidencedItem] = field(default_factory=list)
    edge_cases: list[EvidencedItem] = field(default_factory=list)
    dependencies: list[EvidencedItem] = field(default_factory=list)
    missing_info: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    bug: BugDetails | None = None
    task: TaskDetails | None = None
    spike: SpikeDetails | None = None


class Rating(Model):
    dimension: str
    score: Annotated[int, Bounds(ge=0, le=5)]
    rationale: str = ""
    evidence: str | None = None
    inferred: bool = False


Severity = Literal["block", "ask"]


def _unknown_category_is_other(value: object) -> object:
    categories = Category.__args__  # type: ignore[attr-defined]
    return value if isinstance(value, str) and value in categories else "other"


class ModelIssue(Model):
    """One issue the model raises, in the rubric's categories. `quote` is verified verbatim in the ticket;
    None means an absence (nothing to quote)."""

    category: Annotated[Category, Before(_unknown_category_is_other)] = "other"
    severity: Severity = "ask"
    quote: str | None = None
    note: str = ""
    question: str = ""


class Dismissal(Model):
    """The model's claim that a rule's "missing X" finding is wrong, backed by the ticket text supplying X."""

    check_id: str
    quote: str


class StructureOutput(Model):
    """Call 1's validated answer."""

    ticket_type: Annotated[TicketType, Before(TicketType.coerce)] = TicketType.other
    prd: PRDDraft
    ratings: list[Rating] = field(default_factory=list)
    issues: list[ModelIssue] = field(default_factory=list)
    dismissals: list[Dismissal] = field(default_factory=list)
    suspected_injection: bool = False
    injection_evidence: str | None = None


class GuardrailReport(Model):
    """What screening did to the packet. The redacted packet is the only text that may leave the process."""

    redacted: RequirementPacket
    findings: list[Finding] = field(default_factory=list)
    injection_detected: bool = False
    rejected: bool = False
    redaction_count: int = 0
    # Offsets into `RequirementPacket.text` of every redacted value, so that no later quote can reveal one.
    redacted_ranges: list[tuple[int, int]] = field(default_factory=list)


class DimensionScore(Model):
    dimension: str
    weight: float
    rating: Annotated[float, Bounds(ge=0, le=5)]
    source: Literal["llm", "rules"]
    rationale: str = ""


class ScoreReport(Model):
    score: Annotated[int, Bounds(ge=0, le=100)]
    dimensions: list[DimensionScore] = field(default_factory=list)
    rubric: str


class GateDecision(Model):
    verdict: Verdict
    score: int
    threshold: int
    blocking: list[Finding] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


class LLMCallRecord(Model):
    call: Literal["structure", "structure_reask", "render", "render_reask"]
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    attempts: int = 1
    ok: bool = True
    error: str | None = None


class StageTiming(Model):
    stage: str
    ms: float


class Trace(Model):
    run_id: str
    stages: list[StageTiming] = field(default_factory=list)
    llm_calls: list[LLMCallRecord] = field(default_factory=list)
    # e.g. "offline", "structure_failed", "render_template"; the comment explains each one.
    fallbacks: list[str] = field(default_factory=list)
    # Short, secret-free cause of each fallback, so that a replayed review explains itself the same way.
    fallback_reasons: dict[str, str] = field(default_factory=dict)
    prompt_version: str
    content_hash: str
    from_cache: bool = False
    config_source: str = "defaults"
    # UTC date (YYYY-MM-DD) of the review whose LLM work this is: a replay says which review it reuses.
    reviewed_at: str | None = None


class ReviewResult(Model):
    packet: RequirementPacket  # the redacted packet: safe to print, log and store
    ticket_type: TicketType
    type_source: TypeSource = "text"
    guardrail: GuardrailReport
    findings: list[Finding]
    structure: StructureOutput | None = None
    score: ScoreReport
    decision: GateDecision
    prd_markdown: str
    comment_markdown: str
    trace: Trace


class StructureOutcome(Model):
    """Result of call 1: the validated structure, or None when the call failed for good."""

    output: StructureOutput | None = None
    calls: list[LLMCallRecord] = field(default_factory=list)
    failure: str | None = None  # a short, secret-free reason shown in the comment
    dropped_quotes: int = 0
    # Set when the cost controls kept the LLM out on purpose (pipeline/cost.py): why, for the comment.
    withheld: str | None = None


class RenderOutcome(Model):
    """Result of call 2: the PRD section in markdown, from the model or from the template."""

    markdown: str
    calls: list[LLMCallRecord] = field(default_factory=list)
    used_template: bool = False
    failure: str | None = None
    # Why call 2 was not made although it could have been (a ready ticket with nothing to propose).
    skipped: str | None = None
