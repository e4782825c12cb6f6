"""Personal data in the forms other validators' test suites write it: IBANs of every issuing country,
internationalised addresses, cards, phone numbers with extensions. The values are
built here (check digits computed), not copied from those suites."""

from __future__ import annotations

import random

import pytest

from reqgate.pipeline.guardrail import mask
from reqgate.pipeline.guardrail.pii import IBAN_LENGTHS, luhn_ok

_RANDOM = random.Random(20261124)


def _iban(country: str, check: str | None = None) -> str:
    bban = "".join(_RANDOM.choice("0123456789") for _ in range(IBAN_LENGTHS[country] - 4))
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{check or f'{98 - int(digits) % 97:02d}'}{bban}"


def _grouped(value: str) -> str:
    return " ".join(value[i:i + 4] for i in range(0, len(value), 4))


@pytest.mark.parametrize("country", ["DZ", "SN", "CI", "MA", "IR", "HN", "YE", "RE", "JE", "AX"])
def test_ibans_of_countries_outside_swifts_registry_are_redacted(country):
    iban = _iban(country)
    assert mask(f"Refund to {iban} please.") == "Refund to [REDACTED:iban] please."
    assert mask(f"Refund to {_grouped(iban)} please.") == "Refund to [REDACTED:iban] please."


@pytest.mark.parametrize("written", ["NO 93 8601 1117 947", "NO93.8601.11.17947", "NO 93 8601.11.17947"])
def test_an_iban_with_a_space_after_the_country_or_a_national_account_number_dots_is_redacted(written):
    assert mask(f"Pay to {written} by Friday.") == "Pay to [REDACTED:iban] by Friday."


@pytest.mark.parametrize("text", ["Pay to NO 94 8601 1117 947 by Friday.", "Version NO93.8601.11.17948 shipped.",
                                  "No 93 8601 1117 947 is the count.", "the count at 61 1904 3002 3457 3201 was logged",
                                  "the build no93.8601.11.17947 passed"])
def test_a_wrong_check_digit_or_a_mixed_case_country_is_no_iban_however_written(text):
    assert mask(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("我的电话号码是+44 20 7946 0958，明天打给我", "我的电话号码是[REDACTED:phone]，明天打给我"),
    ("電話は+81 3-1234-5678です", "電話は[REDACTED:phone]です"),
    ("전화+82 2-312-3456 주세요", "전화[REDACTED:phone] 주세요"),
])
def test_a_phone_number_glued_to_chinese_japanese_or_korean_text_is_redacted(text, masked):
    assert mask(text) == masked


def test_digits_glued_to_a_latin_word_stay_part_of_it():
    assert mask("Build abc+44 20 7946 0958 failed") == "Build abc+44 20 7946 0958 failed"


def test_iban_check_digits_00_01_and_99_are_never_issued():
    for check in ("00", "01", "99"):
        iban = _iban("GB", check)
        assert mask(f"Account {iban}") == f"Account {iban}"


@pytest.mark.parametrize("address", ["ñoñó@example.com", "я@пример.рф", "我買@example.com"])
def test_internationalised_addresses_are_redacted_whole(address):
    assert mask(f"Contact {address} today") == "Contact [REDACTED:email] today"


def test_a_dot_before_the_at_sign_is_no_address_and_an_ellipsis_ends_the_sentence_before_one():
    assert mask("trailing.@example.com") == "trailing.@example.com"
    assert mask("Contact us...jane.doe@acme.io") == "Contact us...[REDACTED:email]"


@pytest.mark.parametrize("log", [
    "[sshd-scheduler-1] --- jsch: kex: server: none,zlib@openssh.com",
    "Ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com",
    "KexAlgorithms curve25519-sha256@libssh.org,diffie-hellman-group14-sha256",
])
def test_ssh_algorithm_names_are_not_addresses(log):
    assert mask(log) == log


@pytest.mark.parametrize("address", ["djm@openssh.com", "jean-pierre@libssh.org", "dtucker2@openssh.com"])
def test_a_person_at_an_ssh_algorithm_domain_is_still_an_address(address):
    assert mask(f"Ask {address} about it") == "Ask [REDACTED:email] about it"


def _luhn_number(prefix: str, length: int) -> str:
    while True:
        number = prefix + "".join(_RANDOM.choice("0123456789") for _ in range(length - len(prefix)))
        if luhn_ok(number):
            return number


@pytest.mark.parametrize("prefix", ["3088", "3096", "3112", "3158", "3337"])
def test_cards_of_jcb_s_older_ranges_are_redacted_after_a_card_word(prefix):
    number = _luhn_number(prefix, 16)
    assert mask(f"Refund to JCB card {number} please") == "Refund to JCB card [REDACTED:card] please"
    # order, trace and offset ids of 16 digits start so too
    assert mask(f"Order #{number} shipped") == f"Order #{number} shipped"


def test_a_card_of_an_unusual_length_needs_a_card_word():
    visa19 = _luhn_number("4", 19)
    assert mask(f"Paid with Visa card {visa19}.") == "Paid with Visa card [REDACTED:card]."
    # ids and rows of measurements pass Luhn one time in ten
    assert mask(f"Transforming tweet with id {visa19}") == f"Transforming tweet with id {visa19}"
    row = " ".join(visa19[i:i + 4] for i in range(0, 19, 4))
    assert mask(f"Latency samples (ms): {row}") == f"Latency samples (ms): {row}"


@pytest.mark.parametrize("text", ["Call 415-666-7777 ext. 503 today", "Call (800) 901-3355 x 724 today",
                                  "Call +44 20 3456 7890 extension 12 today", "Call 312-515-2239 ext:12 today"])
def test_a_phone_extension_is_redacted_with_its_number(text):
    assert mask(text) == "Call [REDACTED:phone] today"


def test_counts_and_ranges_are_no_phone_numbers():
    assert mask("Error count (500) 1234567 hits") == "Error count (500) 1234567 hits"
    assert mask("Ports 31000-32000 are open.") == "Ports 31000-32000 are open."


@pytest.mark.parametrize("numbers", [
    ("650-253-4561", "455-234-3451"),
    ("415-666-7777", "800-443-1223", "212-443-1223", "650-443-1223"),
    ("(415) 666-7777", "(800) 901-3355"),
])
def test_every_number_of_a_list_is_redacted_whole(numbers):
    for joiner in (" - ", " -- ", ", ", " or "):
        masked = mask("Support lines: " + joiner.join(numbers))
        assert masked == "Support lines: " + joiner.join(["[REDACTED:phone]"] * len(numbers)), masked


@pytest.mark.parametrize("text", ["<string>4079662399</string>", "took 4079662399 ns during startup",
                                  "hotel 4079662399", "phone build 407966239993-b1h97"])
def test_a_phone_word_inside_another_word_or_digits_running_into_an_identifier_is_no_phone(text):
    assert mask(text) == text


@pytest.mark.parametrize("text", ["Ring me on 4079662399", "Tel: 4079662399", "mobile\n  4079662399"])
def test_a_phone_word_of_its_own_still_announces_a_bare_number(text):
    assert "4079662399" not in mask(text)
