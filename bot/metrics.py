"""Prometheus metrics. Labels are small closed sets: never a ticket, repository or delivery id."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from pipeline.schemas import LLMCallRecord

REGISTRY = CollectorRegistry(auto_describe=True)

WEBHOOKS = Counter(
    "reqgate_webhooks", "Webhook deliveries received, by source and answer.", ["source", "outcome"],
    registry=REGISTRY,
)
REVIEWS = Counter("reqgate_reviews", "Reviews published, by verdict.", ["verdict"], registry=REGISTRY)
REVIEW_SECONDS = Histogram(
    "reqgate_review_seconds", "Time from the start of a review workflow to the published comment.",
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300), registry=REGISTRY,
)
LLM_TOKENS = Counter("reqgate_llm_tokens", "LLM tokens, by direction.", ["direction"], registry=REGISTRY)
RATE_LIMIT_WAIT = Counter(
    "reqgate_rate_limit_wait_seconds", "Seconds spent waiting to respect the trackers' write spacing and limits.",
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge("reqgate_queue_depth", "Deliveries waiting in the review queue.", registry=REGISTRY)

for _direction in ("input", "output", "cache_read", "cache_write"):
    LLM_TOKENS.labels(direction=_direction)
for _verdict in ("ready", "needs_info", "error", "skipped"):
    REVIEWS.labels(verdict=_verdict)


def observe_queue_depth(read: Callable[[], int]) -> None:
    """Read the depth at scrape time; a failing read shows -1 rather than breaking the scrape."""

    def safe() -> float:
        try:
            return float(read())
        except Exception:  # noqa: BLE001 - a scrape must never fail on a database hiccup
            return -1.0

    QUEUE_DEPTH.set_function(safe)


def count_llm_usage(calls: list[LLMCallRecord]) -> None:
    for call in calls:
        LLM_TOKENS.labels(direction="input").inc(call.input_tokens)
        LLM_TOKENS.labels(direction="output").inc(call.output_tokens)
        LLM_TOKENS.labels(direction="cache_read").inc(call.cache_read_tokens)
        LLM_TOKENS.labels(direction="cache_write").inc(call.cache_creation_tokens)


def count_review(verdict: str, seconds: float | None) -> None:
    REVIEWS.labels(verdict=verdict).inc()
    if seconds is not None:
        REVIEW_SECONDS.observe(seconds)


def exposition() -> tuple[bytes, str]:
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
