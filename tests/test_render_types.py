"""Call 2 per ticket type against the fake Anthropic API: bound to call 1's items of that type, and skipped
for a ready ticket with nothing to propose."""

from __future__ import annotations

from reqgate.pipeline.config import Config
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.render_prd import SKIPPED_READY, render_prd
from reqgate.pipeline.schemas import (
    BugDetails,
    EvidencedItem,
    GateDecision,
    PRDDraft,
    StructureOutput,
    TaskDetails,
    TicketType,
)
from tests.fakes.fake_anthropic import FakeAnthropic, Reply

READY = GateDecision(verdict="ready", score=90, threshold=70)
NEEDS_INFO = GateDecision(verdict="needs_info", score=40, threshold=70)


def quoted(text: str) -> EvidencedItem:
    return EvidencedItem(text=text, evidence=text)


BUG = StructureOutput(ticket_type=TicketType.bug, prd=PRDDraft(
    title="Expired token crashes login",
    bug=BugDetails(observed=quoted("KeyError: 'exp'"), expected=quoted("a 401"),
                   steps=[quoted("Create a token that expired"), quoted("Call GET /api/me with it")]),
))
TASK = StructureOutput(ticket_type=TicketType.task, prd=PRDDraft(
    title="Upgrade Jetty", task=TaskDetails(change=quoted("Upgrade Jetty from 9.2 to 9.4"),
                                            done=[quoted("The integration tests pass on 9.4")]),
))


def test_ready_ticket_with_nothing_to_propose_costs_no_call_2(fast_llm_config: Config, llm_client: LLMClient,
                                                              fake_anthropic: FakeAnthropic) -> None:
    outcome = render_prd(TASK, READY, fast_llm_config, llm_client)
    assert fake_anthropic.requests == [] and outcome.calls == []
    # The template lays the draft out from the ticket; the verdict is the comment frame's, never the draft's.
    assert outcome.skipped == SKIPPED_READY and "Upgrade Jetty" in outcome.markdown
    assert "Verdict" not in outcome.markdown


def test_ready_ticket_with_a_proposal_gets_call_2(fast_llm_config: Config, llm_client: LLMClient,
                                                  fake_anthropic: FakeAnthropic) -> None:
    proposing = TASK.model_copy(update={"prd": TASK.prd.model_copy(update={"task": TaskDetails(
        change=quoted("Upgrade Jetty from 9.2 to 9.4"),
        done=[EvidencedItem(text="No 9.2 class is left on the classpath", inferred=True)])})})
    fake_anthropic.script(Reply.markdown(
        "**Title:** Upgrade Jetty\n\n**Change:** Upgrade Jetty from 9.2 to 9.4\n\n**Done when**\n"
        "- [ ] No 9.2 class is left on the classpath _(proposed)_\n\nVerdict: Ready"))
    outcome = render_prd(proposing, READY, fast_llm_config, llm_client)
    assert [c.call for c in outcome.calls] == ["render"] and not outcome.used_template


def test_bug_section_must_keep_every_step(fast_llm_config: Config, llm_client: LLMClient,
                                          fake_anthropic: FakeAnthropic) -> None:
    partial = ("**Title:** Expired token crashes login\n\n**Observed:** KeyError: 'exp'\n\n**Expected:** a 401\n\n"
               "**Steps to reproduce**\n1. Create a token that expired\n\nVerdict: Needs info")
    fake_anthropic.script(Reply.markdown(partial), Reply.markdown(partial))
    outcome = render_prd(BUG, NEEDS_INFO, fast_llm_config, llm_client)
    assert [c.call for c in outcome.calls] == ["render", "render_reask"] and outcome.used_template
    assert 'step to reproduce: "Call GET /api/me with it"' in fake_anthropic.requests[1].last_user_text
    request = fake_anthropic.requests[0]
    assert '"bug"' in request.user_text and "Create a token that expired" in request.user_text
    assert "own language and voice" in " ".join(request.system_text.split())
