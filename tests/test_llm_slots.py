"""What `REQGATE_WORKER_CONCURRENCY` bounds: LLM requests at once, not reviews (bot/llm_slots.py).

A review waiting for its tracker write (GitHub's pacing, a slow tracker) keeps its place in the worker but
not an LLM slot, so other reviews' LLM calls go on; and however many reviews are in flight, no more requests
than the limit reach the LLM at once. Proven by order and overlap, never by wall time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from dbos import DBOS

from reqgate.bot.llm_slots import LLMSlots
from reqgate.bot.settings import Settings
from reqgate.bot.state import StateStore
from reqgate.bot.steps import Services
from reqgate.bot.wiring import llm_pool_for
from reqgate.handlers.base import TicketRef
from reqgate.pipeline.config import LLMSettings
from reqgate.pipeline.llm import LLMClient, LLMPool, Turn
from tests.fakes.fake_anthropic import FakeAnthropic, Reply
from tests.test_bot_flow import GOOD_BODY, InProcess, MemoryTracker, trigger, wait_for

WAIT_S = 30.0


def _holder(slots: LLMSlots, call: str, entered: list[str], release: threading.Event) -> threading.Thread:
    def run() -> None:
        with slots.hold(call):
            entered.append(call)
            release.wait(WAIT_S)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.01)


def test_no_more_requests_than_the_limit_and_later_calls_go_first() -> None:
    slots = LLMSlots(1)
    entered: list[str] = []
    gates = [threading.Event() for _ in range(3)]
    first = _holder(slots, "structure", entered, gates[0])
    _until(lambda: entered == ["structure"], "the first request holds the slot")
    waiting_first = _holder(slots, "structure", entered, gates[1])
    _until(lambda: slots.waiting_first == 1, "a second review's call 1 waits")
    waiting_later = _holder(slots, "render", entered, gates[2])
    _until(lambda: slots.waiting_later == 1, "a call 2 waits")
    assert entered == ["structure"] and slots.busy == 1

    gates[0].set()
    first.join(WAIT_S)
    _until(lambda: len(entered) == 2, "the freed slot is taken")
    assert entered == ["structure", "render"]  # the started review goes on before a new one starts
    assert slots.busy == 1 and slots.waiting_first == 1
    gates[2].set()
    waiting_later.join(WAIT_S)
    _until(lambda: len(entered) == 3, "the last request gets the slot")
    gates[1].set()
    waiting_first.join(WAIT_S)
    assert slots.busy == 0


class SlowWriteTracker(MemoryTracker):
    """Ticket 1's comment write does not return until the test lets it: a write waiting for its turn."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = threading.Event()
        self.release = threading.Event()

    def upsert_comment(self, ref: TicketRef, body: str, known_comment_id: str | None) -> str:
        if ref.key == "1":
            self.writing.set()
            self.release.wait(WAIT_S)
        return super().upsert_comment(ref, body, known_comment_id)


@pytest.fixture
def one_llm_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 fake_anthropic: FakeAnthropic) -> Iterator[tuple[InProcess, SlowWriteTracker]]:
    for name, value in fake_anthropic.env().items():
        monkeypatch.setenv(name, value)
    tracker = SlowWriteTracker()
    settings = Settings(data_dir=tmp_path, queue_poll_s=0.05, github_token="x", worker_concurrency=1)
    state = StateStore.connect(settings.system_database_url())
    pool = llm_pool_for(settings)
    bot = InProcess.launch(settings, Services(trackers={"github": tracker}, state=state, llm_factory=pool.client))
    try:
        yield bot, tracker
    finally:
        tracker.release.set()
        bot.close()
        pool.close()
        state.close()


def test_a_review_waiting_to_write_does_not_hold_back_the_llm_calls_of_others(
    one_llm_slot: tuple[InProcess, SlowWriteTracker], fake_anthropic: FakeAnthropic
) -> None:
    eng, tracker = one_llm_slot
    # Slow enough that two reviews' calls would overlap if nothing kept them apart.
    fake_anthropic.script(*[Reply.slow(0.2) for _ in range(6)])
    for key in ("1", "2", "3"):
        tracker.add(key, f"Export workspace tasks {key}", GOOD_BODY)
    assert eng.enqueue(trigger("d1", key="1"))
    assert tracker.writing.wait(WAIT_S), "ticket 1 never reached its comment write"

    assert eng.enqueue(trigger("d2", key="2")) and eng.enqueue(trigger("d3", key="3"))
    # With one review per worker slot, these would wait for ticket 1's write to finish.
    assert wait_for(eng, "gh:d2").status == "published"
    assert wait_for(eng, "gh:d3").status == "published"
    assert DBOS.get_workflow_status("gh:d1").status == "PENDING"  # type: ignore[union-attr]
    assert not any(cid.startswith("1/") for cid in tracker.comments)

    tracker.release.set()
    assert wait_for(eng, "gh:d1").status == "published"
    assert fake_anthropic.structure_calls() == 3 and len(fake_anthropic.messages_requests) == 6
    assert fake_anthropic.most_at_once == 1  # REQGATE_WORKER_CONCURRENCY=1: one LLM request at a time


def test_clients_of_a_pool_share_its_connections_and_wait_for_a_slot_outside_the_deadline(
    fake_anthropic: FakeAnthropic, fast_llm_settings: LLMSettings
) -> None:
    """Time queued for a slot is this process's, not the API's: a long queue must not fail the call."""
    calls: list[str] = []
    clock = [0.0]

    @contextmanager
    def gate(call: str) -> Iterator[None]:
        calls.append(call)
        clock[0] += 10 * fast_llm_settings.deadline_s  # waited far past the deadline for a slot
        yield

    pool = LLMPool(gate=gate)
    first = LLMClient("k", fast_llm_settings, base_url=fake_anthropic.url, pool=pool)
    second = LLMClient("k", fast_llm_settings, base_url=fake_anthropic.url, pool=pool)
    try:
        for client in (first, second):
            client._clock = lambda: clock[0]
            reply = client.complete_text("render", "claude-sonnet-5-5", ["Be brief."], [Turn("user", "hi")], 64)
            assert reply.record.ok
        first.close()  # the pool's connections outlive a client
        second.complete_text("render", "claude-sonnet-5-5", ["Be brief."], [Turn("user", "hi")], 64)
        assert calls == ["render"] * 3
    finally:
        pool.close()
