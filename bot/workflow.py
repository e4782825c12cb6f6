"""Durable execution with DBOS Transact: the only module that imports `dbos`.

One workflow per delivery, its id `<source>:<delivery id>`, so a delivery enqueued twice runs once. The
queue is partitioned by ticket with one workflow at a time per partition: two quick events for one ticket
run one after the other, different tickets in parallel. Each I/O is a checkpointed step (bot/steps.py);
on launch DBOS recovers the workflows this executor left unfinished and resumes them after their last
recorded step.
"""

from __future__ import annotations

import contextlib
import threading
from contextlib import AbstractContextManager
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSConfig, SetEnqueueOptions, SetWorkflowID
from dbos import error as dbos_error

from bot import flow
from bot.logging import bind, get_logger
from bot.settings import Settings
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


class Engine:
    """The DBOS runtime of this process (a process has one): the `Dispatcher` of bot/app.py."""

    def __init__(self, settings: Settings, services: Services) -> None:
        self.settings = settings
        self.services = services
        self._launched = False
        # SQLite lets one writer in at a time and makes the others sleep-poll for the lock, which is unfair and
        # coarse (tens of ms per retry): concurrent requests queue here instead, and hand over at once.
        self._write_lock: AbstractContextManager[Any] = (
            threading.Lock() if settings.uses_sqlite else contextlib.nullcontext()
        )

    def launch(self) -> None:
        global _services
        _services = self.services
        # The state store (bot/state.py) has already created the SQLite file, its folder and its WAL mode.
        url = self.settings.system_database_url()
        config: DBOSConfig = {"name": "reqgate", "system_database_url": url, "log_level": "WARNING"}
        if self.settings.uses_sqlite:
            config["system_database_engine"] = _sqlite_engine(url, self.settings.sqlite_synchronous)
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
        self._launched = True
        log.info("engine_launched", role=self.settings.role, queue=QUEUE_NAME,
                 database="sqlite" if self.settings.uses_sqlite else "postgres")

    def enqueue(self, trigger: Trigger) -> bool:
        with (
            self._write_lock,
            SetWorkflowID(trigger.workflow_id, workflow_id_reuse_policy="reject"),
            SetEnqueueOptions(queue_partition_key=trigger.ref.ticket_id),
        ):
            try:
                DBOS.enqueue_workflow(QUEUE_NAME, delivery_workflow, trigger.model_dump(mode="json"))
            except dbos_error.DBOSWorkflowIDInUseError:
                return False
        return True

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
        if self._launched:
            DBOS.destroy(workflow_completion_timeout_sec=5)
            self._launched = False
        _services = None
