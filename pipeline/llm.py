"""The only module that talks to the Anthropic API.

The SDK's own retries are off (`max_retries=0`) so that the retry policy is ours and observable: 429,
529, other 5xx, 408, timeouts and connection errors are retried with exponential backoff that honours
`retry-after-ms` / `retry-after`, within `settings.max_retries` and an overall `settings.deadline_s`
that no sleep may pass. Everything else fails at once. No anthropic exception leaves this module:
callers get an `LLMReply` or an `LLMError` whose `reason` is short and carries no ticket text.
"""

from __future__ import annotations

import email.utils
import os
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from reqgate.pipeline.config import LLMSettings, Price
from reqgate.pipeline.logs import get_logger
from reqgate.pipeline.schemas import LLMCallRecord

if TYPE_CHECKING:
    # The SDK takes about a second to import; `reqgate review --offline` and `--help` never need it, so it is
    # imported when the first client is made.
    import anthropic

CallName = Literal["structure", "structure_reask", "render", "render_reask"]

log = get_logger(__name__)

# Statuses worth another attempt: request timeout, rate limit, server errors including 529 overloaded.
_RETRY_STATUSES = frozenset({408, 429})
# Less time than this left before the deadline cannot carry a request to the API and back: no attempt is made then
# (one would be counted though its request may never leave the process).
_MIN_ATTEMPT_S = 0.05
_ERROR_TYPE = re.compile(r"^[a-z_]{1,40}$")


class LLMError(Exception):
    """A call that failed for good. `record` still accounts for its attempts and latency."""

    def __init__(self, reason: str, record: LLMCallRecord):
        super().__init__(reason)
        self.reason = reason
        self.record = record


@dataclass(frozen=True)
class Turn:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class LLMReply:
    text: str
    stop_reason: str | None
    record: LLMCallRecord


def estimate_cost(price: Price | None, usage: LLMCallRecord) -> float:
    """US dollars; `input_tokens` is the uncached part of the input, as the API reports it."""
    if price is None:
        return 0.0
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_creation_tokens * price.cache_write
    ) / 1_000_000


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` as seconds or an HTTP date; None if absent."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _classify(exc: anthropic.AnthropicError, timeout: float) -> _Retryable | str:
    """A retryable condition, or the reason of a final failure."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return _Retryable(f"timeout after {timeout:g}s", None)
    if isinstance(exc, anthropic.APIConnectionError):
        return _Retryable("connection error", None)
    if isinstance(exc, anthropic.APIStatusError):
        kind = exc.type if isinstance(exc.type, str) and _ERROR_TYPE.match(exc.type) else "error"
        reason = f"HTTP {exc.status_code} {kind}"
        if exc.status_code in _RETRY_STATUSES or exc.status_code >= 500:
            return _Retryable(reason, parse_retry_after(exc.response.headers))
        return reason
    return f"client error ({type(exc).__name__})"


def _no_gate(_call: CallName) -> AbstractContextManager[None]:
    return nullcontext()


class LLMPool:
    """What every client of a long-running process shares.

    One HTTP connection pool (a client per review stage is cheap, a pool is not): a new pool builds a TLS
    context, about 50 ms of CPU, and opens a new connection, with its TLS handshake, to the API. The SDK's
    HTTP client is safe to share between threads.

    And the `gate` each request to the API is sent inside (the bot's limit on requests at once, bot/llm_slots.py):
    held for the request only, not while a prompt is built, an answer parsed or a retry waits.
    """

    def __init__(self, gate: Callable[[CallName], AbstractContextManager[None]] = _no_gate) -> None:
        self.gate = gate
        self._http: Any = None
        self._lock = threading.Lock()

    def warm(self) -> None:
        """Load the SDK and make the pool now, when a key is set, rather than in the first review: the
        import takes a second or more, several when the process is busy."""
        if os.environ.get("ANTHROPIC_API_KEY", "").strip():
            self.http_client()

    def http_client(self) -> Any:
        with self._lock:
            if self._http is None:
                import anthropic

                self._http = anthropic.DefaultHttpxClient()
            return self._http

    def client(self, settings: LLMSettings) -> LLMClient | None:
        """`LLMClient.from_env` on this pool: the bot's `llm_factory`."""
        return LLMClient.from_env(settings, pool=self)

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None


class LLMClient:
    # Class attributes rather than settings: they tune the retry curve, which tests shorten.
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 20.0

    def __init__(self, api_key: str, settings: LLMSettings, base_url: str | None = None,
                 pool: LLMPool | None = None):
        import anthropic

        self.settings = settings
        self._pool = pool
        self._client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=settings.timeout_s,
            **({"http_client": pool.http_client()} if pool is not None else {}),
        )
        self._sleep: Callable[[float], None] = time.sleep
        self._clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_env(cls, settings: LLMSettings, pool: LLMPool | None = None) -> LLMClient | None:
        api_key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
        if not api_key:
            return None
        return cls(api_key, settings, base_url=os.environ.get("ANTHROPIC_BASE_URL") or None, pool=pool)

    def close(self) -> None:
        """Closes the connections, unless they are the pool's (it outlives the client)."""
        if self._pool is None:
            self._client.close()

    def complete_json(
        self,
        call: CallName,
        model: str,
        system: Sequence[str],
        messages: Sequence[Turn],
        schema: dict[str, Any],
        max_tokens: int,
    ) -> LLMReply:
        """One answer constrained by native structured output to `schema`; the caller validates it."""
        output_config = {"format": {"type": "json_schema", "schema": schema}}
        return self._complete(call, model, system, messages, max_tokens, {"output_config": output_config})

    def complete_text(
        self, call: CallName, model: str, system: Sequence[str], messages: Sequence[Turn], max_tokens: int
    ) -> LLMReply:
        return self._complete(call, model, system, messages, max_tokens, {})

    def _complete(
        self,
        call: CallName,
        model: str,
        system: Sequence[str],
        messages: Sequence[Turn],
        max_tokens: int,
        extra: dict[str, Any],
    ) -> LLMReply:
        # Static instructions first, each a cache breakpoint: the ticket only ever sits in `messages`.
        system_blocks = [
            {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}} for text in system if text
        ]
        wire_messages = [{"role": turn.role, "content": turn.text} for turn in messages]
        import anthropic

        started = self._clock()
        deadline = started + self.settings.deadline_s
        attempts = 0

        def failed(reason: str) -> LLMError:
            record = LLMCallRecord(
                call=call, model=model, attempts=attempts, ok=False, error=reason,
                latency_ms=(self._clock() - started) * 1000,
            )
            log.warning("llm.failed", call=call, model=model, attempts=attempts, reason=reason)
            return LLMError(reason, record)

        while True:
            queued = self._clock()
            with (self._pool.gate if self._pool is not None else _no_gate)(call):
                # Waiting for a slot is this process's queue, not the API being slow: it uses none of the deadline.
                deadline += self._clock() - queued
                timeout = min(self.settings.timeout_s, deadline - self._clock())
                if timeout < min(_MIN_ATTEMPT_S, self.settings.timeout_s):
                    raise failed(f"deadline of {self.settings.deadline_s:g}s reached")
                attempts += 1
                try:
                    message = self._client.messages.create(
                        model=model,
                        max_tokens=max_tokens,
                        system=system_blocks,  # type: ignore[arg-type]
                        messages=wire_messages,  # type: ignore[arg-type]
                        timeout=timeout,
                        **extra,
                    )
                except anthropic.AnthropicError as exc:
                    error: anthropic.AnthropicError | None = exc
                else:
                    error = None
            if error is None:
                return self._reply(call, model, message, attempts, started)
            verdict = _classify(error, timeout)
            if isinstance(verdict, str):
                raise failed(verdict) from None
            if attempts > self.settings.max_retries:
                raise failed(f"{verdict.reason} after {attempts} attempts") from None
            delay = verdict.retry_after
            if delay is None:
                ceiling = min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempts - 1))
                delay = random.uniform(ceiling / 2, ceiling)
            if self._clock() + delay >= deadline:
                raise failed(f"{verdict.reason}; no time left to retry after {attempts} attempts") from None
            log.info("llm.retry", call=call, model=model, attempt=attempts, reason=verdict.reason,
                     delay_s=round(delay, 3))
            self._sleep(delay)

    def _reply(
        self, call: CallName, model: str, message: anthropic.types.Message, attempts: int, started: float
    ) -> LLMReply:
        usage = message.usage
        record = LLMCallRecord(
            call=call,
            model=model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_creation_tokens=usage.cache_creation_input_tokens or 0,
            latency_ms=(self._clock() - started) * 1000,
            attempts=attempts,
        )
        record = record.model_copy(update={"cost_usd": estimate_cost(self.settings.prices.get(model), record)})
        # A refusal may come with no content at all; text blocks are all we ask for.
        text = "".join(block.text for block in message.content if block.type == "text")
        log.info("llm.call", call=call, model=model, attempts=attempts, stop_reason=message.stop_reason,
                 input_tokens=record.input_tokens, output_tokens=record.output_tokens,
                 latency_ms=round(record.latency_ms))
        return LLMReply(text=text, stop_reason=message.stop_reason, record=record)
