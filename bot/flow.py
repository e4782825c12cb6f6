"""What one delivery does, written once for every tracker and free of the durable-execution library.

Read bot/steps.py first: every I/O below is a step, code between steps runs again on recovery.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel

from reqgate.bot import commands, metrics
from reqgate.bot.budget import account_of
from reqgate.bot.logging import get_logger
from reqgate.bot.state import TicketState
from reqgate.bot.steps import Outcome, ResolvesRefs, Services, StepFailed, StepRunner, io, load_config, write
from reqgate.handlers.base import TicketRef, Tracker, Trigger
from reqgate.handlers.filters import skip_reason
from reqgate.handlers.publish import cap_comment, label_changes
from reqgate.pipeline.config import Config
from reqgate.pipeline.config_loader import ConfigError, LoadedConfig, load_default_config
from reqgate.pipeline.cost import LLMAccess, day_start, decide_access, month_start, needs_membership
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.review import (
    Decision,
    Prepared,
    assemble,
    call_render,
    call_structure,
    decide,
    error_comment,
    prepare,
    replay_cached,
    reusable,
)
from reqgate.pipeline.schemas import RenderOutcome, ReviewResult, StructureOutcome

log = get_logger("reqgate.flow")

RETRY_HINT = "Comment `/reqgate recheck` on this ticket to try again."


# ---- the review ---------------------------------------------------------------------------------------


class _Fetched(BaseModel):
    """The fetched ticket as far as it may be stored: the raw text never leaves the step that fetched it."""

    skip: str | None = None
    prepared: Prepared | None = None
    labels: list[str] = []


def run(trigger: Trigger, services: Services, step: StepRunner) -> Outcome:
    tracker = services.trackers.get(trigger.source)
    if tracker is None:
        return Outcome(workflow_id=trigger.workflow_id, status="skipped",
                       detail=f"no {trigger.source} tracker is configured")
    started: float = step("started_at", time.time)
    try:
        if isinstance(tracker, ResolvesRefs):
            # A Jira comment event may name the issue by id only; state and config are keyed by issue key.
            resolved = io(step, "resolve_ref", lambda: tracker.resolve_ref(trigger.ref).model_dump(mode="json"))
            trigger = trigger.model_copy(update={"ref": TicketRef.model_validate(resolved)})
        if trigger.kind == "command":
            return commands.run(trigger, tracker, services, step,
                                recheck=lambda: review(trigger, tracker, services, step, started))
        return review(trigger, tracker, services, step, started)
    except StepFailed as failure:
        return _fail(trigger, tracker, services, step, failure)


def review(trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, started: float) -> Outcome:
    """The review, tried again after durable pauses while the tracker is down (`Services.outage_retry`)."""
    pauses = services.outage_retry.pauses()
    for attempt in range(len(pauses) + 1):
        configs: list[Config] = []
        try:
            return _attempt(trigger, tracker, services, _numbered(step, attempt), started, configs)
        except StepFailed as failure:
            config = configs[0] if configs else None
            if not failure.transient or attempt == len(pauses):
                return _fail(trigger, tracker, services, step, failure, config)
            _retry_later(trigger, tracker, services, step, failure, pauses[attempt], attempt)
    raise AssertionError("unreachable: the last attempt returns")


def _attempt(
    trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, started: float, configs: list[Config]
) -> Outcome:
    wid = trigger.workflow_id
    loaded = load_config(step, tracker, trigger)
    if isinstance(loaded, ConfigError):
        return _config_error(trigger, tracker, services, step, loaded)
    config = loaded.config
    configs.append(config)  # for the error label's name, should a later step fail
    if trigger.kind == "review" and trigger.reason == "edited" and not config.review_on_edit:
        return Outcome(workflow_id=wid, status="skipped", detail="review_on_edit is off")
    if trigger.kind == "review" and not config.enabled:
        # Not even a fetch: a switched-off project costs one config read per event. (A command still gets
        # its "not reviewed" reply through the filters below.)
        return Outcome(workflow_id=wid, status="skipped", detail="ReqGate is disabled (`enabled: false`)")
    return _review(trigger, tracker, services, step, started, loaded)


def _retry_later(
    trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, failure: StepFailed, pause: float,
    attempt: int,
) -> None:
    """The tracker is down or refusing for now: say so on the ticket if it can be said (best effort, no error
    label), then sleep durably; the review that follows replaces the comment."""
    log.warning("delivery_retry_scheduled", step=failure.step, error=failure.error, pause_s=pause,
                attempt=attempt + 1)
    body = error_comment(
        "the review is delayed",
        [f"The step `{failure.step}` failed: {failure.error}",
         f"{trigger.source.capitalize()} looks unreachable or busy; ReqGate retries by itself."],
        run_id=trigger.workflow_id,
        retry_hint=f"A retry is scheduled in about {_human(pause)}; the review will replace this comment.",
    )
    _publish_error(trigger, tracker, services, step, None, body, labels=False, suffix=f"_{attempt + 1}")
    services.durable_sleep(pause)


def _human(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _review(
    trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, started: float, loaded: LoadedConfig
) -> Outcome:
    wid = trigger.workflow_id
    config = loaded.config

    def fetch() -> dict[str, Any]:
        packet = tracker.fetch_ticket(trigger.ref)
        reason = skip_reason(packet, config)
        if reason:
            return _Fetched(skip=reason).model_dump(mode="json")
        return _Fetched(prepared=prepare(packet, config), labels=packet.labels).model_dump(mode="json")

    fetched = _Fetched.model_validate(io(step, "fetch_and_prepare", fetch))
    if fetched.prepared is None:
        if trigger.kind == "command":
            write(step, services, trigger.ref, "reply_skipped", lambda: tracker.reply(
                trigger.ref, f"ReqGate does not review this ticket: {fetched.skip}."), idempotent=False)
        step("count_skipped", lambda: metrics.count_review("skipped", None))
        return Outcome(workflow_id=wid, status="skipped", detail=fetched.skip)
    prepared = fetched.prepared

    previous = _load_state(step, services, trigger.ref.ticket_id)
    unchanged = previous is not None and previous.content_hash == prepared.content_hash

    def label(verdict: str) -> None:
        add, remove = label_changes(fetched.labels, verdict, config.labels)
        if add or remove:
            write(step, services, trigger.ref, "sync_labels",
                  lambda: tracker.sync_labels(trigger.ref, add, remove, config.labels.color),
                  writes=(1 if add else 0) + len(remove))

    if unchanged and previous.result and reusable(previous.result):
        result = replay_cached(previous.result, run_id=wid, config=config)
        label(result.decision.verdict)
    else:
        result = _fresh_review(step, services, prepared, config, wid, loaded.source_label, tracker, trigger,
                               label, previous.result if previous else None)
    body = cap_comment(result.comment_markdown, min(tracker.comment_limit, config.limits.comment_max_chars))
    known = previous.comment_id if previous else None
    comment_id: str = write(step, services, trigger.ref, "upsert_comment",
                            lambda: tracker.upsert_comment(trigger.ref, body, known))

    def save() -> None:
        services.state.put(TicketState(ticket_id=trigger.ref.ticket_id, content_hash=prepared.content_hash,
                                       verdict=result.decision.verdict, comment_id=comment_id, result=result,
                                       workflow_id=wid))
        metrics.count_review(result.decision.verdict, time.time() - started)

    io(step, "save_state", save)
    status: Literal["published", "cached"] = "cached" if result.trace.from_cache else "published"
    log.info("review_published", status=status, verdict=result.decision.verdict, score=result.score.score,
             fallbacks=result.trace.fallbacks)
    return Outcome(workflow_id=wid, status=status, verdict=result.decision.verdict, comment_id=comment_id)


def _load_state(
    step: StepRunner, services: Services, ticket_id: str, name: str = "load_state"
) -> TicketState | None:
    def load() -> dict[str, Any] | None:
        state = services.state.get(ticket_id)
        return state.model_dump(mode="json") if state else None

    recorded = io(step, name, load)
    return TicketState.model_validate(recorded) if recorded else None


def _with_llm(
    services: Services, config: Config, wanted: bool,
    call: Callable[[LLMClient | None], StructureOutcome | RenderOutcome],
    spend: tuple[str, str, Trigger] | None = None,
) -> dict[str, Any]:
    """One LLM stage as a step: a client for this call only (closed whatever happens), usage counted and, for
    the cost controls, its spend recorded under (run id, stage) so that a replayed step counts once."""
    llm = services.llm_factory(config.llm) if wanted else None
    try:
        outcome = call(llm)
    finally:
        if llm is not None:
            llm.close()
    metrics.count_llm_usage(outcome.calls)
    if spend is not None and outcome.calls and services.budget is not None:
        run_id, stage, trigger = spend
        try:
            services.budget.record(run_id, stage, account_of(trigger.ref), trigger.ref.ticket_id,
                                   sum(c.cost_usd for c in outcome.calls))
        except Exception as exc:  # noqa: BLE001 - a failed step would pay for the LLM call a second time
            log.warning("spend_not_recorded", stage=stage, error=type(exc).__name__)
    return outcome.model_dump(mode="json")


def llm_access(services: Services, tracker: Tracker, trigger: Trigger, config: Config) -> LLMAccess:
    """May this review call the LLM (pipeline/cost.py)? Membership is asked only when the config needs it.
    Runs inside the call-1 step, so its answer is checkpointed with the call's outcome."""
    member = tracker.is_member(trigger) if needs_membership(config.cost) else None
    now = datetime.now(UTC)
    ledger = services.budget
    spent = ledger.spent(account_of(trigger.ref), month_start(now)) if ledger else 0.0
    today = ledger.reviews(trigger.ref.ticket_id, day_start(now)) if ledger else 0
    access = decide_access(config.cost, actor=trigger.actor, member=member, spent_usd=spent,
                           reviews_today=today)
    if not access.allowed:
        metrics.count_llm_withheld(access.reason or "")
    return access


def _fresh_review(
    step: StepRunner, services: Services, prepared: Prepared, config: Config, wid: str, config_source: str,
    tracker: Tracker, trigger: Trigger, label: Callable[[str], None],
    previous: ReviewResult | None = None,
) -> ReviewResult:
    def structure_step() -> dict[str, Any]:
        access = llm_access(services, tracker, trigger, config)
        return _with_llm(services, config, access.allowed,
                         lambda llm: call_structure(prepared, config, llm, access), (wid, "structure", trigger))

    structure = StructureOutcome.model_validate(io(step, "llm_structure", structure_step))
    decision: Decision = decide(prepared, structure, config)
    # The verdict is the gate's, settled once call 1 is in, so the labels go on before call 2: the second that
    # GitHub's pacing leaves between the label write and the comment passes while call 2 runs, instead of
    # being waited out after it (a second of every review, and of a worker's slot in the queue).
    label(decision.gate.verdict)
    render = RenderOutcome.model_validate(io(step, "llm_render", lambda: _with_llm(
        services, config, structure.output is not None,
        lambda llm: call_render(prepared, structure, decision, config, llm), (wid, "render", trigger))))
    # The last review, so that the comment can say what was resolved since.
    return assemble(prepared, structure, decision, render, config, run_id=wid, config_source=config_source,
                    previous=previous)


# ---- failures -----------------------------------------------------------------------------------------


def _numbered(step: StepRunner, attempt: int) -> StepRunner:
    """Each attempt after an outage names its steps apart: a step runner keyed by name (the unit tests')
    must not hand an attempt the failure recorded by the one before."""
    if attempt == 0:
        return step
    return lambda name, fn: step(f"{name}_{attempt + 1}", fn)


def _publish_error(
    trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, config: Config | None, body: str,
    *, labels: bool = True, suffix: str = "",
) -> str | None:
    """Error label and error comment, each best effort: the tracker may be the thing that is failing.
    Without `labels` (a retry is scheduled) the ticket keeps its labels and only the comment says why."""
    ours = (config or load_default_config()).labels
    # The ticket's labels may be unknown (fetching it may be what failed): ask to remove both verdict labels;
    # the adapters treat removing an absent label as done.
    add, remove = label_changes([ours.ready, ours.needs_info], None, ours, error=True)
    comment_id: str | None = None
    if labels:
        try:
            write(step, services, trigger.ref, "error_labels",
                  lambda: tracker.sync_labels(trigger.ref, add, remove, ours.color), writes=1 + len(remove))
        except StepFailed:
            pass
    state_key = trigger.ref.ticket_id
    try:
        previous = _load_state(step, services, state_key, f"load_state_for_error{suffix}")
    except StepFailed:
        previous = None
    known = previous.comment_id if previous else None
    try:
        comment_id = write(step, services, trigger.ref, f"error_comment{suffix}", lambda: tracker.upsert_comment(
            trigger.ref, cap_comment(body, tracker.comment_limit), known))
    except StepFailed:
        pass

    def save() -> None:
        # The last good review stays: a recheck of unchanged text republishes it without an LLM call. While a
        # retry is pending the verdict stays too; only the comment to replace is remembered.
        base = previous or TicketState(ticket_id=state_key)
        update: dict[str, Any] = {"comment_id": comment_id or known, "workflow_id": trigger.workflow_id}
        if labels:
            update["verdict"] = "error"
            metrics.count_review("error", None)
        services.state.put(base.model_copy(update=update))

    try:
        io(step, f"save_error_state{suffix}", save)
    except StepFailed:
        pass
    return comment_id


def _config_error(
    trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, error: ConfigError
) -> Outcome:
    details = [str(problem) for problem in error.problems]
    body = error_comment("the configuration is invalid", details, run_id=trigger.workflow_id,
                         retry_hint="Fix the file, then comment `/reqgate recheck` on this ticket.")
    comment_id = _publish_error(trigger, tracker, services, step, None, body)
    return Outcome(workflow_id=trigger.workflow_id, status="config_error", comment_id=comment_id,
                   detail="; ".join(details))


def _fail(
    trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, failure: StepFailed,
    config: Config | None = None,
) -> Outcome:
    log.error("delivery_failed", step=failure.step, error=failure.error)
    body = error_comment(
        "the review could not be completed",
        [f"The step `{failure.step}` failed after retries: {failure.error}",
         (f"When {trigger.source.capitalize()} is unreachable or refuses a request, the cause is on its side "
          "and a later recheck succeeds; otherwise the bot's operator can find this run id in the logs.")],
        run_id=trigger.workflow_id, retry_hint=RETRY_HINT,
    )
    comment_id = _publish_error(trigger, tracker, services, step, config, body)
    return Outcome(workflow_id=trigger.workflow_id, status="error", comment_id=comment_id, detail=failure.error)

