"""The registry of PII and secret kinds, overlap resolution, and `mask()` for any string."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

from reqgate.pipeline.guardrail import credentials, entropy, pii, vendors
from reqgate.pipeline.guardrail.budget import PROBE
from reqgate.pipeline.guardrail.shapes import inside, merged_spans

PII_CHECK = "guardrail.pii"
SECRET_CHECK = "guardrail.secret"


@dataclass(frozen=True)
class Kind:
    name: str
    check_id: str
    singular: str
    plural: str
    find: Callable[[str], Iterable[tuple[int, int]]]
    # Digit-shaped kinds skip URLs, whose paths and query strings are full of ids.
    outside_urls: bool = False


# In priority order: when two matches overlap, their union is redacted under the earlier kind here,
# so a JWT given as `token=eyJ...` counts as a JWT, and an email inside a password as a password.
KINDS: tuple[Kind, ...] = (
    Kind("private_key", SECRET_CHECK, "private key block", "private key blocks", credentials.find_private_keys),
    Kind("jwt", SECRET_CHECK, "JSON Web Token", "JSON Web Tokens", credentials.find_jwt),
    Kind("anthropic_key", SECRET_CHECK, "Anthropic API key", "Anthropic API keys", credentials.find_anthropic),
    Kind("openai_key", SECRET_CHECK, "OpenAI API key", "OpenAI API keys", credentials.find_openai),
    Kind("github_token", SECRET_CHECK, "GitHub token", "GitHub tokens", credentials.find_github),
    Kind("gitlab_token", SECRET_CHECK, "GitLab token", "GitLab tokens", credentials.find_gitlab),
    Kind("slack_token", SECRET_CHECK, "Slack token", "Slack tokens", credentials.find_slack),
    Kind("google_key", SECRET_CHECK, "Google API key", "Google API keys", credentials.find_google),
    Kind("aws_key", SECRET_CHECK, "AWS credential", "AWS credentials", credentials.find_aws),
    Kind("vendor_token", SECRET_CHECK, "API token", "API tokens", vendors.find_vendor_tokens),
    Kind("password_hash", SECRET_CHECK, "password hash", "password hashes", credentials.find_password_hashes),
    Kind("password", SECRET_CHECK, "password or secret value", "password or secret values",
         credentials.find_passwords),
    # Bare random tokens are looked for outside URLs: a URL's path and query are full of ids.
    Kind("random_token", SECRET_CHECK, "random-looking token", "random-looking tokens",
         entropy.find_random_tokens, True),
    # An IBAN before a card: the groups of a printed IBAN can hold a run of digits that passes Luhn.
    Kind("iban", PII_CHECK, "IBAN", "IBANs", pii.find_ibans, True),
    Kind("card", PII_CHECK, "payment card number", "payment card numbers", pii.find_cards, True),
    Kind("email", PII_CHECK, "email address", "email addresses", pii.find_emails),
    Kind("phone", PII_CHECK, "phone number", "phone numbers", pii.find_phones, True),
)
KIND_BY_NAME = {kind.name: kind for kind in KINDS}
# Documentation values are never redacted, whichever finder matched them: an `xxxx` mask, AWS's
# `…EXAMPLE` key, `changeme`, one character repeated after a prefix (`AIzaaaaa…`, `glc_1111…`). Private
# key blocks and password hashes have tests of their own: a sample key may say EXAMPLE in its body.
# A mask is one case: "XxXx" can occur in a random token.
_MADE_UP = re.compile(r"xxxx|XXXX|(?i:example|changeme|change_me|dummy|placeholder|your[_-])")
_OWN_PLACEHOLDER_TESTS = frozenset({"private_key", "password_hash"})


def _made_up(probe: str) -> bool:
    """Whether a hit's first `PROBE` characters are a documentation value."""
    if _MADE_UP.search(probe):
        return True
    rest = [char for char in probe[4:] if char.isalnum()]
    return len(rest) >= 12 and len(set(rest)) == 1 or _repeated_unit(probe)


def _repeated_unit(value: str) -> bool:
    """A short unit typed over and over ("asdfasdfasdf…", "abababab", "12121212"): a key nobody generated."""
    return len(value) >= 8 and any(
        len(value) >= 4 * size and value == (value[:size] * (len(value) // size + 1))[:len(value)]
        for size in range(1, 5))


# Stripe's publishable key: public whether a hit starts at its prefix or after it (an unnamed random token's only:
# under a secret's name, Courier's `pk_test_…` is a secret).
_PUBLISHABLE_PREFIXES = ("pk_live_", "pk_test_")
# Published by design, whatever their shape: content digests (npm's and SRI's `integrity sha512-…`, go.sum's
# `h1:…`, an image's `sha256:…`, yarn's `….tgz#<sha1>`), the body of an SSH public key, of a PUBLIC KEY block or
# of a value named a public key, Stripe's publishable key.
_PUBLISHED_BEFORE = re.compile(r"(?i:sha(?:1|224|256|384|512)|md5|h1)[-:][+/]?$|\.(?:tgz|tar\.gz|zip|jar|whl|gem|crate)#$"
                               r"|(?i:public[_ -]?keys?|pubkey)[\"']?[ \t]*[:=][ \t]*[\"']?$"
                               r"|(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com|"
                               + "|".join(_PUBLISHABLE_PREFIXES) + r")[ \t]*$"
                               # a certificate in SAML metadata or a JWK's chain
                               r"|<(?:ds:)?X509Certificate>\s*$|\"x5c\"[ \t]*:[ \t]*\[[ \t]*\"$")
# Subresource-integrity digests: the algorithm, "-", and standard base64 (no "-" or "_" in it).
_DIGEST_AT = re.compile(r"sha(?:1|256|384|512)-[A-Za-z0-9+/]{20,200}+={0,2}(?![\w-])")
_ARMOUR_WINDOW = 4096
_SOPS_WINDOW = 2048
# Base64 of "-----BEGIN CERTIFICATE" and "-----BEGIN PUBLIC KEY": a Kubernetes manifest's `ca.crt` or `tls.crt`.
_PUBLIC_PEM_BASE64 = ("LS0tLS1CRUdJTiBDRVJUSUZJQ0FUR", "LS0tLS1CRUdJTiBQVUJMSUMgS0VZ")


def _published(text: str, start: int) -> bool:
    """Public or encrypted by a tool that holds the key: a digest, a public key or certificate, a SOPS value."""
    before = text[max(0, start - 40):start]
    opening = text.rfind("ENC[", max(0, start - _SOPS_WINDOW), start)
    if text.startswith("ENC[", start) or opening >= 0 and "]" not in text[opening:start] \
            and "\n" not in text[opening:start]:
        return True  # inside SOPS's `ENC[AES256_GCM,data:…,iv:…,tag:…,type:str]`, always on one line
    if _PUBLISHED_BEFORE.search(before) or _DIGEST_AT.match(text, start) or text.startswith(_PUBLIC_PEM_BASE64, start):
        return True
    # Inside a PUBLIC KEY or CERTIFICATE block: opened before the hit, not closed before it, and nothing but
    # base64 lines between (a truncated block followed by prose hides nothing).
    begin = text.rfind("-----BEGIN ", max(0, start - _ARMOUR_WINDOW), start)
    if begin == -1:
        return False
    label_end = text.find("-----", begin + 11, min(start, begin + 80))
    if label_end == -1 or not any(kind in text[begin:label_end] for kind in credentials.PUBLIC_ARMOUR):
        return False
    body_start = label_end + 5
    headers = _ARMOUR_HEADERS.match(text, body_start, start)
    if headers is not None:
        body_start = headers.end()
    body = _ARMOUR_BREAK.split(text[body_start:start].rstrip("\\"))  # a hit may start at the "n" of "\n"
    return all(len(line) >= 16 and _BASE64_LINE.fullmatch(line) for line in body[:-1] if line) \
        and _BASE64_RUN.fullmatch(body[-1]) is not None


# OpenPGP's armour headers ("Version: GnuPG v2", "Comment: …") and the empty line that ends them (RFC 4880, 6.2).
_ARMOUR_HEADERS = re.compile(r"(?:\r?\n[A-Za-z][\w-]{0,40}+: [^\n]{0,200}+)++\r?\n[ \t]*+\r?\n")
_ARMOUR_BREAK = re.compile(r"(?:\\n|\\r|[\s\"',])+")
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]*")


_PRIORITY = {kind.name: index for index, kind in enumerate(KINDS)}

# Two patterns, each led by a literal, scan far faster than one alternation.
_URL_PATTERNS = (re.compile(r"://[^\s<>\"'`]+"), re.compile(r"www\.(?<![\w.-]www\.)[^\s<>\"'`]+"))
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    kind: str

    def shifted(self, offset: int) -> Hit:
        return Hit(self.start + offset, self.end + offset, self.kind)


def _url_ranges(text: str) -> list[tuple[int, int]]:
    """Spans of URLs, each found from its "://" (or "www.") and extended back over its scheme."""
    ranges = []
    for pattern in _URL_PATTERNS:
        for match in pattern.finditer(text):
            start = match.start()
            while start > 0 and match.start() - start < 32 and text[start - 1].lower() in _SCHEME_CHARS:
                start -= 1
            ranges.append((start, match.end()))
    return merged_spans(ranges)


def detect(text: str, kinds: Collection[str], phone_regions: Sequence[str] = pii.DEFAULT_PHONE_REGIONS) -> list[Hit]:
    """Non-overlapping hits of the named kinds, in text order. Unknown kind names are ignored.
    `phone_regions` are the regions whose national phone formats are recognised."""
    if not text:
        return []
    urls: list[tuple[int, int]] | None = None
    candidates: list[Hit] = []
    for kind in KINDS:
        if kind.name not in kinds:
            continue
        found = pii.find_phones(text, phone_regions) if kind.name == "phone" else kind.find(text)
        screened = kind.check_id == SECRET_CHECK and kind.name not in _OWN_PLACEHOLDER_TESTS
        for start, end in found:
            if end <= start or screened and (_made_up(text[start:min(end, start + PROBE)]) or _published(text, start)
                                              or kind.name == "random_token"
                                              and text.startswith(_PUBLISHABLE_PREFIXES, start)):
                continue
            if kind.outside_urls:
                if urls is None:
                    urls = _url_ranges(text)
                if inside(urls, start, end):
                    continue
            candidates.append(Hit(start, end, kind.name))
    merged = _merged(candidates)
    repeats = list(_repeated_secrets(text, merged))
    return _merged([*merged, *repeats]) if repeats else merged


def _merged(candidates: list[Hit]) -> list[Hit]:
    candidates.sort(key=lambda hit: (hit.start, -hit.end))
    merged: list[Hit] = []
    for hit in candidates:
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            kind = min(last.kind, hit.kind, key=_PRIORITY.__getitem__)
            merged[-1] = Hit(last.start, max(last.end, hit.end), kind)
        else:
            merged.append(hit)
    return merged


# A secret found once by its name (`token = '3aAc…'`) is the same secret where the ticket repeats it without
# one (a curl command, a log line), as a whole token. Only values holding a letter and a digit are looked for
# again: a word-like password such as "postgres" or "spring-xd" also names other things in the same text.
_REPEAT_MIN = 8
_MAX_REPEATED = 32


def _repeatable(value: str) -> bool:
    return (len(value) >= _REPEAT_MIN and any(c.isalpha() for c in value)
            and any(c.isdigit() for c in value))


def _token_char(char: str) -> bool:
    return char.isalnum() or char in "_-"


def _repeated_secrets(text: str, hits: list[Hit]) -> Iterator[Hit]:
    """Other occurrences of the secret values among `hits`, each under its first hit's kind."""
    values: dict[str, str] = {}
    for hit in hits:
        if KIND_BY_NAME[hit.kind].check_id == SECRET_CHECK and len(values) < _MAX_REPEATED:
            value = text[hit.start:hit.end]
            if _repeatable(value):
                values.setdefault(value, hit.kind)
    if not values:
        return
    covered = [(hit.start, hit.end) for hit in hits]
    for value, kind in values.items():
        start = text.find(value)
        while start != -1:
            end = start + len(value)
            whole = not (start and _token_char(text[start - 1])) and not (end < len(text) and _token_char(text[end]))
            if whole and not inside(covered, start, end):
                yield Hit(start, end, kind)
            start = text.find(value, end)


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def redact(text: str, hits: list[Hit]) -> str:
    pieces = []
    position = 0
    for hit in hits:
        pieces.append(text[position:hit.start])
        pieces.append(placeholder(hit.kind))
        position = hit.end
    pieces.append(text[position:])
    return "".join(pieces)


def mask(text: str) -> str:
    """`text` with every PII and secret value of every kind replaced by its placeholder."""
    if not isinstance(text, str):
        text = str(text)
    return redact(text, detect(text, KIND_BY_NAME))
