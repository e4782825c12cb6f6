"""run_rules and guess_type as the review pipeline uses them: modes, order, robustness, speed."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from reqgate.pipeline.config_loader import load_config, load_default_config, parse_layer
from reqgate.pipeline.rules import CHECKS, guess_type, run_rules
from reqgate.pipeline.schemas import RequirementPacket, TicketType

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
CONFIG = load_default_config()
STORY = RequirementPacket(
    title="Export invoices",
    body="As an accountant I want to click a button and email the CSV, so that I can file taxes fast. TBD",
)


def test_every_check_id_has_a_configured_mode() -> None:
    ids = [check_id for check in CHECKS for check_id in check.ids]
    assert len(ids) == len(set(ids)) == 16
    assert set(ids) <= set(CONFIG.checks)
    # Every check declares its rubric category; guardrail checks too.
    assert all(CONFIG.checks[check_id].category is not None for check_id in CONFIG.checks)


def test_modes_come_from_the_config_per_ticket_type() -> None:
    findings = run_rules(STORY, TicketType.story, CONFIG)
    modes = {f.check_id: f.mode for f in findings}
    assert modes["template.placeholder"] == "warn"
    assert modes["story.non-atomic"] == "info"
    assert modes["story.solution-leakage"] == "info"
    categories = {f.check_id: f.category for f in findings}
    assert categories["template.placeholder"] == "placeholder" and categories["story.non-atomic"] == "split"
    # The same text reviewed as a task: story-only checks are off by default.
    task_ids = {f.check_id for f in run_rules(STORY, TicketType.task, CONFIG)}
    assert "story.solution-leakage" not in task_ids
    assert "story.role.missing" not in task_ids


def test_a_check_turned_off_does_not_report() -> None:
    yml = "checks:\n  template.placeholder: {default: 'off'}\n  story.non-atomic: {story: error}\n"
    layer = parse_layer(yml, "reqgate.yml")
    config = load_config(layer).config
    findings = run_rules(STORY, TicketType.story, config)
    assert "template.placeholder" not in {f.check_id for f in findings}
    assert {f.mode for f in findings if f.check_id == "story.non-atomic"} == {"error"}


def test_findings_sorted_by_span_start_with_missing_things_last() -> None:
    packet = RequirementPacket(title="Search", body="Search must be fast and user-friendly. TBD")
    findings = run_rules(packet, TicketType.story, CONFIG)
    starts = [f.span.start for f in findings if f.span]
    assert starts == sorted(starts)
    first_unspanned = next(i for i, f in enumerate(findings) if f.span is None)
    assert all(f.span is None for f in findings[first_unspanned:])


def test_offsets_point_into_title_blank_line_body() -> None:
    packet = RequirementPacket(title="Due TBD", body="Owner: TBD")
    spans = [f.span for f in run_rules(packet, TicketType.task, CONFIG) if f.span]
    assert [(s.start, s.end) for s in spans] == [(4, 7), (16, 19)]


def test_same_words_quoted_by_two_checks_are_reported_once() -> None:
    packet = RequirementPacket(body="As a user, I want X.\n\n## Acceptance criteria\n- Export is fast")
    fast = [f for f in run_rules(packet, TicketType.story, CONFIG) if f.span and f.span.quote == "fast"]
    assert [f.check_id for f in fast] == ["acceptance-criteria.untestable"]


def test_guess_type() -> None:
    def guess(title: str, body: str = "", hint: TicketType | None = None) -> TicketType:
        return guess_type(RequirementPacket(title=title, body=body, type_hint=hint))

    assert guess("Anything", "As a user, I want X", hint=TicketType.bug) is TicketType.bug
    assert guess("Export", "As an accountant, I want to export invoices.") is TicketType.story
    assert guess("Save fails", "Steps to reproduce:\n1. open\n2. save\nExpected: saved") is TicketType.bug
    assert guess("App crashes on save") is TicketType.bug
    assert guess("Login", "Error 500 and a stack trace in the log") is TicketType.bug
    assert guess("Spike: evaluate search engines") is TicketType.spike
    assert guess("Investigate slow builds", "Find out why CI takes 40 min.") is TicketType.spike
    # A chore whose object holds a spike word: the opening verb says what the work is.
    assert guess("Update subtitle on comparison infographic") is TicketType.task
    assert guess("[ENG] Migrate comparison pages to the new site") is TicketType.task
    assert guess("ENG: Use MVEL to evaluate expressions") is TicketType.task
    assert guess("Spike: Extract common behaviour from Plan and Chain") is TicketType.spike
    assert guess("Dark mode", "It would be nice if users could switch to a dark theme.") is TicketType.story
    assert guess("Bump Django to 5.1") is TicketType.task
    assert guess("", "") is TicketType.task


@settings(max_examples=300, deadline=None)
@given(title=st.text(max_size=80), body=st.text(max_size=600))
def test_never_raises_and_spans_slice_their_quotes(title: str, body: str) -> None:
    packet = RequirementPacket(title=title, body=body)
    for ticket_type in (TicketType.story, TicketType.bug, guess_type(packet)):
        for finding in run_rules(packet, ticket_type, CONFIG):
            if finding.span is not None:
                assert packet.text[finding.span.start:finding.span.end] == finding.span.quote


_TICKETISH = st.lists(st.sampled_from([
    "As a ", "user", ", I want ", "to ", "export", " and ", "delete", " so that ", "(", ")", "[", "]", "<",
    ">", "TBD", "???", "fast", " 200 ms", "should", "\n", "\n\n", "## Acceptance criteria\n", "- ", "- [ ] ",
    "Given ",
    "Then ", "e.g. ", "```", "`", "https://x.io/<id>", "İ", "ß", "\u200b", "\ufeff", "’", ".", " ", "1. ",
    "**", "Expected:", "Actual:", "h3. ", "{code}", "and/or", "as well as ",
]), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(body=_TICKETISH)
def test_ticket_like_noise_never_breaks_a_span(body: str) -> None:
    packet = RequirementPacket(title="T", body=body)
    for ticket_type in (TicketType.story, TicketType.bug, TicketType.task):
        for finding in run_rules(packet, ticket_type, CONFIG):
            if finding.span is not None:
                assert packet.text[finding.span.start:finding.span.end] == finding.span.quote


def test_empty_and_huge_inputs() -> None:
    # An empty body is the guardrail's `incomplete`; the bug checks do not repeat it as missing steps.
    assert [f.check_id for f in run_rules(RequirementPacket(), TicketType.bug, CONFIG)] == [
        "bug.expected.missing", "bug.actual.missing", "bug.environment.missing"]
    # Five times the guardrail's maximum length: still reviewed, in linear time.
    huge = RequirementPacket(title="x", body=("As a user, I want (TBD) and delete some fast things. " * 2000))
    assert run_rules(huge, TicketType.story, CONFIG)
