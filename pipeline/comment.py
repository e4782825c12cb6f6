"""The comment frame: verdict header, what to fix, questions, findings table and footer. Built in code only;
the model writes nothing here but the PRD section that is slotted in."""

from __future__ import annotations

from reqgate.pipeline.schemas import Finding, GateDecision, ScoreReport, TicketType, Trace

MARKER = "<!-- reqgate:review v1 -->"
VERSION = "0.1"
QUOTE_CHARS = 90

VERDICT_TITLE = {"ready": "✅ Ready", "needs_info": "⚠️ Needs info"}
TYPE_TITLE = {
    TicketType.story: "Story", TicketType.bug: "Bug", TicketType.task: "Task", TicketType.spike: "Spike",
    TicketType.other: "Ticket",
}
FALLBACK_NOTES = {
    "offline": "Rules-only review: no `ANTHROPIC_API_KEY` is configured, so no LLM was asked.",
    "structure_failed": (
        "Rules-only review: the LLM could not be used this time ({reason}). "
        "The rules below still apply; `/reqgate recheck` tries again."
    ),
    "guardrail_rejected": "The ticket was not sent to the LLM: the input guardrail rejected it.",
    "llm_withheld": "Rules-only review: {reason}",
    "render_template": "The PRD draft below was laid out by a template ({reason}).",
    "from_cache": (
        "Unchanged since the last review (same text, configuration and prompts): no LLM call was made."
    ),
}


def _one_line(text: str, limit: int = QUOTE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|").replace("`", "'")


def quote_of(finding: Finding) -> str:
    if finding.redacted:
        return "(not shown)"
    if finding.span is None:
        return "—"
    return f'"{_cell(finding.span.quote)}"'


def _fix_item(finding: Finding) -> str:
    line = f"**{finding.message}**"
    if finding.span is not None and not finding.redacted:
        line += f" > _{_one_line(finding.span.quote).replace('_', chr(92) + '_')}_"
    if finding.suggestion:
        line += f" — {finding.suggestion}"
    return line


def what_would_make_it_ready(decision: GateDecision, findings: list[Finding], limit: int) -> list[str]:
    """Blocking findings first, then the warnings that cost the most score."""
    items = [_fix_item(f) for f in decision.blocking]
    if decision.score < decision.threshold:
        items += [_fix_item(f) for f in findings if f.mode == "warn"]
    return items[:limit]


def findings_table(findings: list[Finding], limit: int) -> list[str]:
    shown = [f for f in findings if f.mode != "off"][:limit]
    rows = ["| check | mode | finding | quote |", "|---|---|---|---|"]
    rows += [f"| `{f.check_id}` | {f.mode} | {_cell(f.message)} | {quote_of(f)} |" for f in shown]
    if len(findings) > len(shown):
        rows.append(f"| … | | {len(findings) - len(shown)} more not shown | |")
    return rows


def _number(n: int) -> str:
    return f"{n:,}"


def footer(trace: Trace) -> str:
    calls = trace.llm_calls
    models = " + ".join(dict.fromkeys(c.model for c in calls)) or "rules only"
    tokens_in = sum(c.input_tokens + c.cache_read_tokens + c.cache_creation_tokens for c in calls)
    cached = sum(c.cache_read_tokens for c in calls)
    tokens_out = sum(c.output_tokens for c in calls)
    cost = sum(c.cost_usd for c in calls)
    parts = [f"ReqGate {VERSION}", f"prompts {trace.prompt_version}", models]
    if calls:
        parts += [
            f"{len(calls)} call{'s' if len(calls) != 1 else ''}",
            f"{_number(tokens_in)} tokens in ({_number(cached)} cached) / {_number(tokens_out)} out",
            f"≈ ${cost:.4f}",
        ]
    elif trace.from_cache:
        parts.append("0 calls (cached)")
    parts += [f"config: `{trace.config_source}`", f"run {trace.run_id}",
              "`/reqgate recheck` after editing", "`/reqgate help`"]
    return "<sub>" + " · ".join(parts) + "</sub>"


def notes(trace: Trace) -> list[str]:
    out = []
    for flag in trace.fallbacks + (["from_cache"] if trace.from_cache else []):
        template = FALLBACK_NOTES.get(flag)
        if template:
            out.append("> " + template.format(reason=trace.fallback_reasons.get(flag, "unknown reason")))
    return out


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
) -> str:
    blocking = len(decision.blocking)
    header = (f"### ReqGate: {VERDICT_TITLE[decision.verdict]} — score {decision.score} / 100 "
              f"(ready at {decision.threshold})")
    summary = (f"**{TYPE_TITLE[ticket_type]}** · reviewed against the `{score.rubric}` rubric · "
               f"{blocking} blocking finding{'s' if blocking != 1 else ''} · "
               f"{len(questions)} question{'s' if len(questions) != 1 else ''}")
    lines = [MARKER, header, "", summary, ""]
    note_lines = notes(trace)
    if note_lines:
        lines += [*note_lines, ""]
    if decision.verdict == "needs_info":
        lines.append("**What would make this ready**")
        fixes = what_would_make_it_ready(decision, findings, max_findings)
        lines += [f"{i}. {item}" for i, item in enumerate(fixes, 1)]
        lines += [f"- {reason}" for reason in decision.reasons]
        lines.append("")
    if questions:
        lines.append("**Questions for you**")
        lines += [f"- [ ] {q}" for q in questions]
        lines.append("")
    if prd_markdown.strip():
        lines += ["<details><summary>📄 Structured PRD draft (copy into the ticket)</summary>", "",
                  prd_markdown.strip(), "", "</details>", ""]
    shown = [f for f in findings if f.mode != "off"]
    if shown:
        lines += [f"<details><summary>🔎 All findings ({len(shown)})</summary>", "",
                  *findings_table(shown, max_findings), "", "</details>", ""]
    lines.append(footer(trace))
    return "\n".join(lines) + "\n"


def error_comment(title: str, details: list[str], *, run_id: str, retry_hint: str) -> str:
    """The sticky comment when the bot itself could not review (bad config, tracker unreachable)."""
    lines = [MARKER, f"### ReqGate: ❌ Error — {title}", ""]
    lines += [f"- {d}" for d in details]
    lines += ["", retry_hint, "", f"<sub>ReqGate {VERSION} · run {run_id} · `/reqgate help`</sub>"]
    return "\n".join(lines) + "\n"
