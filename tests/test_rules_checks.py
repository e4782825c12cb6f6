"""Each rule check on what a PM would write: what it flags, what it quotes, and the traps it avoids."""

from __future__ import annotations

import pytest

from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.rules import run_rules
from reqgate.pipeline.schemas import Finding, RequirementPacket, TicketType

CONFIG = load_default_config()
STORY, BUG, TASK = TicketType.story, TicketType.bug, TicketType.task


def review(body: str, ticket_type: TicketType = STORY, title: str = "") -> list[Finding]:
    packet = RequirementPacket(title=title, body=body)
    findings = run_rules(packet, ticket_type, CONFIG)
    for f in findings:
        if f.span is not None:
            assert packet.text[f.span.start:f.span.end] == f.span.quote
    return findings


def quotes(body: str, check_id: str, ticket_type: TicketType = STORY) -> list[str]:
    return [f.span.quote for f in review(body, ticket_type) if f.check_id == check_id and f.span]


def fired(body: str, check_id: str, ticket_type: TicketType = STORY) -> bool:
    return any(f.check_id == check_id for f in review(body, ticket_type))


# --- template.placeholder ------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "quote"), [
    ("Due date: TBD", "TBD"),
    ("Owner: tbc", "tbc"),
    ("TODO: write the criteria", "TODO"),
    ("Which currency? ???", "???"),
    ("Lorem ipsum dolor sit amet", "Lorem ipsum"),
    ("As a [role], I want to export data.", "[role]"),
    ("As a <type of user>, I want to export data.", "<type of user>"),
    ("Context: <insert description here>", "<insert description here>"),
    ("Details: [describe here]", "[describe here]"),
    ("Browser [e.g. chrome, safari]", "[e.g. chrome, safari]"),
    ("Version: x.x.x", "x.x.x"),
    ("1. Go to '...'", "'...'"),
    ("Describe the bug\nA clear and concise description of what the bug is.",
     "A clear and concise description of what the bug is"),
    ("As a X, I want Y so that Z.", "X"),
    ("Expected: ...", "..."),
    ("Import X/Y/Z from the legacy system.", "X/Y/Z"),
])
def test_placeholder_flags_unfilled_templates(body: str, quote: str) -> None:
    assert quote in quotes(body, "template.placeholder", TASK)


def test_placeholder_is_shown_and_asks_to_fill_it_in() -> None:
    finding = next(f for f in review("Due date: TBD", TASK) if f.check_id == "template.placeholder")
    assert finding.mode == "warn" and finding.category == "placeholder"
    assert finding.message == "'TBD' is an unfilled placeholder"
    assert finding.suggestion


@pytest.mark.parametrize("body", [
    "Add a TODO list to the dashboard so users can track tasks.",
    "Users keep their todo items in the app.",
    "Render it with <div> and <br/> tags, <b>bold</b> and <img src='a.png'>.",
    "```html\n<role>TBD</role>\n<!-- TODO -->\n```",
    "Run `make <target>` first.",
    "See https://example.com/users/<id>/TODO?q=??? for the API.",
    "Use List<String> and compare a < b > c.",
    "- [x] done\n- [ ] open\nSee [the docs](https://example.com) and reference [1].",
    "<!-- Describe the bug here -->\nSaving fails with HTTP 500.",
    "Email <ana@example.com> for access.",
])
def test_placeholder_traps(body: str) -> None:
    assert quotes(body, "template.placeholder", TASK) == []


def test_words_inside_a_placeholder_are_not_reported_again() -> None:
    findings = review("As a <type of user>, I want <some goal> so that <some reason>.")
    assert [f.check_id for f in findings if f.span] == ["template.placeholder"] * 3


# --- story.role.missing / story.benefit.missing --------------------------------------------------------

def test_story_without_role_or_benefit() -> None:
    findings = {f.check_id: f for f in review("I want to export invoices to CSV.")}
    for check_id in ("story.role.missing", "story.benefit.missing"):
        assert findings[check_id].span is None
        assert "e.g." in (findings[check_id].suggestion or "")


def test_complete_story_has_role_and_benefit() -> None:
    body = "As an accountant, I want to export invoices, so that I can file taxes."
    assert not fired(body, "story.role.missing")
    assert not fired(body, "story.benefit.missing")


def test_benefit_given_in_a_why_section_counts() -> None:
    body = "As an accountant, I want to export invoices.\n\n## Why\nTax filing takes two days today."
    assert not fired(body, "story.benefit.missing")


def test_role_and_benefit_are_only_asked_of_stories() -> None:
    assert not fired("Bump the Postgres driver to 3.2.", "story.role.missing", TASK)
    assert not fired("Bump the Postgres driver to 3.2.", "story.benefit.missing", TASK)


# --- story.solution-leakage ----------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "quote"), [
    ("As a user, I want to click a button to export invoices, so that I can file taxes.", "button"),
    ("As a user, I want a dropdown of countries, so that I can pick mine.", "dropdown"),
    ("As an admin, I want a popup when a job fails, so that I notice it.", "popup"),
    ("As an analyst, I want the data stored in a SQL database, so that I can query it.", "database"),
    ("As a partner, I want a REST API returning JSON, so that I can sync orders.", "JSON"),
    ("As a user, I want the settings screen built in React, so that it feels fast.", "React"),
    ("As a researcher, I want to classify images with a CNN-based model, so that I save time.", "CNN"),
])
def test_solution_leakage_in_the_want(body: str, quote: str) -> None:
    assert quote in quotes(body, "story.solution-leakage")


def test_solution_words_outside_the_want_are_not_leakage() -> None:
    body = ("As a shopper, I want to keep my cart between visits, so that I need not fill the form again.\n\n"
            "Notes: the cart table in the database already exists.")
    assert quotes(body, "story.solution-leakage") == []


def test_react_the_verb_is_not_the_framework() -> None:
    assert quotes("As a driver, I want the car to react to obstacles, so that I stay safe.",
                  "story.solution-leakage") == []


# --- story.non-atomic ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "quote"), [
    ("As an admin, I want to create, update and delete users.", "and delete"),
    ("As a user, I want to export the report and then email it to my team.", "and then email"),
    ("As a user, I want to upload a photo and crop it, so that my avatar fits.", "and crop"),
    ("As a clerk, I want to scan invoices & archive them.", "& archive"),
    ("As a manager, I want a tool that tracks stock and alerts me when it runs low.", "and alerts"),
    ("As a user, I want to view orders as well as cancel them.", "as well as cancel"),
    # AQUSA's rule: each side of the conjunction carries a verb of its own, not only a bare verb after it.
    ("As a driver, I want a car that uses sensors and live data to react faster.", "and live data to react"),
    ("As an owner, I want to view the people in my team and what roles they have.", "and what roles they have"),
])
def test_non_atomic_wants(body: str, quote: str) -> None:
    assert quotes(body, "story.non-atomic") == [quote]


@pytest.mark.parametrize("body", [
    "As an editor, I want copy and paste in the editor, so that I save time.",
    "As a designer, I want to drag and drop cards, so that I can reorder them.",
    "As a writer, I want search and replace, so that I can rename a character.",
    "As a buyer, I want to read the terms and conditions, so that I know my rights.",
    "As a CFO, I want R&D costs on one line, so that I can compare years.",
    "As a reviewer, I want to see the pros and cons of each option.",
    "As a PM, I want to see the title, assignee and status of each ticket, so that I can triage.",
    "As an admin, I want read and write access for editors.",
    "As an analyst, I want reports and dashboards for sales, so that I can plan.",
    "As a user, I want access to reports and support, so that I get help.",
    "As a user, I want to pay by card and/or PayPal.",
    "As a user, I want to export invoices, so that I can file and archive them.",
    "As a researcher, I want to apply logistic regression, decision trees and random forests to the data.",
    "As a manager, I want to explore the use of drones for efficient and cost-effective delivery.",
    "As an R&D manager, I want a budget view, so that I can plan.",
])
def test_non_atomic_traps(body: str) -> None:
    assert quotes(body, "story.non-atomic") == []


def test_two_roles_are_non_atomic() -> None:
    assert quotes("As a buyer or seller, I want to see the price history.", "story.non-atomic") == ["or seller"]


# --- story.minimal -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "quote"), [
    ("As a user, I want to filter orders (by date, status, total), so that I find one fast.",
     "(by date, status, total)"),
    ("As a user, I want to pay with a wallet, e.g. Apple Pay, so that checkout is quick.", "e.g."),
    ("As a user, I want to pay with a wallet, so that checkout is quick. Note that Stripe charges more.",
     "Note that Stripe charges more."),
    ("As a clinician, I am worried about load times. I want a cached patient list.",
     "As a clinician, I am worried about load times"),
])
def test_story_not_minimal(body: str, quote: str) -> None:
    assert quote in quotes(body, "story.minimal")


def test_minimal_story_and_detail_in_its_own_paragraph() -> None:
    body = ("As a user, I want to pay with a wallet, so that checkout is quick.\n\n"
            "Details (for the team): Stripe supports Apple Pay, e.g. on iOS 17.")
    assert quotes(body, "story.minimal") == []


def test_brackets_with_an_example_are_one_finding() -> None:
    body = "As a user, I want weekly digests (e.g. on Monday), so that I keep up."
    assert quotes(body, "story.minimal") == ["(e.g. on Monday)"]


# --- acceptance-criteria.missing / untestable ----------------------------------------------------------

def test_story_without_criteria() -> None:
    finding = next(f for f in review("As a user, I want to export invoices, so that I can file taxes.")
                   if f.check_id == "acceptance-criteria.missing")
    assert finding.span is None
    assert "Given" in (finding.suggestion or "")


@pytest.mark.parametrize("criteria", [
    "## Acceptance criteria\n- The CSV lists every invoice of the month",
    "Acceptance Criteria:\n1. The CSV lists every invoice",
    "**AC**\n- CSV lists every invoice",
    "h3. Definition of Done\n* CSV lists every invoice",
    "Given I am an accountant\nWhen I export March\nThen the CSV lists every March invoice",
    "- [ ] CSV lists every invoice\n- [ ] header row present",
])
def test_criteria_in_any_common_form(criteria: str) -> None:
    body = f"As a user, I want to export invoices, so that I can file taxes.\n\n{criteria}"
    assert not fired(body, "acceptance-criteria.missing")


def test_empty_criteria_heading_is_still_missing() -> None:
    body = "As a user, I want to export invoices.\n\n## Acceptance criteria\n\n## Notes\nnone"
    finding = next(f for f in review(body) if f.check_id == "acceptance-criteria.missing")
    assert finding.message == "The acceptance criteria section is empty"


def test_untestable_criteria() -> None:
    body = ("As a user, I want to export invoices, so that I can file taxes.\n\n## Acceptance criteria\n"
            "- The export should be fast\n- The file may include various fields, etc.\n"
            "- Exports of 10,000 rows finish within 5 s\n\nNotes: the old export was easy to use.")
    assert quotes(body, "acceptance-criteria.untestable") == ["should", "fast", "may", "various", "etc."]
    # Prose after the list is not a criterion; it is still vague wording.
    assert "easy to use" in quotes(body, "wording.vague")


def test_gherkin_weak_then() -> None:
    body = ("As a user, I want X.\n\nScenario: export\nGiven I am signed in\nWhen I export\n"
            "Then I might get a CSV")
    assert quotes(body, "acceptance-criteria.untestable") == ["might"]


# --- wording.vague / wording.unmeasurable --------------------------------------------------------------

@pytest.mark.parametrize("term", [
    "some", "several", "various", "many", "few", "and/or", "etc.", "as appropriate", "if possible",
    "user-friendly", "easy", "flexible", "adequate", "normally", "approximately",
])
def test_vague_terms(term: str) -> None:
    assert term in quotes(f"The report lists {term} fields for admins.", "wording.vague", TASK)


def test_support_as_a_verb_is_vague_but_not_as_a_noun() -> None:
    assert quotes("The importer must support XLSX files.", "wording.vague", TASK) == ["must support"]
    assert quotes("Customer support answers tickets in the portal.", "wording.vague", TASK) == []


def test_vague_words_in_code_are_ignored() -> None:
    assert quotes("Run `retry --some --many` once.", "wording.vague", TASK) == []


@pytest.mark.parametrize("term", ["fast", "quick", "real-time", "scalable", "efficient", "responsive",
                                  "high performance", "robust", "seamless"])
def test_unmeasurable_terms(term: str) -> None:
    finding = next(f for f in review(f"Search must be {term}.", TASK) if f.check_id == "wording.unmeasurable")
    assert finding.span is not None and finding.span.quote == term
    assert finding.message == f"'{term}' is not measurable"


@pytest.mark.parametrize("body", [
    "Search must be fast: results within 200 ms at p95.",
    "Updates appear in real-time, within 2 seconds.",
    "The service must be scalable to 10,000 users.",
    "Uptime must be 99.9% and the API robust to retries.",
])
def test_a_number_with_a_unit_in_the_sentence_makes_it_measurable(body: str) -> None:
    assert quotes(body, "wording.unmeasurable", TASK) == []


def test_the_number_must_be_in_the_same_sentence() -> None:
    assert quotes("Search must be fast. It has 200 ms of budget.", "wording.unmeasurable", TASK) == ["fast"]


# --- bug.* ---------------------------------------------------------------------------------------------

def test_complete_bug_report() -> None:
    body = ("Saving a document crashes the app.\n\nSteps to reproduce:\n1. Open a document\n2. Click Save\n\n"
            "Expected: the document is saved\nActual: the app closes\n\n"
            "Environment: 2.3.1, Chrome 126, Windows 11")
    assert [f.check_id for f in review(body, BUG) if f.check_id.startswith("bug.")] == []


def test_bold_labels_and_numbered_steps() -> None:
    body = ("**Steps**\n1. open\n2. click\n**Expected result:** it saves\n**Observed:** nothing\n"
            "**Version:** 4.2")
    assert [f.check_id for f in review(body, BUG) if f.check_id.startswith("bug.")] == []


def test_one_line_bug_report_asks_for_everything_but_the_symptom() -> None:
    findings = {f.check_id: f for f in review("The export is broken.", BUG)}
    assert findings["bug.steps.missing"].mode == "error"
    assert "bug.expected.missing" in findings
    assert "bug.environment.missing" in findings
    assert "bug.actual.missing" not in findings  # "broken" is what happens
    assert all(findings[k].span is None and findings[k].suggestion for k in findings if k.startswith("bug."))


def test_actual_missing_when_only_the_wish_is_given() -> None:
    body = "Steps: 1. open the invoice 2. press print\nExpected: a PDF with all lines\nOn Firefox 126."
    assert [f.check_id for f in review(body, BUG) if f.check_id.startswith("bug.")] == ["bug.actual.missing"]


def test_bug_checks_are_off_for_stories() -> None:
    assert not any(f.check_id.startswith("bug.") for f in review("As a user, I want X, so that Y."))


def test_criteria_on_one_labelled_line() -> None:
    body = "As a user, I want to export invoices.\n\nAcceptance criteria: the CSV should list every invoice"
    assert not fired(body, "acceptance-criteria.missing")
    assert quotes(body, "acceptance-criteria.untestable") == ["should"]
