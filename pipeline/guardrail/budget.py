"""How much work one text may cost a finder.

Every pattern is linear, but a finder also does Python work per candidate (a name, a run, an "@"), and
a hostile text can be nothing but candidates. A real ticket of 20,000 characters holds a few hundred at
most; past `MAX_CANDIDATES` a finder stops looking, so one field can never hold the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TypeVar

MAX_CANDIDATES = 1500
# Credential names read per text: each costs a look back over the name and a look at its value.
MAX_NAMES = 600
# Candidates a glued token is looked for inside one run of token characters.
MAX_INNER_STARTS = 48
# Token-shaped values whose preceding words are read for a service name or credential word, per text.
MAX_CONTEXT_READS = 400
# A value is judged by its first characters: whole values are redacted however long, but a judgement that
# read each one in full would cost a hostile text of long values quadratic time.
PROBE = 256
# Phone candidates parsed by `phonenumbers` per text (the rest are judged by their shape alone).
MAX_PHONE_PARSES = 48

T = TypeVar("T")


def capped(candidates: Iterable[T], limit: int = MAX_CANDIDATES) -> Iterator[T]:
    return islice(candidates, limit)


def judged_once(judge: Callable[[str], T]) -> Callable[[str], T]:
    """`judge` of a value's first `PROBE` characters, each answer remembered: a hostile field repeats a few
    values thousands of times. Make one per finder call, never one per process: the values are would-be
    secrets."""
    answers: dict[str, T] = {}

    def judged(value: str) -> T:
        probe = value[:PROBE]
        if probe not in answers:
            answers[probe] = judge(probe)
        return answers[probe]

    return judged
