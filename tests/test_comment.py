import re

from reqgate.pipeline.comment import (
    MARKER,
    build_comment,
    error_comment,
    findings_table,
    repeated_sentences,
    resolved_since,
    visible_lines,
)
from reqgate.pipeline.comment_advice import _BY_CHECK, ask
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


def _comment(decision: GateDecision, findings: list[Finding], trace: Trace, questions=("Who may export?",),
             prd="**Title:** Export\n\n**Acceptance criteria**\n- [ ] A CSV downloads", **extra):
    score = ScoreReport(score=decision.score, rubric="story",
                        dimensions=[DimensionScore(dimension="clarity", weight=1, rating=3, source="rules")])
    return build_comment(ticket_type=extra.pop("ticket_type", TicketType.story), score=score, decision=decision,
                         findings=findings, questions=list(questions), prd_markdown=prd, trace=trace,
                         max_findings=30, **extra)


def _finding(check_id: str, mode: str = "warn", quote: str | None = None, **extra) -> Finding:
    span = Span(quote=quote, start=0, end=len(quote)) if quote else None
    return Finding(check_id=check_id, mode=mode, message=extra.pop("message", f"{check_id} finding"), span=span,
                   **extra)


FAST = Finding(check_id="wording.unmeasurable", mode="error", message="'fast' is not measurable",
               category="ambiguous", span=Span(quote="fast | slow", start=10, end=21), suggestion="say how fast")
PII = Finding(check_id="guardrail.pii", mode="info", message="1 email address redacted before review", redacted=True)
NEEDS_INFO = GateDecision(verdict="needs_info", score=58, threshold=70, blocking=[FAST],
                          reasons=["1 finding blocks the verdict."])


def _visible(body: str) -> list[str]:
    top = body.split("<details>")[0]
    return [line for line in top.splitlines() if line.strip() and not line.startswith("<!--")]


def test_needs_info_comment_leads_with_verdict_type_and_numbered_asks():
    body = _comment(NEEDS_INFO, [FAST, PII], _trace(), type_source="tracker")
    lines = body.splitlines()
    assert lines[0] == MARKER
    assert lines[1] == ("### ReqGate: ⚠️ Needs info · Story (type from the tracker) · score 58/100, ready at 70"
                        " · rules only")
    visible = _visible(body)
    assert visible[1].startswith("1. **Blocks:** What number makes \"fast \\| slow\" true")
    assert visible[2] == "2. Who may export?"
    assert visible_lines(body) == len(visible) + 1 <= 12
    # Folded: the draft, every finding with its category and mode, the footer.
    folded = body.split("<details>", 1)[1]
    assert "**Title:** Export" in folded and "| ambiguous | `wording.unmeasurable` | error |" in folded
    assert "| other | `guardrail.pii` | info |" in folded and "(not shown)" in folded
    assert folded.rstrip().endswith("</details>") and "<sub>ReqGate 0.1" in folded
    assert repeated_sentences(body) == 0


def test_blocking_first_then_by_rubric_weight_and_at_most_five_visible():
    findings = [
        _finding("bug.environment.missing", category="environment"),
        _finding("wording.vague", quote="some"),
        _finding("bug.expected.missing", category="expected"),
        _finding("bug.actual.missing", category="observed"),
        _finding("bug.steps.missing", "error", category="repro"),
        _finding("wording.unmeasurable", quote="quickly"),
        _finding("template.placeholder", "error", quote="TBD"),
    ]
    weights = {"bug.steps.missing": 4, "bug.expected.missing": 3, "bug.actual.missing": 3,
               "bug.environment.missing": 1, "template.placeholder": 2, "wording.vague": 2,
               "wording.unmeasurable": 2}
    decision = GateDecision(verdict="needs_info", score=30, threshold=70, blocking=[findings[4], findings[6]])
    body = _comment(decision, findings, _trace(), questions=(), ticket_type=TicketType.bug, weights=weights)
    numbered = [line for line in _visible(body) if re.match(r"\d\. ", line)]
    assert len(numbered) == 5
    assert numbered[0].startswith("1. **Blocks:** How can a developer reproduce this?")
    assert numbered[1].startswith("2. **Blocks:** Replace the unfilled placeholder \"TBD\"")
    assert "What actually happens?" in numbered[2] + numbered[3] and "What should happen instead?" in body
    # The environment (weight 1) is asked, but folded.
    folded = body.split("<details>", 1)[1]
    assert "Which version, platform or configuration" in folded and "**More questions**" in folded
    assert repeated_sentences(body) == 0 and visible_lines(body) <= 12


def test_ready_ticket_gets_two_lines():
    decision = GateDecision(verdict="ready", score=88, threshold=70)
    body = _comment(decision, [_finding("story.benefit.missing", "info")], _trace())
    assert visible_lines(body) == 2
    assert "score 88/100" in body.splitlines()[1] and "ready at" not in body.splitlines()[1]
    assert "Worth asking (nothing blocks)" in body and "Who may export?" in body


def test_same_words_are_one_ask_and_the_draft_does_not_repeat_them():
    vague = [_finding("wording.vague", quote="fast"), _finding("wording.vague", quote="big")]
    prd = ("**Title:** Export\n\n**Questions**\n- [ ] Who may export?\n\n"
           "**Acceptance criteria**\n- [ ] A CSV downloads\n\nVerdict: Needs info")
    body = _comment(NEEDS_INFO.model_copy(update={"blocking": []}), vague, _trace(), prd=prd)
    asks = [line for line in _visible(body) if re.match(r"\d\. ", line)]
    assert asks == ["1. Who may export?",
                    '2. What exactly is meant by "fast", "big"? Name the concrete case, value or list.']
    assert body.count("Who may export?") == 1 and "**Questions**" not in body and "Verdict:" not in body
    assert "- [ ] A CSV downloads" in body and repeated_sentences(body) == 0


def test_model_question_and_rule_ask_about_the_same_thing_are_asked_once():
    steps = _finding("bug.steps.missing", "warn", category="repro")
    body = _comment(NEEDS_INFO.model_copy(update={"blocking": []}), [steps], _trace(),
                    questions=("Which steps reproduce this, and which request or test triggers it?",),
                    ticket_type=TicketType.bug)
    asks = [line for line in _visible(body) if re.match(r"\d\. ", line)]
    assert len(asks) == 1 and "Which steps reproduce this" in asks[0]


def test_rules_advice_never_invents_an_example():
    for check_id, template in _BY_CHECK.items():
        text = ask([_finding(check_id, quote="the words")], TicketType.story)
        assert "e.g." not in text and "warehouse" not in text and "stock" not in text, check_id
        if "{quotes}" in template:
            assert '"the words"' in text, check_id
        assert text.rstrip().endswith(("?", ".")), check_id


def test_resolved_since_the_last_review_is_one_line():
    before = [_finding("bug.steps.missing", "error"), _finding("bug.expected.missing", "warn"),
              _finding("wording.vague", "warn", quote="some"), _finding("guardrail.pii", "info")]
    now = [_finding("wording.vague", "warn", quote="some")]
    assert resolved_since(before, now) == ["steps to reproduce", "expected behaviour"]
    assert resolved_since(None, now) == []
    body = _comment(NEEDS_INFO.model_copy(update={"blocking": []}), now, _trace(), previous=before,
                    ticket_type=TicketType.bug)
    assert body.splitlines()[2] == "Resolved since the last review: steps to reproduce, expected behaviour."


def test_footer_accounts_for_calls():
    calls = [LLMCallRecord(call="structure", model="claude-sonnet-5-5", input_tokens=100, cache_read_tokens=900,
                           output_tokens=300, cost_usd=0.0051),
             LLMCallRecord(call="render", model="claude-haiku-5-5", input_tokens=50, output_tokens=200,
                           cost_usd=0.001)]
    decision = GateDecision(verdict="ready", score=88, threshold=70)
    body = _comment(decision, [], _trace(llm_calls=calls, config_source="defaults"))
    assert "rules only" not in body.splitlines()[1]
    footer = next(line for line in body.splitlines() if line.startswith("<sub>"))
    assert "`claude-sonnet-5-5` + `claude-haiku-5-5`" in footer and "2 calls" in footer
    assert "1,050 tokens in (900 cached) / 500 out" in footer and "≈ $0.0061" in footer
    assert "run `gh:abc`" in footer and "/reqgate recheck" in footer


def test_a_replayed_llm_review_says_whose_work_it_reuses_and_that_it_costs_nothing():
    decision = GateDecision(verdict="ready", score=88, threshold=70)
    body = _comment(decision, [], _trace(from_cache=True, reviewed_at="2026-11-20"), llm_used=True)
    footer = next(line for line in body.splitlines() if line.startswith("<sub>"))
    assert "reuses the LLM review of 2026-11-20, no LLM call and no cost now" in footer
    assert "(cached)" not in footer and "rules only" not in body


def test_fallbacks_are_explained_in_the_fold():
    decision = GateDecision(verdict="ready", score=80, threshold=70)
    body = _comment(decision, [], _trace(fallbacks=["structure_failed"],
                                         fallback_reasons={"structure_failed": "HTTP 529 overloaded_error"}))
    assert "Rules-only review: the LLM could not be used this time (HTTP 529 overloaded\\_error)" in body
    assert visible_lines(body) == 2


def test_findings_table_is_capped_and_merges_identical_rows():
    many = [FAST] * 2 + [_finding("wording.vague", quote=f"w{n}") for n in range(4)]
    rows = findings_table(many, 2)
    assert len(rows) == 2 + 2 + 1 and "3 more not shown" in rows[-1] and "(×2)" in rows[2]


def test_visible_lines_counts_what_shows_before_expanding():
    md = "<!-- marker -->\n### Head\n\n1. one\n2. two\n\n<details><summary>More</summary>\n\nhidden\n" \
         "<details><summary>inner</summary>\nx\n</details>\nstill hidden\n</details>\nafter\n"
    assert visible_lines(md) == 5  # head, two items, the summary line, "after"
    assert visible_lines("### Ready\n<details>\n<summary>x</summary>\n\ny\n</details>\n") == 2
    assert visible_lines("") == 0


def test_repeated_sentences_counts_every_extra_occurrence():
    md = ("1. Which version does this happen on?\n- which version does *this* happen on\n"
          "| warn | Which version does this happen on? |\nNo. Short one. Short one.\n"
          '\'\\<a\\>\' is an unfilled placeholder\n\'\\<b\\>\' is an unfilled placeholder\n')
    assert repeated_sentences(md) == 2  # fragments under four words and different quotes do not count
    assert repeated_sentences("One sentence here now. Another sentence entirely here.") == 0


def test_error_comment_is_sticky_and_explains_the_retry():
    body = error_comment("invalid configuration", ["`.github/reqgate.yml`, line 3: `labels.redy`: unknown key"],
                         run_id="gh:1", retry_hint="Fix the file, then comment `/reqgate recheck`.")
    assert body.startswith(MARKER) and "line 3" in body and "/reqgate recheck" in body


def test_a_dismissed_finding_is_not_asked_and_is_marked_in_the_fold():
    steps = _finding("bug.steps.missing", "error", category="repro", suggestion="List the steps that show it.",
                     dismissed_by=Span(quote="1. open the form 2. press save", start=5, end=35))
    ready = GateDecision(verdict="ready", score=80, threshold=70)
    body = _comment(ready, [steps], _trace(), questions=(), ticket_type=TicketType.bug)
    assert "List the steps" not in body.split("<details>")[0]
    assert '| repro | `bug.steps.missing` | error, dismissed: "1. open the form 2. press save" |' in body
