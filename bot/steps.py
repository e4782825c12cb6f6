"""Primitives of the durable flow, shared by the review (bot/flow.py) and the commands (bot/commands.py).

Every I/O runs through a `StepRunner`: in the bot a checkpointed DBOS step (bot/workflow.py), in unit tests a
plain call. A process killed anywhere resumes after the last finished step and runs the code between steps
again, so step results are JSON (pydantic dumps), code outside steps is a pure function of step results, and
metrics are counted inside steps, never between them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from reqgate.bot.logging import get_logger, scrub_text
from reqgate.bot.budget import SpendLedger
from reqgate.bot.state import StateStore
from reqgate.handlers.base import TicketRef, Tracker, Trigger
from reqgate.pipeline.config import Config, LLMSettings
from reqgate.pipeline.config_loader import ConfigError, ConfigProblem, LoadedConfig
from reqgate.pipeline.llm import LLMClient

log = get_logger("reqgate.flow")

T = TypeVar("T")
# Pauses before the second and third attempt of an idempotent step.
RETRY_PAUSES_S = (2.0, 8.0)
StepRunner = Callable[[str, Callable[[], Any]], Any]


@runtime_checkable
class ResolvesRefs(Protocol):
    """A tracker whose webhooks may name a ticket by an internal id (Jira's Server comment events)."""

    def resolve_ref(self, ref: TicketRef) -> TicketRef: ...


def _no_pacing(_ref: TicketRef, _slots: int) -> None:
    return None


@dataclass(frozen=True)
class OutageRetry:
    """Pauses between whole-review retries when the tracker is down; together they span the horizon."""

    first_s: float = 30.0
    max_s: float = 600.0
    horizon_s: float = 3600.0

    def pauses(self) -> list[float]:
        out: list[float] = []
        pause = self.first_s
        while sum(out) < self.horizon_s:
            out.append(min(pause, self.max_s))
            pause *= 2
        return out


@dataclass
class Services:
    """What the flow talks to, built once per process (bot/wiring.py)."""

    trackers: Mapping[str, Tracker]
    state: StateStore
    llm_factory: Callable[[LLMSettings], LLMClient | None] = LLMClient.from_env
    # Waits for this ticket's turn to write (bot/pacing.py: per installation or site, across processes).
    pace_writes: Callable[[TicketRef, int], None] = _no_pacing
    # A sleep that survives a restart (DBOS.sleep in the bot): the pause before an outage retry.
    durable_sleep: Callable[[float], None] = time.sleep
    outage_retry: OutageRetry = OutageRetry(horizon_s=0.0)
    # LLM spend for the cost controls; by default a table in the state's own database.
    budget: SpendLedger | None = None

    def __post_init__(self) -> None:
        engine = getattr(self.state, "engine", None)
        if self.budget is None and engine is not None:
            self.budget = SpendLedger(engine)


class Outcome(BaseModel):
    """What a delivery's workflow did; its return value, kept by DBOS."""

    model_config = ConfigDict(extra="forbid")

    workflow_id: str
    status: Literal["published", "cached", "skipped", "replied", "refused", "config_error", "error"]
    verdict: str | None = None
    comment_id: str | None = None
    detail: str | None = None


class StepFailed(Exception):
    """A tracker call failed for good (the adapters retry transient failures themselves). `transient`: the
    far side was unreachable or said "later" (5xx, 429), so the same call may succeed after a pause."""

    def __init__(self, step: str, error: str, transient: bool = False) -> None:
        super().__init__(f"{step}: {error}")
        self.step = step
        self.error = error
        self.transient = transient


def io(step: StepRunner, name: str, fn: Callable[[], T], *, idempotent: bool = True) -> T:
    """Run `fn` as a step whose failure is recorded as a value: replayed on recovery like a success, and
    never an exception object that the checkpoint store would have to serialise.

    The adapters retry briefly and give up on long waits; an idempotent step is tried again here after a
    pause, a non-idempotent one (a new comment) is not, since a timed-out request may have been applied.
    """

    def guarded() -> dict[str, Any]:
        pauses = list(RETRY_PAUSES_S) if idempotent else []
        while True:
            try:
                return {"value": fn()}
            except Exception as exc:  # noqa: BLE001 - any adapter or library error is a failed step
                error = f"{type(exc).__name__}: {scrub_text(str(exc))[:300]}"
                if not pauses or _permanent(exc):
                    log.warning("step_failed", step=name, error=error)
                    return {"error": error, "transient": not _permanent(exc)}
                pause = pauses.pop(0)
                log.info("step_retry", step=name, error=error, pause_s=pause)
                time.sleep(pause)

    recorded = step(name, guarded)
    if "error" in recorded:
        raise StepFailed(name, recorded["error"], transient=bool(recorded.get("transient")))
    return recorded["value"]


def write(
    step: StepRunner, services: Services, ref: TicketRef, name: str, fn: Callable[[], T], *, writes: int = 1,
    idempotent: bool = True,
) -> T:
    """`io` for a step that writes to the tracker: it first waits for the ticket's turn (`writes` slots)
    inside the step, so a replayed step does not wait again."""

    def paced() -> T:
        services.pace_writes(ref, writes)
        return fn()

    return io(step, name, paced, idempotent=idempotent)


# Errors of our own code or of the data: asking again gets the same answer.
_PERMANENT = (NameError, TypeError, AttributeError, LookupError, ValueError, AssertionError)


def _permanent(exc: Exception) -> bool:
    """A 4xx other than the "try later" ones, or a bug: not worth a second attempt."""
    if "RateLimit" in type(exc).__name__:
        return False  # a rate limit longer than the adapter would wait: later is the answer
    status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
    refused = isinstance(status, int) and 400 <= status < 500 and status not in (408, 409, 425, 429)
    return refused or isinstance(exc, _PERMANENT)


def load_config(step: StepRunner, tracker: Tracker, trigger: Trigger) -> LoadedConfig | ConfigError:
    """The effective config, or the `ConfigError` of an invalid file (a result, not a failure)."""

    def load() -> dict[str, Any]:
        try:
            loaded = tracker.load_config(trigger.ref)
        except ConfigError as exc:
            return {"problems": [
                {"source": p.source, "path": p.path, "line": p.line, "message": p.message} for p in exc.problems
            ]}
        return {"config": loaded.config.model_dump(mode="json"), "provenance": loaded.provenance,
                "sources": loaded.sources}

    recorded = io(step, "load_config", load)
    if "problems" in recorded:
        return ConfigError([ConfigProblem(**problem) for problem in recorded["problems"]])
    return LoadedConfig(config=Config.model_validate(recorded["config"]), provenance=recorded["provenance"],
                        sources=recorded["sources"])
