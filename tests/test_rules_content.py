"""Content, not headings: steps, placeholders and questions judged by what the text says."""

from __future__ import annotations

import pytest

from reqgate.handlers.jira.markup import wiki_to_markdown
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.rules import decide_type, run_rules
from reqgate.pipeline.schemas import Finding, RequirementPacket, TicketType

CONFIG = load_default_config()
BUG, TASK, STORY = TicketType.bug, TicketType.task, TicketType.story


def checks(body: str, ticket_type: TicketType = BUG, title: str = "Export fails") -> dict[str, Finding]:
    packet = RequirementPacket(title=title, body=body)
    return {f.check_id: f for f in run_rules(packet, ticket_type, CONFIG)}


JIRA_STEPS = "# Open the invoice\n# Click Export PDF\n# Open the file"


@pytest.mark.parametrize(
    "body",
    [
        JIRA_STEPS,  # Jira "#" list, as the wiki markup has it
        wiki_to_markdown(JIRA_STEPS),  # and after the conversion to markdown
        "- open an invoice\n- click export",
        "Failing:\n```\n$ curl -X POST /api/export\nHTTP 500\n```\nsince 4.2.",
        "Every save of a form with an empty title shows a blank page instead of the error message.",
    ],
)
def test_a_bug_a_developer_can_reproduce_is_not_blocked(body: str) -> None:
    assert "bug.steps.missing" not in checks(body)


@pytest.mark.parametrize("body", ["video: http://screencast.com/t/abc", "From https://x.org/i/2\n```\nerror\n```"])
def test_a_bug_with_nothing_to_reproduce_is_blocked_as_repro(body: str) -> None:
    finding = checks(body)["bug.steps.missing"]
    assert finding.mode == "error" and finding.category == "repro"


@pytest.mark.parametrize(
    "body",
    [
        "at org.mule.Foo.<init>(Foo.java:12)",
        "<jaxws:features>\n<bean class=\"x\"/>\n</jaxws:features>",
        r"defaults to C:\WINDOWS\TEMP\<BUILD-KEY> when run as <user-name>",
        "Run `reqgate review <file>` or see https://example.org/<id>/x",
        "usage: tool [--verbose] <input> <output>",
        "Set `ItemName` on the row",
    ],
)
def test_code_paths_and_tags_are_not_placeholders(body: str) -> None:
    assert "template.placeholder" not in checks(body, TASK)


@pytest.mark.parametrize(
    ("body", "quote"),
    [
        ("As a <role>, I want export", "<role>"),
        ("## In scope\n- [ ] Deliverable 1\n", "Deliverable 1"),
        ("- [ ] DRI: `GitLab Handle`", "`GitLab Handle`"),
        ("Please click [here - link] to learn more", "[here - link]"),
    ],
)
def test_unfilled_template_slots_are_placeholders(body: str, quote: str) -> None:
    finding = checks(body, TASK)["template.placeholder"]
    assert finding.span is not None and finding.span.quote == quote and finding.category == "placeholder"


@pytest.mark.parametrize(
    "body",
    ["Not sure if the cache should be shared between agents.", "Should we use option 1 or 2?",
     "The retry policy is still to be decided."],
)
def test_open_questions_are_found(body: str) -> None:
    assert checks(body, TASK)["wording.open-question"].category == "open_question"


@pytest.mark.parametrize(
    "body",
    ["| adsafe_a | violation | ? |", 'The log says "Is the server running?" and stops.',
     "## Which page(s) are involved in this request?\n* /pricing"],
)
def test_tables_quotations_and_template_prompts_are_not_questions(body: str) -> None:
    assert "wording.open-question" not in checks(body, TASK)


def test_a_precise_description_satisfies_done_without_a_criteria_section() -> None:
    assert "acceptance-criteria.missing" not in checks("Upgrade Jetty from 9.2 to 9.4.", TASK, "Upgrade Jetty")
    assert "acceptance-criteria.missing" in checks("Make the plugin nicer.", TASK, "Plugin work")


@pytest.mark.parametrize(("title", "body", "ticket_type"), [
    ("Code review the PHP Debugger GPL plugin", "Code review the GPL plugin for the PHP debugger support.", TASK),
    ("Investigate ADSAFE warnings", "", TicketType.spike),
    ("Spike: Research how to leverage ACLs", "We want to know more about it.", STORY),
    ("[UI] Improve the onboarding", "Make it better for new users.", STORY),
])
def test_an_activity_with_no_stated_result_blocks_as_not_done(title: str, body: str, ticket_type: TicketType) -> None:
    found = checks(body, ticket_type, title)
    finding = found["acceptance-criteria.open-ended"]
    assert finding.mode == "error" and finding.category == "done"
    assert finding.span is not None and finding.span.quote.lower() in title.lower()
    assert "acceptance-criteria.missing" not in found


@pytest.mark.parametrize(("title", "body", "ticket_type"), [
    # A change names its own end.
    ("Migrate HTTP Connector to use grizzly", "This is just to replace Netty server with Grizzly server.", TASK),
    # An activity whose output is listed, or described at length, or named precisely.
    ("Investigate container security options", "Evaluate:\n1) Capabilities\n2) Seccomp\n3) AppArmor", TASK),
    ("Investigate flaky RedisStreamDefinitionRepositoryTests", "", TASK),
    ("Agent authn research spike", "Research the flags. Write up a 1-2 page summary.", TicketType.spike),
    # More than one short sentence mostly says enough to tell when it ends.
    ("Investigate running Camus as a batch job", "Similar to Sqoop where we move data from RDBMS to HDFS we "
     "should look at integrating with Camus to load data from Kafka.", TicketType.spike),
    ("Investigate skipped tests in build, enable or remove.", "We have 13 skipped tests now.", TASK),
    ("Review the export", "Acceptance criteria:\n- [ ] every column is documented", TASK),
    # Bugs have their own rubric: an "Investigate ..." bug is judged on its steps.
    ("Investigate crash on save", "Saving a form with an empty title crashes.", BUG),
])
def test_an_activity_with_its_result_stated_is_not_open_ended(title: str, body: str, ticket_type: TicketType) -> None:
    assert "acceptance-criteria.open-ended" not in checks(body, ticket_type, title)


def test_every_finding_carries_its_configured_category() -> None:
    found = checks("As a user I want fast and various exports etc. TBD", STORY)
    assert found and all(f.category == CONFIG.category_for(f.check_id) for f in found.values())


def test_old_style_check_config_keeps_working_and_keeps_the_category() -> None:
    from reqgate.pipeline.config_loader import load_config, parse_layer

    loaded = load_config(parse_layer("checks:\n  bug.steps.missing: {default: warn, bug: warn}\n", "reqgate.yml"))
    assert loaded.config.mode_for("bug.steps.missing", BUG) == "warn"
    assert loaded.config.category_for("bug.steps.missing") == "repro"


@pytest.mark.parametrize(
    ("fields", "ticket_type", "source"),
    [
        ({"issue_type": "Bug"}, BUG, "tracker"),
        ({"issue_type": "Improvement"}, STORY, "tracker"),
        ({"issue_type": "sub-task"}, TASK, "tracker"),
        ({"labels": ["kind/documentation"]}, TASK, "label"),
        ({"issue_type": "Bug", "labels": ["enhancement"]}, BUG, "tracker"),
        ({"type_hint": TicketType.spike, "issue_type": "Bug"}, TicketType.spike, "flag"),
        ({"body": "Steps to reproduce:\n1. open\n2. crash"}, BUG, "text"),
    ],
)
def test_the_tracker_type_wins_over_labels_and_text(fields: dict[str, object], ticket_type: TicketType,
                                                    source: str) -> None:
    packet = RequirementPacket(**{"title": "Export", "body": "Export the list.", **fields})
    decided = decide_type(packet, CONFIG)
    assert (decided.ticket_type, decided.source, decided.sure) == (ticket_type, source, True)


def test_an_unsure_guess_reviews_with_the_lenient_modes_and_says_so() -> None:
    from reqgate.pipeline.review import review

    packet = RequirementPacket(title="Bucket", body="Things for the next release.")
    decided = decide_type(packet, CONFIG)
    assert decided.source == "text" and not decided.sure and decided.rules_type is TicketType.other
    result = review(packet, CONFIG, None)
    assert result.type_source == "text" and "type_unsure" in result.trace.fallbacks
    assert "does not make it clear" in result.comment_markdown
