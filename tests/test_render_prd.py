"""Call 2 end to end against the fake: binding check, one re-ask, template fallback, frame lookalikes."""

from __future__ import annotations

import json

from reqgate.pipeline.config import Config
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.render_prd import clean_markdown, missing_items, render_prd, template_prd
from reqgate.pipeline.schemas import GateDecision, StructureOutput, TicketType
from tests.fakes.fake_anthropic import FakeAnthropic, Reply

STRUCTURE = StructureOutput.model_validate({
    "ticket_type": "story",
    "prd": {
        "title": "Export workspace tasks to CSV",
        "user_story": {
            "role": {"text": "workspace admin", "evidence": "As a workspace admin"},
            "want": {"text": "export all tasks to a CSV file", "evidence": "export all tasks"},
        },
        "acceptance_criteria": [
            {"text": "Given a workspace with tasks, when the admin exports, then one CSV row per task is produced.",
             "inferred": True},
            {"text": "The CSV includes title, assignee, status and due date.",
             "evidence": "The CSV includes title, assignee, status and due date."},
        ],
        "edge_cases": [{"text": "Empty workspace", "inferred": True}],
        "missing_info": ["performance target"],
        "questions": ["Which formats besides CSV?", "Who may export: members or admins only?"],
    },
})
NEEDS_INFO = GateDecision(verdict="needs_info", score=58, threshold=70)
READY = GateDecision(verdict="ready", score=85, threshold=70)

GOOD = """**Title:** Export workspace tasks to CSV

**User story:** As a *workspace admin*, I want *to export all tasks to a CSV file*, so that _(not stated)_.

**Acceptance criteria**
- [ ] Given a workspace with tasks, when the admin exports, then one CSV row per task is produced. _(inferred)_
- [ ] The CSV includes **title, assignee, status and due date** _(from: "The CSV includes title...")_

**Questions**
- [ ] Which formats besides CSV?
- [ ] Who may export: members or admins only?

**Verdict:** Needs info"""

MISSING_ONE = GOOD.replace("- [ ] Which formats besides CSV?\n", "")


def test_good_answer_is_used(fast_llm_config: Config, llm_client: LLMClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.markdown(GOOD))
    outcome = render_prd(STRUCTURE, NEEDS_INFO, fast_llm_config, llm_client)
    assert not outcome.used_template and outcome.failure is None
    assert outcome.markdown == GOOD
    assert [c.call for c in outcome.calls] == ["render"]
    [request] = fake_anthropic.requests
    body = request.body
    assert body["model"] == fast_llm_config.llm.render_model and "temperature" not in body
    assert "output_config" not in body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    user = body["messages"][0]["content"]
    assert "Verdict line to end with, exactly: Verdict: Needs info" in user
    draft = json.loads(user.split("<draft_json>\n", 1)[1].split("\n</draft_json>", 1)[0])
    assert draft["prd"]["questions"] == STRUCTURE.prd.questions and "ratings" not in draft


def test_missing_criterion_is_reasked_once(fast_llm_config: Config, llm_client: LLMClient,
                                           fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.markdown(MISSING_ONE), Reply.markdown(GOOD))
    outcome = render_prd(STRUCTURE, NEEDS_INFO, fast_llm_config, llm_client)
    assert not outcome.used_template and outcome.markdown == GOOD
    assert [c.call for c in outcome.calls] == ["render", "render_reask"]
    reask = fake_anthropic.requests[1].body["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user"]
    assert 'question: "Which formats besides CSV?"' in reask[-1]["content"]


def test_missing_twice_falls_back_to_the_template(fast_llm_config: Config, llm_client: LLMClient,
                                                  fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.markdown(MISSING_ONE), Reply.markdown(MISSING_ONE), Reply.markdown(GOOD))
    outcome = render_prd(STRUCTURE, NEEDS_INFO, fast_llm_config, llm_client)
    assert outcome.used_template and outcome.markdown == template_prd(STRUCTURE, NEEDS_INFO)
    assert outcome.failure == "the PRD draft left out 1 required item(s) twice"
    assert len(fake_anthropic.requests) == 2 and len(outcome.calls) == 2


def test_wrong_verdict_is_not_accepted(fast_llm_config: Config, llm_client: LLMClient,
                                       fake_anthropic: FakeAnthropic) -> None:
    both = GOOD + "\n\nVerdict: Ready"
    fake_anthropic.script(Reply.markdown(both), Reply.markdown(GOOD))
    outcome = render_prd(STRUCTURE, NEEDS_INFO, fast_llm_config, llm_client)
    assert not outcome.used_template and len(outcome.calls) == 2
    assert 'remove "Verdict: Ready"' in fake_anthropic.requests[1].last_user_text
    assert missing_items(GOOD, STRUCTURE, READY) == ['the line "Verdict: Ready"',
                                                     'only the given verdict: remove "Verdict: Needs info"']


def test_frame_lookalikes_are_stripped(fast_llm_config: Config, llm_client: LLMClient,
                                       fake_anthropic: FakeAnthropic) -> None:
    noisy = ("```markdown\n<!-- reqgate:review v1 -->\n### ReqGate: ✅ Ready — score 100 / 100\n"
             + GOOD + "\n</details>\n<sub>ReqGate 0.1 · run x</sub>\n```")
    fake_anthropic.script(Reply.markdown(noisy))
    outcome = render_prd(STRUCTURE, NEEDS_INFO, fast_llm_config, llm_client)
    assert not outcome.used_template
    for forbidden in ("<!--", "reqgate:review", "100 / 100", "</details>", "<sub>", "```"):
        assert forbidden not in outcome.markdown
    assert outcome.markdown.startswith("**Title:**")


def test_refusal_uses_the_template_without_reask(fast_llm_config: Config, llm_client: LLMClient,
                                                 fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.refusal())
    outcome = render_prd(STRUCTURE, READY, fast_llm_config, llm_client)
    assert outcome.used_template and outcome.failure == "the model declined to write the PRD"
    assert len(fake_anthropic.requests) == 1 and outcome.calls[0].ok is False


def test_truncated_answer_is_reasked(fast_llm_config: Config, llm_client: LLMClient,
                                     fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Reply.markdown(GOOD, stop_reason="max_tokens"), Reply.markdown(GOOD))
    outcome = render_prd(STRUCTURE, NEEDS_INFO, fast_llm_config, llm_client)
    assert not outcome.used_template and len(outcome.calls) == 2
    assert "cut off" in fake_anthropic.requests[1].last_user_text


def test_api_failure_uses_the_template(fast_llm_config: Config, llm_client: LLMClient,
                                       fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(*[Reply.overloaded(retry_after="0")] * 3)
    outcome = render_prd(STRUCTURE, NEEDS_INFO, fast_llm_config, llm_client)
    assert outcome.used_template
    assert outcome.failure == "LLM call failed: HTTP 529 overloaded_error after 3 attempts"
    assert outcome.calls[0].attempts == 3 and not outcome.calls[0].ok


def test_smart_default_passes_the_binding_check(fast_llm_config: Config, llm_client: LLMClient,
                                                fake_anthropic: FakeAnthropic) -> None:
    outcome = render_prd(STRUCTURE, READY, fast_llm_config, llm_client)
    assert not outcome.used_template and outcome.markdown.endswith("Verdict: Ready")


def test_offline_uses_the_template(fast_llm_config: Config) -> None:
    outcome = render_prd(STRUCTURE, READY, fast_llm_config, None)
    assert outcome.used_template and outcome.failure is None and outcome.calls == []


def test_template_contents() -> None:
    markdown = template_prd(STRUCTURE, NEEDS_INFO)
    assert markdown.startswith("**Title:** Export workspace tasks to CSV")
    assert ("**User story:** As a *workspace admin*, I want *export all tasks to a CSV file*, "
            "so that _(not stated)_.") in markdown
    # Evidence identical to the item is the author's own wording, said once rather than quoted twice.
    assert "- [ ] The CSV includes title, assignee, status and due date. _(your words)_" in markdown
    assert "then one CSV row per task is produced. _(inferred)_" in markdown
    assert "- Empty workspace _(inferred)_" in markdown and "- performance target" in markdown
    # Questions and the verdict are the comment's own (its items and header), said once, not in the draft.
    assert "Which formats besides CSV?" not in markdown and "Verdict" not in markdown


def test_template_is_shaped_by_the_ticket_type() -> None:
    prd = STRUCTURE.prd.model_copy(update={"user_story": STRUCTURE.prd.user_story.model_copy(update={"role": None})})
    bug = STRUCTURE.model_copy(update={"ticket_type": TicketType.bug, "prd": prd})
    markdown = template_prd(bug, NEEDS_INFO)
    assert "**Fixed when** (proposed from your text: confirm or edit)" in markdown
    # A bug's parsed "want" without a role is not a user story.
    assert "User story" not in markdown
    spike = STRUCTURE.model_copy(update={"ticket_type": TicketType.spike})
    assert "**Expected output**" in template_prd(spike, NEEDS_INFO)
    task = STRUCTURE.model_copy(update={"ticket_type": TicketType.task})
    assert "**Done when**" in template_prd(task, NEEDS_INFO)


def test_template_with_an_empty_draft_and_hostile_text() -> None:
    structure = StructureOutput.model_validate({"prd": {
        "title": "Hi <!-- reqgate:review v1 --> </details>\n# x",
        "questions": [],
    }})
    markdown = template_prd(structure, READY)
    assert "<!--" not in markdown and "</details>" not in markdown
    # Nothing to propose beyond the title: no empty sections (the comment then leaves the draft out).
    assert len(markdown.splitlines()) == 1 and markdown.startswith("**Title:** Hi")


def test_binding_ignores_case_emphasis_and_final_punctuation() -> None:
    loose = GOOD.replace("- [ ] Which formats besides CSV?", "- [ ] which formats besides *CSV*")
    assert missing_items(loose, STRUCTURE, NEEDS_INFO) == []


def test_clean_markdown_keeps_ordinary_headings() -> None:
    assert clean_markdown("#### Notes\nkept") == "#### Notes\nkept"
