"""Durable execution with DBOS Transact: the only module that imports `dbos`.

One workflow per delivery, its id `<source>:<delivery id>`, so a delivery enqueued twice runs once. The
queue is partitioned by ticket with one workflow at a time per partition: two quick events for one ticket
run one after the other, different tickets in parallel. A worker takes up to `reviews_in_flight` of them at
once; their LLM requests go `worker_concurrency` at a time (bot/llm_slots.py). Each I/O is a checkpointed
step (bot/steps.py); on launch DBOS recovers the workflows this executor left unfinished and resumes them
after their last recorded step; those of an executor that never comes back are resumed by the others
(bot/executors.py).

DBOS resumes only workflows of its own application version, by default a hash of the workflow's source:
any edit of it would strand every in-flight review at an upgrade. The version is ours instead,
`APP_VERSION`, bumped only when the sequence of steps changes in a way that an in-flight review recorded by
the old code cannot replay (a step added, removed or reordered before the last one; a step's recorded
value read differently). Reviews recorded under an older version stay PENDING and are listed at launch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, DBOSConfig, EnqueueOptions
from dbos import error as dbos_error

from reqgate.bot import flow
from reqgate.bot.executors import Registry, default_executor_id
from reqgate.bot.inbox import InboxFile, Pump
from reqgate.bot.logging import bind, get_logger
from reqgate.bot.settings import Settings
from reqgate.bot.state import sqlalchemy_url
from reqgate.bot.steps import Services
from reqgate.handlers.base import Trigger

# 2: a fresh review writes its labels between call 1 and call 2 (after call 2 in 1).
APP_VERSION = "reqgate-flow-2"
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


def _enqueue_all(client: DBOSClient, engine: sa.Engine, triggers: Sequence[Trigger]) -> list[bool]:
    """Enqueue a batch in one transaction; False for each whose workflow id is already taken."""
    fresh: list[bool] = []
    with engine.begin() as conn:
        for trigger in triggers:
            options: EnqueueOptions = {
                "workflow_name": WORKFLOW_NAME,
                "queue_name": QUEUE_NAME,
                "workflow_id": trigger.workflow_id,
                "workflow_id_reuse_policy": "reject",
                "queue_partition_key": trigger.ref.queue_key,
            }
            try:
                client.enqueue_in_transaction(conn, options, trigger.model_dump(mode="json"))
                fresh.append(True)
            except dbos_error.DBOSWorkflowIDInUseError:
                fresh.append(False)
    return fresh


class Engine:
    """The DBOS runtime of this process (a process has one): the queue workers and, with SQLite, the inbox pump.

    `launch(workers=False)` is for a web process on a server database: it enqueues through DBOS (bot/app.py
    answers only after that commit) but runs no workflow.
    """

    def __init__(self, settings: Settings, services: Services) -> None:
        self.settings = settings
        self.services = services
        self._launched = False
        self._workers = False
        self._pump: Pump | None = None
        self._enqueue: Callable[[Sequence[Trigger]], list[bool]] | None = None
        self.registry: Registry | None = None

    def claim_executor(self, workers: bool) -> None:
        """Take this process's executor id (bot/executors.py), before DBOS launches: its start-up recovery
        would re-run the work of a live twin with the same id. Raises `ExecutorIdInUse`."""
        self.registry = Registry(
            self.services.state.engine, self.executor_id, "worker" if workers else "web",
            self.settings.executor_timeout_s,
            pending_executors=_pending_executors if workers else None,
            recover=_recover if workers else None,
        )
        self.registry.claim()

    @property
    def executor_id(self) -> str:
        return self.settings.executor_id or default_executor_id()

    def launch(self, workers: bool = True) -> None:
        global _services
        _services = self.services
        self.services.durable_sleep = DBOS.sleep
        # The state store (bot/state.py) has already created the SQLite file, its folder and its WAL mode.
        url = self.settings.system_database_url()
        config: DBOSConfig = {"name": "reqgate", "system_database_url": url, "log_level": "WARNING",
                              "application_version": APP_VERSION, "executor_id": self.executor_id}
        if self.settings.uses_sqlite:
            engine = _sqlite_engine(url, self.settings.sqlite_synchronous)
            config["system_database_engine"] = engine
        else:
            engine = sa.create_engine(sqlalchemy_url(url), pool_size=5, pool_pre_ping=True)
        if self.registry is None:
            self.claim_executor(workers)
        assert self.registry is not None
        DBOS(config=config)
        if not workers:
            DBOS.listen_queues([])
        DBOS.launch()
        _log_stranded_versions()
        self.registry.start()
        DBOS.register_queue(
            QUEUE_NAME,
            partition_concurrency=1,
            # More reviews than LLM slots: one waiting for a write slot must not keep the LLM idle.
            worker_concurrency=self.settings.reviews_in_flight,
            polling_interval_sec=self.settings.queue_poll_s,
            on_conflict="always_update",
        )
        self._enqueue = partial(_enqueue_all, DBOSClient(system_database_engine=engine, application_name="reqgate"),
                                engine)
        inbox_path = self.settings.inbox_path()
        if workers and inbox_path is not None:
            self._pump = Pump(InboxFile(inbox_path, self.settings.sqlite_synchronous), self._enqueue,
                              poll_s=min(self.settings.queue_poll_s, 0.25))
            self._pump.start()
        self._launched = True
        self._workers = workers
        log.info("engine_launched", workers=workers, queue=QUEUE_NAME,
                 reviews_in_flight=self.settings.reviews_in_flight,
                 llm_requests_at_once=self.settings.worker_concurrency,
                 database="sqlite" if self.settings.uses_sqlite else "postgres")

    def enqueue_batch(self, triggers: Sequence[Trigger]) -> list[bool]:
        if self._enqueue is None:
            raise RuntimeError("the workflow engine is not launched")
        return self._enqueue(triggers)

    def wake_pump(self) -> None:
        if self._pump is not None:
            self._pump.wake.set()

    def ready(self) -> str | None:
        if not self._launched:
            return "the workflow engine is not launched"
        if self._workers and not self.workers_running():
            return "the queue worker is not running"
        if self._pump is not None and not self._pump.alive():
            return "the inbox pump has stopped"
        return None

    @staticmethod
    def workers_running() -> bool:
        # DBOS names the thread that dequeues a queue after it; it is the only sign that workers poll.
        return any(t.name == f"queue-worker-{QUEUE_NAME}" and t.is_alive() for t in threading.enumerate())

    def shutdown(self) -> None:
        global _services
        if self._pump is not None:
            self._pump.stop()
            self._pump = None
        if self._launched:
            DBOS.destroy(workflow_completion_timeout_sec=5)
            self._launched = False
        if self.registry is not None:
            self.registry.close()
            self.registry = None
        _services = None


def _pending_executors() -> set[str]:
    """Executors holding PENDING workflows of ours, of this application version (others cannot be resumed)."""
    pending = DBOS.list_workflows(status="PENDING", app_version=APP_VERSION, name=WORKFLOW_NAME,
                                  load_input=False, load_output=False)
    return {status.executor_id for status in pending if status.executor_id}


def _recover(executor_ids: list[str]) -> int:
    return len(DBOS._recover_pending_workflows(executor_ids))  # noqa: SLF001 - the call DBOS Conductor makes


def _log_stranded_versions() -> None:
    """Unfinished reviews recorded by an incompatible older version: they need a person (README)."""
    older = [status for status in DBOS.list_workflows(status="PENDING", name=WORKFLOW_NAME, load_input=False,
                                                      load_output=False)
             if status.app_version and status.app_version != APP_VERSION]
    if older:
        log.error("workflows_of_older_version", count=len(older), current=APP_VERSION,
                  versions=sorted({status.app_version or "" for status in older}))


class QueueReader:
    """Counts the workflows waiting in the queue with a client of its own, made at the first scrape and kept:
    the process asking may run no DBOS runtime."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: DBOSClient | None = None

    def _dbos(self) -> DBOSClient:
        if self._client is None:
            self._client = DBOSClient(system_database_url=self.settings.system_database_url(),
                                      application_name="reqgate")
        return self._client

    def queued(self) -> int:
        waiting = self._dbos().list_queued_workflows(queue_name=QUEUE_NAME, status="ENQUEUED", load_input=False,
                                                     load_output=False)
        return len(waiting)

    def oldest_unfinished_age(self) -> float:
        """Seconds since the oldest delivery still queued or running was accepted; 0 when there is none. A
        value that keeps growing is a review that nothing is working on."""
        oldest = self._dbos().list_workflows(queue_name=QUEUE_NAME, status=["ENQUEUED", "PENDING"], limit=1,
                                             sort_desc=False, load_input=False, load_output=False)
        if not oldest or oldest[0].created_at is None:
            return 0.0
        return max(0.0, time.time() - oldest[0].created_at / 1000)

    def close(self) -> None:
        if self._client is not None:
            self._client.destroy()
            self._client = None
