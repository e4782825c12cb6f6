"""Credential finders: vendor tokens by their fixed prefixes, private key blocks, and values given to
password/secret/token/api-key names. Each finder yields `(start, end)` of the value only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Range = tuple[int, int]


def _spans(pattern: re.Pattern[str], text: str) -> Iterator[Range]:
    group = 1 if pattern.groups else 0
    for match in pattern.finditer(text):
        yield match.span(group)


_AWS = (
    re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}"
               r"(?![A-Za-z0-9])"),
    re.compile(r"(?i)aws_?secret_?(?:access_?)?key[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z0-9/+=]{40})"
               r"(?![A-Za-z0-9/+=])"),
)
_GITHUB = re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{22,255})"
                     r"(?![A-Za-z0-9_])")
_GITLAB = re.compile(r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}")
_SLACK = (
    re.compile(r"(?<![\w-])xox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
)
_ANTHROPIC = re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}")
_OPENAI = re.compile(r"(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_GOOGLE = re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])")
_JWT = re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
# The body stops at the next "-----", so an unterminated block costs one pass, not one per header.
_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----(?:[A-Za-z0-9+/=\s:,.()]|-(?!----))*+"
    r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----)?"
)


def find_aws(text: str) -> Iterator[Range]:
    for pattern in _AWS:
        yield from _spans(pattern, text)


def find_github(text: str) -> Iterator[Range]:
    return _spans(_GITHUB, text)


def find_gitlab(text: str) -> Iterator[Range]:
    return _spans(_GITLAB, text)


def find_slack(text: str) -> Iterator[Range]:
    for pattern in _SLACK:
        yield from _spans(pattern, text)


def find_anthropic(text: str) -> Iterator[Range]:
    return _spans(_ANTHROPIC, text)


def find_openai(text: str) -> Iterator[Range]:
    for match in _OPENAI.finditer(text):
        body = match.group(1)
        # "sk-learn-compatible-wrapper" is a name; real keys are random and mix in capitals or digits.
        if any(c.isdigit() or c.isupper() for c in body) and not _SLUG.fullmatch(body):
            yield match.span()


def find_google(text: str) -> Iterator[Range]:
    return _spans(_GOOGLE, text)


def find_jwt(text: str) -> Iterator[Range]:
    return _spans(_JWT, text)


def find_private_keys(text: str) -> Iterator[Range]:
    for match in _PEM.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1].isspace():
            end -= 1
        yield start, end


# ---- values given to credential names --------------------------------------------------------------

# A name ending in one of these words names a credential: DB_PASSWORD, clientSecret, X-Api-Key.
_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey",
                           "credential", "credentials", "pass"})
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("secret", "key"), ("private", "key"),
                           ("signing", "key"), ("master", "key"), ("encryption", "key"), ("auth", "key"),
                           ("client", "key"), ("license", "key")})
_NAME = re.compile(r"(?<![\w.-])([A-Za-z_][\w.-]{0,80}+)[\"']?([ \t]*[:=][ \t]*)")
# Matched separately from the name so that a value is never consumed before it can be read as a name:
# in "https://host/export?api_key=x" the match at "https" must not swallow "api_key".
_VALUE = re.compile(r"([\"'`])([^\"'`\n]{1,200})\1|[^\s\"'`,;&<]{1,200}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[_.-]+")
# Values that stand for a secret without being one: masks, templates, env references, type names.
_PLACEHOLDER = re.compile(
    r"[*xX.•#_?-]+|<[^>]*>|\$\{\{.*\}\}|\$\{?[\w.:-]+\}?|\{\{.*\}\}|%\(?\w*\)?s?|\[[^\]]*\]|\(\w+\)|"
    r"%[\w]+%|(?i:env(?:ironment)?[:.][\w.]+)"
)
_NOT_SECRET_WORDS = frozenset({
    "required", "optional", "mandatory", "true", "false", "yes", "no", "null", "none", "nil", "empty",
    "blank", "n/a", "na", "tbd", "todo", "hidden", "masked", "redacted", "secret", "password", "token",
    "string", "str", "text", "int", "integer", "number", "bool", "boolean", "jwt", "oauth", "oauth2",
    "bearer", "sso", "saml", "ldap", "bcrypt", "argon2", "sha256", "hashed", "encrypted", "plaintext",
    "unique", "min", "max", "see", "below", "above", "same", "unchanged", "default", "generated", "random",
    "rotated", "expired", "invalid", "valid", "missing", "set", "unset"
})
# What may follow a value written in prose style (`password: x`) for it to be the whole value.
_VALUE_END = re.compile(r"[ \t]*(?:$|\r?\n|[,;|)])")
_LINE_LEAD = re.compile(r"[ \t>*#+-]*[\"']?")
_PATH = re.compile(r"[~/]|[A-Za-z]:\\")


def _names_secret(name: str) -> bool:
    words = [w for w in _WORD_SPLIT.split(_CAMEL.sub("_", name).lower()) if w]
    if not words:
        return False
    # "pass" alone is a verb ("Tests pass: 10/10"); only a compound such as DB_PASS names a password.
    return (words[-1] in _SECRET_WORDS and (words[-1] != "pass" or len(words) > 1)
            or tuple(words[-2:]) in _SECRET_PAIRS)


def _looks_random(value: str) -> bool:
    """Strong-password shape: long, letters and digits, plus capitals or symbols."""
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    extra = any(c.isupper() for c in value) or any(not c.isalnum() for c in value)
    return len(value) >= 8 and has_letter and has_digit and extra


def _trim(value: str) -> str:
    """Drop sentence punctuation and closing brackets the value did not open."""
    while value:
        last = value[-1]
        if last in ".:" or (last in ")]}" and "([{"[")]}".index(last)] not in value):
            value = value[:-1]
        else:
            break
    return value


def _prose_value_ok(text: str, name_start: int, value: str, end: int) -> bool:
    """For `password: value` written in a sentence, whether `value` is a credential rather than prose."""
    if _looks_random(value):
        return True
    if not _VALUE_END.match(text, end):
        return False  # more words follow: "Password: must contain a digit"
    line_start = text.rfind("\n", 0, name_start) + 1
    if _LINE_LEAD.fullmatch(text, line_start, name_start) and len(value) >= 4:
        return True  # a config line such as "  password: changeme"
    return len(value) >= 6 and (
        any(c.isdigit() for c in value) or any(not c.isalnum() for c in value)
        or any(c.isupper() for c in value[1:])
    )


def find_named_values(text: str) -> Iterator[Range]:
    for named in _NAME.finditer(text):
        name = named.group(1)
        if not _names_secret(name):
            continue
        found = _VALUE.match(text, named.end())
        if found is None:
            continue
        quoted = found.group(2) is not None
        value = found.group(2) if quoted else _trim(found.group())
        start = found.start(2) if quoted else found.start()
        end = start + len(value)
        if not value or _PLACEHOLDER.fullmatch(value) or value.lower() in _NOT_SECRET_WORDS:
            continue
        if name.lower() == "pwd" and _PATH.match(value):
            continue  # the shell's working directory
        # `password=x` and quoted values are code or config; spaced ones may be a sentence.
        tight = len(named.group(2)) == 1
        if quoted or tight or _prose_value_ok(text, named.start(), value, end):
            yield start, end


_BEARER = re.compile(r"(?i)(?<![\w-])(?:bearer|basic)[ \t]+([A-Za-z0-9._~+/=-]{16,})")
# Credentials in a URL: scheme://user:password@host
_URL_USERINFO = re.compile(r"(?i)(?<![\w+.-])[a-z][a-z0-9+.-]{0,20}://[^\s/:@]{1,100}+:([^\s/@]{1,200}+)@")


def find_passwords(text: str) -> Iterator[Range]:
    yield from find_named_values(text)
    for match in _BEARER.finditer(text):
        if any(c.isdigit() for c in match.group(1)):
            yield match.span(1)
    for match in _URL_USERINFO.finditer(text):
        value = match.group(1)
        if not _PLACEHOLDER.fullmatch(value):
            yield match.span(1)
