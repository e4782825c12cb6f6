"""Call 1: turn the redacted ticket into a validated `StructureOutput` with verified evidence.

The API gets a "wire" schema (every property required, nullable where optional, no numeric bounds,
`additionalProperties: false`) because structured output accepts only that subset of JSON Schema; the
answer is then validated into the strict `StructureOutput`, which enforces what the wire cannot (scores
0-5). One re-ask quotes the validation errors; a second failure leaves the review rules-only.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reqgate.pipeline.config import Config, Rubric
from reqgate.pipeline.llm import LLMClient, LLMError, LLMReply, Turn
from reqgate.pipeline.logs import get_logger
from reqgate.pipeline.prompts import load_prompt, wrap_untrusted
from reqgate.pipeline.schemas import (
    EvidencedItem,
    Finding,
    GuardrailReport,
    LLMCallRecord,
    Rating,
    StructureOutcome,
    StructureOutput,
    TicketType,
)

log = get_logger(__name__)

TICKET_TAG = "untrusted_ticket"
_TRUNCATED = ("max_tokens", "model_context_window_exceeded")
_MAX_ERRORS_QUOTED = 12
_MAX_FINDINGS_SHOWN = 20


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


class _WirePRD(_Wire):
    title: str
    user_story: _WireUserStory
    acceptance_criteria: list[_WireItem]
    edge_cases: list[_WireItem]
    dependencies: list[_WireItem]
    missing_info: list[str]
    questions: list[str]


class _WireRating(_Wire):
    dimension: str
    score: int = Field(description="Integer from 0 (absent) to 5 (excellent).")
    rationale: str
    evidence: str | None = Field(description="Verbatim quote from the ticket, or null.")


class _WireStructure(_Wire):
    ticket_type: str
    prd: _WirePRD
    ratings: list[_WireRating]
    suspected_injection: bool
    injection_evidence: str | None = Field(description="Verbatim quote of the injection attempt, or null.")


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


def wire_schema(dimensions: list[str]) -> dict[str, Any]:
    """The JSON Schema sent as `output_config.format.schema`; enums pin ticket types and rubric dimensions."""
    raw = _WireStructure.model_json_schema()
    schema: dict[str, Any] = _strict(raw, raw.get("$defs", {}))
    schema["properties"]["ticket_type"]["enum"] = [t.value for t in TicketType]
    rating = schema["properties"]["ratings"]["items"]["properties"]
    rating["dimension"]["enum"] = list(dimensions)
    return schema


def rubric_text(name: str, rubric: Rubric) -> str:
    lines = [f"Rubric `{name}`: rate each dimension below exactly once, by its name."]
    lines += [f"- {dim}: {spec.description}" for dim, spec in rubric.dimensions.items()]
    return "\n".join(lines)


class _Quotes:
    """Finds quotes in the ticket regardless of case and whitespace, and returns the ticket's own span."""

    def __init__(self, text: str):
        chars: list[str] = []
        origin: list[int] = []
        for index, char in enumerate(text):
            if char.isspace():
                if chars and chars[-1] != " ":
                    chars.append(" ")
                    origin.append(index)
                continue
            for folded in char.casefold():
                chars.append(folded)
                origin.append(index)
        self._text = text
        self._norm = "".join(chars)
        self._origin = origin

    @staticmethod
    def _normalise(quote: str) -> str:
        return " ".join(quote.casefold().split())

    def find(self, quote: str | None) -> str | None:
        if not quote:
            return None
        candidates = [quote.strip(), quote.strip().strip("\"'“”‘’«»").strip()]
        for candidate in candidates:
            needle = self._normalise(candidate)
            if not needle:
                continue
            at = self._norm.find(needle)
            if at >= 0:
                return self._text[self._origin[at]: self._origin[at + len(needle) - 1] + 1]
        return None


_Evidenced = TypeVar("_Evidenced", EvidencedItem, Rating)


def _checked(value: _Evidenced, quotes: _Quotes) -> tuple[_Evidenced, int]:
    """The value with its quote replaced by the ticket's own span, or marked inferred; 1 if a quote was lost."""
    if value.evidence is None:
        return value.model_copy(update={"inferred": True}), 0
    found = quotes.find(value.evidence)
    if found is None:
        return value.model_copy(update={"evidence": None, "inferred": True}), 1
    return value.model_copy(update={"evidence": found}), 0


def verify(output: StructureOutput, ticket_text: str, dimensions: list[str]) -> tuple[StructureOutput, int]:
    """Keep only quotes that occur in the ticket and ratings of known dimensions; count dropped quotes."""
    quotes = _Quotes(ticket_text)
    dropped = 0

    def items(values: list[EvidencedItem]) -> list[EvidencedItem]:
        nonlocal dropped
        checked = []
        for value in values:
            item, lost = _checked(value, quotes)
            dropped += lost
            checked.append(item)
        return checked

    story = output.prd.user_story
    parts: dict[str, EvidencedItem | None] = {}
    for part in ("role", "want", "benefit"):
        value = getattr(story, part)
        parts[part] = items([value])[0] if value is not None else None
    prd = output.prd.model_copy(update={
        "user_story": story.model_copy(update=parts),
        "acceptance_criteria": items(output.prd.acceptance_criteria),
        "edge_cases": items(output.prd.edge_cases),
        "dependencies": items(output.prd.dependencies),
    })

    ratings: list[Rating] = []
    seen: set[str] = set()
    for rating in output.ratings:
        if rating.dimension not in dimensions or rating.dimension in seen:
            continue
        seen.add(rating.dimension)
        checked, lost = _checked(rating, quotes)
        dropped += lost
        ratings.append(checked)

    injection_evidence = quotes.find(output.injection_evidence)
    if output.injection_evidence and injection_evidence is None:
        dropped += 1
    return output.model_copy(update={
        "prd": prd, "ratings": ratings, "injection_evidence": injection_evidence,
    }), dropped


def _findings_text(findings: list[Finding], ticket_text: str) -> str:
    # Only check ids and messages, plus quotes that the redacted text itself contains: a rule's span
    # points into the original ticket and could otherwise carry a redacted value to the API.
    lines = []
    for finding in findings[:_MAX_FINDINGS_SHOWN]:
        if finding.mode == "off":
            continue
        line = f"- {finding.check_id} ({finding.mode}): {finding.message}"
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
        lines = [f"- {'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
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
    first = Turn("user", prompt.render_user(
        ticket_type=ticket_type.value,
        findings=_findings_text(findings, ticket_text),
        ticket=wrap_untrusted(ticket_text, TICKET_TAG),
    ))
    schema = wire_schema(dimensions)
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

    verified, dropped = verify(output, ticket_text, dimensions)
    return StructureOutcome(output=verified, calls=calls, dropped_quotes=dropped)
