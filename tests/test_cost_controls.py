"""Cost controls: who may trigger LLM reviews, the monthly budget, the cap per ticket and day. The flow runs
with plain steps against the real GitHub tracker (PyGithub over HTTP to the fake GitHub), the real anthropic
client against the fake Anthropic API and the spend table in a SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from reqgate.bot import flow, metrics
from reqgate.bot.budget import SpendLedger, account_of
from reqgate.bot.state import StateStore
from reqgate.bot.steps import Outcome, Services
from reqgate.handlers.base import TicketRef, Trigger
from reqgate.handlers.github.client import ClientOptions, GitHubAuth
from reqgate.handlers.github.tracker import GitHubTracker
from reqgate.handlers.jira.tracker import JiraTracker
from reqgate.pipeline.config import CostSettings, LLMSettings
from reqgate.pipeline.cost import budget_line, decide_access, month_start
from reqgate.pipeline.llm import LLMClient
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub
from tests.fakes.fake_jira import FakeJira
from tests.fakes.github_fixture import fake_github, fake_github_server  # noqa: F401
from tests.fakes.jira_fixture import fake_jira, fake_jira_server, jira_tracker  # noqa: F401

REPO = "acme/widgets"
INSTALLATION = 77
REF = TicketRef(source="github", project=REPO, key="1", installation_id=INSTALLATION)
FAST = ClientOptions(seconds_between_writes=0, backoff_factor=0, max_retries=3)
BODY = (
    "As a workspace admin, I want to export all tasks of a workspace to a CSV file, so that I can report "
    "on them in a spreadsheet.\n\nAcceptance criteria:\n- The export contains one row per task with title, "
    "status and assignee.\n- A workspace with 10,000 tasks exports in under 5 seconds.\n"
)


# ---- the decision -------------------------------------------------------------------------------------

def test_everyone_within_budget_and_cap_gets_the_llm() -> None:
    access = decide_access(CostSettings(monthly_budget_usd=5), actor="eve", member=None, spent_usd=4.99,
                           reviews_today=9)
    assert access.allowed and access.remaining_usd == pytest.approx(0.01)


@pytest.mark.parametrize(("cost", "actor", "member", "spent", "today", "reason"), [
    (CostSettings(llm_reviews_for="members"), "eve", False, 0, 0, "not_member"),
    (CostSettings(llm_reviews_for="members"), None, None, 0, 0, "not_member"),
    (CostSettings(llm_reviews_for="allowlist", allowlist=["Alice"]), "bob", None, 0, 0, "not_allowlisted"),
    (CostSettings(monthly_budget_usd=2.5), "eve", None, 2.5, 0, "budget_exhausted"),
    (CostSettings(max_llm_reviews_per_ticket_per_day=3), "eve", None, 0, 3, "ticket_cap"),
])
def test_rules_only_says_why(cost: CostSettings, actor: str | None, member: bool | None, spent: float,
                             today: int, reason: str) -> None:
    access = decide_access(cost, actor=actor, member=member, spent_usd=spent, reviews_today=today)
    assert not access.allowed and access.reason == reason
    key = {"not_member": "llm_reviews_for: members", "not_allowlisted": "cost.allowlist",
           "budget_exhausted": "cost.monthly_budget_usd", "ticket_cap": "max_llm_reviews_per_ticket_per_day"}
    assert key[reason] in access.message


def test_allowlist_ignores_case() -> None:
    cost = CostSettings(llm_reviews_for="allowlist", allowlist=["Alice"])
    assert decide_access(cost, actor="alice", member=None, spent_usd=0, reviews_today=0).allowed


def test_budget_line() -> None:
    assert "$1.50 left of $2.00" in budget_line(CostSettings(monthly_budget_usd=2), 0.5)
    assert "no monthly budget" in budget_line(CostSettings(), 0.5)


# ---- the ledger ---------------------------------------------------------------------------------------

def test_ledger_counts_a_run_once_and_by_month_and_day(tmp_path: Path) -> None:
    ledger = SpendLedger(StateStore.connect(f"sqlite:///{tmp_path / 'db.sqlite'}").engine)
    now = datetime(2026, 11, 15, 12, tzinfo=UTC)
    ledger.record("run-1", "structure", "github:installation:1", "t1", 0.25, at=now.timestamp())
    ledger.record("run-1", "structure", "github:installation:1", "t1", 0.25, at=now.timestamp())  # replayed
    ledger.record("run-1", "render", "github:installation:1", "t1", 0.05, at=now.timestamp())
    ledger.record("run-2", "structure", "github:installation:1", "t2", 0.5,
                  at=(now - timedelta(days=20)).timestamp())
    ledger.record("run-3", "structure", "github:installation:2", "t1", 9.0, at=now.timestamp())
    assert ledger.spent("github:installation:1", month_start(now)) == pytest.approx(0.30)
    assert ledger.reviews("t1", now.replace(hour=0)) == 2  # run-1 (two stages) and run-3
    assert ledger.reviews("t2", now.replace(hour=0)) == 0


# ---- the flow -----------------------------------------------------------------------------------------

@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:  # noqa: F811
    fake_github.add_repo(REPO)
    fake_github.add_issue(REPO, title="Export workspace tasks to CSV", body=BODY, author="alice")
    return fake_github


@pytest.fixture
def services(fake: FakeGitHub, fake_anthropic: FakeAnthropic, fast_llm_settings: LLMSettings,
             tmp_path: Path) -> Iterator[Services]:
    tracker = GitHubTracker(GitHubAuth(token=SecretStr(fake.token)), api_url=fake.url, options=FAST)
    state = StateStore.connect(f"sqlite:///{tmp_path / 'state.sqlite'}")

    def llm(_settings: LLMSettings) -> LLMClient:
        return LLMClient("sk-ant-fake", fast_llm_settings, base_url=fake_anthropic.url)

    yield Services(trackers={"github": tracker}, state=state, llm_factory=llm)
    tracker.close()
    state.close()


def plain(_name: str, fn: Any) -> Any:
    return fn()


def review(services: Services, delivery: str, actor: str = "alice", association: str = "NONE",
           command: str | None = None) -> Outcome:
    trigger = Trigger(delivery_id=delivery, source="github", kind="command" if command else "review",
                      reason="comment" if command else "opened", ref=REF, actor=actor,
                      actor_association=association, command=command,  # type: ignore[arg-type]
                      command_line=f"/reqgate {command}" if command else None)
    return flow.run(trigger, services, plain)


def sticky_comment(fake: FakeGitHub) -> str:
    bodies = [c.body for c in fake.comments_by_id.values() if "reqgate" in c.body.lower()]
    return bodies[-1]


def set_config(fake: FakeGitHub, text: str) -> None:
    fake.add_file(REPO, ".github/reqgate.yml", text)


def test_non_member_gets_a_rules_only_review_that_says_why(services: Services, fake: FakeGitHub,
                                                           fake_anthropic: FakeAnthropic) -> None:
    set_config(fake, "cost:\n  llm_reviews_for: members\n")
    outcome = review(services, "d1", actor="mallory", association="CONTRIBUTOR")
    assert outcome.status == "published" and fake_anthropic.requests == []
    comment = sticky_comment(fake)
    assert "Rules-only review" in comment and "`mallory`" in comment and "members and collaborators" in comment
    assert any("/collaborators/mallory" in r.path for r in fake.requests)
    assert any("/orgs/acme/members/mallory" in r.path for r in fake.requests)
    state = services.state.get(REF.ticket_id)
    assert state is not None and state.result is not None
    assert state.result.trace.fallbacks == ["llm_withheld"]

    fake.add_org_member("acme", "bob")  # a private member: the webhook says CONTRIBUTOR, the API says member
    assert review(services, "d2", actor="bob", association="CONTRIBUTOR").status == "published"
    assert fake_anthropic.structure_calls() == 1
    assert "Rules-only review" not in sticky_comment(fake)


def test_collaborator_is_a_member(services: Services, fake: FakeGitHub, fake_anthropic: FakeAnthropic) -> None:
    set_config(fake, "cost:\n  llm_reviews_for: members\n")
    fake.set_role(REPO, "carol", "read")
    review(services, "d1", actor="carol", association="NONE")
    assert fake_anthropic.structure_calls() == 1


def test_budget_spent_mid_month_makes_reviews_rules_only(services: Services, fake: FakeGitHub,
                                                         fake_anthropic: FakeAnthropic) -> None:
    set_config(fake, "cost:\n  monthly_budget_usd: 0.5\n")
    ledger = services.budget
    assert ledger is not None
    account = account_of(REF)
    now = datetime.now(UTC)
    last_month = month_start(now) - timedelta(days=3)
    other = "github:acme/other#9"
    ledger.record("old", "structure", account, other, 40.0, at=last_month.timestamp())  # does not count
    ledger.record("earlier", "structure", account, other, 0.4999, at=month_start(now).timestamp() + 1)
    before = metrics.LLM_COST._value.get()

    assert review(services, "d1").status == "published"
    assert fake_anthropic.structure_calls() == 1 and "Rules-only" not in sticky_comment(fake)
    spent = ledger.spent(account, month_start(now))
    assert spent > 0.5  # this review's estimated cost was recorded and crossed the budget
    assert metrics.LLM_COST._value.get() == pytest.approx(before + spent - 0.4999)

    assert review(services, "d2", command="recheck", association="OWNER").status == "cached"
    # the unchanged ticket replays the stored LLM review; an edited one is rules-only and says so
    issue = fake.repo(REPO).issues[1]
    issue.body = BODY + "\nDates are written in ISO 8601.\n"
    assert review(services, "d3", command="recheck", association="OWNER").status == "published"
    assert fake_anthropic.structure_calls() == 1
    comment = sticky_comment(fake)
    assert "Rules-only review" in comment and "monthly LLM budget of $0.50" in comment
    assert "until the month ends" in comment


def test_cap_per_ticket_and_day(services: Services, fake: FakeGitHub, fake_anthropic: FakeAnthropic) -> None:
    set_config(fake, "cost:\n  max_llm_reviews_per_ticket_per_day: 1\n")
    review(services, "d1")
    fake.repo(REPO).issues[1].body = BODY + "\nDates are written in ISO 8601.\n"
    review(services, "d2", command="recheck", association="OWNER")
    assert fake_anthropic.structure_calls() == 1
    assert "daily cap" in sticky_comment(fake)


def test_config_command_shows_the_budget_left(services: Services, fake: FakeGitHub) -> None:
    set_config(fake, "cost:\n  monthly_budget_usd: 20\n")
    ledger = services.budget
    assert ledger is not None
    ledger.record("earlier", "structure", account_of(REF), REF.ticket_id, 5.0)
    assert review(services, "d1", command="config", association="OWNER").status == "replied"
    replies = [c.body for c in fake.comments_by_id.values() if "ReqGate configuration" in c.body]
    assert replies and "$15.00 left of $20.00" in replies[-1]


# ---- Jira membership ----------------------------------------------------------------------------------

def test_jira_member_is_a_user_assignable_in_the_project(fake_jira: FakeJira,  # noqa: F811
                                                         jira_tracker: JiraTracker) -> None:  # noqa: F811
    dev = fake_jira.user("dev")
    outsider = fake_jira.user("outsider")
    fake_jira.assignable["PROJ"] = {dev.ident}
    ref = TicketRef(source="jira", project="PROJ", key="PROJ-7")

    def trigger(actor: str | None) -> Trigger:
        return Trigger(delivery_id="d", source="jira", kind="review", reason="created", ref=ref, actor=actor)

    assert jira_tracker.is_member(trigger(dev.account_id))
    assert not jira_tracker.is_member(trigger(outsider.account_id))
    assert not jira_tracker.is_member(trigger(None))


def test_cost_settings_do_not_invalidate_stored_reviews(fast_llm_config: Any) -> None:
    richer = fast_llm_config.model_copy(update={"cost": CostSettings(monthly_budget_usd=99)})
    assert richer.fingerprint() == fast_llm_config.fingerprint()
    stricter = fast_llm_config.model_copy(update={"threshold": 90})
    assert stricter.fingerprint() != fast_llm_config.fingerprint()
