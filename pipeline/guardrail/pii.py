r"""Personal data finders: emails, phone numbers, payment cards (Luhn) and IBANs (mod 97).

Each finder yields `(start, end)` of the value. Two rules keep them fast and safe on any input:
- A pattern starts with a literal or a narrow character class and checks what precedes it with a
  look-behind placed after that first character, so the regex engine can skip ahead instead of trying
  every position (`0(?<![\w.+/-]0)` rather than `(?<![\w.+/-])0`).
- Every repetition consumes exactly one digit or is bounded by separators, so no input backtracks badly.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

from reqgate.pipeline.guardrail.normalize import lower_aligned

Range = tuple[int, int]

# ---- email -----------------------------------------------------------------------------------------

_LOCAL_CHARS = frozenset(string.ascii_letters + string.digits + "._%+-")
_DOMAIN = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?![\w-])")
# "icon@2x.png" is an asset name, not an address.
_FILE_EXTENSIONS = frozenset({
    "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tif", "tiff", "pdf", "js", "mjs", "ts",
    "tsx", "jsx", "css", "scss", "json", "yaml", "yml", "md", "txt", "html", "xml", "csv", "zip", "gz",
    "tar", "py", "rb", "go", "rs", "java", "kt", "swift", "mp4", "mov", "mp3", "wav", "woff", "woff2",
    "ttf", "otf"
})
# "postgres://app:secret@db.internal" holds a password and a host, not an address; neither does the
# "git@github.com:org/repo.git" of an SSH remote.
_URL_USER_BEFORE = re.compile(r"://[^\s/@]{0,100}:$")
_SSH_PATH_AFTER = re.compile(r":[\w~/.-]")


def find_emails(text: str) -> Iterator[Range]:
    """Addresses found from each "@": the local part is read backwards (at most 64 characters), the
    domain forwards."""
    at = text.find("@")
    while at != -1:
        start = at
        while start > 0 and at - start < 64 and text[start - 1] in _LOCAL_CHARS:
            start -= 1
        before = text[start - 1] if start else ""
        domain = _DOMAIN.match(text, at + 1)
        if (
            domain is not None
            and start < at
            and text[start].isascii() and text[start].isalnum()
            and not (before in _LOCAL_CHARS or before.isalnum() or before == "_")
            and domain.group(1).lower() not in _FILE_EXTENSIONS
            and not (before == ":" and _URL_USER_BEFORE.search(text, max(0, start - 130), start))
            and not _SSH_PATH_AFTER.match(text, domain.end())
        ):
            yield start, domain.end()
        at = text.find("@", at + 1)


# ---- phone -----------------------------------------------------------------------------------------

# A number must not continue into a version, a date or a time: "1.2.3", "2024-05-01", "10:30".
_NOT_CONTINUED = r"(?![\w-]|[./:]\d)"
_PHONE_PATTERNS = (
    # International: "+44 20 7946 0958", "+1 (555) 123-4567", "+4930123456".
    re.compile(r"\+(?<![\w+]\+)\(?\d(?:\)?[ .-]?\(?\d){6,14}" + _NOT_CONTINUED),
    # North American: "(555) 123-4567", "555-123-4567", "555.123.4567"; area codes never start with 0 or 1.
    re.compile(r"[2-9](?<![\w.+/:-][2-9])\d{2}[ .-]\d{3}[ .-]\d{4}" + _NOT_CONTINUED),
    re.compile(r"\((?<![\w.+/:-]\()[2-9]\d{2}\)[ .-]?\d{3}[ .-]\d{4}" + _NOT_CONTINUED),
    # National trunk prefix: "030 1234567", "06 12 34 56 78", "020 7946 0958", "030/123456"; not the
    # "00.000-0700" of a timestamp.
    re.compile(r"0(?<![\w.+/:-]0)\d{1,4}(?:[ /.-]\d{2,8}+){1,4}" + _NOT_CONTINUED),
)
# Any digit string right after a phone word: "phone: 5551234567", "Call me at 555 1234". Matched on the
# lower-cased copy; the word must start a word, which is checked apart.
_AFTER_PHONE_WORD = re.compile(
    r"(?:telephone|phone|tel|mobile|cell|fax|whatsapp|sms|call me at|text me at)"
    r"(?:[ \t]*(?:number|no\.?|#))?[ \t]*:?[ \t]*(\+?\d(?:[ .()-]?\d){6,14})" + _NOT_CONTINUED
)
_DATE = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}")


def _phone_ok(value: str) -> bool:
    digits = sum(c.isdigit() for c in value)
    if value.startswith("+"):
        ok = 8 <= digits <= 15
    elif value.startswith("0"):
        ok = 9 <= digits <= 13
    else:
        ok = 7 <= digits <= 15
    return ok and not _DATE.fullmatch(value)


def find_phones(text: str) -> Iterator[Range]:
    for pattern in _PHONE_PATTERNS:
        for match in pattern.finditer(text):
            if _phone_ok(match.group()):
                yield match.span()
    for match in _AFTER_PHONE_WORD.finditer(lower_aligned(text)):
        start = match.start()
        if (start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")) and _phone_ok(match.group(1)):
            yield match.span(1)


# ---- payment card ----------------------------------------------------------------------------------

_CARD = re.compile(r"[2-6](?<![\w+-][2-6])\d{3}(?:[ -]?\d){9,15}(?![\w-])")
_CARD_GROUP = re.compile(r"[ -]")


def luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _issuer_length_ok(digits: str) -> bool:
    """Whether the number's prefix belongs to a card scheme issuing that length (Luhn alone passes 1 in 10)."""
    length = len(digits)
    p2, p3, p4 = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return length in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return length == 16  # Mastercard
    if p2 in (34, 37):
        return length == 15  # American Express
    if p2 in (36, 38, 39) or 300 <= p3 <= 305:
        return length in (14, 16, 19)  # Diners Club
    if 3528 <= p4 <= 3589:
        return 16 <= length <= 19  # JCB
    if digits[0] == "6":
        return 16 <= length <= 19  # Discover, UnionPay, Maestro
    if p2 in (50, 56, 57, 58):
        return 13 <= length <= 19  # Maestro
    return False


def find_cards(text: str) -> Iterator[Range]:
    for match in _CARD.finditer(text):
        value = match.group()
        separators = set(_CARD_GROUP.findall(value))
        if len(separators) > 1:
            continue
        if separators and not all(3 <= len(g) <= 6 for g in _CARD_GROUP.split(value)):
            continue
        digits = _CARD_GROUP.sub("", value)
        if _issuer_length_ok(digits) and luhn_ok(digits):
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
}
# Written compact or in groups of four: "DE89370400440532013000", "DE89 3704 0044 0532 0130 00".
_IBAN = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){11,30}")


def iban_ok(compact: str) -> bool:
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def find_ibans(text: str) -> Iterator[Range]:
    for match in _IBAN.finditer(text):
        length = IBAN_LENGTHS.get(match.group()[:2])
        if length is None:
            continue
        # The greedy match may run on into the next word ("... 0130 00 FOR"); keep the country's length.
        seen = 0
        end = match.start()
        for end, char in enumerate(match.group(), match.start() + 1):
            seen += char != " "
            if seen == length:
                break
        if seen != length or (end < len(text) and text[end].isalnum()):
            continue
        if iban_ok(text[match.start():end].replace(" ", "")):
            yield match.start(), end
