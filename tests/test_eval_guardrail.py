"""bench/eval_guardrail.py: what counts as a secret of a fixture, and as its leak."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "eval_guardrail.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_guardrail", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_guardrail"] = module
    spec.loader.exec_module(module)
    return module


E = _bench()


def _leaks(text: str, secret: str) -> bool:
    return E.secret_leaks(secret, text)


def test_a_secret_left_in_the_text_leaks() -> None:
    assert _leaks("Page title reads Qa8rT2vLmK after the upgrade", "Qa8rT2vLmK")


def test_a_redacted_secret_does_not_leak_through_its_name() -> None:
    # "codemagic" is in the name and in the picked secret; only the value was redacted
    text = "codemagic SECRET_ACCESS_KEY codemagic123_vAr0u3Fx9lAf3BmeN8gUd3Pm6Vx2F2ay3_ij2C8l"
    assert "[REDACTED:" in E._sent(text)
    assert not _leaks(text, "codemagic123_vAr0u3Fx9lAf3BmeN8gUd3Pm6Vx2F2ay3_ij2C8l")


def test_a_secret_left_anywhere_in_the_text_leaks() -> None:
    # the password's value is redacted, but the same string is sent as the user name
    text = 'Open("User ID=specialbill_user; Password =specialbill_user;Initial Catalog=Bills")'
    assert "[REDACTED:password]" in E._sent(text)
    assert _leaks(text, "specialbill_user")
    assert _leaks("docker login -u ci correct-horse-staple\nDB_PASSWORD=correct-horse-staple", "correct-horse-staple")


@pytest.mark.parametrize(("text", "secret"), [
    ("auth0ClientSecret = 'YOUR_VERY_LONG_AND_SECURE_CLIENT_SECRET_GOES_HERE_12345678900000'",
     "YOUR_VERY_LONG_AND_SECURE_CLIENT_SECRET_GOES_HERE_12345678900000"),
    ("appointedd_SECRET=examplevalidkeyABCDEFGHIJKLMNOPQRSTUVWXY=", "examplevalidkeyABCDEFGHIJKLMNOPQRSTUVWXY="),
    ('String usernamePassword = "application:" + appKey + ":" + appSecret;', "appSecret"),
    ('okta_api_token = 00aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', "00aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
])
def test_placeholders_are_picked_whole_and_not_counted(text: str, secret: str) -> None:
    assert E.secret_of(text) == secret
    assert E.is_placeholder(secret)


def test_a_name_ending_in_a_credential_word_is_not_part_of_the_secret() -> None:
    assert E.secret_of("collect2TOKEN-9c1e7a3f-5b2d-4e4a-8c0f-1b3d5e7a9c2f") == "9c1e7a3f-5b2d-4e4a-8c0f-1b3d5e7a9c2f"


@pytest.mark.parametrize("value", ["rootpass", "adminpass", "thisismypassword"])
def test_a_weak_password_is_no_placeholder(value: str) -> None:
    assert not E.is_placeholder(value)


DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


@pytest.mark.skipif(not (DATA / "secrets-kingfisher").is_dir(), reason="needs ../shared/data")
def test_at_most_one_secret_in_a_hundred_of_each_scanner_corpus_reaches_the_model() -> None:
    # The guardrail's promise, on the scanners' own fixtures: a leak is any 8-character piece still sent.
    for corpus, figures in E.eval_secrets(DATA, details=False).items():
        assert figures["secrets"] > 50, corpus
        assert figures["leaked"] <= figures["secrets"] // 100, (corpus, figures["leaked"], figures["secrets"])
