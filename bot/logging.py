"""Structured JSON logs. Context (delivery, ticket, workflow) is bound with `bind()`; bodies and secrets never
reach the output: keys that name them are dropped and string values are scrubbed of token shapes."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TextIO

import structlog

from reqgate.pipeline.guardrail import mask

# Any key containing one of these words is dropped whole: a payload body or a credential has no safe part.
_FORBIDDEN_KEY_PARTS = ("body", "payload", "token", "secret", "password", "authorization", "private_key",
                        "api_key", "signature", "cookie")
# Shapes of credentials that could hide inside an exception message or a URL.
# Every alternative scans in time linear in the value: a match may start only where a token starts (the
# look-behinds), so a run such as "eyJeyJeyJ..." is tried once, not once per "eyJ" to its end (which took
# 482 s for 900 KB); no quantified group sits inside another.
_SECRET_VALUE_RE = re.compile(
    r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}"
    r"|(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"
    r"|(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_\-]{10,}"
    r"|(?<![A-Za-z0-9-])xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|\Z)"
    r"|(?<![A-Za-z])(?i:bearer|token|basic)\s{1,20}[A-Za-z0-9._~+/=-]{12,}"
    r"|://[^/\s:@]+:[^/\s@]+@"
)
# Work per logged value is bounded, whatever a detector costs: of a longer value only its head and tail are
# logged, each cut at a space so that no token is cut in two and left half visible; the middle is dropped
# unseen and only its size is logged.
MAX_SCRUBBED_CHARS = 4096
_KEEP_KEYS = frozenset({"event", "level", "timestamp", "logger"})
_OWN_VALUES = frozenset({"level", "timestamp"})  # written by structlog's processors, not by a caller


@lru_cache(maxsize=1024)
def _forbidden(key: str) -> bool:
    lowered = key.lower()
    return key not in _KEEP_KEYS and any(part in lowered for part in _FORBIDDEN_KEY_PARTS)


def scrub_text(value: str) -> str:
    # The guardrail's detector knows PII and many token kinds; the shapes above catch credentials in
    # headers and exception texts that it leaves alone.
    if _ID_RE.fullmatch(value):
        return value
    if len(value) <= _CACHED_MAX_CHARS:
        return _scrub_short(value)
    if len(value) <= MAX_SCRUBBED_CHARS:
        return _SECRET_VALUE_RE.sub("[redacted]", mask(value))
    # Head and tail are kept: a traceback's last lines say what failed.
    half = MAX_SCRUBBED_CHARS // 2
    head, tail = value[:half], value[-half:]
    head = head[: max(head.rfind(" "), head.rfind("\n"), 0)]
    tail_cut = min((i for i in (tail.find(" "), tail.find("\n")) if i >= 0), default=len(tail))
    tail = tail[tail_cut:]
    dropped = f"[{len(value) - len(head) - len(tail)} chars not logged]"
    return "".join((_SECRET_VALUE_RE.sub("[redacted]", mask(head)), dropped,
                    _SECRET_VALUE_RE.sub("[redacted]", mask(tail))))


# Scrubbing a string costs ~25 µs, a noticeable share of a webhook's acknowledgement at a burst. Most logged
# strings recur (a source, an outcome, a repository, a reason) and are cached; the ones that never recur are
# delivery and workflow ids, GitHub's a UUID, which holds neither PII nor a credential.
_CACHED_MAX_CHARS = 200
_ID_RE = re.compile(r"(?:[a-z]{2,8}:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _scrub_short(value: str) -> str:
    return _SECRET_VALUE_RE.sub("[redacted]", mask(value))


def _scrub_value(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {k: _scrub_value(v) for k, v in value.items() if not _forbidden(str(k))}
    if isinstance(value, list | tuple):
        return [_scrub_value(v) for v in value]
    return value


def scrub(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: the last line of defence, after every other processor has added its keys."""
    for key in [k for k in event_dict if _forbidden(k)]:
        del event_dict[key]
    for key, value in list(event_dict.items()):
        if key not in _OWN_VALUES:
            event_dict[key] = _scrub_value(value)
    return event_dict


class StandardStream:
    """sys.stdout or sys.stderr as it is at each write, not as it was at configure(): a test harness or a
    daemon may swap (and close) the one that was current then, and a log call must never fail for that."""

    def __init__(self, name: str = "stdout") -> None:
        self.name = name

    def write(self, text: str) -> int:
        return getattr(sys, self.name).write(text)

    def flush(self) -> None:
        getattr(sys, self.name).flush()


def configure(level: str = "INFO", stream: TextIO | StandardStream | None = None) -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            scrub,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(file=stream or StandardStream("stdout")),  # type: ignore[arg-type]
        # Not cached: a logger bound before configure() (at import) must follow a later configure().
        cache_logger_on_first_use=False,
    )


def get_logger(name: str = "reqgate") -> Any:
    return structlog.get_logger(name)


@contextmanager
def bind(**context: Any) -> Iterator[None]:
    """Bind context for everything logged in this thread or task until the block ends."""
    with structlog.contextvars.bound_contextvars(**{k: v for k, v in context.items() if v is not None}):
        yield


# Loggers of the libraries the server runs, which would otherwise print plain text of their own.
_LIBRARY_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi", "dbos")


def route_library_logs(level: str = "INFO", stream: TextIO | StandardStream | None = None) -> None:
    """Every line written through the standard `logging` module (uvicorn, DBOS, httpx, the trackers' clients)
    becomes a JSON line like ours, through the same scrubber. Call before uvicorn and DBOS start: DBOS adds
    its plain-text handler only to a logger that has none."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_logger_name,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.stdlib.ExtraAdder(allow=()),
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            scrub,
            structlog.processors.JSONRenderer(),
        ],
    )
    handler = logging.StreamHandler(stream or StandardStream("stdout"))  # type: ignore[arg-type]
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(numeric)
    for name in _LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        library.handlers = []
        library.propagate = True
    dbos = logging.getLogger("dbos")
    dbos.addHandler(handler)
    dbos.propagate = False
