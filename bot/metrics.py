"""Prometheus metrics. Labels are small closed sets: never a ticket, repository or delivery id.

When `reqgate serve` runs its reviews in a child process (bot/worker_process.py) both processes count into
prometheus-client's multiprocess files (PROMETHEUS_MULTIPROC_DIR, set before this module is imported) and
/metrics adds them up; otherwise the counts live in this process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from reqgate.pipeline.schemas import LLMCallRecord

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
LLM_COST = Counter(
    "reqgate_llm_cost_usd", "Estimated LLM spend in US dollars, from the token prices in config.", registry=REGISTRY,
)
LLM_WITHHELD = Counter(
    "reqgate_llm_withheld", "Reviews kept rules-only by the cost controls, by reason.", ["reason"],
    registry=REGISTRY,
)
RATE_LIMIT_WAIT = Counter(
    "reqgate_rate_limit_wait_seconds", "Seconds spent waiting to respect the trackers' write spacing and limits.",
    registry=REGISTRY,
)

for _direction in ("input", "output", "cache_read", "cache_write"):
    LLM_TOKENS.labels(direction=_direction)
for _verdict in ("ready", "needs_info", "error", "skipped"):
    REVIEWS.labels(verdict=_verdict)
for _reason in ("not_member", "not_allowlisted", "budget_exhausted", "ticket_cap"):
    LLM_WITHHELD.labels(reason=_reason)


class _QueueDepth(Collector):
    """Read at scrape time from the database; a failing read shows -1 rather than breaking the scrape."""

    def __init__(self, name: str = "reqgate_queue_depth",
                 documentation: str = "Deliveries accepted and not yet started.") -> None:
        self.name = name
        self.documentation = documentation
        self.read: Callable[[], float] | None = None

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            depth = float(self.read()) if self.read is not None else 0.0
        except Exception:  # noqa: BLE001 - a scrape must never fail on a database hiccup
            depth = -1.0
        yield GaugeMetricFamily(self.name, self.documentation, value=depth)


_QUEUE_DEPTH = _QueueDepth()
REGISTRY.register(_QUEUE_DEPTH)
# A review that nothing works on (a dead worker's, before it is taken over) shows as an age that keeps growing.
_OLDEST_UNFINISHED = _QueueDepth(
    "reqgate_oldest_unfinished_review_seconds",
    "Age of the oldest delivery accepted and not finished (queued or running); 0 when there is none.",
)
REGISTRY.register(_OLDEST_UNFINISHED)


def observe_queue_depth(read: Callable[[], float]) -> None:
    _QUEUE_DEPTH.read = read


def observe_oldest_unfinished(read: Callable[[], float]) -> None:
    _OLDEST_UNFINISHED.read = read


def count_llm_usage(calls: list[LLMCallRecord]) -> None:
    for call in calls:
        LLM_TOKENS.labels(direction="input").inc(call.input_tokens)
        LLM_TOKENS.labels(direction="output").inc(call.output_tokens)
        LLM_TOKENS.labels(direction="cache_read").inc(call.cache_read_tokens)
        LLM_TOKENS.labels(direction="cache_write").inc(call.cache_creation_tokens)
        LLM_COST.inc(call.cost_usd)


def count_llm_withheld(reason: str) -> None:
    LLM_WITHHELD.labels(reason=reason).inc()


def count_review(verdict: str, seconds: float | None) -> None:
    REVIEWS.labels(verdict=verdict).inc()
    if seconds is not None:
        REVIEW_SECONDS.observe(seconds)


def multiprocess() -> bool:
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def exposition() -> tuple[bytes, str]:
    if not multiprocess():
        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    registry.register(_QUEUE_DEPTH)
    registry.register(_OLDEST_UNFINISHED)
    return generate_latest(registry), CONTENT_TYPE_LATEST
