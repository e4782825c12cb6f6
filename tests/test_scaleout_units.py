"""The scale-out pieces without a server: outage retry pauses, write pacing and the executor registry on a
SQLite file, the deliveries' failure rule, URL forms."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reqgate.bot.executors import ExecutorIdInUse, Registry
from reqgate.bot.pacing import WritePacer
from reqgate.bot.redeliver import parse_duration
from reqgate.bot.settings import Settings
from reqgate.bot.state import StateStore
from reqgate.bot.steps import OutageRetry
from reqgate.handlers.github.deliveries import Delivery, failed_guids


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    return StateStore.connect(f"sqlite:///{tmp_path / 'reqgate.sqlite'}")


def test_outage_pauses_grow_and_cover_the_horizon() -> None:
    pauses = OutageRetry(first_s=30, max_s=600, horizon_s=3600).pauses()
    assert pauses[:5] == [30, 60, 120, 240, 480] and max(pauses) == 600
    assert sum(pauses) >= 3600 and sum(pauses[:-1]) < 3600
    assert OutageRetry(horizon_s=0).pauses() == []


def test_reservations_of_one_key_are_spaced_and_other_keys_do_not_wait(store: StateStore) -> None:
    pacer = WritePacer(store.engine)
    starts = [pacer.reserve("github:installation:1", 1.0) for _ in range(3)]
    assert [round(b - a, 3) for a, b in zip(starts, starts[1:])] == [1.0, 1.0]
    assert pacer.reserve("github:installation:2", 1.0) <= time.time() + 0.1
    two = pacer.reserve("github:installation:1", 1.0, slots=2)
    assert pacer.reserve("github:installation:1", 1.0) - two == pytest.approx(2.0, abs=1e-6)


def test_a_turn_is_taken_once_per_interval(store: StateStore) -> None:
    pacer = WritePacer(store.engine)
    assert pacer.claim_turn("job", 60) is True
    assert pacer.claim_turn("job", 60) is False


def test_a_live_twin_is_refused_and_a_dead_holder_is_replaced(store: StateStore) -> None:
    first = Registry(store.engine, "worker-x", "worker", timeout_s=1.0)
    first.claim()
    beating = threading.Event()

    def beat() -> None:
        while not beating.wait(0.1):
            first.beat()

    threading.Thread(target=beat, daemon=True).start()
    try:
        with pytest.raises(ExecutorIdInUse, match="'worker-x' is in use by a live process"):
            Registry(store.engine, "worker-x", "worker", timeout_s=1.0).claim()
    finally:
        beating.set()
    # A holder on this host whose process is gone is replaced at once.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    from reqgate.bot.executors import EXECUTORS

    with store.engine.begin() as conn:
        conn.execute(EXECUTORS.update().values(pid=int(dead.stdout), heartbeat_at=time.time()))
    started = time.monotonic()
    again = Registry(store.engine, "worker-x", "worker", timeout_s=30.0)
    again.claim()
    assert time.monotonic() - started < 5 and not first.beat() and again.beat()


def test_only_deliveries_never_answered_with_a_2xx_are_failed() -> None:
    now = datetime.now(UTC)

    def attempt(i: int, guid: str, status: int, ago: int) -> Delivery:
        return Delivery(id=i, guid=guid, delivered_at=now - timedelta(minutes=ago), status_code=status)

    failed = failed_guids([attempt(1, "a", 502, 10), attempt(2, "a", 0, 5), attempt(3, "b", 502, 10),
                           attempt(4, "b", 202, 5), attempt(5, "c", 200, 1)])
    assert list(failed) == ["a"] and failed["a"].id == 2


def test_durations() -> None:
    assert parse_duration("24h") == 86400 and parse_duration("30m") == 1800 and parse_duration("90") == 90
    with pytest.raises(ValueError):
        parse_duration("yesterday")


def test_psycopg2_urls_are_mapped_and_other_drivers_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [k for k in os.environ if k.startswith("REQGATE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("REQGATE_GITHUB_TOKEN", "x")
    monkeypatch.setenv("REQGATE_DEV_INSECURE", "1")
    monkeypatch.setenv("REQGATE_DATABASE_URL", "postgresql+psycopg2://u:p@db/reqgate")
    assert Settings().system_database_url() == "postgresql://u:p@db/reqgate"
    assert Settings().problems() == []
    monkeypatch.setenv("REQGATE_DATABASE_URL", "postgresql+asyncpg://u:p@db/reqgate")
    assert any("REQGATE_DATABASE_URL" in p for p in Settings().problems())
