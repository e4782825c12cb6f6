"""The durable flow against an in-memory tracker, on the real DBOS engine and a SQLite file per test.

Tracker-level behaviour (PyGithub, the fake GitHub) is proven in the end-to-end tests; here the questions are
the flow's own: one comment per ticket, caching by content hash, commands, config errors, failures.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from reqgate.bot import commands, steps
from reqgate.bot.inbox import InboxFile, Intake
from reqgate.bot.settings import Settings
from reqgate.bot.state import StateStore
from reqgate.bot.steps import Outcome, Services
from reqgate.bot.workflow import Engine
from reqgate.handlers.base import TicketRef, Trigger
from reqgate.handlers.publish import is_sticky
from reqgate.pipeline.config import LLMSettings
from reqgate.pipeline.config_loader import ConfigError, LoadedConfig, load_config, parse_layer
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.schemas import RequirementPacket
from tests.fakes.fake_anthropic import FakeAnthropic, Reply

GOOD_BODY = (
    "As a workspace admin, I want to export all tasks of a workspace to a CSV file, so that I can report "
    "on them in a spreadsheet.\n\nAcceptance criteria:\n- The export contains one row per task with title, "
    "status and assignee.\n- A workspace with 10,000 tasks exports in under 5 seconds.\n"
)


class MemoryTracker:
    """The Tracker protocol in memory, with a call log to assert on."""

    name = "github"
    comment_limit = 65_000

    def __init__(self) -> None:
        self.tickets: dict[str, RequirementPacket] = {}
        self.config_text: str | None = None
        self.comments: dict[str, str] = {}
        self.replies: list[str] = []
        self.labels: dict[str, set[str]] = {}
        self.calls: list[str] = []
        self.authorised = True
        self.fail: set[str] = set()
        self._ids = iter(range(1, 10_000))
        self.lock = threading.Lock()

    def add(self, key: str, title: str, body: str) -> None:
        self.tickets[key] = RequirementPacket(source="github", project="acme/app", key=key, title=title, body=body)

    def _log(self, call: str) -> None:
        with self.lock:
            self.calls.append(call)
        if call in self.fail:
            raise ConnectionError(f"{call}: tracker unreachable")

    def fetch_ticket(self, ref: TicketRef) -> RequirementPacket:
        self._log("fetch_ticket")
        packet = self.tickets[ref.key]
        return packet.model_copy(update={"labels": sorted(self.labels.get(ref.key, set()))})

    def load_config(self, ref: TicketRef) -> LoadedConfig:
        self._log("load_config")
        layers = [parse_layer(self.config_text, ".github/reqgate.yml")] if self.config_text else []
        return load_config(*layers)

    def upsert_comment(self, ref: TicketRef, body: str, known_comment_id: str | None) -> str:
        self._log("upsert_comment")
        for cid, existing in self.comments.items():
            if cid.startswith(f"{ref.key}/") and is_sticky(existing):
                self.comments[cid] = body
                return cid
        cid = f"{ref.key}/{next(self._ids)}"
        self.comments[cid] = body
        return cid

    def sync_labels(self, ref: TicketRef, add: list[str], remove: list[str], color: str) -> None:
        self._log("sync_labels")
        current = self.labels.setdefault(ref.key, set())
        current.difference_update(remove)
        current.update(add)

    def acknowledge(self, trigger: Trigger) -> None:
        self._log("acknowledge")

    def reply(self, ref: TicketRef, body: str) -> None:
        self._log("reply")
        self.replies.append(body)

    def is_authorised(self, trigger: Trigger) -> bool:
        self._log("is_authorised")
        return self.authorised


def trigger(delivery: str, key: str = "1", kind: str = "review", command: str | None = None) -> Trigger:
    return Trigger(delivery_id=delivery, source="github", kind=kind, reason="opened" if kind == "review" else "comment",
                   ref=TicketRef(source="github", project="acme/app", key=key), command=command,
                   command_line=f"/reqgate {command}" if command else None, actor="alice")


@pytest.fixture
def no_retry_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(steps, "RETRY_PAUSES_S", (0.0,))


@dataclass
class InProcess:
    """The web side's intake and the workers in one process, as `reqgate serve` on a server database runs."""

    engine: Engine
    intake: Intake

    @classmethod
    def launch(cls, settings: Settings, services: Services) -> InProcess:
        engine = Engine(settings, services)
        engine.launch()
        inbox_path = settings.inbox_path()
        assert inbox_path is not None
        return cls(engine, Intake(InboxFile(inbox_path), written=engine.wake_pump))

    def enqueue(self, trigger: Trigger) -> bool:
        return self.intake.enqueue(trigger)

    def ready(self) -> str | None:
        return self.intake.ready() or self.engine.ready()

    def close(self) -> None:
        self.intake.close()
        self.engine.shutdown()


@pytest.fixture
def engine(tmp_path: Path, no_retry_pauses: None) -> Iterator[tuple[InProcess, MemoryTracker]]:
    tracker = MemoryTracker()
    settings = Settings(data_dir=tmp_path, queue_poll_s=0.05, github_token="x")
    state = StateStore.connect(settings.system_database_url())
    bot = InProcess.launch(settings, Services(trackers={"github": tracker}, state=state, llm_factory=lambda _s: None))
    yield bot, tracker
    bot.close()
    state.close()


def wait_for(engine: InProcess, workflow_id: str, timeout: float = 30.0) -> Outcome:
    from dbos import DBOS

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = DBOS.get_workflow_status(workflow_id)
        if status is not None and status.status == "SUCCESS":
            return Outcome.model_validate(DBOS.retrieve_workflow(workflow_id).get_result())
        if status is not None and status.status == "ERROR":
            raise AssertionError(f"{workflow_id} failed: {status.error}")
        time.sleep(0.05)
    raise AssertionError(f"{workflow_id} did not finish")


def test_review_publishes_one_comment_and_one_label(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export workspace tasks to CSV", GOOD_BODY)
    assert eng.enqueue(trigger("d1"))
    outcome = wait_for(eng, "gh:d1")
    assert outcome.status == "published"
    assert len(tracker.comments) == 1
    assert tracker.labels["1"] == {"reqgate:ready" if outcome.verdict == "ready" else "reqgate:needs-info"}
    assert eng.ready() is None


def test_same_delivery_twice_runs_once(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export workspace tasks to CSV", GOOD_BODY)
    assert eng.enqueue(trigger("d1")) is True
    assert eng.enqueue(trigger("d1")) is False
    wait_for(eng, "gh:d1")
    assert eng.enqueue(trigger("d1")) is False
    assert tracker.calls.count("fetch_ticket") == 1


@pytest.fixture
def llm_engine(tmp_path: Path, no_retry_pauses: None, fake_anthropic: FakeAnthropic,
               fast_llm_settings: LLMSettings) -> Iterator[tuple[InProcess, MemoryTracker]]:
    tracker = MemoryTracker()
    settings = Settings(data_dir=tmp_path, queue_poll_s=0.05, github_token="x")
    state = StateStore.connect(settings.system_database_url())
    services = Services(trackers={"github": tracker}, state=state,
                        llm_factory=lambda _s: LLMClient("sk-ant-fake", fast_llm_settings, base_url=fake_anthropic.url))
    bot = InProcess.launch(settings, services)
    yield bot, tracker
    bot.close()
    state.close()


def test_unchanged_recheck_is_served_from_the_stored_review(
    llm_engine: tuple[InProcess, MemoryTracker], fake_anthropic: FakeAnthropic
) -> None:
    eng, tracker = llm_engine
    tracker.add("1", "Export workspace tasks to CSV", GOOD_BODY)
    eng.enqueue(trigger("d1"))
    first = wait_for(eng, "gh:d1")
    eng.enqueue(trigger("d2", kind="command", command="recheck"))
    second = wait_for(eng, "gh:d2")
    assert (first.status, second.status) == ("published", "cached")
    assert len(fake_anthropic.requests) == 2
    assert second.comment_id == first.comment_id
    assert len(tracker.comments) == 1
    assert "acknowledge" in tracker.calls

    tracker.add("1", "Export workspace tasks to CSV", GOOD_BODY + "\nThe file name carries the date.\n")
    eng.enqueue(trigger("d3", kind="command", command="recheck"))
    assert wait_for(eng, "gh:d3").status == "published"
    assert len(tracker.comments) == 1


def test_recheck_after_an_llm_outage_asks_the_llm_again(
    llm_engine: tuple[InProcess, MemoryTracker], fake_anthropic: FakeAnthropic
) -> None:
    eng, tracker = llm_engine
    tracker.add("1", "Export workspace tasks to CSV", GOOD_BODY)
    fake_anthropic.script(Reply.bad_request("down"))
    eng.enqueue(trigger("d1"))
    assert wait_for(eng, "gh:d1").status == "published"
    assert "Rules-only review" in tracker.comments[next(iter(tracker.comments))]
    eng.enqueue(trigger("d2", kind="command", command="recheck"))
    assert wait_for(eng, "gh:d2").status == "published"
    assert len(fake_anthropic.requests) == 3  # the failed call, then a fresh call 1 and call 2
    assert len(tracker.comments) == 1


def test_recheck_after_a_fix_says_what_was_resolved_and_does_not_ask_it_again(
    engine: tuple[InProcess, MemoryTracker]
) -> None:
    eng, tracker = engine
    bug = "Saving answers 'Error 500'.\n"
    tracker.add("1", "Invoice save fails with error 500", bug)
    eng.enqueue(trigger("d1"))
    first = wait_for(eng, "gh:d1")
    body = tracker.comments[first.comment_id]
    assert first.verdict == "needs_info" and "How can a developer reproduce this?" in body
    assert "Resolved since the last review" not in body

    tracker.add("1", "Invoice save fails with error 500",
                bug + "\nSteps to reproduce:\n1. Open a draft invoice\n2. Add a line item\n3. Click Save\n")
    eng.enqueue(trigger("d2", kind="command", command="recheck"))
    second = wait_for(eng, "gh:d2")
    body = tracker.comments[second.comment_id]
    assert second.comment_id == first.comment_id
    assert body.splitlines()[2] == "Resolved since the last review: steps to reproduce."
    assert "How can a developer reproduce this?" not in body


def test_events_for_one_ticket_run_one_after_the_other(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export workspace tasks to CSV", GOOD_BODY)
    tracker.add("2", "Import tasks", GOOD_BODY)
    for n in range(4):
        eng.enqueue(trigger(f"a{n}", key="1"))
        eng.enqueue(trigger(f"b{n}", key="2"))
    outcomes = [wait_for(eng, f"gh:{p}{n}") for n in range(4) for p in "ab"]
    assert all(o.status in ("published", "cached") for o in outcomes)
    assert len(tracker.comments) == 2
    from dbos import DBOS

    runs = {}
    for n in range(4):
        for p in "ab":
            status = DBOS.get_workflow_status(f"gh:{p}{n}")
            runs.setdefault(p, []).append((status.dequeued_at or status.created_at, status.updated_at))
    for spans in runs.values():
        spans.sort()
        assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(spans))


def test_unauthorised_command_gets_a_reply_and_no_review(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export", GOOD_BODY)
    tracker.authorised = False
    eng.enqueue(trigger("d1", kind="command", command="recheck"))
    assert wait_for(eng, "gh:d1").status == "refused"
    assert len(tracker.replies) == 1 and "not run" in tracker.replies[0]
    assert "fetch_ticket" not in tracker.calls and not tracker.comments


def test_help_unknown_and_config_commands_reply(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export", GOOD_BODY)
    tracker.config_text = "threshold: 80\nchecks:\n  wording.vague: {default: warn}\n"
    eng.enqueue(trigger("h", kind="command", command="help"))
    eng.enqueue(trigger("u", kind="command", command="unknown"))
    eng.enqueue(trigger("c", kind="command", command="config"))
    assert [wait_for(eng, f"gh:{d}").status for d in "huc"] == ["replied"] * 3
    # One partition runs them one at a time, but enqueued within the same millisecond their order is free.
    (help_text,) = [r for r in tracker.replies if "ReqGate commands" in r]
    (unknown_text,) = [r for r in tracker.replies if "does not know" in r]
    (config_text,) = [r for r in tracker.replies if "ReqGate configuration" in r]
    assert "/reqgate recheck" in help_text
    assert "does not know" in unknown_text
    assert "| `threshold` | `80` | `.github/reqgate.yml` |" in config_text
    assert "| `checks.wording.vague.default` | `warn` | `.github/reqgate.yml` |" in config_text
    assert tracker.calls.count("acknowledge") == 2  # not for the unknown command


def test_invalid_config_gives_an_error_comment_and_label(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export", GOOD_BODY)
    tracker.config_text = "threshold: 70\nlabels:\n  ready: ok\n  colour: red\n"
    eng.enqueue(trigger("d1"))
    outcome = wait_for(eng, "gh:d1")
    assert outcome.status == "config_error"
    (body,) = tracker.comments.values()
    assert is_sticky(body) and "labels.colour" in body and "line 4" in body
    assert tracker.labels["1"] == {"reqgate:error"}
    assert "fetch_ticket" not in tracker.calls


def test_tracker_failure_sets_the_error_label_best_effort(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export", GOOD_BODY)
    tracker.fail.add("fetch_ticket")
    eng.enqueue(trigger("d1"))
    outcome = wait_for(eng, "gh:d1")
    assert outcome.status == "error" and "unreachable" in (outcome.detail or "")
    assert tracker.labels["1"] == {"reqgate:error"}
    (body,) = tracker.comments.values()
    assert "could not be completed" in body and "/reqgate recheck" in body


def test_null_body_is_a_needs_info_review(engine: tuple[InProcess, MemoryTracker]) -> None:
    eng, tracker = engine
    tracker.add("1", "Export", "")
    eng.enqueue(trigger("d1"))
    outcome = wait_for(eng, "gh:d1")
    assert (outcome.status, outcome.verdict) == ("published", "needs_info")


def test_config_report_hides_secret_keys() -> None:
    loaded = load_config(parse_layer("threshold: 75\n", "repo.yml"))
    report = commands.config_report(loaded)
    assert "| `threshold` | `75` | `repo.yml` |" in report
    assert commands._hide_secrets({"api_token": "x", "nested": {"password": "y", "ok": 1}}) == {
        "api_token": "(hidden)", "nested": {"password": "(hidden)", "ok": 1}}


def test_config_report_shows_token_limits() -> None:
    loaded = load_config(parse_layer("llm:\n  render_max_tokens: 1500\n", "repo.yml"))
    report = commands.config_report(loaded)
    assert "| `llm.render_max_tokens` | `1500` | `repo.yml` |" in report
    assert "structure_max_tokens: 4096" in report and "(hidden)" not in report
    assert "  guardrail.secret:\n    category: other\n    default: warn" in report  # a check id, not a secret
    hidden = load_config(parse_layer("checks:\n  guardrail.secret: {default: warn}\n", "repo.yml"))
    assert "| `checks.guardrail.secret.default` | `warn` |" in commands.config_report(hidden)


def test_config_errors_reply_names_key_and_line() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(parse_layer("threshold: high\n", "repo.yml"))
    text = commands.config_errors(caught.value)
    assert "repo.yml, line 1" in text and "threshold" in text
