r"""Personal data finders: emails, phone numbers, payment cards (Luhn) and IBANs (mod 97).

Each finder yields `(start, end)` of the value. Two rules keep them fast and safe on any input:
- A pattern starts with a literal or a narrow character class and checks what precedes it with a
  look-behind placed after that first character, so the regex engine can skip ahead instead of trying
  every position (`0(?<![\w.+/-]0)` rather than `(?<![\w.+/-])0`).
- Every repetition consumes exactly one digit or is bounded by separators, so no input backtracks badly.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence

from reqgate.pipeline.config import DEFAULT_PHONE_REGIONS
from reqgate.pipeline.guardrail.budget import MAX_CANDIDATES, MAX_PHONE_PARSES, capped
from reqgate.pipeline.guardrail.normalize import lower_aligned
from reqgate.pipeline.guardrail.shapes import CJK, code_ranges, inside

Range = tuple[int, int]

# ---- email -----------------------------------------------------------------------------------------

_LOCAL_PUNCTUATION = frozenset("._%+-")
# Top-level domains beyond the two-letter country codes; "obj@module.attr" in code ends in none of them.
_GENERIC_TLDS = frozenset({
    "com", "org", "net", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "mobi", "aero", "coop",
    "museum", "io", "ai", "app", "dev", "cloud", "tech", "online", "site", "website", "xyz", "email", "mail",
    "company", "co", "me", "tv", "digital", "group", "global", "solutions", "services", "systems", "software",
    "agency", "network", "works", "studio", "design", "media", "news", "blog", "shop", "store", "page", "space",
    "live", "life", "world", "today", "center", "consulting", "eu", "asia", "local", "localhost", "test",
    "example", "invalid", "lan", "corp", "internal", "home", "team", "expert", "academy", "health", "bank",
    "insurance", "law", "legal", "finance", "capital", "ventures", "partners", "tools", "engineering", "inc",
    "llc", "ltd", "gmbh", "berlin", "london", "nyc", "paris", "tokyo", "amsterdam", "swiss", "africa",
})
# Labels of letters (any script), digits and inner hyphens; the top level is letters or punycode.
_DOMAIN = re.compile(r"(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.){1,10}(xn--[a-z0-9-]{1,59}|[^\W\d_]{2,24})(?![\w-])")
# "icon@2x.png" is an asset name, not an address.
_FILE_EXTENSIONS = frozenset({
    "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tif", "tiff", "pdf", "js", "mjs", "ts",
    "tsx", "jsx", "css", "scss", "json", "yaml", "yml", "md", "txt", "html", "xml", "csv", "zip", "gz",
    "tar", "py", "rb", "go", "rs", "java", "kt", "swift", "mp4", "mov", "mp3", "wav", "woff", "woff2",
    "ttf", "otf"
})
# "postgres://app:secret@db.internal" (or "app:p@ss@db") holds a password and a host, not an address;
# neither does the
# "git@github.com:org/repo.git" of an SSH remote.
_URL_USER_BEFORE = re.compile(r"://[^\s/]{0,300}$")
_SSH_PATH_AFTER = re.compile(r":[\w~/.-]")
# SSH names its own algorithms "name@domain" (RFC 4251, 6): a log's "kex: server: none,zlib@openssh.com" or
# "chacha20-poly1305@openssh.com" names a compression or cipher, not a person.
_SSH_ALGORITHM_DOMAINS = frozenset({"openssh.com", "libssh.org"})
# The families OpenSSH and libssh name so: compression, ciphers, MACs, key exchange, host keys and extensions.
_SSH_ALGORITHM = re.compile(
    r"(?:zlib|chacha20|aes\d{3}|umac|hmac|curve25519|curve448|sntrup761x25519|mlkem768x25519|diffie-hellman|"
    r"ecdh|ecdsa|ssh|sk-ssh|sk-ecdsa|rsa|ext-info|kex-strict|hostkeys|publickey-hostbound|no-more-sessions|"
    r"keepalive|server-sig-algs|ping|agent-bind|session-bind)(?:-[a-z0-9.-]{1,60})?")


def _plausible_tld(tld: str) -> bool:
    if tld in _FILE_EXTENSIONS:
        return False
    return len(tld) == 2 or tld.startswith("xn--") or not tld.isascii() or tld in _GENERIC_TLDS


def find_emails(text: str) -> Iterator[Range]:
    """Addresses found from each "@": the local part is read backwards (at most 64 characters), the
    domain forwards."""
    at = text.find("@")
    for _ in range(MAX_CANDIDATES):
        if at == -1:
            break
        start = at
        while start > 0 and at - start < 64 and (text[start - 1].isalnum() or text[start - 1] in _LOCAL_PUNCTUATION):
            start -= 1
        # An address has no "..": one before it ends a sentence ("Contact us...jane@acme.io").
        cut = text.rfind("..", start, at)
        if cut != -1:
            start = cut + 2
        before = text[start - 1] if start and cut == -1 else ""
        domain = _DOMAIN.match(text, at + 1)
        if (
            domain is not None
            and start < at
            and text[start].isalnum()
            and not (before in _LOCAL_PUNCTUATION or before.isalnum() or before == "_")
            and _plausible_tld(domain.group(1).lower())
            and not text.endswith(".", start, at)  # no address has a dot before its "@"
            and not _URL_USER_BEFORE.search(text, max(0, start - 300), start)
            and not _SSH_PATH_AFTER.match(text, domain.end())
            and not (domain.group().lower() in _SSH_ALGORITHM_DOMAINS and _SSH_ALGORITHM.fullmatch(text[start:at]))
        ):
            yield start, domain.end()
        at = text.find("@", at + 1)


# ---- phone -----------------------------------------------------------------------------------------

# A stretch of digits and phone separators; the look-behind after the first character keeps a number
# that continues a word, a version or a path out ("v1.2.3", "build-2024", "/api/123").
# A digit group after a space ("DE89 3704 0044 …") continues a longer code, not a number of its own; an area
# code in brackets may start one ("(415) 666-7777 (800) 443-1223").
_PHONE_RUN_MAX = 25
# Chinese, Japanese and Korean leave no space before a number ("请拨打0343 15 555 1212"); a letter of any other
# script before the digits makes them part of a word or an id.
_PHONE_CANDIDATE = re.compile(
    rf"[+(0-9](?<![.+/:@#-][+(0-9])(?<![^\W{CJK}][+(0-9])(?<![0-9A-Z] [+0-9])[0-9 ()./-]{{5,{_PHONE_RUN_MAX - 1}}}+")
_PHONE_RUN_CHAR = re.compile(r"[0-9 ()./-]")
# Words that announce a phone number in the preceding 40 characters, in a few languages. Lower-case.
_PHONE_WORD = re.compile(
    # a word's start: "string", "during" and "hotel" hold no phone word
    r"(?<![a-z])(?:phone|tel|mobile|cell|fax|whatsapp|sms|call|ring|dial|contact|hotline|"
    r"telefon|teléfono|telefono|téléphone|telepono|numero|número|cep|gsm|handy|portable|móvil|celular"
    r")|\u96fb\u8a71|\u624b\u673a|\u7535\u8bdd|\u643a\u5e2f"
)
# Between the word and the number: a few characters on the same line, or a line break and indentation.
_WORD_TO_NUMBER = re.compile(r"[^\n]{0,20}|[^\n]{0,20}\n[ \t]*")


def _announced(lowered: str, word_ends: list[int], start: int) -> bool:
    """Whether a phone word ends shortly before `start` (`word_ends` sorted)."""
    index = bisect_right(word_ends, start) - 1
    return index >= 0 and _WORD_TO_NUMBER.fullmatch(lowered, word_ends[index], start) is not None
_DATE_OR_TIME = re.compile(
    r"(?<!\d)(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|\d{1,2}:\d{2}|\d{4}-\d{2})(?!\d)"
)
_PHONE_GROUP = re.compile(r"[ ()./-]+")
# Dots as phone separators: "555.123.4567", "06.12.34.56.78".
_DOTTED_PHONE = re.compile(r"\(?\d{2,4}\)?(?:\.\d{2,4}){2,4}")
_DOTTED = re.compile(r"\d{1,3}(?:\.\d{1,3}){2,}")  # versions and IP addresses


def _in_table_cell(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start:line_end if line_end != -1 else len(text)]
    return line.count("|") >= 2


def _phone_layer(text: str, lowered: str, start: int, end: int) -> bool:
    """Whether the digits at `[start, end)` may be a phone number here: written with a "+", with
    separators, or announced by a word; never a date, a time, a version or an address."""
    value = text[start:end]
    if _DATE_OR_TIME.search(value) or _DOTTED.fullmatch(value):
        return False
    digits = sum(c.isdigit() for c in value)
    if not 7 <= digits <= 15:
        return False
    announced = _announced(lowered, [m.end() for m in _PHONE_WORD.finditer(lowered, max(0, start - 40), start)], start)
    if len({c for c in value if c.isdigit()}) < 3:
        return False  # "00-00 00-00", "1111111"
    if "." in value and not _DOTTED_PHONE.fullmatch(value.lstrip("+")):
        return False  # "3.0.2.201105022257", "2.188338", "127.0.0.1": versions, measures, addresses
    if " -" in value or "- " in value:
        return False  # "2015 -0700", "127.0.0.2 - 8020"
    if value.startswith("+") or announced:
        return True
    # Bare digit runs are ids, amounts and timestamps unless a word says otherwise.
    groups = [g for g in _PHONE_GROUP.split(value) if g]
    if len(groups) < 2 or digits < 9 or _in_table_cell(text, start, end):
        return False
    if sum(len(g) == 1 for g in groups) > 1:
        return False  # "1 2 3 4 5 6"
    if "(" not in value and (("-" in value) + (" " in value) + ("/" in value)) > 1:
        return False  # mixed separators: stats and tables rather than a written number
    if len(groups) == 2 and not (value.startswith("0") and digits >= 9):
        return False  # "31000-32000", "201204171523-7": ranges and build ids
    return True


# Windows already read by `phonenumbers`, with what it found: a ticket repeats its numbers, and a
# process sees the same signatures again and again.
_PARSED: dict[tuple[str, tuple[str, ...], bool], tuple[Range, ...]] = {}
_PARSED_MAX = 4096


def _parse_window(window: str, regions: tuple[str, ...], announced: bool) -> tuple[Range, ...]:
    """Offsets of the numbers `phonenumbers` finds in `window`. A number with "+" or a phone word need
    only have a possible length; any other must be valid in one of the regions and grouped as that
    region writes it ("100-200-3000" is no number anywhere)."""
    # Imported here: its import takes ~30 ms, and most tickets hold no run of seven digits to ask it about.
    import phonenumbers

    leniency = phonenumbers.Leniency.POSSIBLE if announced else phonenumbers.Leniency.STRICT_GROUPING
    for region in (None, *regions) if window.startswith("+") else regions:
        found = tuple((m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(window, region or "ZZ", leniency=leniency))
        if found:
            return found
    return ()


# An extension after the number is part of it: "x 123", "x456", "ext. 503", "ext: 7246433", "extension 12".
# "x 3 times" is a count; "#4521" may be a ticket.
_EXTENSION = re.compile(r"[ \t]?,?[ \t]*(?:x[ \t]?\d{2,7}|(?:ext|extn|extension|durchwahl|poste)\.?:?[ \t]*\d{1,7})"
                        r"(?![\d\w])")


def find_phones(text: str, regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> Iterator[Range]:
    """Numbers that `phonenumbers` reads for one of `regions` (or for the country their "+" names), behind
    `_phone_layer`. Past `MAX_PHONE_PARSES` distinct candidates in one text, the layer alone decides."""
    lowered = lower_aligned(text)
    code = None
    word_ends: list[int] | None = None
    parses = 0
    region_key = tuple(regions)
    position = 0
    for _ in range(MAX_CANDIDATES):
        candidate = _PHONE_CANDIDATE.search(text, position)
        if candidate is None:
            break
        start, end = candidate.span()
        position = end
        if text[end - 1] in "-./" and text[end:end + 1].isalpha():
            continue  # digits that go on into an identifier: `407966239993-b1h97alk….apps.googleusercontent.com`
        # A run longer than the pattern's bound is cut: a list of numbers ("415-666-7777 - 800-443-1223 - …").
        # The number the cut runs through is read again from the next window, not in pieces.
        cut = end - start == _PHONE_RUN_MAX and _PHONE_RUN_CHAR.match(text, end) is not None
        while end > start and not text[end - 1].isdigit():
            end -= 1
        if sum(c.isdigit() for c in text[start:end]) < 7:
            continue
        if code is None:
            code = code_ranges(text)
        if inside(code, start, start + 1):
            continue
        window = text[start:end]
        if word_ends is None:
            word_ends = [m.end() for m in _PHONE_WORD.finditer(lowered)]
        announced = window.startswith("+") or _announced(lowered, word_ends, start)
        key = (window, region_key, announced)
        parsed = _PARSED.get(key)
        if parsed is None and parses < MAX_PHONE_PARSES:
            parses += 1
            parsed = _parse_window(*key)
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[key] = parsed
        # Past the budget a hostile text gets the layer's word alone: better a number too many redacted.
        found = [(start, end)] if parsed is None else [(start + s, start + e) for s, e in parsed]
        if cut and parsed is not None:
            found = [(s, e) for s, e in found if e < end]
            if found:
                position = found[-1][1]
        for hit_start, hit_end in found:
            if _phone_layer(text, lowered, hit_start, hit_end):
                extension = _EXTENSION.match(lowered, hit_end)
                yield hit_start, extension.end() if extension else hit_end


# ---- payment card ----------------------------------------------------------------------------------

# 12 to 19 digits, compact or grouped by spaces or dashes; the look-behind after the first digit keeps
# numbers that continue an id or a version out.
_CARD = re.compile(r"[1-9](?<![\w+.-][1-9])\d{3}(?:[ -]?\d){8,15}(?![\w-])")
_CARD_GROUP = re.compile(r"[ -]")
_CARD_WORDS = re.compile(r"(?:card|credit|debit|visa|mastercard|amex|maestro|jcb|diners|discover|unionpay|pan|cc|"
                         r"karte|carte|tarjeta|carta|kaart)[^\n]{0,30}$")


def luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


# Issuer ranges (IIN prefixes) with the lengths each scheme issues and the length most of its cards
# have. A number of an unusual length for its scheme is only a card when a word says so: 18-digit ids
# pass Luhn one time in ten.
_ISSUERS: tuple[tuple[str, int, int, frozenset[int], int], ...] = (
    # (scheme, lowest prefix, highest prefix, lengths, usual length); prefixes compared on their own width
    ("Visa", 4, 4, frozenset({13, 16, 19}), 16),
    ("Mastercard", 51, 55, frozenset({16}), 16),
    ("Mastercard", 2221, 2720, frozenset({16}), 16),
    ("American Express", 34, 34, frozenset({15}), 15),
    ("American Express", 37, 37, frozenset({15}), 15),
    ("Diners Club", 300, 305, frozenset({14, 16, 19}), 14),
    ("Diners Club", 36, 36, frozenset({14, 16, 19}), 14),
    ("Diners Club", 38, 39, frozenset({14, 16, 19}), 16),
    ("JCB", 3528, 3589, frozenset({15, 16, 17, 18, 19}), 16),
    # JCB's older ranges, still in the card validators' tables (Braintree's among them): only after a card word,
    # as order, trace and offset ids of 16 digits start so too (no usual length)
    ("JCB", 3088, 3094, frozenset({16}), 0),
    ("JCB", 3096, 3102, frozenset({16}), 0),
    ("JCB", 3112, 3120, frozenset({16}), 0),
    ("JCB", 3158, 3159, frozenset({16}), 0),
    ("JCB", 3337, 3349, frozenset({16}), 0),
    ("JCB", 2131, 2131, frozenset({15}), 15),
    ("JCB", 1800, 1800, frozenset({15}), 15),
    ("UATP", 1, 1, frozenset({15}), 15),
    ("Mir", 2200, 2204, frozenset({16, 17, 18, 19}), 16),
    ("Discover", 6011, 6011, frozenset({16, 17, 18, 19}), 16),
    ("Discover", 644, 649, frozenset({16, 17, 18, 19}), 16),
    ("Discover", 65, 65, frozenset({16, 17, 18, 19}), 16),
    ("UnionPay", 62, 62, frozenset({16, 17, 18, 19}), 16),
    ("RuPay", 60, 60, frozenset({16}), 16),
    ("RuPay", 81, 82, frozenset({16}), 16),
    ("Troy", 9792, 9792, frozenset({16}), 16),
    ("Verve", 506099, 506198, frozenset({16, 18, 19}), 16),
    ("Dankort", 5019, 5019, frozenset({16}), 16),
    ("InstaPayment", 637, 639, frozenset({16}), 16),
    ("Maestro", 50, 50, frozenset(range(12, 20)), 16),
    ("Maestro", 56, 69, frozenset(range(12, 20)), 16),
)


def card_scheme(digits: str) -> tuple[bool, bool]:
    """(issued: some scheme issues this prefix at this length, usual: at its most common length)."""
    issued = usual = False
    for _, low, high, lengths, common in _ISSUERS:
        width = len(str(low))
        if low <= int(digits[:width]) <= high and len(digits) in lengths:
            issued = True
            usual = usual or len(digits) == common
    return issued, usual


def find_cards(text: str) -> Iterator[Range]:
    lowered = None
    for match in capped(_CARD.finditer(text)):
        value = match.group()
        separators = set(_CARD_GROUP.findall(value))
        if len(separators) > 1:
            continue
        if separators and not all(3 <= len(g) <= 6 for g in _CARD_GROUP.split(value)):
            continue
        digits = _CARD_GROUP.sub("", value)
        issued, usual = card_scheme(digits)
        if not issued or not luhn_ok(digits):
            continue
        if not usual:
            lowered = lowered if lowered is not None else lower_aligned(text)
            if not _CARD_WORDS.search(lowered, max(0, match.start() - 40), match.start()):
                continue
        yield match.span()


# ---- IBAN ------------------------------------------------------------------------------------------

IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
    "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
    "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    # Not (or not yet) in SWIFT's registry, but issued: French overseas territories and the Crown
    # dependencies under their own codes, and the countries whose banks use IBANs nationally (as schwifty's
    # registry lists them: the "aspirational" African formats, Iran, Honduras, Yemen).
    "AO": 25, "AX": 18, "BF": 28, "BJ": 28, "BL": 27, "CF": 27, "CG": 27, "CI": 28, "CM": 27, "CV": 25,
    "DZ": 26, "GA": 27, "GF": 27, "GG": 22, "GP": 27, "GQ": 27, "GW": 25, "HN": 28, "IM": 22, "IR": 26,
    "JE": 22, "KM": 27, "MA": 28, "MF": 27, "MG": 27, "ML": 28, "MQ": 27, "MZ": 25, "NC": 27, "NE": 28,
    "PF": 27, "PM": 27, "RE": 27, "SN": 28, "TD": 27, "TF": 27, "TG": 28, "WF": 27, "YE": 30, "YT": 27,
}
# Written compact or in groups: "DE89370400440532013000", "DE89 3704 0044 0532 0130 00", with a space after the
# country ("NO 93 8601 1117 947") or dots where a national account number has them ("NO93.8601.11.17947"). Those two
# only in capitals: "at 83 6434 …", "is 12.3456.…" are words before numbers.
_IBAN = re.compile(r"(?P<head>[A-Za-z](?<![A-Za-z0-9][A-Za-z])(?:(?<=[A-Z])[A-Z] |[A-Za-z])\d{2})"
                   r"(?:[ .-]?[A-Za-z0-9]){11,30}")


# The rest of an IBAN after its first four characters, by total length, each character maybe after one
# space, dot or dash.
_IBAN_BODIES = {length: re.compile(r"(?:[ .-]?[A-Za-z0-9]){%d}" % (length - 4)) for length in set(IBAN_LENGTHS.values())}


def iban_ok(compact: str) -> bool:
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not "02" <= compact[2:4] <= "98":
        return False  # ISO 13616 issues check digits 02 to 98 only
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def find_ibans(text: str) -> Iterator[Range]:
    """IBANs in any case, compact or grouped by spaces or dashes ("DE89 3704…", "al47-2121-…")."""
    position = 0
    for _ in range(MAX_CANDIDATES):
        match = _IBAN.search(text, position)
        if match is None:
            break
        # The pattern may run on over the next words ("BE68539007547034 and Italian IT60…"): the next scan
        # starts right after this candidate's first character, or after the IBAN found.
        position = match.start() + 1
        length = IBAN_LENGTHS.get(match.group()[:2].upper())
        if length is None:
            continue
        # The greedy match may run on into the next word ("... 0130 00 FOR"); keep the country's length.
        body = _IBAN_BODIES[length].match(text, match.end("head"))
        if body is None or (body.end() < len(text) and text[body.end()].isalnum()):
            continue
        end = body.end()
        written = text[match.start():end]
        letters = [c for c in written if c.isalpha()]
        if not (all(c.isupper() for c in letters) or all(c.islower() for c in letters) and "." not in written):
            continue  # "LV80 bANK 0000…": one case or the other, as written by hand or by a system
        compact = written.replace(" ", "").replace("-", "").replace(".", "").upper()
        if iban_ok(compact):
            position = end
            yield match.start(), end
