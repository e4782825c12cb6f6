"""Call 2: the PRD section of the comment in markdown, bound to the validated structure.

The model only writes prose. Code checks that every acceptance criterion, every question and the
verdict decided in code appear (and that the opposite verdict does not); otherwise one re-ask names
what is missing, and then the deterministic template takes over. Header, score, findings and footer
are never the model's: lookalikes of them are stripped before the check.
"""

from __future__ import annotations

import json
import re

from reqgate.pipeline.config import Config
from reqgate.pipeline.llm import LLMClient, LLMError, LLMReply, Turn
from reqgate.pipeline.logs import get_logger
from reqgate.pipeline.prd_template import template_prd
from reqgate.pipeline.prompts import load_prompt, wrap_untrusted
from reqgate.pipeline.records import Record, field_names
from reqgate.pipeline.schemas import (
    EvidencedItem,
    GateDecision,
    LLMCallRecord,
    RenderOutcome,
    StructureOutput,
    Verdict,
)

log = get_logger(__name__)

DRAFT_TAG = "draft_json"
VERDICT_WORDS: dict[Verdict, str] = {"ready": "Ready", "needs_info": "Needs info"}
_TRUNCATED = ("max_tokens", "model_context_window_exceeded")

_HTML_COMMENT = re.compile(r"<!--.*?(-->|\Z)", re.DOTALL)
# Tags that would close or fake the frame the section is embedded in.
_FRAME_TAGS = re.compile(r"</?\s*(details|summary|sub)\b[^>]*>", re.IGNORECASE)
_SCORE = re.compile(r"\b\d{1,3}\s*/\s*100\b")
_FENCE = re.compile(r"\A```[a-zA-Z]*\n(.*)\n```\Z", re.DOTALL)
_MARKDOWN_PUNCTUATION = re.compile(r"[*_`~#>|\[\]\\]")


def verdict_line(decision: GateDecision) -> str:
    return f"Verdict: {VERDICT_WORDS[decision.verdict]}"


def _comparable(text: str) -> str:
    """Case, whitespace and markdown emphasis do not count when looking for a required item."""
    return " ".join(_MARKDOWN_PUNCTUATION.sub(" ", text).casefold().split()).rstrip(" .;:!?")


def clean_markdown(markdown: str) -> str:
    """Strip what only the code-built frame may write: markers, frame tags, score headings, fences."""
    text = markdown.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    text = _FRAME_TAGS.sub("", _HTML_COMMENT.sub("", text))
    kept = [line for line in text.splitlines()
            if not (line.lstrip().startswith("#") and (_SCORE.search(line) or "reqgate" in line.lower()))]
    return "\n".join(kept).strip()


def _required(structure: StructureOutput) -> list[tuple[str, str]]:
    """(kind, text) of every item the section must copy word for word: criteria, steps, done conditions."""
    prd = structure.prd
    items = [("acceptance criterion", item.text) for item in prd.acceptance_criteria]
    if prd.bug is not None:
        items += [("step to reproduce", item.text) for item in prd.bug.steps]
    if prd.task is not None:
        items += [("done condition", item.text) for item in prd.task.done]
    return items


def missing_items(markdown: str, structure: StructureOutput, decision: GateDecision) -> list[str]:
    """Required items absent from `markdown`, each described for the re-ask."""
    haystack = _comparable(markdown)
    missing = [f'{kind}: "{text}"' for kind, text in _required(structure) if _comparable(text) not in haystack]
    missing += [f'question: "{question}"' for question in structure.prd.questions
                if _comparable(question) not in haystack]
    line = verdict_line(decision)
    if _comparable(line) not in haystack:
        missing.append(f'the line "{line}"')
    for verdict, word in VERDICT_WORDS.items():
        if verdict != decision.verdict and _comparable(f"Verdict: {word}") in haystack:
            missing.append(f'only the given verdict: remove "Verdict: {word}"')
    return missing


def _draft_json(structure: StructureOutput) -> str:
    # Ratings and injection flags are not the writer's business; the PRD and the type are.
    payload = {"ticket_type": structure.ticket_type.value, "prd": structure.prd.model_dump(mode="json")}
    return json.dumps(payload, ensure_ascii=False, indent=1)


def _assess(reply: LLMReply, structure: StructureOutput, decision: GateDecision) -> tuple[str, list[str]]:
    markdown = clean_markdown(reply.text)
    missing = missing_items(markdown, structure, decision)
    if reply.stop_reason in _TRUNCATED:
        missing.insert(0, "a complete answer: it was cut off at the output token limit, be shorter")
    return markdown, missing


def _proposes(structure: StructureOutput) -> bool:
    """Does the draft hold anything the model could word better than the template: a proposed (inferred)
    item, missing information or a question? A ready ticket without any is laid out from its own words."""
    prd = structure.prd
    if prd.missing_info or prd.questions:
        return True

    def inferred(node: object) -> bool:
        if isinstance(node, EvidencedItem):
            return node.inferred
        if isinstance(node, list):
            return any(inferred(item) for item in node)
        if isinstance(node, Record):
            return any(inferred(getattr(node, name)) for name in field_names(type(node)))
        return False

    return inferred(prd)


SKIPPED_READY = "ready, nothing to propose: the draft is laid out from the ticket's own words"


def render_prd(
    structure: StructureOutput, decision: GateDecision, config: Config, llm: LLMClient | None
) -> RenderOutcome:
    """Never raises: any failure ends in the template. A ready ticket with nothing to propose costs no call 2:
    the template shows the same verified items, and the model could only rephrase them."""
    if llm is None:
        return RenderOutcome(markdown=template_prd(structure, decision), used_template=True)
    if decision.verdict == "ready" and not _proposes(structure):
        return RenderOutcome(markdown=template_prd(structure, decision), used_template=True,
                             skipped=SKIPPED_READY)
    try:
        return _render(structure, decision, config, llm)
    except Exception as exc:  # noqa: BLE001 — the comment must be posted whatever broke here
        log.error("render.crashed", error=type(exc).__name__)
        return RenderOutcome(markdown=template_prd(structure, decision), used_template=True,
                             failure=f"internal error ({type(exc).__name__})")


def _render(structure: StructureOutput, decision: GateDecision, config: Config, llm: LLMClient) -> RenderOutcome:
    prompt = load_prompt("render")
    system = [prompt.system]
    first = Turn("user", prompt.render_user(
        verdict_line=verdict_line(decision), draft=wrap_untrusted(_draft_json(structure), DRAFT_TAG),
    ))
    model, max_tokens = config.llm.render_model, config.llm.render_max_tokens

    def fallback(calls: list[LLMCallRecord], failure: str) -> RenderOutcome:
        return RenderOutcome(markdown=template_prd(structure, decision), calls=calls, used_template=True,
                             failure=failure)

    try:
        reply = llm.complete_text("render", model, system, [first], max_tokens)
    except LLMError as exc:
        return fallback([exc.record], f"LLM call failed: {exc.reason}")
    calls = [reply.record]
    if reply.stop_reason == "refusal":
        return fallback([reply.record.model_copy(update={"ok": False, "error": "refusal"})],
                        "the model declined to write the PRD")
    markdown, missing = _assess(reply, structure, decision)
    if not missing:
        return RenderOutcome(markdown=markdown, calls=calls)

    log.info("render.reask", missing=len(missing))
    history = [first, Turn("assistant", reply.text or "(empty)"), Turn("user", load_prompt(
        "render_reask").render_user(missing="\n".join(f"- {item}" for item in missing)))]
    try:
        reply = llm.complete_text("render_reask", model, system, history, max_tokens)
    except LLMError as exc:
        return fallback([*calls, exc.record], f"LLM call failed: {exc.reason}")
    if reply.stop_reason == "refusal":
        return fallback([*calls, reply.record.model_copy(update={"ok": False, "error": "refusal"})],
                        "the model declined to write the PRD")
    calls.append(reply.record)
    markdown, missing = _assess(reply, structure, decision)
    if not missing:
        return RenderOutcome(markdown=markdown, calls=calls)
    return fallback(calls, f"the PRD draft left out {len(missing)} required item(s) twice")
