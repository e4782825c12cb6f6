"""Unnamed random tokens: a long run of letters and digits that no word, path or digest explains.

A vendor table never lists every provider, and a credential is often pasted bare. What gives such a
token away is its shape: long, letters of both cases and digits, changing character class at almost
every step. What must be left alone has a shape too: commit hashes and hex digests (one case of hex),
UUIDs, identifiers made of words (`FetcherCacheTest_LocalCachedExtract`), paths and URLs (the registry
skips URLs for this kind), version strings and numbers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from reqgate.pipeline.guardrail.budget import PROBE, capped, judged_once
from reqgate.pipeline.guardrail.shapes import OBJECT_ID, PUBLISHED_VALUE_NAME, WORD, base64_of_data

Range = tuple[int, int]

# Runs of base64/base62/url-safe characters; "." and ":" end a run, so host names and versions are cut (a
# random run's dot-joined tail is added afterwards, see `_dotted_end`).
_MIN_LENGTH = 20
# Only runs long enough to be a token are candidates, so words never count against the budget.
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_-](?<![A-Za-z0-9+/_.-].)[A-Za-z0-9+/_-]{%d,}+=*+" % (_MIN_LENGTH - 1))
_HEX = re.compile(r"(?:0x)?[0-9a-f-]+|(?:0x)?[0-9A-F-]+")
_JOINERS = re.compile(r"[-_/+]+")
# A part that only a path or a name has: a lower-case word, a capitalised word, a short all-digit date part.
_PATH_WORD = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}|(?:19|20)\d\d")


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _class(char: str) -> int:
    return 0 if char.isdigit() else 1 if char.isupper() else 2 if char.islower() else 3


def _random_part(part: str) -> bool:
    """A piece between joiners that is machine-made: not a number, a hex group, a word or a CamelWord."""
    if len(part) < 4 or part.isdigit() or _HEX.fullmatch(part):
        return False
    changes = sum(_class(a) != _class(b) for a, b in zip(part, part[1:], strict=False))
    worded = sum(len(m.group()) for m in WORD.finditer(part))
    return changes >= 3 and worded <= len(part) * 0.45


def looks_random(token: str) -> bool:
    """Whether `token` (no joiners at its ends) has the shape of a machine-made secret."""
    # Judged by its first characters (it is redacted whole): a hostile run of 100 KiB costs what a key does.
    core = token.rstrip("=")[:PROBE]
    if len(core) < _MIN_LENGTH or _HEX.fullmatch(core):
        return False
    digits = sum(c.isdigit() for c in core)
    uppers = sum(c.isupper() for c in core)
    lowers = sum(c.islower() for c in core)
    if digits < 2 or uppers + lowers < 6:
        return False
    # Built of parts (a path, a file name with a date, "scheduler-<uuid>"): most of it must be random parts.
    parts = _JOINERS.split(core)
    if len(parts) > 1:
        if any(_PATH_WORD.fullmatch(part) for part in parts):
            return False  # a path or a name: "uploads/<hash>/image", "Screen_Shot_2022-04-26_at_7"
        if sum(len(part) for part in parts if _random_part(part)) < len(core) * 0.6:
            return False
    # Share of the token made of words; random strings hold few words of 3+ letters.
    worded = sum(len(m.group()) for m in WORD.finditer(core))
    if worded > len(core) * 0.45:
        return False
    changes = sum(_class(a) != _class(b) for a, b in zip(core, core[1:], strict=False))
    if changes < len(core) * 0.3:
        return False
    if not (uppers and lowers) and not (len(core) >= 32 and digits >= 8 and changes >= len(core) * 0.4):
        return False  # one-case letters: part numbers and serials ("AB12CD34EF56GH78IJ90") unless very long
    return shannon_entropy(core) >= 3.5


# Base64 of what is public or not a credential: images (PNG, JPEG, GIF) and public keys.
_PUBLIC_BASE64 = ("iVBORw0KGgo", "/9j/", "R0lGOD", "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A", "MIICIjANBgkqhkiG9w0BAQEFAAOCAg8A",
                  "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE", "AAAAB3NzaC1yc2E", "AAAAC3NzaC1lZDI1NTE5", "PHN2Zy",
                  # RSA 1024 and 3072, Ed25519 public keys (a DKIM record's `p=`)
                  "MIGfMA0GCSqGSIb3DQEBAQUAA4GN", "MIIBojANBgkqhkiG9w0BAQEFAAOCAY8A", "MCowBQYDK2VwAyEA")


# Ids with a published shape of their own: Gerrit's Change-Id ("I" and 40 hexadecimal digits), Okta's objects
# ("00u…" users, "00g…" groups, "0oa…" apps: 20 characters), IPFS's content address of a file ("Qm" and 44 base58
# characters: a hash of public content).
_KNOWN_ID = re.compile(r"I[0-9a-f]{40}|0(?:0[a-z]|oa)[0-9A-Za-z]{17}|Qm[1-9A-HJ-NP-Za-km-z]{44}")
# Headers that carry a request's id: `X-Amz-Cf-Id: …`, `x-amz-id-2: …`, `X-Request-Id: …`.
_REQUEST_ID_BEFORE = re.compile(r"(?i:x-amz-cf-id|x-amz-id-2|x-amzn?-request-?id|x-request-id|x-correlation-id|"
                                r"x-trace-id|request[- ]id)[ \t]*:[ \t]*$")
# After a name of a value published by design (a verification record, a CAPTCHA's site key):
_PUBLIC_BEFORE = re.compile(f"(?i:{PUBLISHED_VALUE_NAME})" r"[\"']?[ \t]*[:=][ \t]*[\"']?$"
                            # Elastic Cloud's deployment id, the host and ids in base64 after a label
                            r"|(?i:cloud[._]id)[\"']?[ \t]*[:=][ \t]*[\"']?[\w.-]{0,40}:$"
                            # a host key's fingerprint: `ssh-ed25519 255 VPAiq3…`, `SHA256:VPAiq3…`
                            r"|(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp\d{3})[ \t]+\d{3,4}[ \t]+$|SHA256:$")


# An opaque position in a listing: `"nextPageToken": "…"`, `"_scroll_id":"…"`, `"endCursor": "…"`,
# `--starting-token …`.
_CURSOR_BEFORE = re.compile(r"(?i:cursor|(?:page|next|starting|continuation)[-_]?token|scroll_?id|continuation)[\"']?"
                            r"(?:[ \t]*[:=][ \t]*|[ \t]+)[\"']?$")


# A JSON Web Key's public members: an RSA key's modulus `"n"`, an elliptic curve's point `"x"`, `"y"` (a private key's
# `"d"`, `"p"`, `"q"` stay secrets).
_JWK_PUBLIC_BEFORE = re.compile(r"\"(?:n|x|y)\"[ \t]*:[ \t]*\"$")


# A MIME multipart boundary (`Content-Type: multipart/form-data; boundary=…`) is a random string whose only
# job is to be absent from the parts; a pasted HTTP dump repeats it before every part (`--…`).
_BOUNDARY = re.compile(r"(?i:boundary)=\"?([0-9A-Za-z'()+_,./:=?-]{1,70})")


def _boundaries(text: str) -> frozenset[str]:
    if "oundary=" not in text and "OUNDARY=" not in text:
        return frozenset()
    return frozenset(m.group(1).strip("+/_-") for m in capped(_BOUNDARY.finditer(text)))


def find_random_tokens(text: str) -> Iterator[Range]:
    random = judged_once(looks_random)
    boundaries = _boundaries(text)
    for match in capped(_LONG_RUN.finditer(text)):
        start, end = match.span()
        # Joiners at the ends are punctuation, not the token ("--", a trailing "_").
        while start < end and text[start] in "+/_-":
            start += 1
        while end > start and text[end - 1] in "+/_-":
            end -= 1
        if text.startswith(_PUBLIC_BASE64, start) or text[start:end] in boundaries:
            continue
        if end - start < _MIN_LENGTH or OBJECT_ID.fullmatch(text, start, end) \
                or _KNOWN_ID.fullmatch(text, start, end) or _CURSOR_BEFORE.search(text, max(0, start - 40), start) \
                or _REQUEST_ID_BEFORE.search(text, max(0, start - 40), start) \
                or _PUBLIC_BEFORE.search(text, max(0, start - 40), start) \
                or _JWK_PUBLIC_BEFORE.search(text, max(0, start - 12), start):
            continue
        if base64_of_data(text[start:end]):
            continue
        if random(text[start:end].rstrip("=")):
            yield start, _dotted_end(text, end)
        elif (part := _prefixed_part(text, start, end)) is not None and random(text[part[0]:part[1]]):
            # A short name glued before a random tail is the token's own prefix ("ramp_sec_…"): redacted with it,
            # as scanners report it; a name after the random part ("<random>-linux") stays.
            yield (start, _dotted_end(text, end)) if part[1] == end and part[0] - start <= _PREFIX_MAX else part


# A name before a long random part is a token's prefix ("ffio-u-<64 random>", "myapp_<40 random>"); the part is
# judged on its own, at a length no slug or identifier part reaches. "/" and "+" are base64's own characters, so a
# blob is never cut at them.
_PREFIX_JOINERS = re.compile(r"[-_]+")
_PREFIXED_PART = 32
_PREFIX_MAX = 24


def _prefixed_part(text: str, start: int, end: int) -> Range | None:
    longest: Range | None = None
    position = start
    for joiner in capped(_PREFIX_JOINERS.finditer(text, start, end)):
        if longest is None or joiner.start() - position > longest[1] - longest[0]:
            longest = (position, joiner.start())
        position = joiner.end()
    if longest is None:
        return None
    if end - position > longest[1] - longest[0]:
        longest = (position, end)
    return longest if longest[1] - longest[0] >= _PREFIXED_PART else None


# A random token's further dot-joined segments (a JWT-like "<header>.<payload>.<signature>"): "." ends a run
# so that host names and versions are cut, but a segment of letters and digits after a random one is its tail.
_SEGMENT = re.compile(r"\.([A-Za-z0-9_-]{8,}+)")


def _dotted_end(text: str, end: int) -> int:
    while (segment := _SEGMENT.match(text, end)) is not None:
        value = segment.group(1)[:PROBE]
        if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)) or _HEX.fullmatch(value):
            break
        end = segment.end()
    return end
