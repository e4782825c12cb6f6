"""Builds the process from its settings: trackers, webhook sources, the workflow engine and the web app."""

from __future__ import annotations

import gc
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool

from reqgate.bot import metrics
from reqgate.bot.app import create_app
from reqgate.bot.credentials import CredentialChecks, github_app_key_problem
from reqgate.bot.inbox import InboxFile, Intake
from reqgate.bot.llm_slots import LLMSlots
from reqgate.bot.logging import get_logger
from reqgate.bot.pacing import WritePacer
from reqgate.bot.redeliver import LEASE_KEY, RedeliveryJob, accepted_by, redeliver_missed, workflow_ids
from reqgate.bot.settings import Settings
from reqgate.bot.sources import GitHubSource, JiraSource, WebhookSource
from reqgate.bot.state import StateStore
from reqgate.bot.steps import OutageRetry, Services
from reqgate.bot.worker_process import WorkerProcess
from reqgate.bot.workflow import Engine, QueueReader
from reqgate.handlers.base import TicketRef, Tracker, Trigger
from reqgate.handlers.github.client import ClientOptions, GitHubAuth
from reqgate.handlers.github.tracker import GitHubTracker
from reqgate.handlers.github.webhook import BotIdentity
from reqgate.handlers.jira.tracker import JiraTracker
from reqgate.handlers.jira.webhook import JiraIdentity
from reqgate.pipeline.config import Config
from reqgate.pipeline.llm import LLMPool
from reqgate.pipeline.records import prepare_validators
from reqgate.pipeline.schemas import RenderOutcome, ReviewResult, StructureOutcome, StructureOutput

log = get_logger("reqgate.wiring")
I = TypeVar("I")
IDENTITY_RETRY_S = 30.0


@dataclass
class Identity(Generic[I]):
    """The bot's own account, resolved in the background so that no webhook request waits on the tracker.

    Until it is known the fallback is used (an App's id recognises the App's comments on GitHub; the review
    marker recognises the sticky comment everywhere), and resolution is retried."""

    resolve: Callable[[], I]
    current: I
    source: str
    resolved: threading.Event = field(default_factory=threading.Event)
    # Told every attempt's outcome (None, or the exception): a refused credential makes the process unready.
    credentials: CredentialChecks | None = None

    def get(self) -> I:
        return self.current

    def start(self, stop: threading.Event) -> None:
        def loop() -> None:
            while not stop.is_set():
                try:
                    self.current = self.resolve()
                    self.resolved.set()
                    if self.credentials is not None:
                        self.credentials.observe(self.source, None)
                    log.info("identity_resolved", source=self.source)
                    return
                except Exception as exc:  # noqa: BLE001 - any failure is retried; the fallback stays in use
                    if self.credentials is not None:
                        self.credentials.observe(self.source, exc)
                    log.warning("identity_unresolved", source=self.source, error=type(exc).__name__,
                                retry_s=IDENTITY_RETRY_S)
                stop.wait(IDENTITY_RETRY_S)

        threading.Thread(target=loop, name=f"identity-{self.source}", daemon=True).start()


@dataclass
class Runtime:
    """What one process runs, by role: `worker` runs the reviews; `web` takes webhooks; `all` takes webhooks
    and runs the reviews, in a child process when the database is a SQLite file (bot/worker_process.py)."""

    settings: Settings
    services: Services
    engine: Engine
    sources: list[WebhookSource]
    identities: list[Identity]  # type: ignore[type-arg]
    # The pool behind `services.llm_factory`: warmed at launch where reviews run, closed at shutdown.
    llm_pool: LLMPool
    credentials: CredentialChecks = field(default_factory=CredentialChecks)
    stop: threading.Event = field(default_factory=threading.Event)
    intake: Intake | None = None
    worker_process: WorkerProcess | None = None
    engine_here: bool = False
    queue_reader: QueueReader | None = None
    redelivery: RedeliveryJob | None = None

    def app(self) -> Starlette:
        return create_app(self.sources, self, max_body_bytes=self.settings.max_body_bytes,
                          lifespan=self._lifespan, details=self._details)

    def _details(self) -> dict[str, Any]:
        # Informational, not a readiness condition: until the identity is known a fallback is used.
        details: dict[str, Any] = {"identities": {i.source: i.resolved.is_set() for i in self.identities}}
        details.update(self._oldest_unfinished())
        return details

    def _oldest_unfinished(self) -> dict[str, Any]:
        """A stranded review is no reason to take this process out of service, but it should be seen."""
        if self.queue_reader is None:
            return {}
        try:
            return {"oldest_unfinished_review_s": round(self.queue_reader.oldest_unfinished_age(), 1)}
        except Exception as exc:  # noqa: BLE001 - informational: a failed read is shown, not raised
            return {"oldest_unfinished_review_s": None, "oldest_unfinished_error": type(exc).__name__}

    def start(self) -> None:
        settings = self.settings
        inbox_path = settings.inbox_path()
        workers_here = _workers_here(settings)
        self.engine_here = _engine_here(settings)
        if workers_here:
            self.llm_pool.warm()
            prepare_validators(ReviewResult, StructureOutput, StructureOutcome, RenderOutcome, Config)
        if self.engine_here:
            self.engine.launch(workers=workers_here)
        if settings.role != "worker":
            if inbox_path is not None:
                self.intake = Intake(InboxFile(inbox_path, settings.sqlite_synchronous))
            else:
                self.intake = Intake(None, enqueue_batch=self.engine.enqueue_batch)
        if settings.workers_in_child:
            self.worker_process = WorkerProcess()
            self.worker_process.start()
        self.queue_reader = QueueReader(settings)
        metrics.observe_queue_depth(self.queue_depth)
        metrics.observe_oldest_unfinished(self.queue_reader.oldest_unfinished_age)
        for identity in self.identities:
            identity.start(self.stop)
        if workers_here and settings.github_app_configured and settings.redeliver_interval_s > 0:
            self.redelivery = _redelivery_job(settings, WritePacer(self.services.state.engine))
            self.redelivery.start()

    async def accept(self, trigger: Trigger) -> bool:
        if self.intake is None:
            raise RuntimeError("this process does not take deliveries")
        return await self.intake.accept(trigger)

    def ready(self) -> str | None:
        try:
            self.services.state.ping()
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            return f"the database is not reachable ({type(exc).__name__})"
        parts = (self.intake, self.worker_process, self.engine if self.engine_here else None)
        for part in parts:
            missing = part.ready() if part is not None else None
            if missing:
                return missing
        credentials = self.credentials.problem()
        return f"a tracker credential cannot be used: {credentials}" if credentials else None

    def queue_depth(self) -> int:
        queued = self.queue_reader.queued() if self.queue_reader is not None else 0
        return queued + (self.intake.waiting() if self.intake is not None else 0)

    def close(self) -> None:
        self.stop.set()
        if self.redelivery is not None:
            self.redelivery.stop()
        if self.intake is not None:
            self.intake.close()
        if self.worker_process is not None:
            self.worker_process.stop()
        if self.queue_reader is not None:
            self.queue_reader.close()
        self.engine.shutdown()
        self.llm_pool.close()
        for tracker in self.services.trackers.values():
            close = getattr(tracker, "close", None)
            if close is not None:
                close()
        self.services.state.close()

    @asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        await run_in_threadpool(self.start)
        # Everything loaded so far (modules, DBOS, the trackers' clients) lives as long as the process. Out
        # of the collector's sight, a full collection no longer walks it: that walk stalled every request
        # for ~70 ms in the middle of a burst of webhooks.
        gc.freeze()
        try:
            yield
        finally:
            await run_in_threadpool(self.close)


def _github(settings: Settings, credentials: CredentialChecks) -> tuple[GitHubTracker, Identity[BotIdentity]]:
    if settings.github_app_configured:
        pem = settings.github_private_key_pem()
        problem = github_app_key_problem(pem)
        if problem is not None:
            credentials.found("github_app_key", problem)
            log.error("credential_unusable", source="github", problem=problem)
        auth = GitHubAuth(app_id=settings.github_app_id, private_key=pem)
    else:
        auth = GitHubAuth(token=settings.github_token)
    hint = BotIdentity(app_id=settings.github_app_id)
    tracker = GitHubTracker(
        auth, api_url=settings.github_api_url, identity=hint,
        options=ClientOptions(seconds_between_writes=settings.write_spacing_s),
        on_rate_limit_wait=metrics.RATE_LIMIT_WAIT.inc,
    )
    return tracker, Identity(resolve=tracker.identity, current=hint, source="github", credentials=credentials)


def _jira(settings: Settings, credentials: CredentialChecks) -> tuple[JiraTracker, Identity[JiraIdentity]]:
    assert settings.jira_url is not None
    tracker = JiraTracker(
        settings.jira_url,
        email=settings.jira_email,
        api_token=settings.jira_api_token.get_secret_value() if settings.jira_api_token else None,
        pat=settings.jira_pat.get_secret_value() if settings.jira_pat else None,
        config_dir=settings.jira_config_dir,
    )
    return tracker, Identity(resolve=tracker.identity, current=JiraIdentity(), source="jira",
                             credentials=credentials)


def _redelivery_job(settings: Settings, pacer: WritePacer) -> RedeliveryJob:
    """GitHub App mode: missed deliveries asked for again (bot/redeliver.py), by one worker per interval."""
    from dbos import DBOS

    from reqgate.handlers.github.deliveries import AppDeliveries

    key = settings.github_private_key_pem()
    assert settings.github_app_id is not None and key is not None
    deliveries = AppDeliveries(settings.github_app_id, key, api_url=settings.github_api_url)
    accepted = accepted_by(workflow_ids(DBOS))
    return RedeliveryJob(
        run=lambda: redeliver_missed(deliveries, settings.redeliver_lookback_s, accepted),
        take_turn=lambda: pacer.claim_turn(LEASE_KEY, settings.redeliver_interval_s),
        interval_s=settings.redeliver_interval_s,
    )


def _workers_here(settings: Settings) -> bool:
    return settings.role == "worker" or (settings.role == "all" and not settings.workers_in_child)


def _engine_here(settings: Settings) -> bool:
    # Without an inbox file the web side enqueues through DBOS itself, so it needs the runtime too.
    return _workers_here(settings) or settings.inbox_path() is None


def pacing_key(ref: TicketRef, jira_url: str | None) -> str:
    """What a tracker paces writes by: GitHub per App installation (or per token), Jira per site."""
    if ref.source == "github":
        return f"github:installation:{ref.installation_id}" if ref.installation_id else "github:token"
    return f"jira:{jira_url}"


def _pacing(settings: Settings, pacer: WritePacer) -> Callable[[TicketRef, int], None]:
    spacing = {"github": settings.write_spacing_s, "jira": settings.jira_write_spacing_s}

    def pace(ref: TicketRef, writes: int) -> None:
        waited = pacer.wait(pacing_key(ref, settings.jira_url), spacing.get(ref.source, 0.0), writes)
        if waited:
            metrics.RATE_LIMIT_WAIT.inc(waited)

    return pace


def llm_pool_for(settings: Settings) -> LLMPool:
    """The process's LLM connections, with `worker_concurrency` requests at a time (bot/llm_slots.py)."""
    return LLMPool(gate=LLMSlots(settings.worker_concurrency).hold)


def build(settings: Settings) -> Runtime:
    """Everything but the launch (the app's lifespan launches it, in the process that serves)."""
    trackers: dict[str, Tracker] = {}
    sources: list[WebhookSource] = []
    identities: list[Identity] = []  # type: ignore[type-arg]
    credentials = CredentialChecks()
    serves_webhooks = settings.role != "worker"
    if settings.github_enabled:
        github, github_identity = _github(settings, credentials)
        trackers["github"] = github
        if serves_webhooks:
            secret = settings.github_webhook_secret.get_secret_value() if settings.github_webhook_secret else None
            sources.append(GitHubSource(secret=secret, identity=github_identity.get))
            identities.append(github_identity)
    if settings.jira_enabled:
        jira, jira_identity = _jira(settings, credentials)
        trackers["jira"] = jira
        if serves_webhooks:
            sources.append(JiraSource(
                webhook_secret=settings.jira_webhook_secret.get_secret_value() if settings.jira_webhook_secret
                else None,
                automation_token=settings.jira_automation_token.get_secret_value()
                if settings.jira_automation_token else None,
                identity=jira_identity.get,
            ))
            identities.append(jira_identity)
    state = StateStore.connect(settings.system_database_url())
    llm_pool = llm_pool_for(settings)
    services = Services(
        trackers=trackers, state=state, llm_factory=llm_pool.client,
        pace_writes=_pacing(settings, WritePacer(state.engine)),
        outage_retry=OutageRetry(first_s=settings.outage_retry_first_s, max_s=settings.outage_retry_max_s,
                                 horizon_s=settings.outage_horizon_s),
    )
    engine = Engine(settings, services)
    if _engine_here(settings):
        # Here rather than at launch, so that a second live process with this id stops with one line.
        engine.claim_executor(_workers_here(settings))
    return Runtime(settings=settings, services=services, engine=engine, sources=sources, identities=identities,
                   llm_pool=llm_pool, credentials=credentials)
