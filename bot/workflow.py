"""Durable execution with DBOS Transact: the only module that imports `dbos`.

One workflow per delivery, its id `<source>:<delivery id>`, so a delivery enqueued twice runs once. The
queue is partitioned by ticket with one workflow at a time per partition: two quick events for one ticket
run one after the other, different tickets in parallel. Each I/O is a checkpointed step (bot/steps.py);
on launch DBOS recovers the workflows this executor left unfinished and resumes them after their last
recorded step.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, DBOSConfig, EnqueueOptions
from dbos import error as dbos_error

from bot import flow
from bot.logging import bind, get_logger
from bot.settings import Settings
from bot.state import sqlalchemy_url
from bot.steps import Services
from handlers.base import Trigger

QUEUE_NAME = "reqgate-deliveries"
WORKFLOW_NAME = "reqgate.delivery"
# A delivery whose replay keeps killing the process stops being retried after this many recoveries.
MAX_RECOVERY_ATTEMPTS = 10

log = get_logger("reqgate.workflow")
_services: Services | None = None


def _checkpoint(name: str, fn: Any) -> Any:
    return DBOS.run_step({"name": name}, fn)


@DBOS.workflow(name=WORKFLOW_NAME, max_recovery_attempts=MAX_RECOVERY_ATTEMPTS)
def delivery_workflow(trigger_json: dict[str, Any]) -> dict[str, Any]:
    trigger = Trigger.model_validate(trigger_json)
    if _services is None:
        raise RuntimeError("the workflow engine was launched without services")
    with bind(delivery_id=trigger.delivery_id, workflow_id=trigger.workflow_id, source=trigger.source,
              project=trigger.ref.project, issue=trigger.ref.key):
        outcome = flow.run(trigger, _services, _checkpoint)
        log.info("delivery_done", status=outcome.status, verdict=outcome.verdict, detail=outcome.detail)
        return outcome.model_dump(mode="json")


def _sqlite_engine(url: str, synchronous: str) -> sa.Engine:
    """DBOS's own SQLite connection settings (IMMEDIATE transactions so writers queue up instead of
    deadlocking, a long busy timeout, foreign keys), with the fsync policy ours to choose.

    In WAL mode `NORMAL` keeps every commit across a killed process; only an OS crash or a power cut can take
    back the last few. It spares an fsync on every enqueue, which is most of a webhook's acknowledgement time.
    """
    engine = sa.create_engine(url, pool_size=20, max_overflow=20, pool_timeout=30)

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = "IMMEDIATE"
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        dbapi_conn.execute("PRAGMA foreign_keys=ON")
        dbapi_conn.execute(f"PRAGMA synchronous={synchronous}")

    return engine


class _GroupCommit:
    """Enqueues from concurrent requests, written in batches of one transaction each.

    A webhook's acknowledgement is mostly the commit of its enqueue. One thread takes whatever requests are
    waiting and enqueues them all in a single transaction through DBOS's client, so a burst pays one commit
    (and one turn at SQLite's single writer lock) instead of one per delivery. Each request still learns
    whether its own delivery was new or a duplicate, and only after the commit that made it durable.
    """

    MAX_BATCH = 128

    def __init__(self, client: DBOSClient, engine: sa.Engine) -> None:
        self.client = client
        self.engine = engine
        self.pending: queue.Queue[tuple[Trigger, Future[bool]] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="reqgate-enqueue", daemon=True)
        self.thread.start()

    def submit(self, trigger: Trigger) -> bool:
        future: Future[bool] = Future()
        self.pending.put((trigger, future))
        return future.result(timeout=60)

    def close(self) -> None:
        self.pending.put(None)
        self.thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            first = self.pending.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < self.MAX_BATCH:
                try:
                    item = self.pending.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self.pending.put(None)
                    break
                batch.append(item)
            self._write(batch)

    def _write(self, batch: list[tuple[Trigger, Future[bool]]]) -> None:
        fresh: list[bool] = []
        try:
            with self.engine.begin() as conn:
                for trigger, _future in batch:
                    options: EnqueueOptions = {
                        "workflow_name": WORKFLOW_NAME,
                        "queue_name": QUEUE_NAME,
                        "workflow_id": trigger.workflow_id,
                        "workflow_id_reuse_policy": "reject",
                        "queue_partition_key": trigger.ref.queue_key,
                    }
                    try:
                        self.client.enqueue_in_transaction(conn, options, trigger.model_dump(mode="json"))
                        fresh.append(True)
                    except dbos_error.DBOSWorkflowIDInUseError:
                        fresh.append(False)
        except Exception as exc:  # noqa: BLE001 - every waiting request must hear about the failure
            for _trigger, future in batch:
                future.set_exception(exc)
            return
        for (_trigger, future), is_new in zip(batch, fresh, strict=True):
            future.set_result(is_new)


class Engine:
    """The DBOS runtime of this process (a process has one): the `Dispatcher` of bot/app.py."""

    def __init__(self, settings: Settings, services: Services) -> None:
        self.settings = settings
        self.services = services
        self._launched = False
        self._enqueuer: _GroupCommit | None = None

    def launch(self) -> None:
        global _services
        _services = self.services
        # The state store (bot/state.py) has already created the SQLite file, its folder and its WAL mode.
        url = self.settings.system_database_url()
        config: DBOSConfig = {"name": "reqgate", "system_database_url": url, "log_level": "WARNING"}
        if self.settings.uses_sqlite:
            engine = _sqlite_engine(url, self.settings.sqlite_synchronous)
            config["system_database_engine"] = engine
        else:
            engine = sa.create_engine(sqlalchemy_url(url), pool_size=5, pool_pre_ping=True)
        if self.settings.executor_id:
            config["executor_id"] = self.settings.executor_id
        DBOS(config=config)
        if self.settings.role == "web":
            DBOS.listen_queues([])
        DBOS.launch()
        DBOS.register_queue(
            QUEUE_NAME,
            partition_concurrency=1,
            worker_concurrency=self.settings.worker_concurrency,
            polling_interval_sec=self.settings.queue_poll_s,
            on_conflict="always_update",
        )
        self._enqueuer = _GroupCommit(DBOSClient(system_database_engine=engine, application_name="reqgate"),
                                      engine)
        self._launched = True
        log.info("engine_launched", role=self.settings.role, queue=QUEUE_NAME,
                 database="sqlite" if self.settings.uses_sqlite else "postgres")

    def enqueue(self, trigger: Trigger) -> bool:
        if self._enqueuer is None:
            raise RuntimeError("the workflow engine is not launched")
        return self._enqueuer.submit(trigger)

    def ready(self) -> str | None:
        if not self._launched:
            return "the workflow engine is not launched"
        try:
            self.services.state.ping()
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            return f"the database is not reachable ({type(exc).__name__})"
        if self.settings.role != "web" and not self.workers_running():
            return "the queue worker is not running"
        return None

    @staticmethod
    def workers_running() -> bool:
        # DBOS names the thread that dequeues a queue after it; it is the only sign that workers poll.
        return any(t.name == f"queue-worker-{QUEUE_NAME}" and t.is_alive() for t in threading.enumerate())

    @staticmethod
    def queue_depth() -> int:
        waiting = DBOS.list_queued_workflows(queue_name=QUEUE_NAME, status="ENQUEUED", load_input=False,
                                             load_output=False)
        return len(waiting)

    def shutdown(self) -> None:
        global _services
        if self._enqueuer is not None:
            self._enqueuer.close()
            self._enqueuer = None
        if self._launched:
            DBOS.destroy(workflow_completion_timeout_sec=5)
            self._launched = False
        _services = None
