"""The inbox (bot/inbox.py): the SQLite file an accepted delivery lands in before its sender hears 202, the
writer thread that records concurrent requests a batch per commit, and the pump that hands the rows on.

What a user of the bot relies on: a delivery is accepted once however often it is resent, nothing accepted is
lost across a restart, every request hears its own answer (or the failure of its batch), and the pump hands
everything on, oldest first, even after a failed hand-off.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal, TypeVar

import pytest

import reqgate.bot.inbox as inbox_module
from reqgate.bot.inbox import BatchWriter, InboxFile, Pump
from reqgate.handlers.base import CommandName, TicketRef, Trigger

DEADLINE_S = 5.0
T = TypeVar("T")


def trigger(delivery: str, key: str = "1", kind: Literal["review", "command"] = "review",
            command: CommandName | None = None) -> Trigger:
    return Trigger(delivery_id=delivery, source="github", kind=kind,
                   reason="opened" if kind == "review" else "comment",
                   ref=TicketRef(source="github", project="acme/app", key=key), command=command,
                   command_line=f"/reqgate {command}" if command else None, actor="alice")


def wait_until(condition: Callable[[], bool], timeout_s: float = DEADLINE_S) -> bool:
    """Polls `condition` until it holds or the deadline passes; the caller asserts the result."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


async def within(awaitable: Awaitable[T]) -> T:
    """Awaits with a deadline: a caller that is never answered fails the test instead of hanging it."""
    return await asyncio.wait_for(awaitable, DEADLINE_S)


def ids(triggers: Sequence[Trigger]) -> list[str]:
    return [t.delivery_id for t in triggers]


@pytest.fixture
def inbox_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "reqgate-inbox.sqlite"  # a directory that does not exist yet


@pytest.fixture
def inbox(inbox_path: Path) -> Iterator[InboxFile]:
    opened = InboxFile(inbox_path)
    yield opened
    opened.close()


class Clock:
    """Stands in for the `time` module inside bot/inbox.py, so row timestamps are chosen by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return time.monotonic()


class SlowRecord:
    """Wraps a record callable: takes a few milliseconds a batch, as a commit can, and notes each batch."""

    def __init__(self, record: Callable[[Sequence[Trigger]], list[bool]], pause_s: float = 0.005) -> None:
        self.record = record
        self.pause_s = pause_s
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()

    def __call__(self, triggers: Sequence[Trigger]) -> list[bool]:
        with self._lock:
            self.batches.append(ids(triggers))
        time.sleep(self.pause_s)
        return self.record(triggers)


class GatedRecord:
    """The first batch waits for `gate` (so later submits pile up into one batch); the second one fails if
    `fail_second`."""

    def __init__(self, record: Callable[[Sequence[Trigger]], list[bool]], fail_second: bool = True) -> None:
        self.record = record
        self.fail_second = fail_second
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.failure = sqlite3.OperationalError("disk I/O error")
        self.batches: list[list[str]] = []

    def __call__(self, triggers: Sequence[Trigger]) -> list[bool]:
        self.batches.append(ids(triggers))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.gate.wait(DEADLINE_S)
        elif len(self.batches) == 2 and self.fail_second:
            raise self.failure
        return self.record(triggers)


def queued(writer: BatchWriter) -> int:
    # What the writer thread has yet to take: the only way to know a thread's submit has been queued.
    return writer._pending.qsize()


# ---------------------------------------------------------------------------------------------------
# InboxFile
# ---------------------------------------------------------------------------------------------------


def test_a_new_delivery_is_recorded_and_a_resent_one_is_a_duplicate(inbox: InboxFile) -> None:
    assert inbox.record([trigger("a"), trigger("b")]) == [True, True]
    assert inbox.record([trigger("a")]) == [False]
    # The key is the workflow id (source + delivery id), not the ticket: another delivery for ticket 1 is new.
    assert inbox.record([trigger("c", key="1"), trigger("b", key="2")]) == [True, False]
    assert ids([row.trigger for row in inbox.waiting(10)]) == ["a", "b", "c"]
    assert inbox.waiting_count() == 3


def test_a_delivery_twice_in_one_batch_is_new_only_the_first_time(inbox: InboxFile) -> None:
    assert inbox.record([trigger("x"), trigger("x"), trigger("y"), trigger("x"), trigger("y")]) == [
        True, False, True, False, False]
    assert ids([row.trigger for row in inbox.waiting(10)]) == ["x", "y"]
    assert inbox.record([trigger("x"), trigger("z"), trigger("z")]) == [False, True, False]
    assert inbox.waiting_count() == 3


def test_recorded_rows_survive_closing_and_reopening_the_file(inbox_path: Path) -> None:
    first = InboxFile(inbox_path)
    assert first.record([trigger("d1"), trigger("d2")]) == [True, True]
    assert first.record([trigger("d3")]) == [True]
    first.close()

    second = InboxFile(inbox_path)  # a restarted process
    assert second.waiting_count() == 3
    rows = second.waiting(10)
    assert ids([row.trigger for row in rows]) == ["d1", "d2", "d3"]
    assert second.record([trigger("d2")]) == [False]  # a redelivery after the restart is still a duplicate
    second.mark_handed_off([rows[0].seq])
    second.close()

    third = InboxFile(inbox_path)
    assert ids([row.trigger for row in third.waiting(10)]) == ["d2", "d3"]  # the hand-off mark is durable too
    assert third.waiting_count() == 2
    third.close()


def test_waiting_is_oldest_first_and_gives_back_the_trigger_as_recorded(inbox: InboxFile) -> None:
    jira = Trigger(delivery_id="jd-9", source="jira", kind="command", reason="comment",
                   ref=TicketRef(source="jira", project="PROJ", key="10042", issue_id="10042"),
                   command="recheck", command_line="/reqgate recheck", actor="bob",
                   actor_association="MEMBER", comment_id="555")
    github = Trigger(delivery_id="gh-1", source="github", kind="review", reason="edited",
                     ref=TicketRef(source="github", project="acme/app", key="7", installation_id=99))
    recorded = [trigger("first"), github, trigger("cmd", kind="command", command="help"), jira,
                trigger("last", key="3")]
    for batch in (recorded[:2], recorded[2:3], recorded[3:]):
        inbox.record(batch)

    rows = inbox.waiting(100)
    assert [row.trigger for row in rows] == recorded  # equal field for field, in arrival order
    assert [row.seq for row in rows] == sorted(row.seq for row in rows)
    assert rows[3].trigger.workflow_id == "jira:jd-9"
    assert [row.trigger for row in inbox.waiting(2)] == recorded[:2]  # the limit takes the oldest


def test_rows_marked_handed_off_leave_waiting_but_still_catch_a_redelivery(inbox: InboxFile) -> None:
    inbox.record([trigger(f"d{n}") for n in range(5)])
    rows = inbox.waiting(10)
    inbox.mark_handed_off([rows[0].seq, rows[2].seq, rows[4].seq])

    assert ids([row.trigger for row in inbox.waiting(10)]) == ["d1", "d3"]
    assert inbox.waiting_count() == 2
    # Handed on, not forgotten: a resent delivery must not start a second review.
    assert inbox.record([trigger("d0"), trigger("d4")]) == [False, False]
    assert inbox.waiting_count() == 2
    inbox.mark_handed_off([rows[1].seq, rows[3].seq])
    assert inbox.waiting(10) == []
    assert inbox.waiting_count() == 0


def test_prune_forgets_only_handed_off_rows_older_than_the_window(inbox: InboxFile,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(1_000.0)
    monkeypatch.setattr(inbox_module, "time", clock)
    inbox.record([trigger("early"), trigger("late"), trigger("waiting-1"), trigger("waiting-2")])
    rows = {row.trigger.delivery_id: row.seq for row in inbox.waiting(10)}
    clock.now = 2_000.0
    inbox.mark_handed_off([rows["early"]])
    clock.now = 5_000.0
    inbox.mark_handed_off([rows["late"]])

    # Window 2,000 s: "early" (handed off 4,000 s ago) is past it, "late" (1,000 s ago) is not.
    clock.now = 6_000.0
    assert inbox.prune(older_than_s=2_000.0) == 1
    assert inbox.record([trigger("late")]) == [False]  # still known: a redelivery is still a duplicate
    assert ids([row.trigger for row in inbox.waiting(10)]) == ["waiting-1", "waiting-2"]

    clock.now = 7_000.0  # "late" was handed off exactly 2,000 s ago: not yet older than the window
    assert inbox.prune(older_than_s=2_000.0) == 0
    clock.now = 7_001.0
    assert inbox.prune(older_than_s=2_000.0) == 1
    assert inbox.waiting_count() == 2

    # Once forgotten, the inbox takes the delivery as new (DBOS's own workflow id check is the backstop).
    assert inbox.record([trigger("early")]) == [True]


def test_prune_never_deletes_a_row_still_waiting(inbox: InboxFile, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(1_000.0)
    monkeypatch.setattr(inbox_module, "time", clock)
    inbox.record([trigger("old-waiting"), trigger("handed")])
    inbox.mark_handed_off([inbox.waiting(10)[1].seq])

    clock.now = 1_000_000.0  # the waiting row was received long ago
    # A window of zero, and a negative one (a cutoff in the future), still spare every waiting row.
    assert inbox.prune(older_than_s=0.0) == 1
    assert inbox.prune(older_than_s=-1e9) == 0
    assert ids([row.trigger for row in inbox.waiting(10)]) == ["old-waiting"]
    assert inbox.waiting_count() == 1
    assert inbox.record([trigger("old-waiting")]) == [False]


# ---------------------------------------------------------------------------------------------------
# BatchWriter
# ---------------------------------------------------------------------------------------------------


async def test_concurrent_async_submits_each_get_their_own_answer_in_few_commits(inbox: InboxFile) -> None:
    slow = SlowRecord(inbox.record)
    written: list[int] = []
    writer = BatchWriter(slow, name="test-writer", written=lambda: written.append(1))
    try:
        # 150 distinct deliveries; the first 50 are resent, interleaved with the rest of the burst.
        submitted: list[Trigger] = []
        for n in range(150):
            submitted.append(trigger(f"d{n}"))
            if n % 3 == 2:
                submitted.append(trigger(f"d{n // 3}"))
        assert len(submitted) == 200
        answers = await within(asyncio.gather(*(writer.submit(t) for t in submitted)))
    finally:
        writer.close()

    seen: set[str] = set()
    expected: list[bool] = []
    for t in submitted:
        expected.append(t.delivery_id not in seen)
        seen.add(t.delivery_id)
    assert answers == expected  # each caller hears its own answer; the first of a resent pair is the new one
    assert answers.count(True) == 150

    assert sum(len(batch) for batch in slow.batches) == 200  # every submit was recorded exactly once
    assert len(slow.batches) < 200  # ...in batches, not one commit per request
    assert max(len(batch) for batch in slow.batches) > 1
    assert len(written) == len(slow.batches)  # the pump is woken after each commit
    assert ids([row.trigger for row in inbox.waiting(1000)]) == [f"d{n}" for n in range(150)]


async def test_an_async_caller_hears_true_only_once_its_row_is_in_the_file(inbox: InboxFile,
                                                                           inbox_path: Path) -> None:
    writer = BatchWriter(SlowRecord(inbox.record), name="test-writer")
    try:
        assert await within(writer.submit(trigger("d1"))) is True
        other = InboxFile(inbox_path)  # another process's view of the file
        assert ids([row.trigger for row in other.waiting(10)]) == ["d1"]
        other.close()
        assert await within(writer.submit(trigger("d1"))) is False
    finally:
        writer.close()


def test_blocking_submits_from_several_threads(inbox: InboxFile) -> None:
    slow = SlowRecord(inbox.record)
    writer = BatchWriter(slow, name="test-writer")
    threads_n, shared_n = 8, 25
    start = threading.Barrier(threads_n)
    answers: dict[int, list[tuple[str, bool]]] = {}
    errors: list[BaseException] = []

    def client(i: int) -> None:
        try:
            start.wait(DEADLINE_S)
            mine = [trigger(f"shared-{n}") for n in range(shared_n)] + [trigger(f"own-{i}")]
            answers[i] = [(t.delivery_id, writer.submit_blocking(t, timeout=DEADLINE_S)) for t in mine]
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(threads_n)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(DEADLINE_S * 2)
        assert writer.alive()
    finally:
        writer.close()

    assert errors == []
    assert sorted(answers) == list(range(threads_n))
    new_by_id: dict[str, int] = {}
    for per_thread in answers.values():
        for delivery, is_new in per_thread:
            new_by_id[delivery] = new_by_id.get(delivery, 0) + int(is_new)
    # Eight threads sent each shared delivery: exactly one of them heard "new". Each own delivery is new.
    assert new_by_id == {**{f"shared-{n}": 1 for n in range(shared_n)},
                         **{f"own-{i}": 1 for i in range(threads_n)}}
    total = threads_n * (shared_n + 1)
    assert sum(len(batch) for batch in slow.batches) == total
    assert len(slow.batches) < total  # concurrent threads share commits
    assert inbox.waiting_count() == shared_n + threads_n


async def test_a_failed_write_reaches_every_waiter_of_its_batch_and_the_writer_goes_on(
        inbox: InboxFile) -> None:
    gated = GatedRecord(inbox.record)
    written: list[int] = []
    writer = BatchWriter(gated, name="test-writer", written=lambda: written.append(1))
    try:
        first = asyncio.create_task(writer.submit(trigger("warm-up")))
        assert await asyncio.to_thread(gated.entered.wait, DEADLINE_S)  # the writer is busy with batch 1

        async_ones = [trigger(f"async-{n}") for n in range(5)]
        blocking_ones = [trigger(f"thread-{n}") for n in range(3)]
        async_tasks = [asyncio.create_task(writer.submit(t)) for t in async_ones]
        thread_tasks = [asyncio.create_task(asyncio.to_thread(writer.submit_blocking, t, DEADLINE_S))
                        for t in blocking_ones]
        assert await asyncio.to_thread(wait_until, lambda: queued(writer) == 8)
        gated.gate.set()  # batch 1 commits; the eight queued submits form batch 2, whose write fails

        assert await within(first) is True
        outcomes = await within(asyncio.gather(*async_tasks, *thread_tasks, return_exceptions=True))
        assert all(outcome is gated.failure for outcome in outcomes), outcomes
        assert gated.batches == [["warm-up"], ids(async_ones) + ids(blocking_ones)]
        assert len(written) == 1  # no wake-up for a batch that was not written

        # The writer thread survived, and the failed batch left nothing behind: resent, each is new.
        assert writer.alive()
        assert await within(asyncio.gather(*(writer.submit(t) for t in async_ones))) == [True] * 5
        assert await asyncio.to_thread(writer.submit_blocking, blocking_ones[0], DEADLINE_S) is True
        assert await within(writer.submit(trigger("warm-up"))) is False
    finally:
        gated.gate.set()
        await asyncio.to_thread(writer.close)
    assert ids([row.trigger for row in inbox.waiting(100)]) == ["warm-up"] + ids(async_ones) + ["thread-0"]


def test_close_answers_what_was_already_submitted_then_stops_the_thread(inbox: InboxFile) -> None:
    gated = GatedRecord(inbox.record, fail_second=False)
    writer = BatchWriter(gated, name="test-writer")
    assert writer.alive()
    results: dict[str, bool] = {}

    def submit(delivery: str) -> None:
        results[delivery] = writer.submit_blocking(trigger(delivery), timeout=DEADLINE_S)

    warm_up = threading.Thread(target=submit, args=("warm-up",))
    warm_up.start()
    assert gated.entered.wait(DEADLINE_S)
    clients = [threading.Thread(target=submit, args=(f"d{n}",)) for n in range(3)]
    for client in clients:
        client.start()
    assert wait_until(lambda: queued(writer) == 3)
    closer = threading.Thread(target=writer.close)
    closer.start()  # shutdown begins while three accepted requests wait for their commit
    assert wait_until(lambda: queued(writer) == 4)
    gated.gate.set()

    for thread in [warm_up, *clients, closer]:
        thread.join(DEADLINE_S)
    assert not writer.alive()
    assert results == {"warm-up": True, "d0": True, "d1": True, "d2": True}
    assert inbox.waiting_count() == 4


def test_close_stops_an_idle_writer(inbox: InboxFile) -> None:
    writer = BatchWriter(inbox.record, name="test-writer")
    assert writer.submit_blocking(trigger("d1"), timeout=DEADLINE_S) is True
    assert writer.alive()
    writer.close()
    assert not writer.alive()


# ---------------------------------------------------------------------------------------------------
# Pump
# ---------------------------------------------------------------------------------------------------


class HandOff:
    """Stands in for the durable queue: notes every batch it is given; can fail, or say "already queued"."""

    def __init__(self, inbox: InboxFile, fail_times: int = 0,
                 answer: Callable[[Trigger], bool] | None = None) -> None:
        self.inbox = inbox
        self.fail_times = fail_times
        self.answer = answer or (lambda _t: True)
        self.batches: list[list[str]] = []
        self.waiting_at_call: list[int] = []
        self._lock = threading.Lock()

    def __call__(self, triggers: Sequence[Trigger]) -> list[bool]:
        with self._lock:
            self.batches.append(ids(triggers))
            # What the inbox says is still waiting, read the way a metrics scrape reads it.
            self.waiting_at_call.append(self.inbox.waiting_count())
            if len(self.batches) <= self.fail_times:
                raise ConnectionError("the queue's database is unreachable")
        return [self.answer(t) for t in triggers]

    def handed(self) -> list[str]:
        with self._lock:
            return [delivery for batch in self.batches for delivery in batch]


def test_rows_recorded_before_a_restart_are_handed_off_in_order_and_marked(inbox_path: Path) -> None:
    before = InboxFile(inbox_path)  # the web process accepted 70 deliveries, then everything stopped
    recorded = [f"d{n}" for n in range(70)]
    for start in range(0, 70, 9):
        before.record([trigger(d) for d in recorded[start:start + 9]])
    before.close()

    inbox = InboxFile(inbox_path)
    hand_off = HandOff(inbox)
    pump = Pump(inbox, hand_off, poll_s=0.02)
    pump.start()
    try:
        assert wait_until(lambda: inbox.waiting_count() == 0)
        assert hand_off.handed() == recorded  # every row once, oldest first
        assert all(len(batch) <= Pump.BATCH for batch in hand_off.batches)
        assert len(hand_off.batches) >= 3
    finally:
        pump.stop()
    assert not pump.alive()

    # Another restart hands on only what arrived since: the marks were committed.
    again = InboxFile(inbox_path)
    assert again.record([trigger("d70"), trigger("d5")]) == [True, False]
    second_hand_off = HandOff(again)
    second = Pump(InboxFile(inbox_path), second_hand_off, poll_s=0.02)
    second.start()
    try:
        assert wait_until(lambda: again.waiting_count() == 0)
        assert second_hand_off.handed() == ["d70"]
    finally:
        second.stop()
        again.close()
    assert not second.alive()


def test_a_failed_hand_off_leaves_the_rows_waiting_for_a_later_round(inbox_path: Path) -> None:
    inbox = InboxFile(inbox_path)
    inbox.record([trigger(f"d{n}") for n in range(3)])
    hand_off = HandOff(inbox, fail_times=1)
    pump = Pump(inbox, hand_off, poll_s=0.02)
    pump.start()
    try:
        assert wait_until(lambda: inbox.waiting_count() == 0)
    finally:
        pump.stop()
    assert not pump.alive()

    assert hand_off.batches[:2] == [["d0", "d1", "d2"], ["d0", "d1", "d2"]]  # the same rows, offered again
    assert hand_off.waiting_at_call[:2] == [3, 3]  # the failure marked nothing as handed off
    assert hand_off.handed() == ["d0", "d1", "d2"] * 2  # and nothing was offered after the success
    assert inbox.waiting(10) == []


def test_an_already_queued_row_is_still_marked_handed_off(inbox_path: Path) -> None:
    inbox = InboxFile(inbox_path)
    inbox.record([trigger(f"d{n}") for n in range(4)])
    # d0 and d2 were queued before the process died (after DBOS's enqueue, before the inbox's mark).
    hand_off = HandOff(inbox, answer=lambda t: t.delivery_id not in {"d0", "d2"})
    pump = Pump(inbox, hand_off, poll_s=0.02)
    pump.start()
    try:
        assert wait_until(lambda: inbox.waiting_count() == 0)
        inbox.record([trigger("d4")])
        pump.wake.set()
        assert wait_until(lambda: "d4" in hand_off.handed())
    finally:
        pump.stop()
    assert not pump.alive()
    # Each offered once, oldest first: a row whose hand-off said "already queued" is not offered again.
    assert hand_off.handed() == ["d0", "d1", "d2", "d3", "d4"]


def test_wake_hands_a_new_row_on_without_waiting_for_the_poll_and_stop_is_prompt(inbox_path: Path) -> None:
    inbox = InboxFile(inbox_path)
    writer_side = InboxFile(inbox_path)
    writer_side.record([trigger("d0")])
    hand_off = HandOff(inbox)
    pump = Pump(inbox, hand_off, poll_s=60.0)  # it would not look again on its own within the test
    pump.start()
    try:
        assert wait_until(lambda: hand_off.handed() == ["d0"])
        writer_side.record([trigger("d1")])
        pump.wake.set()  # what the writer's `written` callback does in the same process
        assert wait_until(lambda: hand_off.handed() == ["d0", "d1"], timeout_s=2.0)
        assert wait_until(lambda: writer_side.waiting_count() == 0)
    finally:
        started = time.monotonic()
        pump.stop()
        stopped_in = time.monotonic() - started
        writer_side.close()
    assert not pump.alive()
    assert stopped_in < 2.0  # stop does not wait out the 60 s poll


# ---- failures that must not cost an answer or the file's lock -------------------------------------------


def _fail_on(path: Path, sql: str) -> sqlite3.Connection:
    """A SQLite trigger that aborts the matching write, as a full disk would."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(sql)
    return conn


def test_a_failed_mark_leaves_no_lock_behind(inbox: InboxFile, inbox_path: Path) -> None:
    inbox.record([trigger("d1")])
    [row] = inbox.waiting(10)
    admin = _fail_on(inbox_path, "CREATE TRIGGER full BEFORE UPDATE ON inbox BEGIN SELECT RAISE(ABORT, 'full'); END")
    with pytest.raises(sqlite3.IntegrityError):
        inbox.mark_handed_off([row.seq])
    # The web side can still write at once (a held write lock would make this None), and the pump can retry.
    web = InboxFile(inbox_path)
    assert web.record_at_once([trigger("d2")]) == [True]
    admin.execute("DROP TRIGGER full")
    inbox.mark_handed_off([row.seq])
    assert ids([w.trigger for w in inbox.waiting(10)]) == ["d2"]
    web.close()
    admin.close()


def test_a_batch_of_several_statements_is_stored_whole_or_not_at_all(inbox: InboxFile, inbox_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(InboxFile, "ROWS_PER_STATEMENT", 2)
    admin = _fail_on(inbox_path, "CREATE TRIGGER bad BEFORE INSERT ON inbox WHEN NEW.workflow_id = 'gh:d4' "
                                 "BEGIN SELECT RAISE(ABORT, 'bad'); END")
    with pytest.raises(sqlite3.IntegrityError):
        inbox.record([trigger(f"d{n}") for n in range(6)])
    assert inbox.waiting_count() == 0  # the first two statements were rolled back with the third
    admin.execute("DROP TRIGGER bad")
    assert inbox.record([trigger(f"d{n}") for n in range(6)]) == [True] * 6
    admin.close()


def test_a_failing_written_hook_still_answers_accepted(inbox: InboxFile) -> None:
    def hook() -> None:
        raise RuntimeError("the pump's event is gone")

    writer = BatchWriter(inbox.record, name="test-writer", written=hook)
    assert writer.submit_blocking(trigger("d1"), timeout=DEADLINE_S) is True
    assert writer.submit_blocking(trigger("d1"), timeout=DEADLINE_S) is False
    writer.close()


def test_a_closed_writer_refuses_new_requests_instead_of_leaving_them_waiting(inbox: InboxFile) -> None:
    writer = BatchWriter(inbox.record, name="test-writer")
    writer.close()
    with pytest.raises(RuntimeError):
        writer.submit_blocking(trigger("d1"), timeout=DEADLINE_S)

    async def late() -> bool:
        return await within(writer.submit(trigger("d2")))

    with pytest.raises(RuntimeError):
        asyncio.run(late())
