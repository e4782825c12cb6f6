"""Which processes are alive, and who resumes the unfinished reviews of those that are not.

DBOS resumes, at launch, only the workflows of the launching process's own executor id. A worker whose id
never comes back (scale-down, a lost node, a Compose replica, a renamed StatefulSet) would leave its
reviews PENDING for ever, and every later event of those tickets queued behind them. So every process
that launches DBOS registers its executor id in `reqgate_executors` and writes a heartbeat there; each
worker looks, every few seconds, for PENDING workflows whose executor has no fresh heartbeat and hands
them back to the queue (DBOS's own recovery call, the one its Conductor service makes). Two workers may do
it at once: the re-enqueue only matches a workflow still PENDING under the dead id.

The same table refuses a second live process with an id already in use: both would resume and run the
same workflows. A holder is live when its heartbeat keeps moving; one on this host whose pid is gone is
dead at once, so a restart after a crash does not wait for the timeout.

A process that finds its own row taken over (its heartbeats failed for longer than the timeout, and its
work was handed to others) stops itself rather than run that work a second time.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable

import sqlalchemy as sa

from reqgate.bot.logging import get_logger
from reqgate.bot.state import METADATA, dialect_insert

log = get_logger("reqgate.executors")

EXECUTORS = sa.Table(
    "reqgate_executors",
    METADATA,
    sa.Column("executor_id", sa.String(200), primary_key=True),
    sa.Column("instance", sa.String(64), nullable=False),  # this run of the process: a random id
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("heartbeat_at", sa.Float, nullable=False),
)
# Heartbeats per timeout: one late write is no death.
BEATS_PER_TIMEOUT = 5


class ExecutorIdInUse(ValueError):
    """Another live process runs with this executor id."""


def default_executor_id() -> str:
    """The host name: a pod's name in Kubernetes (stable in a StatefulSet), the container id in Compose,
    so unique per replica without configuration."""
    return socket.gethostname()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Registry:
    """This process's row: claimed before DBOS launches, kept fresh by a thread, removed at shutdown."""

    def __init__(
        self,
        engine: sa.Engine,
        executor_id: str,
        role: str,
        timeout_s: float,
        *,
        pending_executors: Callable[[], Iterable[str]] | None = None,
        recover: Callable[[list[str]], int] | None = None,
    ) -> None:
        self.engine = engine
        self.executor_id = executor_id
        self.role = role
        self.timeout_s = timeout_s
        self.interval_s = timeout_s / BEATS_PER_TIMEOUT
        self.instance = uuid.uuid4().hex
        self.host = socket.gethostname()
        # Set for a worker: which executors hold PENDING workflows, and how to hand them back to the queue.
        self.pending_executors = pending_executors
        self.recover = recover
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = False

    # ---- claim --------------------------------------------------------------------------------------

    def claim(self) -> None:
        """Take the executor id, or raise `ExecutorIdInUse` when a live process holds it."""
        if self._take(stale_before=time.time() - self.timeout_s):
            return
        holder = self._holder()
        if holder is not None and holder.host == self.host and not _pid_alive(holder.pid):
            if self._take(stale_before=None, instance=holder.instance):
                log.info("executor_reclaimed", executor_id=self.executor_id, previous_pid=holder.pid)
                return
        # Elsewhere, or alive here: live only if its heartbeat still moves.
        deadline = time.monotonic() + self.timeout_s + self.interval_s
        while time.monotonic() < deadline:
            if self._take(stale_before=time.time() - self.timeout_s):
                return
            current = self._holder()
            if current is not None and holder is not None and current.heartbeat_at > holder.heartbeat_at:
                break
            time.sleep(min(self.interval_s, 1.0))
        current = self._holder()
        where = f"{current.host} pid {current.pid}" if current is not None else "another process"
        raise ExecutorIdInUse(
            f"executor id {self.executor_id!r} is in use by a live process ({where}); give each process its "
            "own REQGATE_EXECUTOR_ID (or leave it unset: the host name is used)"
        )

    def _holder(self) -> sa.Row | None:  # type: ignore[type-arg]
        with self.engine.connect() as conn:
            return conn.execute(sa.select(EXECUTORS).where(EXECUTORS.c.executor_id == self.executor_id)).first()

    def _take(self, stale_before: float | None, instance: str | None = None) -> bool:
        """Insert our row, or replace one whose heartbeat is older than `stale_before` (or whose instance
        is `instance`). One statement, so two processes starting together cannot both win."""
        now = time.time()
        values = {"executor_id": self.executor_id, "instance": self.instance, "host": self.host,
                  "pid": os.getpid(), "role": self.role, "started_at": now, "heartbeat_at": now}
        statement = dialect_insert(self.engine, EXECUTORS).values(**values)
        condition = (EXECUTORS.c.instance == instance if instance is not None
                     else EXECUTORS.c.heartbeat_at < stale_before)
        statement = statement.on_conflict_do_update(
            index_elements=[EXECUTORS.c.executor_id],
            set_={k: statement.excluded[k] for k in values if k != "executor_id"},
            where=condition,
        ).returning(EXECUTORS.c.instance)
        with self.engine.begin() as conn:
            row = conn.execute(statement).first()
        return row is not None and row.instance == self.instance

    # ---- heartbeat and takeover -----------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="reqgate-executors", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                if not self.beat():
                    self._lose()
                    return
                if self.pending_executors is not None and self.recover is not None:
                    self.take_over()
            except Exception as exc:  # noqa: BLE001 - a database hiccup: try again at the next beat
                log.warning("executor_heartbeat_failed", error=f"{type(exc).__name__}: {exc}"[:300])

    def beat(self) -> bool:
        """False when our row is no longer ours: others took our work over."""
        with self.engine.begin() as conn:
            updated = conn.execute(
                sa.update(EXECUTORS)
                .where(EXECUTORS.c.executor_id == self.executor_id, EXECUTORS.c.instance == self.instance)
                .values(heartbeat_at=time.time())
            ).rowcount
        return updated == 1

    def live(self) -> set[str]:
        fresh = time.time() - self.timeout_s
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(EXECUTORS.c.executor_id).where(EXECUTORS.c.heartbeat_at >= fresh))
            return {row.executor_id for row in rows}

    def take_over(self) -> list[str]:
        """Hand the PENDING workflows of every executor without a fresh heartbeat back to the queue."""
        assert self.pending_executors is not None and self.recover is not None
        holders = set(self.pending_executors())
        if not holders:
            return []
        dead = sorted(holders - self.live() - {self.executor_id})
        for executor_id in dead:
            count = self.recover([executor_id])
            log.warning("executor_taken_over", dead_executor_id=executor_id, workflows=count,
                        timeout_s=self.timeout_s)
        return dead

    def _lose(self) -> None:
        self.lost = True
        log.error("executor_id_lost", executor_id=self.executor_id,
                  detail="another process took this executor id over after missed heartbeats; stopping")
        os.kill(os.getpid(), signal.SIGTERM)

    def close(self) -> None:
        """After DBOS has stopped: our unfinished workflows are for others to resume at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.lost:
            return
        with self.engine.begin() as conn:
            conn.execute(sa.delete(EXECUTORS).where(EXECUTORS.c.executor_id == self.executor_id,
                                                    EXECUTORS.c.instance == self.instance))
