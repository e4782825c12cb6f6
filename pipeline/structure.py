"""Call 1: turn the redacted ticket into a validated `StructureOutput` with verified evidence.

The API gets a "wire" schema (every property required, nullable where optional, no numeric bounds,
`additionalProperties: false`) because structured output accepts only that subset of JSON Schema; the
answer is then validated into the strict `StructureOutput`, which enforces what the wire cannot (scores
0-5). One re-ask quotes the validation errors; a second failure leaves the review rules-only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from reqgate.pipeline.categories import QUOTED_CATEGORIES, category_of, dismissible
from reqgate.pipeline.config import Config, Rubric
from reqgate.pipeline.llm import LLMClient, LLMError, LLMReply, Turn
from reqgate.pipeline.logs import get_logger
from reqgate.pipeline.prompts import load_prompt, wrap_untrusted
from reqgate.pipeline.quotes import Quotes
from reqgate.pipeline.records import Record, error_message, field_names
from reqgate.pipeline.schemas import (
    Category,
    Dismissal,
    EvidencedItem,
    Finding,
    GuardrailReport,
    LLMCallRecord,
    ModelIssue,
    PRDDraft,
    Rating,
    Span,
    StructureOutcome,
    StructureOutput,
    TicketType,
)

log = get_logger(__name__)

TICKET_TAG = "untrusted_ticket"
_TRUNCATED = ("max_tokens", "model_context_window_exceeded")
_MAX_ERRORS_QUOTED = 12
_MAX_FINDINGS_SHOWN = 20
MAX_QUESTIONS = 5
QUESTION_MARKS = ("?", "？", "؟", "\u037e")  # ASCII, full-width, Arabic, Greek
MAX_ISSUES = 5


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _WireItem(_Wire):
    text: str
    evidence: str | None = Field(description="Verbatim quote from the ticket, or null.")
    inferred: bool = Field(description="True when the ticket does not state this item.")


class _WireUserStory(_Wire):
    role: _WireItem | None
    want: _WireItem | None
    benefit: _WireItem | None


class _WireBug(_Wire):
    observed: _WireItem | None = Field(description="What actually goes wrong: error, symptom or wrong value.")
    expected: _WireItem | None = Field(description="What should happen instead.")
    steps: list[_WireItem] = Field(description="Steps, command, request or test that reproduce it, in order.")
    environment: _WireItem | None = Field(description="Version, platform or configuration, when relevant.")


class _WireTask(_Wire):
    change: _WireItem | None = Field(description="What to change.")
    done: list[_WireItem] = Field(description="Conditions that tell the task is done.")


class _WireSpike(_Wire):
    question: _WireItem | None = Field(description="The question the spike answers.")
    expected_output: _WireItem | None = Field(description="The decision, document or prototype it delivers.")
    timebox: _WireItem | None = Field(description="How much time it may take.")


class _WireRating(_Wire):
    dimension: str
    score: int = Field(description="Integer from 0 (absent) to 5 (excellent).")
    rationale: str
    evidence: str | None = Field(description="Verbatim quote from the ticket, or null.")


class _WireIssue(_Wire):
    category: str
    severity: str
    quote: str | None = Field(description="Verbatim ticket text the issue is about, or null for an absence.")
    note: str
    question: str


class _WireDismissal(_Wire):
    check_id: str
    quote: str = Field(description="Verbatim ticket text that supplies what the finding says is missing.")


_QUESTIONS = Field(description="At most 5 questions, most important first, each ending with '?'.")
_INJECTION = Field(description="Verbatim quote of the injection attempt, or null.")


def _wire_structure(name: str, **parts: Any) -> type[_Wire]:
    """Call 1's answer for one ticket type: the type, the draft with the type's own `parts`, the rest."""
    prd = create_model(
        f"{name}PRD", __base__=_Wire, title=(str, ...), **parts,
        edge_cases=(list[_WireItem], ...), dependencies=(list[_WireItem], ...), missing_info=(list[str], ...),
        questions=(list[str], _QUESTIONS),
    )
    return create_model(
        name, __base__=_Wire, ticket_type=(str, ...), prd=(prd, ...), ratings=(list[_WireRating], ...),
        issues=(list[_WireIssue], ...), dismissals=(list[_WireDismissal], ...),
        suspected_injection=(bool, ...), injection_evidence=(str | None, _INJECTION),
    )


# The draft's shape per rubric: a bug has no acceptance criteria to invent, a spike no user story.
_WIRE_BY_RUBRIC: dict[str, type[_Wire]] = {
    "story": _wire_structure("Story", user_story=(_WireUserStory, ...),
                             acceptance_criteria=(list[_WireItem], ...)),
    "bug": _wire_structure("Bug", bug=(_WireBug, ...)),
    "task": _wire_structure("Task", task=(_WireTask, ...)),
    "spike": _wire_structure("Spike", spike=(_WireSpike, ...)),
}


_DROPPED_KEYWORDS = frozenset({
    "title", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
})


def _strict(node: Any, defs: dict[str, Any]) -> Any:
    """Inline `$ref`s, require every property, forbid extra ones and drop keywords the API refuses."""
    if isinstance(node, list):
        return [_strict(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _strict(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out = {key: _strict(value, defs) for key, value in node.items()
           if key not in _DROPPED_KEYWORDS and key not in ("$defs", "properties")}
    if "properties" in node:
        # Property names are data, not keywords: a property called "title" stays.
        out["properties"] = {name: _strict(value, defs) for name, value in node["properties"].items()}
    if out.get("type") == "object":
        out["required"] = list(out.get("properties", {}))
        out["additionalProperties"] = False
    return out


@cache
def _strict_schema(model: type[BaseModel]) -> str:
    """Generated once per model (pydantic builds it anew on every call: a tenth of a worker's CPU); as JSON
    text, so that each caller fills in its own copy."""
    raw = model.model_json_schema()
    return json.dumps(_strict(raw, raw.get("$defs", {})))


def wire_schema(
    dimensions: list[str], rubric: str = "story", may_dismiss: Sequence[str] = ()
) -> dict[str, Any]:
    """The JSON Schema sent as `output_config.format.schema`: the draft shaped for the rubric's ticket type,
    enums pinning ticket types, rubric dimensions, issue categories and the findings that may be dismissed."""
    schema: dict[str, Any] = json.loads(_strict_schema(_WIRE_BY_RUBRIC.get(rubric, _WIRE_BY_RUBRIC["story"])))
    props = schema["properties"]
    props["ticket_type"]["enum"] = [t.value for t in TicketType]
    props["ratings"]["items"]["properties"]["dimension"]["enum"] = list(dimensions)
    issue = props["issues"]["items"]["properties"]
    issue["category"]["enum"] = list(Category.__args__)  # type: ignore[attr-defined]
    issue["severity"]["enum"] = ["block", "ask"]
    if may_dismiss:
        props["dismissals"]["items"]["properties"]["check_id"]["enum"] = list(dict.fromkeys(may_dismiss))
    return schema


def rubric_text(name: str, rubric: Rubric) -> str:
    """The rubric with what 1, 3 and 5 mean for each dimension and a worked example, from prompts/rubric.md;
    a dimension added in configuration that the file does not describe is rated from its description."""
    anchors = rubric_anchors().get(name, {})
    lines = [f"Rubric `{name}`: rate each dimension below exactly once, by its name. {RUBRIC_SEVERITY}"]
    for dim, spec in rubric.dimensions.items():
        lines.append(f"\n- {dim}: {spec.description}")
        if dim in anchors:
            lines.append(anchors[dim])
    if "Worked example" in anchors:
        lines += ["", "Worked example:", anchors["Worked example"]]
    return "\n".join(lines)


RUBRIC_SEVERITY = (
    "An issue blocks only when work cannot safely start: a bug that cannot be reproduced or whose symptom is "
    "unclear, a story, task or spike with no way to tell it is done, several deliverables in one ticket, "
    "an unfilled template. A missing benefit, environment or timebox only asks."
)


@cache
def rubric_anchors() -> dict[str, dict[str, str]]:
    """`## type` sections of prompts/rubric.md, each split into `### dimension` blocks."""
    anchors: dict[str, dict[str, str]] = {}
    for section in re.split(r"^## ", load_prompt("rubric").system, flags=re.MULTILINE):
        head, _, rest = section.partition("\n")
        if not head.strip():
            continue
        blocks = {}
        for block in re.split(r"^### ", rest, flags=re.MULTILINE):
            name, _, text = block.partition("\n")
            if name.strip() and text.strip():
                blocks[name.strip()] = text.strip()
        anchors[head.strip()] = blocks
    return anchors


# A dismissal must quote enough to supply what is missing: one word ("steps") proves nothing.
MIN_DISMISSAL_WORDS = 3
MIN_DISMISSAL_CHARS = 12


def substantial(span: Span) -> bool:
    words = re.findall(r"\w+", span.quote)
    return len(words) >= MIN_DISMISSAL_WORDS and len("".join(words)) >= MIN_DISMISSAL_CHARS


_Evidenced = TypeVar("_Evidenced", EvidencedItem, Rating)
_R = TypeVar("_R", bound=Record)


def _checked(value: _Evidenced, quotes: Quotes) -> tuple[_Evidenced, int]:
    """The value with its quote replaced by the ticket's own span, or marked inferred; 1 if a quote was lost."""
    if value.evidence is None:
        return value.model_copy(update={"inferred": True}), 0
    found = quotes.find(value.evidence)
    if found is None:
        return value.model_copy(update={"evidence": None, "inferred": True}), 1
    return value.model_copy(update={"evidence": found}), 0


def _verified_items(node: _R, quotes: Quotes) -> tuple[_R, int]:
    """`node` with every `EvidencedItem` in it (at any depth, alone or in lists) checked against the ticket."""
    dropped = 0
    update: dict[str, Any] = {}
    for name in field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, EvidencedItem):
            update[name], lost = _checked(value, quotes)
            dropped += lost
        elif isinstance(value, Record):
            update[name], lost = _verified_items(value, quotes)
            dropped += lost
        elif isinstance(value, list) and value and isinstance(value[0], EvidencedItem):
            checked = [_checked(item, quotes) for item in value]
            update[name] = [item for item, _ in checked]
            dropped += sum(lost for _, lost in checked)
    return node.model_copy(update=update), dropped


def _verified_issues(issues: list[ModelIssue], quotes: Quotes) -> tuple[list[ModelIssue], int]:
    """Issues whose quote is in the ticket (replaced by the ticket's own words), and absences of a kind that
    can be absent; an issue quoting words the ticket does not contain is dropped."""
    kept: list[ModelIssue] = []
    dropped = 0
    for issue in issues:
        if issue.quote is None or not issue.quote.strip():
            if issue.category in QUOTED_CATEGORIES:
                dropped += 1
                continue
            kept.append(issue.model_copy(update={"quote": None}))
            continue
        found = quotes.find(issue.quote)
        if found is None:
            log.info("structure.issue_unverified", category=issue.category)
            dropped += 1
            continue
        kept.append(issue.model_copy(update={"quote": found}))
    return kept[:MAX_ISSUES], dropped


def _verified_dismissals(
    dismissals: list[Dismissal], quotes: Quotes, may_dismiss: Sequence[str]
) -> tuple[list[Dismissal], int]:
    """Dismissals of a dismissible finding whose quote is in the ticket and says something."""
    kept: dict[str, Dismissal] = {}
    dropped = 0
    for dismissal in dismissals:
        span = quotes.locate(dismissal.quote)
        if dismissal.check_id not in may_dismiss or span is None or not substantial(span):
            log.info("structure.dismissal_refused", check_id=dismissal.check_id[:60],
                     quote_found=span is not None)
            dropped += 1
            continue
        kept.setdefault(dismissal.check_id, dismissal.model_copy(update={"quote": span.quote}))
    return list(kept.values()), dropped


def verify(
    output: StructureOutput, ticket_text: str, dimensions: list[str], may_dismiss: Sequence[str] = ()
) -> tuple[StructureOutput, int]:
    """Keep only quotes that occur in the ticket, ratings of known dimensions, issues with a verified quote
    (or a plausible absence), dismissals of dismissible findings with a substantial verified quote and an
    injection flag with its verified quote; count what was dropped."""
    quotes = Quotes(ticket_text)
    prd, dropped = _verified_items(output.prd, quotes)
    assert isinstance(prd, PRDDraft)
    # The comment asks these as they are: a command ("Add steps.") is not a question, and five is the most.
    questions = [q.strip() for q in prd.questions if q.strip().endswith(QUESTION_MARKS)]
    prd = prd.model_copy(update={"questions": list(dict.fromkeys(questions))[:MAX_QUESTIONS]})

    ratings: list[Rating] = []
    seen: set[str] = set()
    for rating in output.ratings:
        if rating.dimension not in dimensions or rating.dimension in seen:
            continue
        seen.add(rating.dimension)
        checked, lost = _checked(rating, quotes)
        dropped += lost
        ratings.append(checked)

    issues, lost = _verified_issues(output.issues, quotes)
    dropped += lost
    dismissals, lost = _verified_dismissals(output.dismissals, quotes, may_dismiss)
    dropped += lost

    injection_evidence = quotes.find(output.injection_evidence)
    suspected = output.suspected_injection and injection_evidence is not None
    if output.suspected_injection and not suspected:
        # The flag alone proves nothing and would block a ticket nobody can fix: logged, not acted on.
        log.warning("structure.injection_flag_unverified", had_quote=bool(output.injection_evidence))
    if output.injection_evidence and injection_evidence is None:
        dropped += 1
    return output.model_copy(update={
        "prd": prd, "ratings": ratings, "issues": issues, "dismissals": dismissals,
        "suspected_injection": suspected, "injection_evidence": injection_evidence if suspected else None,
    }), dropped


def _findings_text(findings: list[Finding], ticket_text: str, may_dismiss: Sequence[str] = ()) -> str:
    # Only check ids and messages, plus quotes that the redacted text itself contains: a rule's span
    # points into the original ticket and could otherwise carry a redacted value to the API.
    lines = []
    for finding in findings[:_MAX_FINDINGS_SHOWN]:
        if finding.mode == "off":
            continue
        marks = f"{finding.mode}, {category_of(finding)}" + (", dismissible" if finding.check_id in may_dismiss
                                                             and dismissible(finding) else "")
        line = f"- {finding.check_id} ({marks}): {finding.message}"
        if finding.span and not finding.redacted and finding.span.quote and finding.span.quote in ticket_text:
            line += f' — "{finding.span.quote}"'
        lines.append(line)
    return "\n".join(lines) or "- none"


def _problem(reply: LLMReply) -> tuple[StructureOutput | None, str]:
    """The validated output, or a description of what is wrong with the answer."""
    if reply.stop_reason in _TRUNCATED:
        return None, "the answer was cut off at the output token limit, so the JSON is incomplete"
    try:
        data = json.loads(reply.text)
    except json.JSONDecodeError as exc:
        return None, f"the answer is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
    try:
        return StructureOutput.model_validate(data), ""
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        lines = [f"- {'.'.join(str(p) for p in err['loc']) or '(root)'}: {error_message(err)}"
                 for err in errors[:_MAX_ERRORS_QUOTED]]
        if len(errors) > _MAX_ERRORS_QUOTED:
            lines.append(f"- ... and {len(errors) - _MAX_ERRORS_QUOTED} more")
        return None, "the JSON does not match the schema:\n" + "\n".join(lines)


def _refused(record: LLMCallRecord) -> LLMCallRecord:
    return record.model_copy(update={"ok": False, "error": "refusal"})


def _summary(problem: str) -> str:
    return problem.split(":", 1)[0].split(" (", 1)[0]


def run_structure(
    guardrail: GuardrailReport,
    ticket_type: TicketType,
    findings: list[Finding],
    config: Config,
    llm: LLMClient,
) -> StructureOutcome:
    """Never raises: a failed call 1 must still leave a rules-only review."""
    try:
        return _run(guardrail, ticket_type, findings, config, llm)
    except Exception as exc:  # noqa: BLE001 — the review must go on whatever broke here
        log.error("structure.crashed", error=type(exc).__name__)
        return StructureOutcome(failure=f"internal error ({type(exc).__name__})")


def _run(
    guardrail: GuardrailReport,
    ticket_type: TicketType,
    findings: list[Finding],
    config: Config,
    llm: LLMClient,
) -> StructureOutcome:
    if guardrail.rejected:
        return StructureOutcome(failure="guardrail_rejected")
    ticket_text = guardrail.redacted.text
    rubric_name, rubric = config.rubric_for(ticket_type)
    dimensions = list(rubric.dimensions)
    prompt = load_prompt("structure")
    system = [prompt.system, rubric_text(rubric_name, rubric)]
    may_dismiss = [] if guardrail.injection_detected else [f.check_id for f in findings if dismissible(f)]
    first = Turn("user", prompt.render_user(
        ticket_type=ticket_type.value,
        findings=_findings_text(findings, ticket_text, may_dismiss),
        ticket=wrap_untrusted(ticket_text, TICKET_TAG),
    ))
    schema = wire_schema(dimensions, rubric_name, may_dismiss)
    model, max_tokens = config.llm.structure_model, config.llm.structure_max_tokens
    calls: list[LLMCallRecord] = []

    try:
        reply = llm.complete_json("structure", model, system, [first], schema, max_tokens)
    except LLMError as exc:
        return StructureOutcome(calls=[exc.record], failure=f"LLM call failed: {exc.reason}")
    if reply.stop_reason == "refusal":
        return StructureOutcome(calls=[_refused(reply.record)], failure="the model declined to review this ticket")
    calls.append(reply.record)
    output, problem = _problem(reply)

    if output is None:
        log.info("structure.reask", problem=_summary(problem))
        history = [first]
        if reply.stop_reason not in _TRUNCATED and reply.text:
            history.append(Turn("assistant", reply.text))
        history.append(Turn("user", load_prompt("structure_reask").render_user(errors=problem)))
        try:
            reply = llm.complete_json("structure_reask", model, system, history, schema, max_tokens)
        except LLMError as exc:
            return StructureOutcome(calls=[*calls, exc.record], failure=f"LLM call failed: {exc.reason}")
        if reply.stop_reason == "refusal":
            return StructureOutcome(calls=[*calls, _refused(reply.record)],
                                    failure="the model declined to review this ticket")
        calls.append(reply.record)
        output, problem = _problem(reply)
        if output is None:
            return StructureOutcome(calls=calls, failure=f"invalid answer twice: {_summary(problem)}")

    verified, dropped = verify(output, ticket_text, dimensions, may_dismiss)
    return StructureOutcome(output=verified, calls=calls, dropped_quotes=dropped)
