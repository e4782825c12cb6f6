"""How many requests this process sends to the LLM at once: `REQGATE_WORKER_CONCURRENCY`.

The queue hands a worker more reviews than that (`REQGATE_WORKER_IN_FLIGHT`), so that a review waiting for
its turn to write (GitHub's pacing: a second per installation), for the tracker, or for a retry does not
keep the LLM idle. The LLM request is what costs money and meets the provider's rate limits, so that is what
is bounded; the slot is held for the request only (pipeline/llm.py).

A review's later requests (call 2, a re-ask) go before another review's first: started reviews finish and
publish first, rather than every review in flight stopping half-way while new ones start.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

FIRST_CALL = "structure"


class LLMSlots:
    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("at least one LLM request at a time")
        self.limit = limit
        self.busy = 0
        self.waiting_first = 0
        self.waiting_later = 0
        lock = threading.Lock()
        # One condition per kind, each woken one waiter at a time: with dozens of reviews waiting, waking them
        # all at every answer cost a worker more CPU than the slots themselves.
        self._first = threading.Condition(lock)
        self._later = threading.Condition(lock)
        self._lock = lock

    def _free_for(self, first: bool) -> bool:
        return self.busy < self.limit and (not first or self.waiting_later == 0)

    def _wake_one(self) -> None:
        if self.busy >= self.limit:
            return
        if self.waiting_later:
            self._later.notify()
        elif self.waiting_first:
            self._first.notify()

    @contextmanager
    def hold(self, call: str) -> Iterator[None]:
        first = call == FIRST_CALL
        with self._lock:
            if first:
                self.waiting_first += 1
                try:
                    self._first.wait_for(lambda: self._free_for(True))
                finally:
                    self.waiting_first -= 1
            else:
                self.waiting_later += 1
                try:
                    self._later.wait_for(lambda: self._free_for(False))
                finally:
                    self.waiting_later -= 1
            self.busy += 1
            # Several slots may have freed at once, or a first request stood back for this one.
            self._wake_one()
        try:
            yield
        finally:
            with self._lock:
                self.busy -= 1
                self._wake_one()
