from reqgate.pipeline.comment import MARKER, build_comment, error_comment, findings_table
from reqgate.pipeline.schemas import (
    DimensionScore,
    Finding,
    GateDecision,
    LLMCallRecord,
    ScoreReport,
    Span,
    TicketType,
    Trace,
)


def _trace(**extra) -> Trace:
    return Trace(run_id="gh:abc", prompt_version="structure@1+render@1#x", content_hash="h", **extra)


def _comment(decision: GateDecision, findings: list[Finding], trace: Trace, questions=("Who may export?",)):
    score = ScoreReport(score=decision.score, rubric="story",
                        dimensions=[DimensionScore(dimension="clarity", weight=1, rating=3, source="rules")])
    return build_comment(ticket_type=TicketType.story, score=score, decision=decision, findings=findings,
                         questions=list(questions), prd_markdown="**Title:** Export", trace=trace,
                         max_findings=30)


FAST = Finding(check_id="wording.unmeasurable", mode="error", message="'fast' is not measurable",
               span=Span(quote="fast | slow", start=10, end=21), suggestion="say how fast")
PII = Finding(check_id="guardrail.pii", mode="info", message="1 email address redacted before review", redacted=True)


def test_needs_info_comment_leads_with_verdict_and_what_to_fix():
    decision = GateDecision(verdict="needs_info", score=58, threshold=70, blocking=[FAST],
                            reasons=["1 finding blocks the verdict."])
    body = _comment(decision, [FAST, PII], _trace())
    lines = body.splitlines()
    assert lines[0] == MARKER
    assert lines[1] == "### ReqGate: ⚠️ Needs info — score 58 / 100 (ready at 70)"
    assert "**What would make this ready**" in body and "say how fast" in body
    assert "- [ ] Who may export?" in body
    assert "<details><summary>📄 Structured PRD draft" in body and "**Title:** Export" in body
    # The table escapes pipes in quotes and never shows a redacted value.
    assert '"fast \\| slow"' in body and "| `guardrail.pii` | info |" in body and "(not shown)" in body


def test_ready_comment_has_no_fix_list_and_footer_accounts_for_calls():
    calls = [LLMCallRecord(call="structure", model="claude-sonnet-5-5", input_tokens=100, cache_read_tokens=900,
                           output_tokens=300, cost_usd=0.0051),
             LLMCallRecord(call="render", model="claude-haiku-5-5", input_tokens=50, output_tokens=200,
                           cost_usd=0.001)]
    decision = GateDecision(verdict="ready", score=88, threshold=70)
    body = _comment(decision, [], _trace(llm_calls=calls, config_source="defaults"))
    assert "✅ Ready — score 88 / 100" in body and "What would make this ready" not in body
    footer = body.strip().splitlines()[-1]
    assert "claude-sonnet-5-5 + claude-haiku-5-5" in footer and "2 calls" in footer
    assert "1,050 tokens in (900 cached) / 500 out" in footer and "≈ $0.0061" in footer
    assert "run gh:abc" in footer and "/reqgate recheck" in footer


def test_fallbacks_are_explained():
    decision = GateDecision(verdict="ready", score=80, threshold=70)
    body = _comment(decision, [], _trace(fallbacks=["structure_failed"],
                                         fallback_reasons={"structure_failed": "HTTP 529 overloaded_error"}))
    assert "Rules-only review: the LLM could not be used this time (HTTP 529 overloaded_error)" in body
    assert "no LLM call was made" in _comment(decision, [], _trace(from_cache=True))


def test_findings_table_is_capped():
    many = [FAST] * 5
    rows = findings_table(many, 2)
    assert len(rows) == 2 + 2 + 1 and "3 more not shown" in rows[-1]


def test_error_comment_is_sticky_and_explains_the_retry():
    body = error_comment("invalid configuration", ["`.github/reqgate.yml`, line 3: `labels.redy`: unknown key"],
                         run_id="gh:1", retry_hint="Fix the file, then comment `/reqgate recheck`.")
    assert body.startswith(MARKER) and "line 3" in body and "/reqgate recheck" in body
