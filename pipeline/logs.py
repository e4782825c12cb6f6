"""Loggers of the pipeline, bound to structlog on first use.

Importing structlog costs about as much CPU as pydantic (it loads asyncio), and a rules-only review logs
nothing: `reqgate review --offline` should not pay for it. A module takes `log = get_logger(__name__)` at
import time as usual; structlog is imported when the first line is logged.
"""

from __future__ import annotations

from typing import Any


class _LazyLogger:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, method: str) -> Any:
        import structlog

        # structlog's own logger is a lazy proxy too: asking for it per call follows later configure() calls.
        return getattr(structlog.get_logger(self._name), method)


def get_logger(name: str) -> Any:
    return _LazyLogger(name)
