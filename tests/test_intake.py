"""The web side's intake (bot/inbox.py `Intake`): deliveries recorded from the event loop, a duplicate known as
one, and a locked inbox file never freezing the loop."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from reqgate.bot.inbox import InboxFile, Intake
from reqgate.handlers.base import TicketRef, Trigger


def trigger(delivery: str, key: str = "1") -> Trigger:
    return Trigger(delivery_id=delivery, source="github", kind="review", reason="opened",
                   ref=TicketRef(source="github", project="acme/app", key=key), actor="alice")


@pytest.fixture
def inbox_path(tmp_path: Path) -> Path:
    return tmp_path / "reqgate-inbox.sqlite"


def test_concurrent_deliveries_are_recorded_once_each(inbox_path: Path) -> None:
    woken: list[int] = []
    intake = Intake(InboxFile(inbox_path), written=lambda: woken.append(1))

    async def burst() -> list[bool]:
        deliveries = [trigger(f"d{n}", key=str(n % 7)) for n in range(100)] + [trigger("d5"), trigger("d50")]
        return await asyncio.gather(*(intake.accept(t) for t in deliveries))

    answers = asyncio.run(burst())
    intake.close()
    assert answers == [True] * 100 + [False, False]
    assert woken  # the pump of this process (if any) hears about new rows
    reopened = InboxFile(inbox_path)
    waiting = reopened.waiting(1000)
    assert [row.trigger.delivery_id for row in waiting] == [f"d{n}" for n in range(100)]
    assert waiting[7].trigger == trigger("d7", key="0")
    reopened.close()


def test_a_delivery_sent_twice_in_one_turn_is_new_once(inbox_path: Path) -> None:
    intake = Intake(InboxFile(inbox_path))

    async def twice() -> list[bool]:
        return await asyncio.gather(intake.accept(trigger("same")), intake.accept(trigger("same")))

    assert sorted(asyncio.run(twice())) == [False, True]
    intake.close()


def test_a_locked_inbox_is_waited_for_off_the_loop(inbox_path: Path) -> None:
    intake = Intake(InboxFile(inbox_path))
    other = sqlite3.connect(inbox_path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the file
    threading.Timer(0.5, lambda: other.execute("COMMIT")).start()
    ticks: list[float] = []

    async def scenario() -> bool:
        async def ticker() -> None:
            for _ in range(10):
                ticks.append(time.monotonic())
                await asyncio.sleep(0.02)

        started = time.monotonic()
        answer, _ = await asyncio.gather(intake.accept(trigger("d1")), ticker())
        assert time.monotonic() - started >= 0.4  # it waited for the lock...
        return answer

    assert asyncio.run(scenario()) is True
    # ...while the loop kept running: the ticker's 10 turns did not stall behind the lock.
    assert ticks[-1] - ticks[0] < 0.45
    intake.close()
    other.close()
    assert [row.trigger.delivery_id for row in InboxFile(inbox_path).waiting(10)] == ["d1"]


def test_with_full_fsync_every_delivery_goes_through_the_writer_thread(inbox_path: Path) -> None:
    intake = Intake(InboxFile(inbox_path, synchronous="FULL"))

    async def two() -> list[bool]:
        return await asyncio.gather(intake.accept(trigger("a")), intake.accept(trigger("a")))

    assert sorted(asyncio.run(two())) == [False, True]
    intake.close()


def test_a_failing_write_reaches_every_waiting_request(inbox_path: Path) -> None:
    inbox = InboxFile(inbox_path)
    intake = Intake(inbox)

    def broken(_triggers: object) -> list[bool]:
        raise sqlite3.OperationalError("disk I/O error")

    inbox.record_at_once = broken  # type: ignore[method-assign]

    async def burst() -> list[object]:
        return await asyncio.gather(*(intake.accept(trigger(f"d{n}")) for n in range(3)), return_exceptions=True)

    answers = asyncio.run(burst())
    assert all(isinstance(a, sqlite3.OperationalError) for a in answers)
    intake.close()
