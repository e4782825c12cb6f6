"""The web side: verify, dedupe, enqueue, answer. A review never runs inside a request.

Answers: 202 accepted, 200 duplicate delivery, 204 not handled, 400 malformed, 401 not authentic, 413 too
large. Nothing a sender can put in a request gives a 5xx; only our own database being down does (503), so
that the sender retries later.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol
from urllib.parse import parse_qs

import pydantic_core
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reqgate.bot import metrics
from reqgate.bot.logging import get_logger
from reqgate.bot.sources import WebhookSource
from reqgate.handlers.base import Ignored, Trigger

log = get_logger("reqgate.web")


class Dispatcher(Protocol):
    async def accept(self, trigger: Trigger) -> bool:
        """Make this trigger durable work; False when its delivery was already accepted."""

    def ready(self) -> str | None:
        """None when work can be accepted and done, else what is missing. Blocking."""


class _Reject(Exception):
    def __init__(self, status: int, outcome: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.outcome = outcome
        self.message = message


async def _read_capped(request: Request, limit: int) -> bytes:
    """The raw body, refusing anything over `limit` without reading past it."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise _Reject(400, "malformed", "invalid Content-Length") from None
        if size > limit:
            raise _Reject(413, "too_large", f"body over {limit} bytes")
    chunks: list[bytes] = []
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise _Reject(413, "too_large", f"body over {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        raise _Reject(400, "malformed", "the client went away before the body was complete") from None
    return b"".join(chunks)


def _decode(body: bytes, content_type: str) -> dict[str, Any]:
    """JSON, or GitHub's form encoding (`payload=<json>`) that repository webhooks may be set to."""
    text = body
    if content_type.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
        try:
            fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
        except (UnicodeDecodeError, ValueError):
            raise _Reject(400, "malformed", "the form body cannot be decoded") from None
        if len(fields.get("payload", [])) != 1:
            raise _Reject(400, "malformed", "the form body has no `payload` field")
        text = fields["payload"][0].encode("utf-8")
    try:
        # pydantic's parser (Rust) at a fraction of json.loads's cost, which counts at a burst; it refuses
        # deep nesting with a ValueError instead of exhausting the stack.
        payload = pydantic_core.from_json(text)
    except ValueError:
        raise _Reject(400, "malformed", "the body is not JSON") from None
    if not isinstance(payload, dict):
        raise _Reject(400, "malformed", "the body must be a JSON object")
    return payload


def webhook_endpoint(source: WebhookSource, dispatcher: Dispatcher, max_body_bytes: int) -> Callable[..., Any]:
    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        delivery: str | None = None
        try:
            body = await _read_capped(request, max_body_bytes)
            if not source.verify(request.headers, body):
                raise _Reject(401, "unauthorized", "missing or invalid signature")
            payload = _decode(body, request.headers.get("content-type", ""))
            delivery = source.delivery_id(request.headers, payload)
            if not delivery:
                raise _Reject(400, "malformed", "the delivery id is missing")
            try:
                parsed = source.parse(request.headers, payload, delivery)
            except ValueError as exc:
                raise _Reject(400, "malformed", str(exc)) from None
            except Exception:
                # A parser bug must not turn a sender's odd payload into a 5xx that it retries for hours.
                log.exception("webhook_parse_failed", source=source.name, delivery_id=delivery)
                raise _Reject(400, "malformed", "the payload could not be parsed") from None
        except _Reject as reject:
            return _answer(source.name, reject.status, reject.outcome, {"error": reject.message},
                           delivery, started)

        if isinstance(parsed, Ignored):
            return _answer(source.name, 204, "ignored", None, delivery, started, reason=parsed.reason)
        return await _enqueue(source.name, dispatcher, parsed, started)

    return endpoint


async def _enqueue(source: str, dispatcher: Dispatcher, trigger: Trigger, started: float) -> Response:
    # Passed to the log lines rather than bound with bind(): nothing else logs during an enqueue, and binding
    # costs as much as the line itself at a burst.
    context = {"workflow_id": trigger.workflow_id, "project": trigger.ref.project, "issue": trigger.ref.key}
    try:
        fresh = await dispatcher.accept(trigger)
    except Exception:
        log.exception("webhook_enqueue_failed", source=source, delivery_id=trigger.delivery_id, **context)
        return _answer(source, 503, "unavailable", {"error": "cannot queue the delivery; retry later"},
                       trigger.delivery_id, started, **context)
    if not fresh:
        return _answer(source, 200, "duplicate", {"status": "duplicate", "workflow_id": trigger.workflow_id},
                       trigger.delivery_id, started, **context)
    return _answer(source, 202, "accepted", {"status": "accepted", "workflow_id": trigger.workflow_id},
                   trigger.delivery_id, started, kind=trigger.kind, reason=trigger.reason,
                   command=trigger.command, **context)


def _answer(
    source: str, status: int, outcome: str, content: dict[str, Any] | None, delivery: str | None,
    started: float, **fields: Any,
) -> Response:
    metrics.WEBHOOKS.labels(source=source, outcome=outcome).inc()
    fields["error"] = (content or {}).get("error")
    log.info("webhook", source=source, outcome=outcome, status=status, delivery_id=delivery,
             ms=round((time.perf_counter() - started) * 1000, 2),
             **{k: v for k, v in fields.items() if v is not None})
    if content is None:
        return Response(status_code=status)
    return JSONResponse(content, status_code=status)


async def healthz(_request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def readyz_endpoint(dispatcher: Dispatcher, details: Callable[[], dict[str, Any]]) -> Callable[..., Any]:
    async def readyz(_request: Request) -> Response:
        try:
            missing = await run_in_threadpool(dispatcher.ready)
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            missing = f"readiness check failed: {type(exc).__name__}"
        # Details may read the database (the oldest unfinished review): not on the event loop.
        extra = await run_in_threadpool(details)
        if missing:
            return JSONResponse({"status": "not ready", "reason": missing, **extra}, status_code=503)
        return JSONResponse({"status": "ready", **extra})

    return readyz


async def metrics_endpoint(_request: Request) -> Response:
    # The queue-depth gauge reads the database: not on the event loop.
    payload, content_type = await run_in_threadpool(metrics.exposition)
    return Response(payload, media_type=content_type)


def create_app(
    sources: list[WebhookSource],
    dispatcher: Dispatcher,
    *,
    max_body_bytes: int,
    lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None = None,
    details: Callable[[], dict[str, Any]] = dict,
) -> Starlette:
    """`details` adds informational fields to /readyz (e.g. whether the bot's identity is known yet)."""
    routes = [
        Route(f"/webhooks/{source.name}", webhook_endpoint(source, dispatcher, max_body_bytes), methods=["POST"])
        for source in sources
    ]
    routes += [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz_endpoint(dispatcher, details), methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)

