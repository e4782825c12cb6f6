"""The comment frame, built in code only: a few visible lines a PM reads in twenty seconds, the rest folded.

Visible: the verdict with the type and where the type came from, what was fixed since the last review (one
line), then at most five numbered items, blocking first, then by the rubric weight of what they are about;
each a question or a concrete request quoting the words concerned. A ready ticket gets its verdict line and
the fold. Folded: further questions, the PRD draft, every finding with its category and mode, notes, and the
footer. Each piece of advice appears once: the draft loses the lines that repeat an item.

Everything the ticket or the model wrote goes through `comment_safety` (the draft through `markdown_safety`)
before it is placed in the frame.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reqgate.pipeline.categories import same_problem
from reqgate.pipeline.comment_advice import QUOTE_CHARS, ask, known, topic
from reqgate.pipeline.comment_metrics import repeated_sentences, sentences, visible_lines
from reqgate.pipeline.comment_safety import code_span, safe_inline
from reqgate.pipeline.config import Config
from reqgate.pipeline.gate import INJECTION_REASON
from reqgate.pipeline.schemas import (
    MODE_SEVERITY,
    Finding,
    GateDecision,
    ScoreReport,
    TicketType,
    Trace,
    TypeSource,
)

__all__ = ["MARKER", "VERDICT_TITLE", "build_comment", "check_weights", "error_comment", "footer",
           "repeated_sentences", "resolved_since", "visible_lines"]

MARKER = "<!-- reqgate:review v1 -->"
VERSION = "0.1"
MAX_ITEMS = 5

VERDICT_TITLE = {"ready": "✅ Ready", "needs_info": "⚠️ Needs info"}
TYPE_TITLE = {
    TicketType.story: "Story", TicketType.bug: "Bug", TicketType.task: "Task", TicketType.spike: "Spike",
    TicketType.other: "Ticket",
}
TYPE_SOURCE_TEXT: dict[str, str] = {
    "tracker": "type from the tracker",
    "label": "type from a label",
    "text": "type guessed from the text",
    "model": "type chosen by the model",
    "flag": "type set by command",
}
# How much a finding matters when its check is in no rubric dimension (the model's findings): the weight a
# rubric gives the dimension such a category usually falls in.
CATEGORY_WEIGHT: dict[str, float] = {
    "repro": 4, "incomplete": 4, "placeholder": 3, "observed": 3, "expected": 3, "done": 3, "ambiguous": 3,
    "split": 2, "open_question": 2, "why": 2, "environment": 1, "other": 1,
}
FALLBACK_NOTES = {
    # Said of a bot without an API key and of `reqgate review --offline` with one: name neither cause alone.
    "offline": "Rules-only review, offline: no LLM was asked (no `ANTHROPIC_API_KEY`, or `--offline`).",
    "structure_failed": (
        "Rules-only review: the LLM could not be used this time ({reason}). "
        "The rules still apply; `/reqgate recheck` tries again."
    ),
    "guardrail_rejected": "The ticket was not sent to the LLM: the input guardrail rejected it.",
    "llm_withheld": "Rules-only review: {reason}",
    "render_template": "The draft was laid out by a template ({reason}).",
    "type_unsure": (
        "The tracker gives no type and the text does not make it clear ({reason}): only the checks that "
        "apply to every ticket are used. Set the issue type or a type label for a full review."
    ),
}


@dataclass
class _Item:
    text: str
    blocking: bool
    weight: float
    severity: int
    order: int


def check_weights(config: Config, ticket_type: TicketType) -> dict[str, float]:
    """Check id -> the weight of the rubric dimension it belongs to, for this ticket type."""
    _, rubric = config.rubric_for(ticket_type)
    weights: dict[str, float] = {}
    for spec in rubric.dimensions.values():
        for check_id in spec.checks:
            weights[check_id] = max(weights.get(check_id, 0.0), spec.weight)
    return weights


def _groups(findings: list[Finding]) -> list[list[Finding]]:
    """Findings of one known rule check become one item; each of the model's stays its own."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        key = (finding.check_id, "" if known(finding) else (finding.suggestion or finding.message))
        groups.setdefault(key, []).append(finding)
    return list(groups.values())


_STOP = frozenset({"what", "which", "when", "where", "does", "this", "that", "with", "from", "have", "there",
                   "their", "about", "should", "would", "could", "will", "they", "them", "your", "into", "been"})


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{4,}", text.casefold()) if w not in _STOP}


def _same_ask(a: str, b: str) -> bool:
    """Two asks about the same thing (the model's question and a rule's): most content words shared."""
    wa, wb = _words(a), _words(b)
    return bool(wa and wb) and len(wa & wb) / min(len(wa), len(wb)) >= 0.6


def _superseded(finding: Finding, findings: list[Finding]) -> bool:
    """A rule's finding that the model raised more strongly (same category; the rule's an absence, or the same
    words): the model's judgement is the ask; the rule's stays in the collapsed table."""
    return finding.origin != "model" and any(
        other.origin == "model" and MODE_SEVERITY[other.mode] > MODE_SEVERITY[finding.mode]
        and same_problem(finding, other.category, other.span)
        for other in findings)


def items(
    ticket_type: TicketType,
    decision: GateDecision,
    findings: list[Finding],
    questions: list[str],
    weights: dict[str, float],
) -> list[str]:
    """Every ask of the review, most important first, each once. A finding the model dismissed by quoting
    the ticket is not asked, nor one the model raised more strongly: both stay in the collapsed table."""
    standing = [f for f in findings if f.mode != "off" and f.dismissed_by is None]
    shown = [f for f in standing if not _superseded(f, standing)]
    built: list[_Item] = []
    for order, group in enumerate(_groups(shown)):
        first = group[0]
        severity = max(MODE_SEVERITY[f.mode] for f in group)
        weight = weights.get(first.check_id) or CATEGORY_WEIGHT.get(first.category, 1.0)
        built.append(_Item(ask(group, ticket_type), severity == 3, weight, severity, order))
    blocking = sorted((i for i in built if i.blocking), key=lambda i: (-i.weight, i.order))
    asking = sorted((i for i in built if not i.blocking and i.severity >= 2), key=lambda i: (-i.weight, i.order))
    minor = sorted((i for i in built if i.severity == 1), key=lambda i: (-i.weight, i.order))
    out: list[str] = []
    if INJECTION_REASON in decision.reasons and not any(f.check_id == "guardrail.injection" for f in shown):
        out.append(f"**Blocks:** {INJECTION_REASON}")
    out += [f"**Blocks:** {i.text}" for i in blocking]
    model = [safe_inline(q, 240) for q in questions if q.strip()]
    # The model's questions come before the rules' non-blocking ones: it read the whole ticket.
    for text in model + [i.text for i in asking] + [i.text for i in minor]:
        if not any(_same_ask(text, seen) for seen in out):
            out.append(text)
    return out


def resolved_since(previous: list[Finding] | None, current: list[Finding]) -> list[str]:
    """Topics of what the last review asked (error or warn) that this one no longer finds."""
    if not previous:
        return []

    def key(f: Finding) -> tuple[str, str]:
        return f.check_id, " ".join(f.span.quote.split()).casefold() if f.span and not f.redacted else ""

    now = {key(f) for f in current if f.mode != "off" and f.dismissed_by is None}
    gone = [f for f in previous if f.mode in ("error", "warn") and key(f) not in now]
    return list(dict.fromkeys(topic(f) for f in gone))


def _number(n: int) -> str:
    return f"{n:,}"


def footer(trace: Trace, *, llm_used: bool | None = None) -> str:
    """The run's facts. A replayed review says whose LLM work it reuses and that it costs nothing now."""
    calls = trace.llm_calls
    parts = [f"ReqGate {VERSION}", f"prompts {code_span(trace.prompt_version)}"]
    if calls:
        models = " + ".join(dict.fromkeys(code_span(c.model) for c in calls))
        tokens_in = sum(c.input_tokens + c.cache_read_tokens + c.cache_creation_tokens for c in calls)
        cached = sum(c.cache_read_tokens for c in calls)
        tokens_out = sum(c.output_tokens for c in calls)
        cost = sum(c.cost_usd for c in calls)
        parts += [
            models,
            f"{len(calls)} call{'s' if len(calls) != 1 else ''}",
            f"{_number(tokens_in)} tokens in ({_number(cached)} cached) / {_number(tokens_out)} out",
            f"≈ ${cost:.4f}",
        ]
    elif trace.from_cache:
        when = f"of {trace.reviewed_at}" if trace.reviewed_at else "made earlier"
        what = "LLM review" if llm_used is not False else "review"
        parts.append(f"unchanged ticket: reuses the {what} {when}, no LLM call and no cost now")
    else:
        parts.append("rules only, no LLM call")
    parts += [f"config: {code_span(trace.config_source)}", f"run {code_span(trace.run_id)}",
              "`/reqgate recheck` after editing", "`/reqgate help`"]
    return "<sub>" + " · ".join(parts) + "</sub>"


def notes(trace: Trace) -> list[str]:
    out = []
    for flag in trace.fallbacks:
        template = FALLBACK_NOTES.get(flag)
        if template:
            reason = safe_inline(trace.fallback_reasons.get(flag, "unknown reason"), 160)
            out.append("> " + template.format(reason=reason))
    return out


def _cell(text: str) -> str:
    return safe_inline(text, QUOTE_CHARS)


def findings_table(findings: list[Finding], limit: int) -> list[str]:
    rows: dict[tuple[str, ...], int] = {}
    for f in findings:
        quote = "(not shown)" if f.redacted else f'"{_cell(f.span.quote)}"' if f.span else "—"
        mode = f"{f.mode}, dismissed: \"{_cell(f.dismissed_by.quote)}\"" if f.dismissed_by else f.mode
        key = (f.category, code_span(f.check_id), mode, _cell(f.message), quote)
        rows[key] = rows.get(key, 0) + 1
    listed = list(rows)
    lines = ["| category | check | mode | finding | quote |", "|---|---|---|---|---|"]
    for row in listed[:limit]:
        times = rows[row]
        cells = (*row[:3], row[3] + (f" (×{times})" if times > 1 else ""), row[4])
        lines.append("| " + " | ".join(cells) + " |")
    if len(listed) > limit:
        lines.append(f"| … | | | {len(listed) - limit} more not shown | |")
    return lines


_VERDICT_LINE = re.compile(r"^\W*verdict\W", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_LABEL_ONLY = re.compile(r"^\s*(\*\*[^*]+\*\*|__[^_]+__)\s*:?\s*(\([^)]*\))?\s*$")


def _without_repeats(markdown: str, seen: set[str]) -> str:
    """The draft without the lines that repeat an ask already made, nor the verdict (the header has it)."""
    kept: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        if not in_code and _VERDICT_LINE.match(line):
            continue
        said = sentences(line, min_words=1) if not in_code else []
        if said and all(s in seen for s in said):
            continue
        seen.update(said)
        kept.append(line)
    # A label ("**Questions**") whose list went entirely is dropped with it.
    out: list[str] = []
    for n, line in enumerate(kept):
        if _LABEL_ONLY.match(line):
            following = next((nxt for nxt in kept[n + 1:] if nxt.strip()), "")
            if not following or _LABEL_ONLY.match(following):
                continue
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _safe_draft(prd_markdown: str, *, from_template: bool) -> str:
    if from_template or not prd_markdown.strip():
        return prd_markdown  # the code's template is inert as built (render_prd.template_prd)
    # Imported here: mistletoe's import alone takes longer than a whole rules-only review, whose draft is
    # always the template (tests/test_cli_imports.py).
    from reqgate.pipeline.markdown_safety import safe_markdown

    return safe_markdown(prd_markdown)


def _header(ticket_type: TicketType, type_source: TypeSource, decision: GateDecision, llm_used: bool) -> str:
    parts = [f"### ReqGate: {VERDICT_TITLE[decision.verdict]}",
             f"{TYPE_TITLE[ticket_type]} ({TYPE_SOURCE_TEXT.get(type_source, type_source)})"]
    score = f"score {decision.score}/100"
    if decision.verdict == "needs_info" and decision.score < decision.threshold:
        score += f", ready at {decision.threshold}"
    parts.append(score)
    if not llm_used:
        parts.append("rules only")
    return " · ".join(parts)


def build_comment(
    *,
    ticket_type: TicketType,
    score: ScoreReport,
    decision: GateDecision,
    findings: list[Finding],
    questions: list[str],
    prd_markdown: str,
    trace: Trace,
    max_findings: int,
    type_source: TypeSource = "text",
    weights: dict[str, float] | None = None,
    previous: list[Finding] | None = None,
    llm_used: bool | None = None,
    draft_from_template: bool = False,
) -> str:
    """The whole comment. `previous` is the last review's findings, for the "resolved" line; `weights`
    (from `check_weights`) orders the asks by how much they matter to the rubric; `llm_used` defaults to
    whether this run made LLM calls (a replay of an LLM review must say so itself). `prd_markdown` is made
    inert here unless `draft_from_template` says it is the code's template, which is inert as built."""
    if llm_used is None:
        llm_used = bool(trace.llm_calls)
    asks = items(ticket_type, decision, findings, questions, weights or {})
    visible = asks[:MAX_ITEMS] if decision.verdict == "needs_info" else []
    folded = asks[len(visible):]

    lines = [MARKER, _header(ticket_type, type_source, decision, llm_used)]
    resolved = resolved_since(previous, findings)
    if resolved:
        lines.append("Resolved since the last review: " + ", ".join(resolved[:6]) + ".")
    if visible:
        lines += ["", *[f"{n}. {text}" for n, text in enumerate(visible, 1)]]

    seen: set[str] = set()
    for text in asks:
        seen.update(sentences(text, min_words=1))
    body: list[str] = []
    if folded:
        label = "More questions" if decision.verdict == "needs_info" else "Worth asking (nothing blocks)"
        body += [f"**{label}**", *[f"- {text}" for text in folded], ""]
    draft = _without_repeats(_safe_draft(prd_markdown, from_template=draft_from_template), seen)
    if len([line for line in draft.splitlines() if line.strip()]) <= 1:
        draft = ""  # a title alone proposes nothing
    if draft:
        body += [f"**Draft for this {TYPE_TITLE[ticket_type].lower()}** (copy into the ticket, then edit)", "",
                 draft, ""]
    shown = [f for f in findings if f.mode != "off"]
    if shown:
        body += [f"**All findings ({len(shown)})**", "", *findings_table(shown, max_findings), ""]
    note_lines = notes(trace)
    if note_lines:
        body += [*note_lines, ""]
    body.append(footer(trace, llm_used=llm_used))

    contents = ["draft" if draft else "", f"{len(shown)} finding{'s' if len(shown) != 1 else ''}" if shown else "",
                f"{len(folded)} more question{'s' if len(folded) != 1 else ''}" if folded else "", "review details"]
    summary = "Details: " + ", ".join(c for c in contents if c)
    lines += ["", f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]
    return "\n".join(lines) + "\n"


def error_comment(title: str, details: list[str], *, run_id: str, retry_hint: str) -> str:
    """The sticky comment when the bot itself could not review (bad config, tracker unreachable)."""
    lines = [MARKER, f"### ReqGate: ❌ Error — {title}", ""]
    lines += [f"- {d}" for d in details]
    lines += ["", retry_hint, "", f"<sub>ReqGate {VERSION} · run {run_id} · `/reqgate help`</sub>"]
    return "\n".join(lines) + "\n"
