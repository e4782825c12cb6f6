"""Shapes of text the secret finders share: what a UUID is, what a word inside an identifier is, and
whether a value is made of words."""

from __future__ import annotations

import base64
import binascii
import json
import re
from bisect import bisect_right

from reqgate.pipeline.guardrail.letter_pairs import COMMON_PAIRS

UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# Kana, hanzi and hangul (with their full-width forms): scripts written without spaces between words.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
# Objects a payment or messaging API names, not unlocks, by their id, pasted into every bug about them: Stripe's
# payment intents, customers, charges, events ("pi_3PQk2LJx…", "cus_Q7vR1Stk…"; its keys `sk_live_`, `rk_`, `whsec_`
# are vendor formats) and Twilio's messages, services, numbers and calls ("SM" and 32 hexadecimal digits; its
# account SID "AC…" goes with the auth token and stays a vendor format).
OBJECT_ID = re.compile(r"(?:pi|pm|py|cus|ch|in|ii|il|sub|si|evt|txn|po|seti|src|prod|price|acct|cs|cn|dp|du|tr|"
                       r"trr|req|ba|card|file|link|ipi|pyr|mbur|tok|btok)_[A-Za-z0-9]{14,40}"
                       r"|(?:SM|MM|MG|PN|CA|RE|CF|QU|WS|TR|IS|VA)[0-9a-f]{32}")
# An ARN up to its resource (`arn:aws:kms:eu-central-1:444502138732:key/`, also with CloudFormation's `${AWS::Region}`):
# what follows names a key or a secret, it is not one.
ARN_BEFORE = re.compile(r"arn:(?:[\w.-]|\$\{[\w:.-]{1,40}+\})+:[\w.-]+:(?:[\w.*?-]|\$\{[\w:.-]{1,40}+\})*:"
                        r"(?:\d|\$\{[\w:.-]{1,40}+\})*:(?:[\w./-]+[:/])?$")
ARN_LOOK_BACK = 160
# Words that name a position in a listing ("nextPageToken", "continuation token", "endCursor", `--starting-token`):
# the token beside them pages through results and logs nobody in.
CURSOR_WORDS = frozenset({"page", "pagination", "paging", "continuation", "cursor", "scroll", "sync", "starting"})
# Words that make a token a handle on one request or resource, logging nobody in: AWS EFS's `creation_token`,
# an `idempotency_token`, an Auto Scaling hook's `LifecycleActionToken`.
HANDLE_WORDS = frozenset({"creation", "idempotency", "lifecycle"})
# Everyday words and programs whose names end in a credential word: "bypass: true", `SSH_ASKPASS`, "monkey".
ORDINARY_CREDENTIAL_ENDINGS = frozenset({"monkey", "turkey", "hockey", "jockey", "whiskey", "donkey", "bypass", "compass",
                                         "surpass", "trespass", "overpass", "underpass", "askpass", "hotkey", "passkey",
                                         "breadcrumb", "breadcrumbs",
                                         "jsonwebtoken",  # the JWT library's name: `io.jsonwebtoken:jjwt-api:0.11.5`
                                         "sitekey", "hostkey"})  # reCAPTCHA's and Turnstile's site key: public in the page
# A word of three or more letters in one case, or capitalised: what identifiers and prose are built of.
WORD = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")

_CONSONANTS = re.compile(r"[b-df-hj-np-tv-xz]{5}")
# A word's letter pairs are mostly common ones ("cgroups" and "jira" have two in three, "proxy" and "web" half).
_COMMON_SHARE = 0.5


# Words of small letters, capitalised or not: the pieces of camelCase. A random mixed-case body holds runs of
# capitals that WORD would count.
_CAMEL_WORD = re.compile(r"[A-Z]?[a-z]{3,}")


# Letters typed in the alphabet's order: four in a row are in no word ("abcd", "KLMN"), and fixtures that stand in
# for a key ("ABCDEFG-HIJKLMN-…", "abcDEFGhijKL…", "sk_5678_234567_abcdefabcdef…") are made of them.
_ALPHABET_RUN = 4
_TYPED_SHARE = 0.6
# Half the alphabet or more in one case and in order.
_LISTED = re.compile("|".join(run[start:start + 13] for run in ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
                              for start in range(14)))


def alphabet_typed(value: str) -> bool:
    """Mostly letters typed in the alphabet's order, whatever their case and whatever stands between them: a
    made-up key, neither words nor a name."""
    if _LISTED.search(value):
        return False  # an alphabet listed whole, in one case, is a character set: `BASE64_CHARS = 'ABCDEFGHIJKLM…'`
    letters = [c for c in value.lower() if "a" <= c <= "z"]
    if len(letters) < 2 * _ALPHABET_RUN:
        return False
    typed = run = 0
    for position, letter in enumerate(letters):
        run = run + 1 if position and ord(letter) == ord(letters[position - 1]) + 1 else 1
        if run == _ALPHABET_RUN:
            typed += _ALPHABET_RUN  # the run is long enough: its letters count from its first
        elif run > _ALPHABET_RUN:
            typed += 1
    return typed >= _TYPED_SHARE * len(letters)


def pronounceable(value: str, capitals: bool = True) -> bool:
    """Mostly pronounceable words ("insertMessageStmt", "FetcherCacheTest"). A piece with no vowel, five
    consonants in a row ("Jrtpvyd", "jklmn") or mostly letter pairs that words seldom hold ("abcd", "ijkl",
    "Dfulghxvvm") is not a word: random letters and alphabet runs make such pieces. Without `capitals`, runs
    of capitals ("HTTPS", or "WNTECOT" in a random token) are not words."""
    worded = 0
    for match in (WORD if capitals else _CAMEL_WORD).finditer(value):
        piece = match.group().lower()
        vowels = sum(c in "aeiouy" for c in piece)
        common = sum(piece[i:i + 2] in COMMON_PAIRS for i in range(len(piece) - 1))
        if vowels * 5 >= len(piece) and not _CONSONANTS.search(piece) and common >= _COMMON_SHARE * (len(piece) - 1):
            worded += len(piece)
    return worded > len(value) * 0.45


_FAKE = re.compile(r"fake", re.IGNORECASE)


def says_fake(value: str) -> bool:
    """Whether "fake" marks `value` as made up ("hf_FakeFakeFake…", "my-fake-token"). Scanners' test
    tokens also hide the word inside a random body to pass push protection ("ZUfake+eKo3qNxLD…"): with 20
    or more random letters and digits besides it the value is still a token."""
    if _FAKE.search(value) is None:
        return False
    rest = "".join(char for char in _FAKE.sub("", value) if char.isalnum())
    random_rest = (len(rest) >= 20 and len(set(rest)) >= 12 and any(c.isdigit() for c in rest)
                   and any(c.isupper() for c in rest) and any(c.islower() for c in rest)
                   and not pronounceable(rest))
    return not random_rest


# Code as tickets write it: Markdown fences and Jira's {code} and {noformat} blocks (found by pairing their
# markers in one pass: a pattern from each opener to its closer rescans the text for every unclosed opener),
# and inline code. A block left open runs to the end of the text; `closed` leaves it out (an open fence must
# not hide what follows).
_BLOCK_MARKER = re.compile(r"```|\{(code|noformat)(?::[^}\n]{0,200})?\}")
_INLINE_CODE = re.compile(r"`[^`\n]{1,500}`")


def _blocks(text: str, closed: bool) -> list[tuple[int, int]]:
    spans = []
    opener: re.Match[str] | None = None
    for marker in _BLOCK_MARKER.finditer(text):
        if opener is None:
            opener = marker
        elif marker.group(1) == opener.group(1):  # the same kind closes: ``` after ```, {code} after {code:…}
            spans.append((opener.start(), marker.end()))
            opener = None
    if opener is not None and not closed:
        spans.append((opener.start(), len(text)))
    return spans


def code_ranges(text: str, closed: bool = False) -> list[tuple[int, int]]:
    """The code spans of `text`, sorted and merged (for `inside`)."""
    if "`" not in text and "{code" not in text and "{noformat" not in text:
        return []
    return merged_spans([*_blocks(text, closed), *(m.span() for m in _INLINE_CODE.finditer(text))])


def merged_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` sorted, with those that overlap or touch joined: the form `inside` searches."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def inside(ranges: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether `[start, end)` lies within one of the sorted, disjoint `ranges`."""
    index = bisect_right(ranges, (start, float("inf"))) - 1
    return index >= 0 and ranges[index][0] <= start and end <= ranges[index][1]


# Names of values published by design: a domain's verification record (`google-site-verification=…`), a CAPTCHA's
# site key (`data-sitekey`, `RECAPTCHA_SITE_KEY`).
PUBLISHED_VALUE_NAME = r"(?:site|domain)-verification|site[-_]?key"


def names_site_key(words: list[str]) -> bool:
    """Whether a name's words end in "site key" (reCAPTCHA's `siteKey`, `RECAPTCHA_SITE_KEY`): published in a page."""
    return words[-2:] == ["site", "key"]

# Base64 of JSON opens with "ey" (`{"`) or "W" (`[`). What it holds is data when no key names a credential and no
# string in it could be one (8 or more characters mixing letters and digits, a URL, an address); a longer blob is
# not judged.
_JSON_HEAD = ("eyJ", "eyAi", "W3", "WyJ")
_BASE64_DATA_MAX = 4096
_CREDENTIAL_KEY = re.compile(r"auth|pass|pw|secret|token|key|cred|cookie|session|sig|dsn|conn|cert|^sid$|^sk$",
                             re.IGNORECASE)
_MIXED = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[^\s]{8,}")


def _harmless_json(node: object) -> bool:
    if isinstance(node, dict):
        return all(not _CREDENTIAL_KEY.search(str(key)) and _harmless_json(value) for key, value in node.items())
    if isinstance(node, list):
        return all(_harmless_json(item) for item in node)
    if isinstance(node, str):
        return not _MIXED.search(node) and "://" not in node and "@" not in node
    return True


def base64_of_data(value: str) -> bool:
    """Whether `value` is base64 of a JSON document with nothing in it a credential could be (a ConfigMap's
    `{"locale": "pt-BR"}`, a Pub/Sub message's event)."""
    if not value.startswith(_JSON_HEAD) or "." in value or len(value) > _BASE64_DATA_MAX:
        return False  # a JWT's parts are joined with dots
    padded = value.replace("-", "+").replace("_", "/") + "=" * (-len(value) % 4)
    try:
        decoded = json.loads(base64.b64decode(padded, validate=True).decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return isinstance(decoded, (dict, list)) and _harmless_json(decoded)
