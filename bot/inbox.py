"""Where an accepted delivery becomes durable before its sender hears 202, at a cost a burst can afford.

DBOS's enqueue spends about a millisecond and a half of Python per delivery: at a burst of webhooks that,
not the disk, sets the acknowledgement time. So the web side writes each delivery as one row of a small
SQLite file of its own (the inbox: no other writer contends for its lock), many requests to one commit,
and a pump in the worker process hands the rows to DBOS's queue afterwards.

A delivery is recorded once: the row's key is the workflow id, so a resent delivery is a duplicate here, and
DBOS's own id check catches one whose row was pruned. A process killed between the inbox commit and the
hand-off loses nothing: the pump hands on every row not marked as handed off when it starts.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from reqgate.bot.logging import get_logger
from reqgate.handlers.base import Trigger

log = get_logger("reqgate.inbox")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id TEXT NOT NULL UNIQUE,
    trigger_json TEXT NOT NULL,
    received_at REAL NOT NULL,
    handed_off_at REAL
);
CREATE INDEX IF NOT EXISTS inbox_waiting ON inbox (seq) WHERE handed_off_at IS NULL;
"""

Waiter = asyncio.Future[bool] | Future[bool]
Record = Callable[[Sequence[Trigger]], list[bool]]


class BatchWriter:
    """One thread that records what concurrent requests submit, a batch per transaction.

    `record(batch)` says for each trigger whether it was new. Each caller learns its own answer only after
    the commit that made it durable. An asyncio caller is answered through its loop, one wake-up per batch
    rather than one per request; a thread waits on a concurrent future.
    """

    MAX_BATCH = 256

    def __init__(self, record: Record, name: str, written: Callable[[], None] | None = None) -> None:
        self._record = record
        self._written = written
        self._pending: queue.SimpleQueue[tuple[Trigger, Waiter] | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    async def submit(self, trigger: Trigger) -> bool:
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.hand_over([(trigger, waiter)])
        return await waiter

    def submit_blocking(self, trigger: Trigger, timeout: float = 60.0) -> bool:
        waiter: Future[bool] = Future()
        self.hand_over([(trigger, waiter)])
        return waiter.result(timeout=timeout)

    def hand_over(self, waiting: Sequence[tuple[Trigger, Waiter]]) -> None:
        """Requests whose waiters already exist, e.g. a batch the event loop could not write itself."""
        if self._closed:
            raise RuntimeError("the writer is closed")
        for item in waiting:
            self._pending.put(item)

    def alive(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        self._closed = True
        self._pending.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            first = self._pending.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < self.MAX_BATCH:
                try:
                    item = self._pending.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._pending.put(None)
                    break
                batch.append(item)
            self._write(batch)

    def _write(self, batch: list[tuple[Trigger, Waiter]]) -> None:
        try:
            outcomes: list[bool | BaseException] = list(self._record([trigger for trigger, _ in batch]))
            if len(outcomes) != len(batch):
                raise RuntimeError(f"{len(outcomes)} answers for a batch of {len(batch)}")
        except Exception as exc:
            log.exception("batch_write_failed", size=len(batch))
            outcomes = [exc] * len(batch)
        else:
            self.notify_written()
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[bool], bool | BaseException]]] = {}
        for (_trigger, waiter), outcome in zip(batch, outcomes, strict=True):
            if isinstance(waiter, asyncio.Future):
                by_loop.setdefault(waiter.get_loop(), []).append((waiter, outcome))
            else:
                _settle(waiter, outcome)
        for loop, settled in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle_all, settled)
            except RuntimeError:  # the loop has closed: nobody is waiting any more
                pass

    def notify_written(self) -> None:
        """Tell whoever waits for new rows (a pump in this process) that a batch was committed."""
        if self._written is None:
            return
        try:
            self._written()
        except Exception:  # the rows are committed: their senders still hear that they were accepted
            log.exception("written_hook_failed")


def _settle(waiter: Waiter, outcome: bool | BaseException) -> None:
    if waiter.done():  # an asyncio request cancelled while it waited (its client went away)
        return
    if isinstance(outcome, BaseException):
        waiter.set_exception(outcome)
    else:
        waiter.set_result(outcome)


def _settle_all(settled: list[tuple[asyncio.Future[bool], bool | BaseException]]) -> None:
    for waiter, outcome in settled:
        _settle(waiter, outcome)


def _fail_all(batch: Sequence[tuple[Trigger, Waiter]], exc: BaseException) -> None:
    for _trigger, waiter in batch:
        _settle(waiter, exc)


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction on an autocommit connection, rolled back on any failure: a transaction left open
    would keep the file's write lock, and every webhook would wait for it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:  # some errors roll back by themselves
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@dataclass(frozen=True)
class Waiting:
    seq: int
    trigger: Trigger


class InboxFile:
    """The SQLite file of accepted deliveries. `record` runs on the writer thread and `record_at_once` on the
    event loop's, in the web process; the rest on the pump's, in the worker process."""

    ROWS_PER_STATEMENT = 1000  # three parameters a row, well under SQLite's limit of 32,766

    def __init__(self, path: Path, synchronous: str = "NORMAL") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.synchronous = synchronous
        with closing(self._connect()) as conn:
            conn.executescript(_SCHEMA)
        self._local = threading.local()
        self._at_once: sqlite3.Connection | None = None

    def _connect(self, busy_timeout_s: float = 30.0, same_thread: bool = True) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                               check_same_thread=same_thread)
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode keeps every commit across a killed process; only an OS crash can lose the last.
        conn.execute(f"PRAGMA synchronous={self.synchronous}")
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def record_at_once(self, triggers: Sequence[Trigger]) -> list[bool] | None:
        """`record` for the event loop's thread, which must not wait: None when another writer holds the file
        (the caller hands the batch to the writer thread, which waits its turn). This connection never runs
        a checkpoint, the one write that waits for the disk; the other connections do."""
        if self._at_once is None:
            # Used only by the loop's thread; closed at shutdown from another.
            self._at_once = self._connect(busy_timeout_s=0, same_thread=False)
            self._at_once.execute("PRAGMA wal_autocheckpoint=0")
        try:
            return self.record(triggers, self._at_once)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                return None
            raise

    def record(self, triggers: Sequence[Trigger], conn: sqlite3.Connection | None = None) -> list[bool]:
        """One statement per batch: per-row statements cost more Python than the insert itself."""
        conn = conn or self._conn()
        now = time.time()
        inserted: set[str] = set()
        with _transaction(conn):  # all of the batch or none of it, whatever the number of statements
            for start in range(0, len(triggers), self.ROWS_PER_STATEMENT):
                chunk = triggers[start:start + self.ROWS_PER_STATEMENT]
                placeholders = ",".join(["(?, ?, ?)"] * len(chunk))
                params = [value for t in chunk for value in (t.workflow_id, t.model_dump_json(), now)]
                inserted.update(row[0] for row in conn.execute(
                    f"INSERT INTO inbox (workflow_id, trigger_json, received_at) VALUES {placeholders} "
                    "ON CONFLICT (workflow_id) DO NOTHING RETURNING workflow_id", params,
                ).fetchall())
        fresh: list[bool] = []
        for trigger in triggers:
            # A delivery sent twice within one batch: only its first occurrence is new.
            fresh.append(trigger.workflow_id in inserted)
            inserted.discard(trigger.workflow_id)
        return fresh

    def waiting(self, limit: int) -> list[Waiting]:
        rows = self._conn().execute(
            "SELECT seq, trigger_json FROM inbox WHERE handed_off_at IS NULL ORDER BY seq LIMIT ?", (limit,)
        ).fetchall()
        return [Waiting(seq, Trigger.model_validate_json(text)) for seq, text in rows]

    def waiting_count(self) -> int:
        # Read at a metrics scrape, from whichever thread serves it: a connection of its own, closed after.
        with closing(self._connect()) as conn:
            return int(conn.execute("SELECT count(*) FROM inbox WHERE handed_off_at IS NULL").fetchone()[0])

    def mark_handed_off(self, seqs: Sequence[int]) -> None:
        conn = self._conn()
        with _transaction(conn):
            conn.executemany("UPDATE inbox SET handed_off_at = ? WHERE seq = ?", [(time.time(), s) for s in seqs])

    def prune(self, older_than_s: float) -> int:
        """Forget handed-off rows past the window in which a sender redelivers (GitHub: three days)."""
        conn = self._conn()
        cursor = conn.execute("DELETE FROM inbox WHERE handed_off_at IS NOT NULL AND handed_off_at < ?",
                              (time.time() - older_than_s,))
        return cursor.rowcount

    def close(self) -> None:
        """Closes the event loop's connection and the calling thread's."""
        if self._at_once is not None:
            self._at_once.close()
            self._at_once = None
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class Pump:
    """Hands inbox rows to the durable queue, oldest first, in batches.

    It runs in the process that runs the reviews, not in the one that answers webhooks: its work (and the
    workers') would otherwise compete with the acknowledgements for the interpreter. It looks for rows every
    `poll_s`, or at once when `wake` is set by a writer in the same process.
    """

    BATCH = 32
    PRUNE_EVERY_S = 3600.0
    KEEP_S = 7 * 24 * 3600.0

    def __init__(self, inbox: InboxFile, hand_off: Record, poll_s: float = 0.2) -> None:
        self.inbox = inbox
        self.hand_off = hand_off
        self.poll_s = poll_s
        self.wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reqgate-inbox-pump", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self.wake.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        last_prune: float | None = None
        try:
            while not self._stop.is_set():
                if last_prune is None or time.monotonic() - last_prune > self.PRUNE_EVERY_S:
                    self._safely(lambda: self.inbox.prune(self.KEEP_S))
                    last_prune = time.monotonic()
                if not self._safely(self._pump_once):
                    self.wake.wait(self.poll_s)
                    self.wake.clear()
        finally:
            self.inbox.close()

    def _pump_once(self) -> int:
        rows = self.inbox.waiting(self.BATCH)
        if not rows:
            return 0
        fresh = self.hand_off([row.trigger for row in rows])
        self.inbox.mark_handed_off([row.seq for row in rows])
        for row, is_new in zip(rows, fresh, strict=True):
            if not is_new:
                log.info("inbox_already_queued", workflow_id=row.trigger.workflow_id)
        return len(rows)

    def _safely(self, action: Callable[[], int]) -> int:
        try:
            return action()
        except Exception:
            log.exception("inbox_pump_failed")
            self._stop.wait(1.0)
            return 0


class Intake:
    """The web side's half of durable work: the `Dispatcher` of bot/app.py.

    With SQLite it records into the inbox (a pump in the worker process hands the rows on); with a server
    database, whose web replicas keep nothing on their own disk, it enqueues each batch directly through
    `enqueue_batch` (the web process then runs DBOS without workers).

    The inbox is written from the event loop itself, once per turn of the loop for all the requests that
    arrived in it: a commit without fsync (WAL, synchronous NORMAL) takes tens of microseconds, less than
    handing each request to a thread and back, which at a burst cost more than the rest of the request. When
    another writer holds the file, or every commit must reach the disk (FULL), the writer thread does it.
    """

    def __init__(self, inbox: InboxFile | None, enqueue_batch: Record | None = None,
                 written: Callable[[], None] | None = None) -> None:
        if inbox is not None:
            self.inbox: InboxFile | None = inbox
            self.writer = BatchWriter(inbox.record, name="reqgate-inbox", written=written)
        elif enqueue_batch is not None:
            self.inbox = None
            self.writer = BatchWriter(enqueue_batch, name="reqgate-enqueue")
        else:
            raise ValueError("an intake needs an inbox or a way to enqueue")
        self._at_once = inbox is not None and inbox.synchronous == "NORMAL"
        self._turn: list[tuple[Trigger, asyncio.Future[bool]]] = []

    async def accept(self, trigger: Trigger) -> bool:
        if not self._at_once:
            return await self.writer.submit(trigger)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        if not self._turn:
            loop.call_soon(self._record_turn)
        self._turn.append((trigger, waiter))
        return await waiter

    def _record_turn(self) -> None:
        batch, self._turn = self._turn, []
        assert self.inbox is not None
        try:
            fresh = self.inbox.record_at_once([trigger for trigger, _ in batch])
        except Exception as exc:  # every waiting request must hear about the failure, before anything else can fail
            _fail_all(batch, exc)
            log.exception("inbox_write_failed", size=len(batch))
            return
        if fresh is None:
            try:
                self.writer.hand_over(batch)
            except RuntimeError as exc:  # shutting down
                _fail_all(batch, exc)
            return
        self.writer.notify_written()
        for (_trigger, waiter), is_new in zip(batch, fresh, strict=True):
            _settle(waiter, is_new)

    def enqueue(self, trigger: Trigger) -> bool:
        return self.writer.submit_blocking(trigger)

    def ready(self) -> str | None:
        return None if self.writer.alive() else "the delivery writer has stopped"

    def waiting(self) -> int:
        return self.inbox.waiting_count() if self.inbox is not None else 0

    def close(self) -> None:
        self.writer.close()
        if self.inbox is not None:
            self.inbox.close()
