from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.gate import decide
from reqgate.pipeline.schemas import Finding, Rating, Span, TicketType
from reqgate.pipeline.scoring import score

CONFIG = load_default_config()


def finding(check_id: str, mode: str) -> Finding:
    return Finding(check_id=check_id, mode=mode, message=check_id)


def top_ratings(ticket_type: TicketType) -> list[Rating]:
    _, rubric = CONFIG.rubric_for(ticket_type)
    return [Rating(dimension=name, score=5, rationale="great") for name in rubric.dimensions]


def test_no_findings_and_top_ratings_is_ready():
    report = score(TicketType.story, [], top_ratings(TicketType.story), CONFIG)
    assert report.score == 100
    assert decide(report, [], 70, injection_suspected=False).verdict == "ready"


def test_llm_cannot_rate_above_what_the_rules_found():
    findings = [finding("acceptance-criteria.missing", "warn")]
    report = score(TicketType.story, findings, top_ratings(TicketType.story), CONFIG)
    testability = next(d for d in report.dimensions if d.dimension == "testability")
    assert testability.rating == 4 and testability.source == "rules"
    assert report.score < 100


def test_error_finding_blocks_whatever_the_score():
    findings = [finding("template.placeholder", "error")]
    report = score(TicketType.story, findings, top_ratings(TicketType.story), CONFIG)
    gate = decide(report, findings, 10, injection_suspected=False)
    assert gate.verdict == "needs_info" and gate.blocking == findings


def test_injection_never_ready_even_with_perfect_score():
    report = score(TicketType.story, [], top_ratings(TicketType.story), CONFIG)
    gate = decide(report, [], 0, injection_suspected=True)
    assert gate.verdict == "needs_info" and "injection" in gate.reasons[0]


def test_score_below_threshold_needs_info_with_reason():
    ratings = [Rating(dimension=r.dimension, score=2) for r in top_ratings(TicketType.bug)]
    report = score(TicketType.bug, [], ratings, CONFIG)
    gate = decide(report, [], 70, injection_suspected=False)
    assert report.score == 40 and gate.verdict == "needs_info"
    assert "below the threshold 70" in gate.reasons[-1]


def test_rules_only_findings_that_only_ask_do_not_block():
    # A missing role or criteria section asks; only an error, or many warnings, hold a ticket back.
    findings = [finding("story.role.missing", "info"), finding("story.benefit.missing", "info"),
                finding("acceptance-criteria.missing", "warn")]
    report = score(TicketType.story, findings, [], CONFIG)
    assert decide(report, findings, CONFIG.threshold, injection_suspected=False).verdict == "ready"
    many = [finding("wording.vague", "warn")] * 5 + [finding("acceptance-criteria.missing", "warn")] * 5
    report = score(TicketType.story, many, [], CONFIG)
    assert decide(report, many, CONFIG.threshold, injection_suspected=False).verdict == "needs_info"


def test_unknown_dimension_ratings_are_ignored_and_scores_are_pure():
    findings = [Finding(check_id="wording.vague", mode="info", message="vague", span=Span(quote="x", start=0, end=1))]
    ratings = [Rating(dimension="made_up", score=0)]
    assert score(TicketType.task, findings, ratings, CONFIG) == score(TicketType.task, findings, ratings, CONFIG)
    assert score(TicketType.task, findings, ratings, CONFIG).score == 100
