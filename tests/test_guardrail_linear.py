"""Every finder stays linear on hostile input: 100 KiB built to make a pattern backtrack or to be
nothing but candidates (token-shaped values, repeated separators, long runs) costs each call well under
the 100 ms budget, however the pieces are combined. A call over the budget fails when its cost grows
faster than the text (the whole costs more than ten times a quarter of it) or is five budgets:
a shared machine's load can slow a linear finder, not make it quadratic. `bench/bench_guardrail_linear.py`
prints the times."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reqgate.pipeline.guardrail import mask
from reqgate.pipeline.guardrail.detect import KIND_BY_NAME, KINDS, _repeated_secrets, detect
from tests.hostile_units import FORM_UNITS

SIZE = 100 * 1024
BUDGET_S = 0.1

# Units that each finder must handle when a whole field is made of them.
UNITS = [
    "1", "1 ", "12-", "+1 ", "0 12 ", "a.", "a@b.", "x@a-", "-----BEGIN RSA PRIVATE KEY-----", "A-", "a_",
    "password: ", 'password="', "https://", "a://b:", "DE89 ", "eyJaaaaa.", "sk-", "Bearer ", "+1 415 555 0132, ",
    "(415) 555-01", "ghp_", "aB3xY9kL2mN8pQ4r ", "aB3/", "deadbeef", "key: ", "a-b-", "<password>", "pwd=",
    "$2b$12$", "4111 1111 1111 1111 ", "token abc123def456 ", "token:\n", "tskey-", "AKIA", "xoxb-", "SG.",
    "age1", "$argon2id$", "://u:p@", "-u a:", "Authorization: ", "==", "\\n", '" + "', "%40", "=\n",
    "cloudsmith 9f2c4e1a7b3d5f60718293a4b5c6d7e8 ", "/webhook/", "keyX-", "aB3xY9kL2mN8pQ4r/",
    "kind: Secret\n", "data:\n", "  k: v4lue9\n", " data:\n  a: b\n", "token: " + "_" * 60 + "! ",
    "password=" + "a_" * 40 + "b! ", "identified by '", "echo a | docker login ", "Cookie: a=", "redis://:",
    "\n-u {aB3xY9kL2m}:", " -u q7rt2zpx9mkc4vwl8nbd3hsy:", "password123. ", 'password: "{Ab12Cd34Ef}" ',
    "h:1:d:u:", "h:1:d:u:Xk3fj29dkQ\n", "vault kv put s/x ", "a=Xk3fj29dk ", "password: !!binary ",
    "the api key for the staging server is ", "token is ", "aB3xY9kL2mN8pQ4rT5.", "ffio-u-aB3xY9kL2mN8pQ4rT5vW ",
    "- name: A_TOKEN\n  value: ", "<name>a.password</name><value>", "--name a_password --value ", "sha512-",
    "-----BEGIN PUBLIC KEY-----\n", "ssh-rsa ", "asdfasdf",
    "|", "|| ", "| password | Xk3fj29dk |\n", "||User||Password||\n", "|---", "login: a / ", "a/",
    "https://aB3xY9kL2mN8pQ4rT5vWxyz@", "the password is ",
]
UNITS += FORM_UNITS


def _too_slow(kind_find, text: str) -> float | None:
    """The finder's time on `text` when it breaks the bound, else None."""
    full = _cpu_time(kind_find, text)
    if full < BUDGET_S:
        return None
    quarter = _cpu_time(kind_find, text[:len(text) // 4])
    # Linear: the whole costs about four quarters (up to six measured here); quadratic: sixteen.
    return round(full, 3) if full >= 5 * BUDGET_S or full > 10 * quarter else None


def _cpu_time(kind_find, text: str) -> float:
    """Best of three CPU times, so that other work on a shared machine does not count."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for _hit in kind_find(text):
            pass
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("unit", UNITS)
def test_each_finder_is_fast_on_a_field_made_of_one_unit(unit):
    text = (unit * (SIZE // len(unit) + 1))[:SIZE]
    slow = {kind.name: t for kind in KINDS if (t := _too_slow(kind.find, text)) is not None}
    assert slow == {}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.sampled_from(UNITS), min_size=1, max_size=6))
def test_each_finder_is_fast_on_mixed_hostile_units(units):
    pattern = "".join(units)
    text = (pattern * (SIZE // len(pattern) + 1))[:SIZE]
    slow = {kind.name: t for kind in KINDS if (t := _too_slow(kind.find, text)) is not None}
    assert slow == {}


@pytest.mark.parametrize("field", [
    "token = 'aB3xY9kL2mN8pQ4r' " + "aB3xY9kL2mN8pQ4r " * 6000,
    "".join(f"api_key_{i}=aB3xY9kL{i:08d} " for i in range(200)) + "aB3xY9kL00000001 aB3xY9kL00000002 " * 3000,
])
def test_repeats_of_found_secrets_are_redacted_in_linear_time(field):
    text = field[:SIZE]
    hits = detect(text, KIND_BY_NAME)
    assert _too_slow(lambda t: _repeated_secrets(t, hits), text) is None
    assert "aB3xY9kL00000001" not in mask(text) and "aB3xY9kL2mN8pQ4r" not in mask(text)
