"""The review, stage by stage. Each stage is a plain function of typed models so that the bot can run them
as checkpointed steps and the CLI can run them in one go with `review()`.

Only `prepare` ever sees the original ticket text. Everything it returns is safe to store and log: the
redacted packet, and findings whose quotes never overlap a redacted value.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, TypeVar

from reqgate.pipeline import comment as frame
from reqgate.pipeline import gate, scoring
from reqgate.pipeline.cache import ResultCache
from reqgate.pipeline.comment import error_comment
from reqgate.pipeline.config import RUBRIC_TYPES, Config
from reqgate.pipeline.cost import WITHHELD_FLAG, LLMAccess
from reqgate.pipeline.guardrail import screen
from reqgate.pipeline.model_findings import merge, rests_on_model_injection
from reqgate.pipeline.prd_template import template_prd
from reqgate.pipeline.prompts import PROMPT_VERSION
from reqgate.pipeline.rules import criteria, decide_type, parse_story, run_rules
from reqgate.pipeline.rules.classify import TypeDecision
from reqgate.pipeline.schemas import (
    EvidencedItem,
    Finding,
    GateDecision,
    GuardrailReport,
    Model,
    PRDDraft,
    RenderOutcome,
    RequirementPacket,
    ReviewResult,
    ScoreReport,
    StageTiming,
    StructureOutcome,
    StructureOutput,
    TicketType,
    Trace,
    TypeSource,
    UserStory,
)

if TYPE_CHECKING:
    from reqgate.pipeline.llm import LLMClient

T = TypeVar("T")
DEFAULT_MAX_FINDINGS = 30
__all__ = ["Decision", "Prepared", "assemble", "call_render", "call_structure", "decide", "error_comment",
           "prepare", "replay_cached", "reusable", "review"]


class Prepared(Model):
    guardrail: GuardrailReport
    ticket_type: TicketType
    type_source: TypeSource = "text"
    type_sure: bool = True
    findings: list[Finding]
    content_hash: str
    stages: list[StageTiming]

    @property
    def type_settled(self) -> bool:
        """False when neither the tracker nor a sure reading of the text gave the type: the model's answer
        decides it."""
        return self.type_source != "text" or self.type_sure


class Decision(Model):
    score: ScoreReport
    gate: GateDecision
    # The findings and type the gate decided on: the prepared ones after the model's answer (its issues,
    # dismissals and injection flag; its type when the rules were unsure).
    findings: list[Finding] = field(default_factory=list)
    ticket_type: TicketType = TicketType.other
    type_source: TypeSource = "text"


def _timed(stages: list[StageTiming], name: str, fn: Callable[[], T]) -> T:
    started = time.perf_counter()
    value = fn()
    stages.append(StageTiming(stage=name, ms=round((time.perf_counter() - started) * 1000, 3)))
    return value


def content_hash(packet: RequirementPacket, config: Config, kind: TypeDecision) -> str:
    """Same text, type hint, configuration and prompts give the same hash, and so the same review. `kind` is
    the type decided for the packet (`decide_type`)."""
    material = {
        "title": packet.title,
        "body": packet.body,
        "type_hint": packet.type_hint.value if packet.type_hint else None,
        # The type the review uses, not the labels themselves: the bot's own verdict label changes them.
        "type": kind.model_dump(mode="json"),
        "config": config.fingerprint(),
        "prompts": PROMPT_VERSION,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _overlaps(finding: Finding, ranges: list[tuple[int, int]]) -> bool:
    span = finding.span
    return span is not None and any(span.start < end and start < span.end for start, end in ranges)


def _hide_secrets(findings: list[Finding], ranges: list[tuple[int, int]]) -> list[Finding]:
    """A rule may quote a line that holds a secret; such a quote is withheld, the finding kept."""
    return [
        f.model_copy(update={"span": None, "redacted": True}) if _overlaps(f, ranges) else f for f in findings
    ]


def prepare(packet: RequirementPacket, config: Config) -> Prepared:
    stages: list[StageTiming] = []
    kind = _timed(stages, "classify", lambda: decide_type(packet, config))
    report = _timed(stages, "guardrail", lambda: screen(packet, config, kind.rules_type))
    rule_findings = _timed(stages, "rules", lambda: run_rules(packet, kind.rules_type, config))
    # The guardrail's findings get their category here, from the same configuration as the rules'.
    screened = [f.model_copy(update={"category": config.category_for(f.check_id), "origin": "guardrail"})
                for f in report.findings]
    report = report.model_copy(update={"findings": screened})
    findings = screened + _hide_secrets(rule_findings, report.redacted_ranges)
    return Prepared(guardrail=report, ticket_type=kind.ticket_type, type_source=kind.source,
                    type_sure=kind.sure, findings=findings,
                    content_hash=content_hash(packet, config, kind), stages=stages)


def call_structure(
    prepared: Prepared, config: Config, llm: LLMClient | None, access: LLMAccess | None = None
) -> StructureOutcome:
    if prepared.guardrail.rejected:
        return StructureOutcome(failure="guardrail_rejected")
    if access is not None and not access.allowed:
        return StructureOutcome(failure=WITHHELD_FLAG, withheld=access.message)
    if llm is None:
        return StructureOutcome(failure="offline")
    # Imported here: call 1 builds its wire models at import, which a rules-only review never needs.
    from reqgate.pipeline.structure import run_structure

    return run_structure(prepared.guardrail, prepared.ticket_type, prepared.findings, config, llm)


def settle_type(prepared: Prepared, output: StructureOutput | None, config: Config) -> Prepared:
    """When the type was a guess, the model's reading of the ticket decides it, and the rules run again for
    that type (on the redacted text: it is all that may be kept) before anything is scored."""
    if (output is None or prepared.type_settled or output.ticket_type.value not in RUBRIC_TYPES
            or output.ticket_type is prepared.ticket_type):
        return prepared
    findings = prepared.guardrail.findings + run_rules(prepared.guardrail.redacted, output.ticket_type, config)
    return prepared.model_copy(update={"ticket_type": output.ticket_type, "type_source": "model",
                                       "type_sure": True, "findings": findings})


def decide(prepared: Prepared, structure: StructureOutcome, config: Config) -> Decision:
    output = structure.output
    prepared = settle_type(prepared, output, config)
    findings = merge(prepared.findings, output, prepared.guardrail.redacted.text, prepared.ticket_type, config,
                     injection_detected=prepared.guardrail.injection_detected)
    ratings = output.ratings if output else []
    report = scoring.score(prepared.ticket_type, findings, ratings, config)
    injection = prepared.guardrail.injection_detected or bool(output and output.suspected_injection)
    decision = gate.decide(report, findings, config.threshold, injection_suspected=injection,
                           rejected=prepared.guardrail.rejected)
    return Decision(score=report, gate=decision, findings=findings, ticket_type=prepared.ticket_type,
                    type_source=prepared.type_source)


def _item(quote: str) -> EvidencedItem:
    return EvidencedItem(text=" ".join(quote.split()), evidence=quote)


def rules_draft(prepared: Prepared) -> StructureOutput:
    """A draft from the deterministic parse alone, so that a rules-only comment still proposes something.
    It reads the redacted text only, so it can quote freely."""
    packet = prepared.guardrail.redacted
    source = packet.body if parse_story(packet.body) else packet.title
    story = parse_story(source)
    user_story = UserStory()
    if story is not None:
        want = None
        if story.want:
            # The parser leaves "to" out of the want; the draft reads "I want to ..." where the author did.
            lead = "to " if source[: story.want.start].rstrip().lower().endswith(" to") else ""
            want = _item(story.want.quote).model_copy(update={"text": lead + " ".join(story.want.quote.split())})
        user_story = UserStory(
            role=_item(story.role.quote) if story.role else None,
            want=want,
            benefit=_item(story.benefit.quote) if story.benefit else None,
        )
    # What is missing is asked in the comment's items, once; the draft only proposes.
    prd = PRDDraft(title=packet.title.strip() or "(untitled)", user_story=user_story,
                   acceptance_criteria=[_item(line) for line in criteria(packet.body)])
    return StructureOutput(ticket_type=prepared.ticket_type, prd=prd)


def call_render(
    prepared: Prepared, structure: StructureOutcome, decision: Decision, config: Config, llm: LLMClient | None
) -> RenderOutcome:
    if structure.output is None:
        return RenderOutcome(markdown=template_prd(rules_draft(prepared), decision.gate), used_template=True)
    # Imported here, like call 1: a rules-only review loads neither call 2 nor the LLM client.
    from reqgate.pipeline.render_prd import render_prd

    return render_prd(structure.output, decision.gate, config, llm)


def _fallbacks(prepared: Prepared, structure: StructureOutcome, render: RenderOutcome,
               type_source: TypeSource) -> tuple[list[str], dict[str, str]]:
    flags: list[str] = []
    reasons: dict[str, str] = {}
    if not prepared.type_sure and type_source != "model":
        flags.append("type_unsure")
        reasons["type_unsure"] = f"read as a {prepared.ticket_type.value}"
    if structure.withheld:
        flags.append(WITHHELD_FLAG)
        reasons[WITHHELD_FLAG] = structure.withheld
    elif structure.failure in ("offline", "guardrail_rejected"):
        flags.append(structure.failure)
    elif structure.failure:
        flags.append("structure_failed")
        reasons["structure_failed"] = structure.failure
    if render.skipped:
        flags.append("render_skipped")
        reasons["render_skipped"] = render.skipped
    elif structure.output is not None and render.used_template:
        flags.append("render_template")
        reasons["render_template"] = render.failure or "the model's draft left something out"
    return flags, reasons


def assemble(
    prepared: Prepared,
    structure: StructureOutcome,
    decision: Decision,
    render: RenderOutcome,
    config: Config,
    *,
    run_id: str,
    config_source: str,
    extra_stages: list[StageTiming] | None = None,
    previous: ReviewResult | None = None,
) -> ReviewResult:
    """The result and its comment. `previous` (the ticket's last review, if any) lets the comment say what
    was resolved since; it is only compared when the ticket type is the same."""
    flags, reasons = _fallbacks(prepared, structure, render, decision.type_source)
    trace = Trace(
        run_id=run_id,
        stages=prepared.stages + (extra_stages or []),
        llm_calls=structure.calls + render.calls,
        fallbacks=flags,
        fallback_reasons=reasons,
        prompt_version=PROMPT_VERSION,
        content_hash=prepared.content_hash,
        config_source=config_source,
        reviewed_at=datetime.datetime.now(datetime.UTC).date().isoformat(),
    )
    findings = decision.findings
    questions = structure.output.prd.questions if structure.output else []
    earlier = previous.findings if previous and previous.ticket_type == decision.ticket_type else None
    comment = frame.build_comment(
        ticket_type=decision.ticket_type, score=decision.score, decision=decision.gate,
        findings=findings, questions=questions, prd_markdown=render.markdown, trace=trace,
        max_findings=config.limits.max_findings_shown, type_source=decision.type_source,
        weights=frame.check_weights(config, decision.ticket_type), previous=earlier,
        llm_used=structure.output is not None, draft_from_template=render.used_template,
    )
    return ReviewResult(
        packet=prepared.guardrail.redacted, ticket_type=decision.ticket_type, type_source=decision.type_source,
        guardrail=prepared.guardrail, findings=findings, structure=structure.output, score=decision.score,
        decision=decision.gate, prd_markdown=render.markdown, comment_markdown=comment, trace=trace,
    )


def replay_cached(result: ReviewResult, *, run_id: str, config: Config | None = None) -> ReviewResult:
    """The same review served again without any LLM call; the comment says so."""
    trace = result.trace.model_copy(update={"run_id": run_id, "from_cache": True, "llm_calls": []})
    questions = result.structure.prd.questions if result.structure else []
    comment = frame.build_comment(
        ticket_type=result.ticket_type, score=result.score, decision=result.decision, findings=result.findings,
        questions=questions, prd_markdown=result.prd_markdown, trace=trace,
        max_findings=config.limits.max_findings_shown if config else DEFAULT_MAX_FINDINGS,
        type_source=result.type_source,
        weights=frame.check_weights(config, result.ticket_type) if config else None,
        llm_used=result.structure is not None,
    )
    return result.model_copy(update={"trace": trace, "comment_markdown": comment})


def reusable(result: ReviewResult) -> bool:
    """May this review be served again for the same content hash? Only one the LLM took part in: a
    rules-only review after an outage (or without a key) must be retried when someone asks again. Nor one
    whose verdict rests on the model's injection flag: a false flag must be clearable by a recheck."""
    decision = result.decision
    score_blocks = decision.score < decision.threshold
    rests_on_flag = decision.verdict == "needs_info" and rests_on_model_injection(
        result.findings, decision.blocking, other_reasons=score_blocks or result.guardrail.injection_detected
        or result.guardrail.rejected)
    return result.structure is not None and not rests_on_flag


def new_run_id() -> str:
    return f"cli:{os.urandom(6).hex()}"


def review(
    packet: RequirementPacket,
    config: Config,
    llm: LLMClient | None,
    *,
    cache: ResultCache | None = None,
    run_id: str | None = None,
    config_source: str = "defaults",
    access: LLMAccess | None = None,
) -> ReviewResult:
    """The whole review in one call. A cached result for the same content hash costs no LLM call."""
    run_id = run_id or new_run_id()
    prepared = prepare(packet, config)
    if cache is not None:
        hit = cache.get(prepared.content_hash)
        if hit is not None:
            return replay_cached(hit, run_id=run_id, config=config)
    stages: list[StageTiming] = []
    structure = _timed(stages, "structure", lambda: call_structure(prepared, config, llm, access))
    decision = _timed(stages, "score_and_gate", lambda: decide(prepared, structure, config))
    render = _timed(stages, "render", lambda: call_render(prepared, structure, decision, config, llm))
    result = assemble(prepared, structure, decision, render, config, run_id=run_id,
                      config_source=config_source, extra_stages=stages)
    if cache is not None and reusable(result):
        cache.put(prepared.content_hash, result)
    return result
