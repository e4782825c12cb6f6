r"""Credential finders: vendor tokens by their fixed prefixes, private key blocks, and values given to
password/secret/token/api-key names. Each finder yields `(start, end)` of the value only.

As in `pii`, a pattern starts with its literal prefix and checks the character before it with a
look-behind placed after the prefix, which lets the regex engine skip ahead (`glpat-(?<![\w-]glpat-)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reqgate.pipeline.guardrail.normalize import lower_aligned

Range = tuple[int, int]


def _spans(pattern: re.Pattern[str], text: str) -> Iterator[Range]:
    group = 1 if pattern.groups else 0
    for match in pattern.finditer(text):
        yield match.span(group)


_AWS_KEY_ID = re.compile(r"A(?<![A-Za-z0-9]A)(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|PKA|ROA)[A-Z0-9]{16}"
                         r"(?![A-Za-z0-9])")
# Matched on the lower-cased copy: the 40-character secret is base64, so its offsets are all we take.
_AWS_SECRET = re.compile(r"aws_?secret_?(?:access_?)?key[\"']?[ \t]*[:=][ \t]*[\"']?([a-z0-9/+=]{40})"
                         r"(?![a-z0-9/+=])")
_GITHUB = re.compile(r"g(?<![A-Za-z0-9_]g)(?:h[pousr]_[A-Za-z0-9]{20,255}|ithub_pat_[A-Za-z0-9_]{22,255})"
                     r"(?![A-Za-z0-9_])")
_GITLAB = re.compile(r"glpat-(?<![\w-]glpat-)[A-Za-z0-9_-]{20,}")
_SLACK = (
    re.compile(r"xox(?<![\w-]xox)[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
)
_ANTHROPIC = re.compile(r"sk-ant-(?<![\w-]sk-ant-)[A-Za-z0-9_-]{20,}")
_OPENAI = re.compile(r"sk-(?<![\w-]sk-)(?!ant-)(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_GOOGLE = re.compile(r"AIza(?<![\w-]AIza)[0-9A-Za-z_-]{35}(?![\w-])")
_JWT = re.compile(r"eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
# The body stops at the next "-----", so an unterminated block costs one pass, not one per header.
_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----(?:[A-Za-z0-9+/=\s:,.()]|-(?!----))*+"
    r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----)?"
)


def find_aws(text: str) -> Iterator[Range]:
    yield from _spans(_AWS_KEY_ID, text)
    yield from _spans(_AWS_SECRET, lower_aligned(text))


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
# A credential name ends in one of these words and is followed by `=` or `:`; the rest of the name is
# read backwards from the word. Matched on the lower-cased copy.
_NAME_END = re.compile(
    r"(?:password|passwd|passphrase|pass|pwd|secret|token|apikey|key|credentials|credential)"
    r"(?P<quote>[\"']?)(?P<gap>[ \t]*[:=][ \t]*)"
)
_NAME_MAX = 80
# The value is matched apart from the name so that a value is never consumed before it can be read
# as a name: in "https://host/export?api_key=x" the scan must still reach "api_key".
_VALUE = re.compile(r"([\"'`])([^\"'`\n]{1,200})\1|[^\s\"'`,;&<]{1,200}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[_.-]+")
# Values that stand for a secret without being one: masks, templates, env references, type names.
_PLACEHOLDER = re.compile(
    r"[*xX.•#_?-]+|<[^>]*>|\$\{[^}]*\}\}?|\$[A-Z_][A-Z0-9_]*|\{\{.*\}\}|%\(\w+\)s|%s|\[[^\]]*\]|\(\w+\)|"
    r"%\w+%|(?i:env(?:ironment)?[:.][\w.]+)"
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


def _name_strength(name: str) -> int:
    """2 when the name says credential (DB_PASSWORD, clientSecret, X-Api-Key); 1 when it only might
    (STRIPE_KEY, but also sort_key); 0 otherwise."""
    words = [w for w in _WORD_SPLIT.split(_CAMEL.sub("_", name).lower()) if w]
    if not words:
        return 0
    # "pass" alone is a verb ("Tests pass: 10/10"); only a compound such as DB_PASS names a password.
    if words[-1] in _SECRET_WORDS and (words[-1] != "pass" or len(words) > 1) or tuple(words[-2:]) in _SECRET_PAIRS:
        return 2
    return 1 if words[-1] == "key" and len(words) > 1 else 0


def _mixed_random(value: str) -> bool:
    """Machine-made shape: long, with capitals, small letters and digits ("rk_live_51AbCdEf0123")."""
    return (len(value) >= 12 and any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() for c in value))


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


def _name_before(text: str, end: int) -> tuple[str, int] | None:
    """The identifier ending at `end` ("DB_PASSWORD", "spring.datasource.password") and its start."""
    start = end
    while start > 0 and end - start <= _NAME_MAX and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    if end - start > _NAME_MAX:
        return None
    # "--password=x" is a command-line flag: the name starts after the dashes.
    while start < end and text[start] in ".-":
        start += 1
    if start == end or not (text[start].isalpha() or text[start] == "_"):
        return None
    return text[start:end], start


def find_named_values(text: str) -> Iterator[Range]:
    for ending in _NAME_END.finditer(lower_aligned(text)):
        named = _name_before(text, ending.start("quote"))
        if named is None:
            continue
        name, name_start = named
        strength = _name_strength(name)
        if not strength:
            continue
        found = _VALUE.match(text, ending.end())
        if found is None:
            continue
        quoted = found.group(2) is not None
        value = found.group(2) if quoted else _trim(found.group())
        start = found.start(2) if quoted else found.start()
        end = start + len(value)
        if not value or _PLACEHOLDER.fullmatch(value) or value.lower() in _NOT_SECRET_WORDS:
            continue
        if "[REDACTED:" in value or "[REMOVED:" in value:
            continue  # masked already; masking again would swallow the placeholders around it
        if name.lower() == "pwd" and _PATH.match(value):
            continue  # the shell's working directory
        if strength == 1:
            if _mixed_random(value):
                yield start, end
            continue
        # `password=x` and quoted values are code or config; spaced ones may be a sentence.
        tight = len(ending.group("gap")) == 1
        if quoted or tight or _prose_value_ok(text, name_start, value, end):
            yield start, end


_BEARER = re.compile(r"(?:bearer|basic)[ \t]+([a-z0-9._~+/=-]{16,})")
# Credentials in a URL: scheme://user:password@host
_URL_USERINFO = re.compile(r"://(?<=[A-Za-z0-9]://)[^\s/:@]{1,100}+:([^\s/@]{1,200}+)@")


def find_passwords(text: str) -> Iterator[Range]:
    yield from find_named_values(text)
    for match in _BEARER.finditer(lower_aligned(text)):
        start = match.start()
        if (start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_-")) and any(
            c.isdigit() for c in match.group(1)
        ):
            yield match.span(1)
    for match in _URL_USERINFO.finditer(text):
        if not _PLACEHOLDER.fullmatch(match.group(1)):
            yield match.span(1)
