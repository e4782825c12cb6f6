"""Write pacing shared by every process: GitHub asks for about a second between content-creating requests
per installation, and that holds however many workers write. One row per key (a GitHub installation, a
token, a Jira site) holds the time of the next free slot; a writer reserves slots with one atomic upsert and
sleeps until its own. The row lock serialises the reservations of one key, different keys never wait on
each other, and adding workers adds no write rate.

The same table gives periodic jobs a lease (`claim_turn`): the first process to move a key's time forward
runs the job, the others skip it until the interval has passed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import sqlalchemy as sa

from reqgate.bot.state import METADATA, dialect_insert

PACE = sa.Table(
    "reqgate_pace",
    METADATA,
    sa.Column("key", sa.String(400), primary_key=True),
    sa.Column("next_at", sa.Float, nullable=False),
)


class WritePacer:
    def __init__(self, engine: sa.Engine, sleep: Callable[[float], None] = time.sleep) -> None:
        self.engine = engine
        self.sleep = sleep
        self._greatest = sa.func.greatest if engine.dialect.name == "postgresql" else sa.func.max

    def reserve(self, key: str, spacing_s: float, slots: int = 1) -> float:
        """Reserve `slots` consecutive write slots of `key`; the time the first one starts."""
        now = time.time()
        span = spacing_s * slots
        statement = dialect_insert(self.engine, PACE).values(key=key, next_at=now + span)
        statement = statement.on_conflict_do_update(
            index_elements=[PACE.c.key],
            set_={"next_at": self._greatest(PACE.c.next_at, now) + span},
        ).returning(PACE.c.next_at)
        with self.engine.begin() as conn:
            next_at = conn.execute(statement).scalar_one()
        return float(next_at) - span

    def wait(self, key: str, spacing_s: float, slots: int = 1) -> float:
        """Sleep until this writer's turn; the seconds waited."""
        if spacing_s <= 0 or slots <= 0:
            return 0.0
        pause = self.reserve(key, spacing_s, slots) - time.time()
        if pause > 0:
            self.sleep(pause)
            return pause
        return 0.0

    def claim_turn(self, key: str, interval_s: float) -> bool:
        """True for exactly one caller per `interval_s` across all processes."""
        now = time.time()
        statement = dialect_insert(self.engine, PACE).values(key=key, next_at=now + interval_s)
        statement = statement.on_conflict_do_update(
            index_elements=[PACE.c.key], set_={"next_at": now + interval_s}, where=PACE.c.next_at <= now,
        ).returning(PACE.c.next_at)
        with self.engine.begin() as conn:
            return conn.execute(statement).first() is not None
