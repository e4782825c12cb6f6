r"""Credential finders: vendor tokens by their fixed prefixes, private key blocks, and values given to
password/secret/token/api-key names. Each finder yields `(start, end)` of the value only. What a name says is
judged in `names`, what a value looks like (machine-made, chosen, a placeholder) in `values`; credentials in other
forms than `name = value` (directives, cookies, tables) are found in `credential_forms`.

As in `pii`, a pattern starts with its literal prefix and checks the character before it with a
look-behind placed after the prefix, which lets the regex engine skip ahead (`glpat-(?<![\w-]glpat-)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain

from reqgate.pipeline.guardrail.budget import MAX_CANDIDATES, MAX_NAMES, PROBE, capped
from reqgate.pipeline.guardrail.context import find_context_tokens
from reqgate.pipeline.guardrail.credential_forms import (
    find_directive_secrets,
    find_listed_passwords,
    find_nested_values,
    find_session_cookies,
    find_table_credentials,
)
from reqgate.pipeline.guardrail.names import (
    DATA_KEY_WORDS,
    ID_PAIRS,
    NAME_END,
    NAME_MAX,
    PURPOSE,
    assigned_credential,
    chosen_password,
    credential_name,
    machine_made_setting,
    name_strength,
    names_a_password,
    numbered_credential_name,
    stored_secret,
)
from reqgate.pipeline.guardrail.normalize import lower_aligned
from reqgate.pipeline.guardrail.shapes import (
    ARN_BEFORE,
    ARN_LOOK_BACK,
    CJK,
    OBJECT_ID,
    PUBLISHED_VALUE_NAME,
    UUID,
    alphabet_typed,
    base64_of_data,
    inside,
    pronounceable,
)
from reqgate.pipeline.guardrail.values import (
    FILE_PATH,
    HEX_OR_UUID,
    ID_SHAPE,
    JOINED,
    MASK,
    PASSWORD_WORDS,
    PATH,
    YAML_TAG,
    api_key_shaped,
    capitalised_passphrase,
    echoes_name,
    is_placeholder,
    long_random_word,
    looks_random,
    mixed_random,
    name_words,
    names_a_field,
    not_a_value,
    password_shaped,
    snake_identifier,
    translated_label,
    trim,
    worded,
)

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
_GITHUB = re.compile(r"g(?:(?<![A-Za-z0-9_]g)h[pousr]_[A-Za-z0-9]{20,255}|ithub_pat_[A-Za-z0-9_]{22,255})"
                     r"(?![A-Za-z0-9_])")
_GITLAB = re.compile(r"glpat-(?<![\w-]glpat-)[A-Za-z0-9_-]{20,}")
_SLACK_TOKEN = re.compile(r"xox(?<![\w-]xox)[abprs]-[A-Za-z0-9-]{10,}")
_SLACK_WEBHOOK = re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")
_ANTHROPIC = re.compile(r"sk-ant-(?<![\w-]sk-ant-)[A-Za-z0-9_-]{20,}")
_OPENAI = re.compile(r"sk-(?<![\w-]sk-)(?!ant-)(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_GOOGLE = re.compile(r"AIza(?<![\w-]AIza)[0-9A-Za-z_-]{35}(?![\w-])")
_JWT = re.compile(r"eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]{10,}+(?:\.[A-Za-z0-9_-]*+)?")
# Any armoured block but the public ones: "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE
# KEY", "PGP PRIVATE KEY BLOCK", and headers without "PRIVATE" ("-----BEGIN OPENSSH KEY-----"). The body
# may be wrapped as a JSON or Java string (literal "\n", quotes, "+" concatenation); it stops at the
# next "-----", so an unterminated block costs one pass, not one per header.
_PEM = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]{1,40}|OpenVPN Static key V1)-----(?:[A-Za-z0-9+/=\s:,.()\\\"'`_]|-(?!----))*+"
    r"(?:-----END (?:[A-Z0-9 ]{1,40}|OpenVPN Static key V1)-----)?"
)
# A PuTTY key file (.ppk): its private lines and the MAC over them; the public lines before them are published.
_PUTTY_PRIVATE = re.compile(r"Private-Lines:[ \t]*\d{1,4}[ \t]*\r?\n(?P<body>(?:[ \t]*[A-Za-z0-9+/=]{4,200}+[ \t]*\r?\n){1,400}+"
                            r"(?:[ \t]*Private-MAC:[ \t]*[0-9a-fA-F]{20,128})?)")
# Not an elision: a key cut short ("MIIEvgIB…...…Cg6zn") still holds the key material around it, and a documented
# one ("MIIEpAIBAAKCAQEA...") is too short to count.
_PLACEHOLDER_BODY = re.compile(r"DUMMY|xxxx|XXXX|<[^>]*>")
PUBLIC_ARMOUR = ("PUBLIC KEY", "CERTIFICATE", "SIGNATURE", "PGP MESSAGE", "X509 CRL", "DH PARAMETERS",
                 "EC PARAMETERS")


def find_aws(text: str) -> Iterator[Range]:
    yield from _spans(_AWS_KEY_ID, text)
    yield from _spans(_AWS_SECRET, lower_aligned(text))


def find_github(text: str) -> Iterator[Range]:
    return _spans(_GITHUB, text)


def find_gitlab(text: str) -> Iterator[Range]:
    return _spans(_GITLAB, text)


_MASK_RUN = re.compile(f"[{MASK}]{{4}}")


def find_slack(text: str) -> Iterator[Range]:
    for match in _SLACK_TOKEN.finditer(text):
        body = match.group()[5:PROBE]
        # Slack's tokens are long runs of numeric ids and a random part; "xoxb-12345-abcd234" or
        # "xoxb-xoxb-my-bot-token" in a ticket is a name or a shortened example.
        if len(body) >= 20 and sum(map(str.isdigit, body)) >= 8 and not pronounceable(body) \
                and not _MASK_RUN.match(text, match.end()):
            yield match.span()  # not the ids before a masked secret (`xoxp-5723…-5738…-####…`)
    yield from _spans(_SLACK_WEBHOOK, text)


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
    for match in _PUTTY_PRIVATE.finditer(text):
        yield match.span("body")
    for match in _PEM.finditer(text):
        if any(word in match.group("label") for word in PUBLIC_ARMOUR):
            continue
        start, end = match.span()
        # Leave the closing quote, concatenation or spaces of the string the block sat in.
        while end > start and (text[end - 1].isspace() or text[end - 1] in "\"'`+,\\"):
            end -= 1
        body = text[match.end("label") + 5:end]
        if match.group("label").startswith("END"):
            continue
        if sum(c.isalnum() for c in body) >= 40 and not _PLACEHOLDER_BODY.search(body):
            yield start, end
# ---- values given to credential names --------------------------------------------------------------


_DOTTED_ID = re.compile(r"(?i:client|tenant)[.-]id$")

# A declared type between a variable and its value: Swift's `let password: String! = "…"`, Kotlin's
# `val token: String? = "…"`, TypeScript's `const secret: string = '…'`. Lower-cased.
_TYPE_ANNOTATION = r":[ \t]*[a-z_][\w.]{0,40}+(?:<[\w ,.?]{0,60}+>)?[?!]?(?:\[\])?[ \t]*=(?![=>])"
# A command line's long option whose value follows after a space: `helm repo add … --password …`.
# A single dash and a glued prefix count too: keytool's `-storepass …`, `-keypass …`.
_FLAG_BEFORE = re.compile(r"(?:^|[ \t])--?(?:[a-z0-9]{1,20}+-){0,4}[a-z0-9]{0,20}+$")
# A Dockerfile's `ENV NAME value`, its older form of `ENV NAME=value`.
_DOCKER_ENV = re.compile(r"[ \t]*ENV[ \t]+[A-Za-z_][\w.-]*")
# "secretValue", "token_value", "secret_for_prod_db": the credential itself (and what it is for), not one of several
# numbered or staged ones.
_ITS_VALUE = re.compile(r"[_.-]?value|" + PURPOSE)
# Between a setting read and the value used when it is unset: `getenv('DB_PASSWORD') ?: '…'`, `?? "…"`, `|| "…"`,
# `{{ .Values.password | default "…" }}`.
_FALLBACK = re.compile(r"\?:|\?\?|\|\||\|[ \t]*default")
# Between the name and the value: `=`, `:`, `:=`, `=>`, `->`, make's and PHP's `::=`, `?=`, `+=`, `.=`, a
# function's argument list `('X', '…')`, a fallback (`?:`, `??`, `||`, Helm's `| default`), XML `>` or
# `" value="`, spaces, or a newline (a YAML block `|` or `>`, a pasted header), a YAML tag (`!!binary`);
# quotes may be escaped (`\"token\": \"…\"`, JSON inside a string). Matched on the lower-cased copy.
_GAP = re.compile(
    r"(?P<close>(?:\\{0,3}[\"'\]>)]){0,2})"
    r"(?P<sep>[-.](?=[a-z0-9])|[ \t]*(?::{1,3}=|[?+.|]=|=>|->|==|" + _FALLBACK.pattern + r"|(?P<typed>" + _TYPE_ANNOTATION
    + r")|[:=]|,|\()?[ \t]*"
    r"(?P<block>[|>][-+0-9]{0,2}[ \t]*(?=\r?\n))?(?:\r?\n[ \t]*)?)"
    r"(?P<attr>(?:value|val)[ \t]*=[ \t]*)?(?:\\{1,3}(?=[\"']))?(?:!!(?:binary|str)[ \t]+)?"
    # a string literal's prefix: Python's f"…", r'…', b"…", C#'s @"…" and $"…"
    r"(?:[rbuf]{1,2}(?=[\"'])|[@$]{1,2}(?=\"))?"
)
_QUOTED = re.compile(r"\"(?P<v1>[^\"\n]++)\"|'(?P<v2>[^'\n]++)'|`(?P<v3>[^`\n]++)`")
_ELEMENT_TEXT = re.compile(r"[^<\n]{1,1000}+(?=</)")
_BARE = re.compile(r"[^\s\"'`,;&<>]++")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\)?)?")
# What may follow a value written in prose style (`password: x`) for it to be the whole value.
_VALUE_END = re.compile(r"[ \t]*(?:$|\r?\n|[,;|)])|[ \t]+#[ \t]")
_LINE_LEAD = re.compile(r"[ \t>*#+-]*[\"']?")
# A line that opens with a setting's name: `  export API_KEY`, `- DB_PASSWORD`, `apikey`, after a shell's prompt,
# an e-mail's quote or a list's number (`$ export …`, `> password=…`, `1. password=…`).
_SETTING_LEAD = re.compile(r"[ \t*+-]*(?:[$>#][ \t]+|\d{1,3}[.)][ \t]+)?(?:export[ \t]+)?[\w.-]{1,80}")
_LINE_END_OR_COMMENT = re.compile(r"[ \t]*(?:$|\r?\n|#[ \t])")
_QUERY_FIELD = re.compile(r"&[A-Za-z_][\w.-]*=")


_DOTTED_WORDS = re.compile(r"[a-z]+(?:\.[a-z]+)+")
_CREDENTIAL_WORD = re.compile(r"\b(?i:passwords?|passphrase|secrets?|tokens?|keys?|credentials?)\b")


# Longer values are judged by their first characters and redacted whole: many names packed into one long
# value ("tskey-tskey-…") must not each copy and scan the rest of the text.
_LONG_VALUE = 1024
_NON_SPACE = re.compile(r"\S{0,1024}+")


def _bare_value(text: str, start: int, run_end: int) -> tuple[str, int]:
    """The value of an unquoted run (or its first `_LONG_VALUE` characters) and where it ends."""
    if run_end - start <= _LONG_VALUE:
        value = trim(text[start:run_end])
        return value, start + len(value)
    tail_start = run_end - PROBE
    return text[start:start + _LONG_VALUE], tail_start + len(trim(text[tail_start:run_end]))


def _prose_value_ok(text: str, name_start: int, value: str, end: int) -> bool:
    """For `password: value` written in a sentence, whether `value` is a credential rather than prose."""
    if looks_random(value):
        return True
    if text.startswith(("\"", "'"), end) and mixed_random(value):
        return True  # a header in a quoted argument: `-H "Token: 3fea6af1349166ea"`
    if not _VALUE_END.match(text, end):
        return False  # more words follow: "Password: must contain a digit"
    if text.startswith(",", end) and value.isalpha():
        return False  # a variable in an object literal: `passphrase: pass,`
    # Bounded look-back: the lead of a config line is short, and a text of many names must stay linear.
    floor = max(0, name_start - 200)
    line_start = text.rfind("\n", floor, name_start) + 1 or floor
    if _LINE_LEAD.fullmatch(text, line_start, name_start) and len(value) >= 4:
        return True  # a config line such as "  password: hunter22"
    return len(value) >= 6 and (
        any(c.isdigit() for c in value) or any(not c.isalnum() for c in value)
        or any(c.isupper() for c in value[1:])
    )


# The name characters before a position, read backwards.
_NAME_RUN = re.compile(r"[\w.-]+")
_NUMBERED_KEY = re.compile(r"\d{1,4}_(?=[A-Za-z])")


def _name_before(text: str, end: int) -> tuple[str, int] | None:
    """The identifier ending at `end` ("DB_PASSWORD", "spring.datasource.password") and its start."""
    # Matched forwards on the reversed window: one anchored match instead of a search from every start.
    run = _NAME_RUN.match(text[max(0, end - NAME_MAX - 1):end][::-1])
    if run is None or run.end() > NAME_MAX:
        return None
    start = end - run.end()
    # "--password=x" is a command-line flag: the name starts after the dashes; a numbered key
    # ("01_hardcoded_password:") after its number.
    while start < end and text[start] in ".-":
        start += 1
    numbered = _NUMBERED_KEY.match(text, start, end)
    if numbered is not None:
        start = numbered.end()
    if start == end or not (text[start].isalpha() or text[start] == "_"):
        return None
    return text[start:end], start


class _RunEnds:
    """End of the run a pattern matches from a position, remembered so that names packed into one long
    value ("password=password=password=…") scan it once, not once per name."""

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self._pattern, self._text = pattern, text
        self._start = self._end = -1

    def match(self, position: int) -> int:
        if self._start <= position < self._end:
            return self._end
        found = self._pattern.match(self._text, position)
        if found is None:
            return position
        self._start, self._end = position, found.end()
        return self._end


# Kubernetes' generated names: words joined by "-" and a short random suffix or two (`notifier-7d9c6b5f8-q2xkz`).
_KUBERNETES_NAME = re.compile(r"[a-z]{2,20}(?:-[a-z]{2,20}){1,5}(?:-[a-z0-9]{5,10}){1,2}")
# A cache key or an artifact's name: words, then a digest (`Linux-gradle-f76aa949d819…`).
_WORDS_THEN_DIGEST = re.compile(r"(?:[A-Za-z]{2,20}[-_.]){2,6}[0-9a-f]{16,}")
# A call that assigns its second argument to the first, up to the name: PHP's `define('DB_PASSWORD', …)`,
# Spark's `.option("password", …)`, `props.setProperty("password", …)`, `conf.set(…)`, `map.put(…)`.
_DEFINE_BEFORE = re.compile(r"\b(?:define|option|set|put|setproperty|setenv|putenv|property|config|conf|param)"
                            r"[ \t]*\([ \t]*[\"']$")
# Before a bare "key", the word that makes it a key into data or a key's id ("the primary key …", "using RSA key …").
# Before a bare "key" also a key's algorithm, and a Kafka record's or a message's key (`Poison message key: order_x…`;
# `MESSAGE_KEY=…` stays a setting's name).
_KEY_OF_DATA_WORDS = DATA_KEY_WORDS | {"rsa", "dsa", "eddsa", "ecdsa", "ed25519", "gpg", "pgp", "host", "public",
                                        "message", "record"}
_PREVIOUS_WORD = re.compile(r"([a-z0-9]+)[ \t]+$")


def _word_before(lowered: str, start: int) -> str:
    found = _PREVIOUS_WORD.search(lowered, max(0, start - 40), start)
    return found.group(1) if found else ""


# The user given before a password, on its line or the lines just before: `username="admin" password="admin"`,
# `--username dbc --password dbc`, `MINIO_ROOT_USER: minioadmin` ⏎ `MINIO_ROOT_PASSWORD: minioadmin`.
_USER_BEFORE = re.compile(r"(?i:user(?:[_-]?name)?|login|uid|admin)[\"']?[ \t]*[:= \t][ \t]*[\"']?([^\s\"',;]{1,100}+)")
_USER_LOOK_BACK = 120
# The line right before, giving a user: `user: orbit_app` ⏎ (anchored at the search's end: linear).
_USER_LINE_BEFORE = re.compile(r"(?i:user(?:[_-]?name)?|login)[ \t]*:[ \t]*[^\s:]{1,100}[ \t]*\r?\n[ \t]*\Z")
# Capitals, small letters and digits all in one value (`Kq8wLm2x`); lower-case settings (`base64url`) lack them.
_MIXED_CASE_DIGIT = re.compile(r"^(?=.*[A-Z])(?=.*[a-z])(?=.*\d)")


def _repeats_user(text: str, name_start: int, value: str) -> bool:
    """Whether the value is the user name again, as a product's default account (Teradata's dbc/dbc, admin/admin)
    or a demo's is written: known to everyone who has the product's manual, nothing to hide."""
    # Within the look-back, across lines: the value is in the text as the user name already.
    users = [match.group(1) for match in _USER_BEFORE.finditer(text, max(0, name_start - _USER_LOOK_BACK), name_start)]
    return bool(users) and users[-1] == value


def _labelled_key(word: str, value: str) -> bool:
    """A short key after a weak credential word written in capitals, as a setting's label is ("ACCESS
    abcDE1234567890"): 12 or more letters and digits, small letters, capitals and digits all in it, not words."""
    return word.isupper() and len(value) >= 12 and value.isalnum() and _MIXED_CASE_DIGIT.search(value) is not None \
        and not pronounceable(value)


def find_named_values(text: str) -> Iterator[Range]:
    lowered = lower_aligned(text)
    bare = _RunEnds(_BARE, text)
    covered = 0
    name_lists = [match.span("names") for match in _multiple_assignments(text)]
    for ending in capped(NAME_END.finditer(lowered), MAX_NAMES):
        if ending.start() < covered:
            continue  # inside a value already taken
        if inside(name_lists, ending.start(), ending.end()):
            continue  # `user, password = "admin", "…"`: the next name is no value; see find_multiple_assignments
        gap = _GAP.match(lowered, ending.end())
        assert gap is not None  # every part of the gap is optional
        separator = gap.group("sep")
        if gap.group("block"):
            # `token: |` ⏎ value: the marker says the value follows, so it is judged as `token: value`.
            separator = lowered[gap.start("sep"):gap.start("block")]
        elif gap.group("typed") or separator and separator.isspace() and "\n" not in separator and (
                _DOCKER_ENV.fullmatch(text, text.rfind("\n", max(0, ending.start() - NAME_MAX), ending.start()) + 1,
                                      ending.end())
                or _FLAG_BEFORE.search(lowered, max(0, ending.start() - NAME_MAX), ending.start())
                and not _PROMPTING_CLIENT.search(lowered, max(0, ending.start() - 200), ending.start())):
            # `let password: String = "…"`, a Dockerfile's `ENV DB_PASSWORD secret` and a command's `--password secret`
            # assign (mysql's lone `--password` prompts; the database follows)
            separator = "="
            if gap.group("typed") and not _QUOTED.match(text, gap.end()):
                continue  # a declaration computes an unquoted value: `let token: String = keychain.get("t") ?? ""`
        value_start = gap.end()
        if value_start >= len(text):
            continue
        quoted_match = _QUOTED.match(text, value_start)
        if quoted_match is not None:
            group = quoted_match.lastgroup or "v1"
            start, end = quoted_match.span(group)
            while end > start and text[end - 1] == "\\":
                end -= 1  # the escape of the closing quote
            value = text[start:min(end, start + _LONG_VALUE)]
        elif gap.group("close") == ">" and (element := _ELEMENT_TEXT.match(text, value_start)) is not None:
            start, value = value_start, element.group().rstrip()  # <password>Tr0ub4dor&3</password>
            end = start + len(value)
        else:
            start = value_start
            value, end = _bare_value(text, start, bare.match(start))
            if gap.group("close") == ">" and value.isalpha() and value.islower():
                continue  # a placeholder in prose, no element: "The <token> part needs to be replaced"
            if text.startswith("&", end) and gap.group("sep").strip() in ("=", ":") \
                    and gap.group("sep") != gap.group("sep").strip():
                # spaced, a setting's line (`admin_password = Wombat&Biscuit3`), not a URL's query: "&" is the value's
                value, end = _bare_value(text, start, _NON_SPACE.match(text, start).end())
            elif value and text.startswith(("&", "<", ">"), end) and gap.group("sep").strip() in ("=", ":", ":="):
                # A setting's line whose value runs on to the line's end or a comment (`apikey:=m{{h}o)p…>-_$#x}}`):
                # all of it, unless the rest is a query's next field (`ya29.a0…&expires_in=3600`).
                run_end = _NON_SPACE.match(text, start).end()
                floor = max(0, ending.start() - NAME_MAX)
                line_start = text.rfind("\n", floor, ending.start()) + 1 or floor
                if _LINE_END_OR_COMMENT.match(text, run_end) and not _QUERY_FIELD.search(text, end, run_end) \
                        and _SETTING_LEAD.fullmatch(text, line_start, ending.end()):
                    value, end = _bare_value(text, start, run_end)
        fallback = _FALLBACK.fullmatch(separator.strip()) is not None
        loose = not gap.group("close") and not gap.group("attr") and (
            "\n" in separator or not separator.strip() or separator.strip() in (",", "(") or fallback)
        if not value or loose and len(value) < 8 or is_placeholder(value):
            continue  # after a space or a newline only a long value can be a credential
        if not_a_value(text, value, end, quoted_match is not None):
            continue
        if quoted_match is not None and (_JOINING_CODE.match(value)
                                         or quoted_match.lastgroup == "v3" and " " in value.strip()):
            continue  # code between two literals (`"Password=" + Load() + ";"`), a command's output (`KEY=`cmd arg``)
        # The name is read only for a value worth a look: prose repeats "password" and "key" often.
        named = _name_before(text, ending.end("word"))
        if named is None:
            continue
        name, name_start = named
        if separator.strip() == "," and quoted_match is not None and gap.group("close") \
                and _DEFINE_BEFORE.search(lowered, max(0, name_start - 20), name_start):
            separator = "="  # `define('DB_PASSWORD', '…')` (WordPress' wp-config.php), `.option("password", "…")`
        if name.lower() == "key" and _word_before(lowered, name_start) in _KEY_OF_DATA_WORDS:
            continue  # "the primary key Linux-gradle-f76a…", "using EDDSA key 3F2A…": a key into data, a key's id
        braced = value.startswith("{")
        if quoted_match is None and text.startswith(";", name_start - 1) and (braced or text.startswith("&", end)):
            # In a connection string only ";" ends a value, or "}" one in braces: `Uid=bi;Pwd=Sable&Fox&2023;`,
            # `PWD={Odbc;Loader=9};` (a URL's query uses "&")
            stop = (_BRACED_VALUE_END if braced else _CONNECTION_VALUE_END).search(text, end, start + _LONG_VALUE)
            end = (stop.end() if braced else stop.start()) if stop else min(len(text), start + _LONG_VALUE)
            value = text[start:end]
            if braced and is_placeholder(value[1:-1]):
                continue  # `Pwd={%ODBC_PWD%}`
        if text.startswith("${", max(0, name_start - 2)) \
                or ARN_BEFORE.search(text, max(0, name_start - ARN_LOOK_BACK), name_start) is not None \
                or _NOT_A_SETTING_BEFORE.search(text, max(0, name_start - 180), name_start) is not None \
                or _DIGEST_OF.search(lowered, max(0, name_start - 10), name_start) is not None:
            continue  # `${DB_PASSWORD:-…}` is a default (`_SHELL_DEFAULT`); `arn:…:secret:name-AbCd` a secret's ARN
        strength = name_strength(name, ending.group("word"), quoted_match is not None or "=" in separator)
        if not strength and name.lower() == "pass" and separator.strip() == ":" and password_shaped(value, name) \
                and (_SYMBOL.search(value) or _MIXED_CASE_DIGIT.search(value) and not pronounceable(value)
                     or capitalised_passphrase(value)) \
                and _USER_LINE_BEFORE.search(text, max(0, name_start - _USER_LOOK_BACK), name_start) is not None:
            strength = 1  # `user: orbit_app` ⏎ `pass: Vx2!gHn8@qRt`: a login's pair, not a test runner's "PASS: Test2"
        if not strength or echoes_name(value, name) or translated_label(value) \
                or _repeats_user(text, name_start, value):
            continue
        if " " in value and (_CREDENTIAL_WORD.search(value) or _TEMPLATE_SLOT.search(value)):
            continue  # a label or a message: `client_credentials="not a valid password"`, "Enter your API key",
            # `invalid_password = "Mot de passe incorrect. Il vous reste {remaining} tentative(s)."`
        if "--ask-" in lowered[max(0, name_start - 8):ending.end()]:
            continue  # Ansible's `--ask-vault-pass`, `--ask-become-pass` prompt for the password; no value follows
        if separator.startswith(" ") and separator.endswith(":") and value.islower() and snake_identifier(value):
            continue  # a Ruby symbol: `has_secure_token :auth_token`
        if (ending.group("word") not in PASSWORD_WORDS or quoted_match is None) and _DOTTED_WORDS.fullmatch(value):
            continue  # a tokenizer's class (`{token:"comment.doc"}`), a property path, `gets.chomp`: words, not a secret
        if ending.group("word") not in PASSWORD_WORDS and (artifact := _ARTIFACT_VERSION.fullmatch(value)) \
                and worded(artifact.group("artifact")):
            continue  # Maven's `io.jsonwebtoken:jjwt-jackson-0.11.2`, a build's `bucket_key: SalesResults-1.2`
        if _LICENCE_NAME.search(name) and _JOINED_WORDS.fullmatch(value) \
                and all(len(part) <= 3 or pronounceable(part) for part in JOINED.split(value)):
            continue  # an open-source licence key in words (`licenseKey: "non-commercial-and-evaluation"`)
        if "." in name and value.isalpha() and _SENTENCE_AFTER.match(text, end):
            continue  # a message catalogue's label: `login.error.credentials=Benutzername oder Passwort ist falsch`
        assigned = quoted_match is not None or gap.group("close") == ">" or separator.strip() in ("=", ":", ":=")
        qualified = ending.end() != ending.end("word") and not _ITS_VALUE.fullmatch(lowered, ending.end("word"), ending.end())
        if qualified and not (len(value) >= 16 and mixed_random(value) and "." not in value) \
                and not (assigned and ending.group("word") in PASSWORD_WORDS and " " not in value
                         and (password_shaped(value, text[name_start:ending.end()])
                              or quoted_match is not None and looks_random(value) and not worded(value)
                              and not names_a_field(value))):
            continue  # a qualified name (`token_1=IDENT`, `license_2=GPL-3.0-or-later`) enumerates settings as often
        if ending.group("owner") and not (_SYMBOL.search(value) or _MIXED_CASE_DIGIT.search(value)):
            continue  # `password_scheme: SHA512-CRYPT`, `password_kdf: pbkdf2-sha256`: a setting about passwords
        if ending.group("word") == "pass" and strength == 1 and not looks_random(value) \
                and not (quoted_match is not None and "=" in separator and password_shaped(value, name)
                         and (_SYMBOL.search(value) or _MIXED_CASE_DIGIT.search(value))):
            continue  # `pass=4f9a2c1e fail=8e7d6b3a` in a bisect log, `_pass = "stage2"`; not `_pass = "Kq8w!x2"`
        if ending.group("word") == "api" and not api_key_shaped(value):
            continue  # `rest_api = "a1b2c3d4e5"`, `graph_api: <uuid>`, `backend_api: orders-api-5d8f7c9b6-hx2lp`
        if separator.strip() == ":" and (_LABEL.fullmatch(value) and not _APP_PASSWORD.fullmatch(value)
                                          or ending.group("word") == "secret"
                                          and name.islower() and "-" in name and _OBJECT_NAME.fullmatch(value)):
            continue  # a catalogue's `"password": "Mot de passe"` is a label (`password = 'open sesame'` is a
            # passphrase); an annotation's `auth-secret: basic-auth` names a Kubernetes Secret
        if name.lower() == "pwd" and PATH.match(value):
            continue  # the shell's working directory
        if not separator and not gap.group("close") and not gap.group("attr"):
            continue  # glued on: "access$300(Foo.java:69)", "token-2.2.0.jar"
        spaced_only = not separator.strip() and not gap.group("close") and not gap.group("attr")
        if separator in ("-", "."):
            # "prospect-secret-5f4dcc3b…", "signupgeniusPRIVATE.53e2…": a name joined to its value. A weak
            # word ("access", "key") only counts written in capitals, as in "holidayapiKEY-…".
            word = text[ending.start():ending.end("word")]
            if (strength == 2 or word.isupper()) and len(value) >= 16 and mixed_random(value) \
                    and not _CODE_REFERENCE.search(value) and "." not in value and not worded(value):
                covered = end
                yield start, end
            continue
        if "\n" in separator or spaced_only or separator.strip() in (",", "(") or fallback:
            if _CODE_REFERENCE.search(value) or _ASSIGNMENT.match(value):
                continue  # a call, a file:line, the next setting (`password_reset_token expires_in=3600`)
            # `TOKEN abc…`, `token:⏎value`, `env('X_TOKEN', '…')`: without `=` or `:` it is only a value
            # when it looks machine-made, or password-shaped as a password's default (`getenv("PWD", "…")`).
            default = quoted_match is not None and ending.group("word") in PASSWORD_WORDS \
                and name != "PWD" and password_shaped(value, name) and (
                    fallback or separator.strip() == "," and gap.group("close")
                    and _READER_CALL.search(text, max(0, name_start - 40), name_start) is not None)
            # "Password:" ⏎ "  Tangerine-Falcon-2291": a value alone on the line after a password's label
            alone = "\n" in separator and separator.strip() == ":" and ending.group("word") in PASSWORD_WORDS \
                and _VALUE_END.match(text, end) is not None and password_shaped(value, name)
            if not (default or alone or mixed_random(value) or long_random_word(value)
                    or quoted_match is not None and looks_random(value) and not worded(value)
                    or value.isdigit() and len(value) >= 16
                    # a key typed as the alphabet ("ABCDEFG-HIJKLMN-…"): scanners' fixtures report it as a key
                    or len(value) >= 16 and alphabet_typed(value)):
                continue
            if strength == 1 and len(value) < 16 \
                    and not _labelled_key(text[ending.start():ending.end("word")], value):
                continue  # "login⏎220-IPv6": a weak name needs a long value when nothing ties them
            if _KUBERNETES_NAME.fullmatch(value):
                continue  # a pod's or volume's name in a listing: `smtp-creds kube-api-access-8pz4n`
            if not quoted_match and _IDENTIFIER.fullmatch(value) and not mixed_random(value) \
                    and not alphabet_typed(value):
                continue
        elif strength == 1 and _WORDS_THEN_DIGEST.fullmatch(value):
            continue  # a cache key or an artifact built from words and a digest: `Linux-gradle-f76aa949d819…`
        elif strength == 1:
            if tuple(name_words(name)[-2:]) in ID_PAIRS and (
                    value.isdigit() or _DOTTED_ID.search(name) and not (UUID.fullmatch(value) or value.isalnum() and len(value) >= 20
                                                         and not pronounceable(value))):
                # Google's numeric `client_id` of a service account is an id; Kafka's and MQTT's `client.id`,
                # `--client-id` name a client ("orders-svc-7f3a9b21", "producerorderservice01"); only a GUID or a
                # machine-made run is an OAuth id
                continue
            # an INI's `pass = Plum8*Violet*Tide` (judged by `looks_random` above)
            if not (mixed_random(value) or UUID.fullmatch(value) or long_random_word(value)
                    or value.isdigit() and len(value) >= 16 or ending.group("word") == "pass"):
                continue
        elif quoted_match is None and len(separator.strip()) and separator != separator.strip():
            # Spaced `password: value` may be a sentence; `password=x` and quoted values are code or config,
            # and so is a spaced `$password = value;` ended by ";" (a statement), unless it reads a variable.
            statement = separator.strip() == "=" and text.startswith(";", end) and not (
                _CODE_REFERENCE.search(value) or "." in value or value[:1].isupper() and value.isalpha())
            if not statement and not _prose_value_ok(text, name_start, value, end):
                continue
        elif quoted_match is None and not separator.strip() and gap.group("close") != ">":
            continue
        if (PATH.match(value) or FILE_PATH.fullmatch(value)) and not mixed_random(value.rsplit("/", 1)[-1]):
            continue  # --credentials=/tmp/xyz/credentials, build/keys/debug.keystore: a file, not its content
        if quoted_match is None and _CALL.match(value) and (value.endswith("(") or text.startswith((",", ";"), end)
                                                             or _CALL_OF_NAMES.fullmatch(value)):
            continue  # `$token .= substr($hash, 0, 8);`, `tokenizer.encode(text)` compute it; `Summer(2024)` is one
        covered = end
        yield start, end


# Text that reads as code or a stack frame rather than a value: calls, file:line, SQL types.
_CODE_REFERENCE = re.compile(r"[():]|\.(?:java|kt|scala|py|js|ts|rb|go|cs|cpp|c|h|jar|xml|class)\b")
_CALL = re.compile(r"[A-Za-z_$][\w.$:]*\(")
_ASSIGNMENT = re.compile(r"[A-Za-z_][\w.-]*=[^=]")
_OBJECT_NAME = re.compile(r"[a-z]+(?:-[a-z]+)+")
_LABEL = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*(?: [^\W\d_]+(?:['’-][^\W\d_]+)*)+")
# Google's app password: four groups of four small letters ("ljlm lbou ylrn kppe"), no label.
_APP_PASSWORD = re.compile(r"[a-z]{4}(?: [a-z]{4}){3}")
# CloudFormation's dynamic reference (`{{resolve:secretsmanager:prod/db:SecretString:password}}`) names where a
# secret is kept; a Terraform block's labels (`resource "google_secret_manager_secret" "db-secret"`) name objects.
_NOT_A_SETTING_BEFORE = re.compile(r"\{\{resolve:[^}\n]{0,160}+$|\b(?:resource|data)[ \t]+\"$")
# A parameter's default: the shell's `${POSTGRES_PASSWORD:-…}`, `${DB_PASSWORD:=…}`, Spring's
# `${spring.rabbitmq.password:…}`.
_SHELL_DEFAULT = re.compile(r"\$\{(?P<name>[A-Za-z_][\w.-]{0,80}+)(?::[-=]?|[-=])(?P<value>[^}\s\"'$]{1,300}+)\}")
# A call that reads a setting, its second argument the default: `os.getenv("DB_PASSWORD", "…")`,
# `config.get('password', '…')`, `ENV.fetch("PASSWORD", "…")`; not `__('Password', 'text-domain')`.
_READER_CALL = re.compile(r"(?<![\w$])(?i:getenv|get|getproperty|getordefault|getstring|fetch|setdefault|env)"
                          r"[ \t]*\([ \t]*[\"']$")
_CALL_OF_NAMES = re.compile(r"[A-Za-z_$][\w.$]*\((?:[A-Za-z_$][\w.$]*(?:, ?[A-Za-z_$][\w.$]*)*)?\)"
                            # a generator given a length: `secrets.token_urlsafe(32)`, `GenerateRandomString(32)`
                            # (capitalised words, two or fewer, make a password: `Summer(2024)`, `GoLakers(24)`)
                            r"|(?:[A-Za-z_$][\w$]*(?:\.[\w$]+)+|[a-z_$][\w$]*|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*){2,})\(\d{1,4}\)")
# ---- other credential syntaxes ---------------------------------------------------------------------


# `Authorization: Bearer …`, `Basic …`, `token …`, `Digest …`, also without the header name, and the scheme written
# with a colon (`"Bearer: …"`). Lower-cased.
_AUTH_SCHEME = re.compile(r"(?:bearer:?|basic|token|apikey|sso-key|splunk|ghtoken|ssws|klaviyo-api-key|dsn)[ \t]+([a-z0-9._~+/=:-]{12,})")
_DIGIT = re.compile(r"\d")
_SCHEME_VALUE_MIN = 24
# Any scheme's name may come before the credential (`BotConnector …`, Azure's `SharedAccessSignature sr=…`).
_AUTH_HEADER = re.compile(r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?P<scheme>[a-z][a-z0-9-]{1,40}+)[ \t]+)?"
                          r"([^\s\"']{12,}+)(?![ \t]+[a-z0-9._~+/=-])")
# Credentials in a URL: scheme://user:password@host, where the password may itself hold "@".
# The user may be empty: `redis://:secret@cache:6379`.
_URL_USERINFO = re.compile(r"://(?<=[A-Za-z0-9]://)[^\s/:@]{0,100}+:([^\s/\"]{1,300})@")
# A URL whose user is a token and that has no password: Sentry's DSN (`https://<key>@o1.ingest.sentry.io/2`), a
# clone URL (`https://<token>@github.com/…`).
_URL_TOKEN_USER = re.compile(r"://(?<=[A-Za-z0-9]://)([^\s/:@\"'<>]{20,300}+)@")
# `curl -u user:pass`, `--user user:pass`, `-p password` after `-u user`, `sshpass -p x`.
_CLI_USER = re.compile(r"-(?<![^ \t\n]-)(?:u|-user|-proxy-user|-basic-auth|auth)[ =\t]+[\"']?([^\s:\"']{0,100}+)[\"']?:[\"']?([^\s\"']{0,300}+)")
_CLI_PASSWORD = re.compile(r"(?:-[uU][ \t]+\S{1,100}+[ \t]+|sshpass[ \t]+)-[pP][ \t]*[\"']?([^\s\"'-][^\s\"']{0,300}+)")
# Words that go on to the end of the line after a value: a sentence, not a setting.
_SENTENCE_AFTER = re.compile(r"[ \t]+[^\W\d_]{2,}+[ \t]+[^\W\d_]++[^\n=:]{0,200}+$", re.MULTILINE)
# An artifact and its version: Maven's `io.jsonwebtoken:jjwt-jackson-0.11.2` and `…:jjwt-api:0.11.5`, a build's
# `SalesResults-1.2`.
_ARTIFACT_VERSION = re.compile(r"(?P<artifact>[A-Za-z][A-Za-z0-9_.-]{0,100})[-:]v?\d{1,4}(?:\.\d{1,6}){1,3}"
                               r"(?:[-.][A-Za-z][\w.]{0,20})?")
# Open-source projects' licence keys are words, published in the docs ("GPL-My-Project-Is-Open-Source",
# "non-commercial-and-evaluation"); a bought key is random.
_LICENCE_NAME = re.compile(r"(?i:licen[cs]e)")
_JOINED_WORDS = re.compile(r"[A-Za-z]{2,30}(?:[-_][A-Za-z]{1,30}){2,12}")
# Between two string literals, code that joins them: the name ends one literal (`"Password=" + Load() + ";"`).
_JOINING_CODE = re.compile(r"[ \t]*\+[ \t]|.*[ \t]\+[ \t]*$")
# A slot a message template fills: `{remaining}`, `%s`, `%(count)d`, `{0}`.
_TEMPLATE_SLOT = re.compile(r"\{[A-Za-z_]\w{0,40}\}|%\(\w{1,40}\)[sd]|%[sd]\b|\{\d\}")
# A digest of a secret names it after a slash: Helm's `checksum/secret: <sha256>` annotation.
_DIGEST_OF = re.compile(r"(?:checksum|hash|digest|sha\d*|md5)/$")
_BRACED_VALUE_END = re.compile(r"\}(?!\})")
_CONNECTION_VALUE_END = re.compile(r"[;\s\"']|$")
_PROMPTING_CLIENT = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b")
# Tools whose password flag is their own: `sqlcmd -P …`, `ldapsearch -w …`, `openssl … -passin pass:…`,
# `mysql -p…` (glued; a lone `-p` prompts), `redis-cli -a …`, FTP's `PASS` command at its prompt, Windows' `net use
# … /user:X …` and PowerShell's `ConvertTo-SecureString "…" -AsPlainText`.
_TOOL_PASSWORD = re.compile(
    r"\b(?:(?:sqlcmd|bcp|osql)\b[^\n|;&]{0,200}?[ \t]-P[ \t]*|ldap(?:search|modify|add|delete|passwd|whoami|compare)\b"
    r"(?:[^\n|;&\\]|\\\r?\n|\\){0,300}?[ \t]-w[ \t]+|mysql(?:dump|admin|import|check|show)?\b[^\n|;&]{0,200}?[ \t]-p(?=[^\s-])|"
    r"redis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]+|ftp>[ \t]*(?:quote[ \t]+)?PASS[ \t]+|"
    r"(?i:net[ \t]+use)\b[^\n|;&]{0,200}?[ \t]/user:\S{1,100}+[ \t]+(?![/*])|"
    r"ConvertTo-SecureString[ \t]+(?:-String[ \t]+)?(?=[\"'][^\"'\n]{1,300}+[\"'][ \t]+-AsPlainText)|"
    # Cisco IOS (`username x privilege 15 password 0 …`, `enable secret 7 …`), lftp's `-u user,pass`, Windows'
    # `net user name pass /add`, `cmdkey … /pass:…`, `net use X: \\srv\share pass /user:…`, macOS's `security …
    # -w pass`, steamcmd's `+login user pass`
    r"(?:\busername[ \t]+\S{1,64}+[ \t]+privilege[ \t]+\d{1,2}[ \t]+(?:password|secret)[ \t]+(?:[07][ \t]+)?|"
    r"(?:\busername[ \t]+\S{1,64}+|\benable)[ \t]+(?:password|secret)[ \t]+[07][ \t]+)|"
    r"\blftp\b[^\n|;&]{0,200}?[ \t]-u[ \t]+[\"']?[^\s,\"']{1,64}+[\"']?,|"
    r"(?i:net[ \t]+user)[ \t]+[^\s/]{1,64}+[ \t]+(?![/*])|(?i:cmdkey)\b[^\n|;&]{0,200}?[ \t]/pass:|"
    r"(?i:net[ \t]+use)[ \t]+(?:[A-Za-z]:[ \t]+)?\\\\\S{1,200}+[ \t]+(?![/*])(?=\S{1,300}+[ \t]+/user:)|"
    r"\bsecurity[ \t]+(?:add-generic-password|add-internet-password|unlock-keychain|create-keychain|"
    r"set-keychain-password|import)\b[^\n|;&]{0,300}?[ \t]-[wpP][ \t]+)"
    r"(?:'([^'\n]{1,300}+)'|\"([^\"\n]{1,300}+)\"|([^\s'\"]{1,300}+))"
    r"|-pass(?:in|out)?[ \t]+pass:([^\s'\"]{1,300}+)|(?<!\S)\+login[ \t]+[^\s+]{1,64}+[ \t]+([^\s+'\"]{1,300}+)"
)
# What each of these patterns cannot match without: each opens with a word alternation the engine would try at
# every position of every text.
_TOOL_WORDS = ("sqlcmd", "bcp", "osql", "ldap", "mysql", "redis-cli", "ftp>", "/user:", "convertto-securestring", "-pass",
               "username", "enable", "lftp", "net user", "cmdkey", "security", "+login")
_CALL_WORDS = ("auth", "credential", "connect", "pdo", "mysqli", ".login")
_LOGIN_WORDS = ("log", "sign", "cred", "user")
# A user and a password given to a client as literals: Python's `auth=("bot", "…")` and `HTTPBasicAuth("bot", "…")`,
# smtplib's, ftplib's and imaplib's `.login("user", "…")`, .NET's `new NetworkCredential(@"CORP\svc", "…")`, Rust's
# `.basic_auth("bot", Some("…"))`, Java's
# `UsernamePasswordCredentials`, JDBC's `DriverManager.getConnection(url, "user", "…")`, PHP's `new PDO($dsn, 'user',
# '…')` and mysqli.
_CREDENTIAL_ARGUMENTS = re.compile(
    r"(?:\b(?:auth|basic_auth|http_auth)[ \t]*=[ \t]*[(\[]|\b(?:HTTPBasicAuth|HTTPDigestAuth|BasicAuth|NetworkCredential|"
    r"UsernamePasswordCredentials|PasswordAuthentication|basic_auth|basicAuth|setBasicAuth|withBasicAuth)[ \t]*\(|"
    r"\.(?:login|authenticate)[ \t]*\(|"
    r"\b(?:getConnection|mysqli_connect|new[ \t]+(?:PDO|mysqli))[ \t]*\(\s{0,20}+[^,()\n]{1,300}+,)"
    r"\s{0,20}+@?(['\"])[^'\"\n]{1,100}+\1\s{0,20}+,\s{0,20}+(?:Some\()?@?(['\"])([^'\"\n]{1,300}+)\2"
)

# A signing key given as a literal to a JWT library: node's `jwt.sign(payload, "…")` and `jwt.verify(token, "…")`,
# PyJWT's `jwt.encode({…}, "…", algorithm=…)`, PHP's `JWT::encode($payload, '…', 'HS256')`, java-jwt's
# `Algorithm.HMAC256("…")`, jjwt's `.signWith(alg, "…")`, `.setSigningKey("…")` and `Keys.hmacShaKeyFor("…".getBytes())`,
# Go's `SignedString([]byte("…"))`, .NET's `new SymmetricSecurityKey(Encoding.UTF8.GetBytes("…"))`. The payload
# before the key is a name or one object literal.
_SIGNING_KEY_ARGUMENT = re.compile(
    r"(?:(?:\b(?i:jwt)(?:\.|::)(?:sign|verify|encode|decode)|\.signWith)[ \t]*\(\s{0,20}+"
    r"(?:\{[^{}\n]{0,300}+\}|[\w$.\[\]>-]{1,200}+)[ \t]*,"
    r"|\bAlgorithm\.HMAC(?:256|384|512)[ \t]*\(|\b(?:setSigningKey|hmacShaKeyFor)[ \t]*\("
    r"|\bSignedString[ \t]*\([ \t]*\[\]byte\(|\bSymmetricSecurityKey[ \t]*\((?:\w{1,30}+\.){0,4}+GetBytes\()"
    r"\s{0,20}+(['\"`])([^'\"`\n]{1,300}+)\1")
_SIGNING_WORDS = ("jwt", ".signwith", "algorithm.hmac", "setsigningkey", "hmacshakeyfor", "signedstring",
                  "symmetricsecuritykey")


# The most used passwords of the public breach lists (rockyou, NCSC's top 100,000) that are no word of their
# own, with the digits or symbols people add: `password123`, `letmein42`, `P@$$w0rd!`, `Password@2024`.
# Words that also name promotions, seasons or themes ("welcome10", "football2024") are left out, and so is "qwerty"
# written in capitals (a keyboard: "QWERTY105"); "password" and "qwerty" need three digits, as `password1`,
# `password12` name the fields of sign-up forms.
# Matched on the lower-cased copy, first letters first: a case-blind alternation tried at every position costs
# several times more. A full stop may end the sentence; a path (`/`) or a dotted name may not hold one.
_KEYBOARD = "QWERTY"
_SETTING_MARKS = frozenset("=:")  # `keyboard=qwerty105` sets a layout
_COMMON_PASSWORD = re.compile(
    r"(?=[ilptq])(?<![\w@.$/-])"
    r"(?:passwor[dt]@?\d{3,8}|qwerty\d{3,8}|(?:letmein|iloveyou|trustno)@?\d{2,8}|trustno1|"
    r"(?:p(?:[@4](?:ss|\$\$|55)|a(?:\$\$|55))w[o0]rd|passw0rd)\d{0,8})[!@#$%]{0,2}(?![\w@-]|\.\w)"
)


def _key_as_user(user: str) -> bool:
    """An API key given as curl's user with no password (`-u sk_live_…:`), not a service account
    (`sudo -u postgres15:`) or a file (`python -u train2024.py:`): long and machine-made, or shorter in
    mixed case with digits."""
    if "." in user or pronounceable(user):
        return False
    if len(user) >= 16:
        return mixed_random(user) or long_random_word(user)
    return len(user) >= 8 and any(c.isupper() for c in user) and any(c.islower() for c in user) \
        and any(c.isdigit() for c in user)


# SQL's `IDENTIFIED BY 'x'` (Oracle, MySQL); a password piped into a registry login (`echo x | docker login
# --password-stdin`). Lower-cased.
_SQL_IDENTIFIED = re.compile(
    r"\b(?:(?:create|alter)[ \t]+(?:user|role|login)[ \t]+(?:if not exists[ \t]+)?[\w@'\"`.%-]{1,100}+[ \t]+"
    r"|grant\b[^;\n]{1,300}?[ \t]to[ \t]+[\w@'\"`.%-]{1,100}+[ \t]+)"
    r"identified[ \t]+(?:with[ \t]+[\w'\"`]{1,60}+[ \t]+)?by[ \t]+(?:password[ \t]+)?"
    r"(?:'(?P<q1>[^'\n]{1,300}+)'|\"(?P<q2>[^\"\n]{1,300}+)\"|`(?P<q3>[^`\n]{1,300}+)`|(?P<bare>[^\s\"'`;]{4,300}+))"
)
_PIPED_LOGIN = re.compile(r"\becho[ \t]+(?:-n[ \t]+)?[\"']?([^\s\"'|$]{8,300}+)[\"']?[ \t]*\|[ \t]*"
                          r"(?:(?:sudo[ \t]+)?(?:docker|podman|helm|oras|crane|skopeo|buildah|nerdctl)[ \t]+(?:registry[ \t]+)?login\b"
                          r"|sudo[ \t]+(?:-[a-z]+[ \t]+){0,4}-[a-z]*s\b)")
# PostgreSQL's `CREATE ROLE x WITH LOGIN PASSWORD '…'`, SQL Server's `CREATE LOGIN x WITH PASSWORD = '…'`. Lower-cased.
_SQL_PASSWORD = re.compile(r"\b(?:create|alter)[ \t]+(?:user|role|login)\b[^;\n]{1,200}?[ \t]password[ \t]*=?[ \t]*"
                           r"(?:'(?P<q1>[^'\n]{1,300}+)'|\"(?P<q2>[^\"\n]{1,300}+)\")")
# Oracle's tools logging in as `user/password@database`: `sqlplus -s gl_batch/…@FINPRD`.
_ORACLE_LOGIN = re.compile(r"\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\b(?:[ \t]+-\w+)*+[ \t]+[\w$#.]{1,64}+/"
                           r"([^\s@/'\"(),;]{1,300}+)(?=@|\s|$)")
# `echo "user:password" | chpasswd`: a provisioning script setting an account's password.
_CHPASSWD = re.compile(r"\becho[ \t]+(?:-[ne][ \t]+)?[\"']?[\w.-]{1,64}+:([^\s\"':|]{1,300}+)[\"']?[ \t]*\|[ \t]*"
                       r"(?:sudo[ \t]+)?chpasswd\b")
# A framework's session cookie outside a Cookie header: a logged header map (`cookie=JSESSIONID=…`), a URL's
# `;jsessionid=…`. Lower-cased.
_SESSION_ID = re.compile(r"\b(?:jsessionid|phpsessid|asp\.net_sessionid|connect\.sid|laravel_session)=([a-z0-9%._:-]{16,512}+)")
# A cookie header's values: a session id is a credential. Only machine-made values count (`theme=dark` stays).
_COOKIE_HEADER = re.compile(r"\b(?:set-)?cookie[ \t]*:[ \t]*(?=[a-z0-9_.$-]{1,80}=)")
_COOKIE_PAIR = re.compile(r"[A-Za-z0-9_.$-]{1,80}=([^\s;,\"']{0,500})(?:;[ \t]*|(?=[\s\"',]|$))")

# A password given in a sentence: "the password for the test account is Xk3…". Lower-cased; only a
# machine-made value that ends the clause counts ("the password is incorrect", "the token is JWT_RS256 signed"
# stay; tokens and keys in prose are too often names of algorithms and formats).
_PROSE_CLAUSE = (
    r"(?: (?:for|of|to|on|in) (?:[^ .,;:!?\n]{1,30} ){0,4}?[^ .,;:!?\n]{1,30})? (?:is|was|is still|=) [\"'`]?"
    r"([^\s\"'`,;()<>]{8,300}?)(?=[\"'`]?(?:[.,;!?)](?:\s|$)|[ \t]*(?:$|\n)))"
)
# For a password the sentence may go on ("the keystore password is ksR3lease#2022 but …", "pw: blueOcean!23 —"),
# and a colon may stand for "is" ("Password for the guest link: Harbor^Lights^9 (valid until June)"); where
# the clause does not end with the value, only a strong password's shape counts.
_PROSE_WORD = r"(?:[^ .,;:!?\n]|\.(?=[^\s.]))+"  # a word of the clause; a dot inside it (a host, an address) is kept
# "is" in the languages covered, and "changed to" ("was reset to", "auf … geändert", "l'ho cambiata in", "đổi … thành",
# "поменял пароль … на")
_COPULA = r"is|was|est|ist|es|é|è|era|to|jest|är|je|là|adalah|είναι|היא|הוא|هي|هو|[—–]"
_CHANGED_TO = (r"(?:was |has been |is )?(?:changed|reset|set|rotated|updated)(?: it)? to|cambiata in|cambiato in|"
               r"impostata a|thành|auf|на")
_PROSE_CREDENTIAL = re.compile(
    r"(?:\b(?:password|passwd|passphrase|pwd|pw|mot de passe|mdp|passwort|kennwort|initialkennwort|initialpasswort|"
    r"contraseña|clave|senha|palavra-passe|wachtwoord|пароль|hasło|hasła|şifresi|şifre|lösenord(?:et)?|heslo|mật khẩu|"
    r"kata sandi|κωδικός|κωδικος|סיסמה|הסיסמה|पासवर्ड|كلمة (?:ال)?مرور)(?:-nya)?|パスワード|密码|비밀번호)"
    # "Senha nova: …" ("new password" is read the other way round)
    r"(?: (?:nova|novo|nueva|nuevo|nouveau|nouvelle|neu|neue|neues|nuova|nuovo|nieuw|nieuwe|nytt|nové|mới|baru))?"
    r"(?:"
    r"(?: (?:for|of|to|on|in|für|von|vom|zum|zur|des|de|du|pour|para|del|do|da|dos|das|di|dell|della|dello|"
    r"dla|w|voor|van|till|i|k|na|на|για|untuk|của|cho)['’ ](?:" + _PROSE_WORD + r" ){0,9}?" + _PROSE_WORD + r")?"
    # an aside on what the password is for: "(user nw_upload, host sftp.example.nl)", "(login: nw-admin)"
    r"(?: \([^()\n]{1,80}+\))?"
    # French writes a space before the colon; Japanese, Chinese and Korean say "is" with は, 是 and 는
    r"(?:(?: (?:" + _CHANGED_TO + r")| (?:is still|is nu|lautet|=|" + _COPULA + r")(?: ?:)?| ?:) "
    r"|[は是：는은] ?|(?:已经|已)?(?:改成|改为|设为|设置为|更新为)了? ?)"
    # a few other words before "is" ("the password I set this morning is …"): only a value with a symbol counts
    r"|(?P<words>(?: [^ .,;:!?\n=]{1,30}+){1,8}?(?: \([^()\n]{1,80}+\))?)"
    r"(?: (?:" + _CHANGED_TO + "|" + _COPULA + r")| ?:) "
    r"|(?P<bare> )"
    r")[\"'`]?"
    # nobody types kana, hanzi or hangul into a password: "パスワードは12文字以上で…" states a rule
    r"(?P<value>[^\s\"'`,;()<>，。、；！？（）「」" + CJK + r"]{8,300}+)"
)
# Without "is", "the password X" names a password only when X holds a symbol ("and the password Caju#Praia2023",
# "пароль Berezka_77!msk"): "password reset2024" or "password field1" is prose.
_SYMBOL = re.compile(r"[!@#$%^&*+=?~]")
_PACKAGE_VERSION = re.compile(r"@?[\w./-]{1,100}+@[\^~]?\d{1,6}\.\d[\w.-]{0,40}+[.,;!?]?")
_PROSE_WORDS = ("pw", "pass", "wort", "contrase", "senha", "wachtwoord", "пароль", "hasł", "şifre", "lösenord", "heslo",
                "mật khẩu", "kata sandi", "مرور", "パスワード", "密码", "비밀번호", "mdp", "clave", "κωδικ", "סיסמה",
                "पासवर्ड")
# "use bluebell-Kite-804 to log in as kibana_support", "usa Tortuga#Playa9 para entrar". Lower-cased.
_USE_TO_LOG_IN = re.compile(r"\b(?:use|usa|utilise|utilisez|verwende|nutze|gebruik)[ \t]+[\"'`]?([^\s\"'`]{8,64}+)[\"'`]?"
                            r"[ \t]+(?:to (?:log|sign) ?in|para entrar|para acceder|pour (?:se|vous) connecter|"
                            r"zum (?:anmelden|einloggen)|om in te loggen)\b")
# A PIN given as one: "SIM PIN is 480317", "Die PIN lautet 905172", "PIN: 615209". In capitals only: a pin of a
# chip or a dependency ("pin 13", "pin: 1.2.3") is no secret.
_PIN = re.compile(r"\bPIN(?:[- ]?(?:[Cc]ode|[Kk]od))?(?:[ \t]+(?:is|was|lautet|ist|est|es|è|to|jest|wynosi)[ \t]*:?|[ \t]*[:=])"
                  r"[ \t]*(\d{4,8})(?!\d|[.,:/-]\d)")
# Korean and Japanese put the value before the verb: "비밀번호를 Hangang!9312kx 로 변경했습니다", "パスワードを
# Sakura#2024xy に変更しました" (changed to, set to, reset to).
_VALUE_THEN_VERB_WORDS = ("비밀번호", "패스워드", "パスワード")
_VALUE_THEN_VERB = re.compile(
    "(?:" + "|".join(_VALUE_THEN_VERB_WORDS) + r")(?:를|을|는|은|を|は)? ?(?:\S{1,30}[ \t])??[\"'`「]?([!-~]{8,64}?)[\"'`」]?[ \t]?"
    r"(?:으로|로|に) ?(?:변경|바꿨|바꾸|바꿔|설정|재설정|초기화|変更|設定|リセット)")
# The value named first: "Saturn-Raccoon_61 is the new password for svc-backup". Lower-cased.
_VALUE_IS_PASSWORD = re.compile(r"(?<![^\s\"'`(])[\"'`]?([!-~]{8,64}?)[\"'`]? is (?:the|your|our|my) (?:new |current |temporary |"
                                r"temp |initial )?(?:password|passphrase|pw|pwd)(?= for | on | to |[,.;:!?)]|[ \t]*$)",
                                re.MULTILINE)
# Go's MySQL driver: `sql.Open("mysql", "user:password@tcp(host:3306)/db")`.
_GO_DSN = re.compile(r"[\"'`][\w.-]{1,64}+:([^\s\"'`@/]{1,300}+)@(?:tcp|unix|udp)\(")
# How a password is kept, not what it is: "Argon2id-hashed", "Base64Encoded", "SHA256-salted".
_COMPOUND_ADJECTIVE = re.compile(r"\w+-[a-z]{3,}|[A-Z][a-z]+\d+[A-Z][a-z]+")
_CLAUSE_END = re.compile(r"[\"'`]?(?:[.,;!?)](?:\s|$)|[ \t]*(?:$|\r?\n)|[ \t]+[-–—][ \t])")
# The same sentence naming a key or a token ("the API key for staging is 3f9a…"), by a credential's compound
# name: a bare "token" or "secret" is as often a page cursor, an idempotency token or a Kubernetes object.
_PROSE_KEY = re.compile(
    r"\b(?:api|access|secret|private|auth|bearer|client|app|license|personal access|deploy|webhook)"
    r"[ _-]?(?:key|token|secret)" + _PROSE_CLAUSE
)
# "The fingerprint of the signing key is …", "the pod that mounts the secret is …": the value belongs to
# something else the sentence names first.
_OWNED_BY = re.compile(r"\b(?:of|for|that|by|from|with|in|on|to)(?: [a-z0-9]{1,12}){0,3} $")
_PROSE_KEY_MIN = 16
# A test account given as "user / password" after a word that says so: "Login: admin / Admin@123",
# "credentials qa_user/Qa2024!", "username/password = test01 / Test@2024". Lower-cased.
_LOGIN_PAIR = re.compile(
    r"\b(?:log(?:ging)? ?in(?:to)?|sign(?:ing)? ?in(?:to)?|credentials?|creds|(?:user(?:name)?|login)[ \t]*/[ \t]*"
    r"(?:password|passwd|pass|pwd|pw))(?:[ \t]+(?:for|to|on|of|at)(?:[ \t]+[^\s:/]{1,30}+){1,4}?|(?:[ \t]+[^\s:/]{1,40}+){1,3}?(?=[ \t]+with))?"
    r"[ \t]*(?:[:=-]|is|are|with|as)?[ \t]*[\"'`]?[^\s/\"'`=:]{1,64}+[\"'`]?(?P<slash>[ \t]*/[ \t]*|:)[\"'`]?"
    r"([^\s\"'`=/]{6,64}+)"
)

# A setting's name and value given as two fields of one entry: Kubernetes' and ECS's `env` lists (`- name:
# DB_PASSWORD` ⏎ `value: …`), Keycloak's credentials and HTML inputs (`"type": "password", "value": …`),
# CloudFormation's `ParameterKey`/`ParameterValue`, Hadoop's and Maven's `<name>…</name><value>…</value>`,
# `aws ssm put-parameter --name … --value …`. Lower-cased.
_PAIR_FIELDS = re.compile(
    r"(?:\b(?:name|key|parameterkey|type)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<name>[\w./-]{1,80}+)[\"']?[ \t]*,?[ \t]*\r?\n?"
    r"[ \t]{0,40}+[\"']?(?:value|parametervalue)[\"']?[ \t]*[:=][ \t]*"
    r"|<(?P<tag>name|key)>[ \t]*(?P<xml_name>[\w./-]{1,80}+)[ \t]*</(?P=tag)>\s{0,80}+<value>[ \t]*"
    # Hibernate's, Spring's and log4j's `<property name="hibernate.connection.password">…</property>`
    r"|<(?:property|entry|param|setting|add)[ \t]+(?:name|key)=[\"'](?P<element_name>[\w./-]{1,80}+)[\"'][ \t]*>[ \t]*"
    r"|--name[ =][\"']?(?P<flag_name>[\w./-]{1,80}+)[\"']?(?:[ \t]+--?[\w-]{1,40}+(?:[ =][^\s-][^\s]{0,100}+)?){0,3}?[ \t]+--value[ =])"
)
_PAIR_VALUE = re.compile(r"\"(?P<v1>[^\"\n]{1,300}+)\"|'(?P<v2>[^'\n]{1,300}+)'|(?P<v3>[^\s\"'<,}]{1,300}+)")


def find_setting_pairs(text: str) -> Iterator[Range]:
    lowered = lower_aligned(text)
    if "value" not in lowered and "<" not in lowered:
        return
    for match in capped(_PAIR_FIELDS.finditer(lowered)):
        group = next(g for g in ("name", "xml_name", "flag_name", "element_name") if match.group(g) is not None)
        strength, name = numbered_credential_name(text[match.start(group):match.end(group)].rsplit("/", 1)[-1])
        if not strength:
            continue
        value_match = _PAIR_VALUE.match(text, match.end())
        if value_match is None:
            continue
        value_group = value_match.lastgroup or "v3"
        value = trim(value_match.group(value_group)) if value_group == "v3" else value_match.group(value_group)
        if not machine_made_setting(value, name, strength):
            continue
        start = value_match.start(value_group)
        yield start, start + len(value)


# A .netrc entry: "machine <host> login <user> password <value>", on one line or several.
_NETRC = re.compile(r"machine[ \t]+\S{1,200}+\s{1,20}+login[ \t]+\S{1,200}+\s{1,20}+password[ \t]+(\S{1,300}+)")
# A .pgpass line, "host:port:database:user:password": the host a name with a dot, `localhost` or `*`, the port
# four or five digits or `*` (`orders-api:8080:prod:…` in a kubectl listing has no host of that shape).
_PGPASS = re.compile(r"^[ \t]*(?:[\w-]{1,63}+(?:\.[\w-]{1,63}+){1,8}+|localhost|\*):(?:\d{4,5}|\*):[\w.*-]{1,63}+:"
                     r"[\w.@*-]{1,63}+:([^\s:]{1,300}+)[ \t]*\r?$", re.MULTILINE)
# `vault kv put <path> k=v …` (and `vault write secret/…`, the KV store's v1 form) store every value they are
# given; other `vault write` calls configure roles and engines. Lower-cased.
_VAULT_WRITE = re.compile(r"\bvault[ \t]+(?:kv[ \t]+(?:put|patch)[ \t]+(?:-[\w=-]{1,40}+[ \t]+){0,4}|write[ \t]+(?=(?:secret|kv)/))"
                          r"[\w/.-]{1,200}+")
_VAULT_PAIR = re.compile(r"[ \t]+(?P<key>[\w.-]{1,80}+)=(?:\"([^\"\n]{1,300}+)\"|'([^'\n]{1,300}+)'|([^\s\"'@][^\s\"']{0,300}+))")


# A literal compared with a credential, the literal first (Yoda style): `if "s3cr3t!" != PASSWORD:`,
# `'Tr0ub4dor3' === user.password`. The other order is a named value's (`password == "…"`).
_COMPARED_LITERAL = re.compile(
    r"(?P<q>[\"'])(?P<value>[^\"'\s]{6,64}+)(?P=q)[ \t]*(?:===?|!==?)[ \t]*(?P<name>[A-Za-z_$][\w$]{0,40}+(?:\.[A-Za-z_]\w{0,40}+){0,3}+)")


# Java's and Kotlin's comparisons by method, either way round: `password.equals("…")`, `"…".equals(pwd)`.
_EQUALS_NAME = r"[A-Za-z_$][\w$.]{0,80}+(?:\(\))?"
_EQUALS_VALUE = r"[\"'](?P<{}>[^\"'\s]{{6,64}}+)[\"']"
_EQUALS_LITERAL = re.compile(
    # `Objects.equals(password, "…")`, either way round (tried first: "Objects" is no password's name)
    r"\bObjects\.equals\([ \t]*(?:(?P<name3>" + _EQUALS_NAME + r")[ \t]*,[ \t]*" + _EQUALS_VALUE.format("value3")
    + r"|" + _EQUALS_VALUE.format("value4") + r"[ \t]*,[ \t]*(?P<name4>" + _EQUALS_NAME + r"))[ \t]*\)"
    + r"|(?P<name>[A-Za-z_$][\w$]{0,40}+)(?:\(\))?\.equals(?:IgnoreCase)?\([ \t]*" + _EQUALS_VALUE.format("value")
    + r"|" + _EQUALS_VALUE.format("value2") + r"\.equals(?:IgnoreCase)?\([ \t]*(?P<name2>" + _EQUALS_NAME + r")[ \t]*\)")
_EQUALS_GROUPS = (("name", "value"), ("name2", "value2"), ("name3", "value3"), ("name4", "value4"))


def _compared(text: str) -> Iterator[tuple[str, str, tuple[int, int]]]:
    """The name and the literal of each comparison, and where the literal is: `==` and `.equals` are one relation."""
    if "==" in text or "!=" in text:
        for match in capped(_COMPARED_LITERAL.finditer(text)):
            yield match.group("name"), match.group("value"), match.span("value")
    if ".equals" in text:
        for match in capped(_EQUALS_LITERAL.finditer(text)):
            name, value = next(groups for groups in _EQUALS_GROUPS if match.group(groups[1]) is not None)
            yield match.group(name).removesuffix("()"), match.group(value), match.span(value)


def find_compared_literals(text: str) -> Iterator[Range]:
    """The literal of a comparison whose other side is a password's name."""
    for name, value, span in _compared(text):
        name = name.rsplit(".", 1)[-1].lstrip("$")
        if names_a_password(name) and password_shaped(value, name) and not is_placeholder(value):
            yield span


# Several names given their values in one statement, the values in the names' order: Python's `user, password =
# "admin", "…"`, Go's `var a, b string = "…", "…"` and `a, b := "…", "…"`, Lua's and Perl's lists. A statement of
# its own line, so a call's arguments (`connect(user, password="…", timeout=5)`) are none.
_ASSIGNED_NAME = r"[A-Za-z_$][\w$.]{0,60}+"
_LISTED_VALUE = r"\"[^\"\n]{0,300}+\"|'[^'\n]{0,300}+'|[^\s,;\"'()]{1,300}+"
_MULTIPLE_ASSIGNMENT = re.compile(
    r"^[ \t]*+(?:(?:var|let|const|val|local|my|our)[ \t]+\(?)?"
    r"(?P<names>" + _ASSIGNED_NAME + r"(?:[ \t]*+,[ \t]*+" + _ASSIGNED_NAME + r"){1,7}+)\)?"
    r"(?:[ \t]++[A-Za-z_][\w.\[\]]{0,30}+)?[ \t]*+:?=(?!=)[ \t]*+\(?"
    r"(?P<values>(?:" + _LISTED_VALUE + r")(?:[ \t]*+,[ \t]*+(?:" + _LISTED_VALUE + r")){1,7}+)"
    r"\)?[ \t]*+;?[ \t]*+(?:(?:#|//|--)[^\n]*+)?\r?$",
    re.MULTILINE)
_LIST_SEPARATOR = re.compile(r"[ \t]*,[ \t]*")
_LISTED_VALUES = re.compile(_LISTED_VALUE)


@lru_cache(maxsize=1)
def _multiple_assignments(text: str) -> tuple[re.Match[str], ...]:
    """Found once per text: `find_named_values` passes over their names, `find_multiple_assignments` reads them."""
    if "," not in text or "=" not in text:
        return ()
    return tuple(capped(_MULTIPLE_ASSIGNMENT.finditer(text)))


def find_multiple_assignments(text: str) -> Iterator[Range]:
    """Each value of a multiple assignment whose name names a credential."""
    for match in _multiple_assignments(text):
        names = _LIST_SEPARATOR.split(match.group("names"))
        values = [(value.start(), value.group()) for value in _LISTED_VALUES.finditer(match.group("values"))]
        if len(names) != len(values):
            continue
        for name, (offset, value) in zip(names, values, strict=True):
            strength, name = numbered_credential_name(name.rsplit(".", 1)[-1].lstrip("$"))
            if name.lower() == "pass":
                strength, name = 2, "password"  # a lone `pass` given beside a user (`my ($user, $pass) = …`)
            quoted = value[:1] in "\"'" and len(value) >= 2
            inner = value[1:-1] if quoted else value
            # unquoted, a chosen password would be a name (`user, password = admin, pw`)
            if strength and (assigned_credential(inner, name, strength) if quoted
                             else machine_made_setting(inner, name, strength)):
                start = match.start("values") + offset + quoted
                yield start, start + len(inner)


# A parameter's default among the fields under its name, in YAML or JSON: CloudFormation's `DBPassword:` ⏎ `Type:
# String` ⏎ `NoEcho: true` ⏎ `Default: …`, an OpenAPI schema's property. Only a field of the parameter's own counts:
# lines indented deeper (a list, folded text, a nested object with defaults of its own) and comments are passed over.
# Lower-cased.
_DECLARED_DEFAULT = re.compile(
    r"^(?P<indent>[ \t]*+)\"?(?P<name>[a-z_][\w.-]{0,80}+)\"?[ \t]*+:[ \t]*+\{?[ \t]*+\r?\n"
    r"(?=(?P<field>(?P=indent)[ \t]++))"
    r"(?:(?:(?P=field)(?:[ \t]++[^\n]{0,200}+|\"?(?!default\b)[a-z][\w-]{0,40}+\"?[ \t]*+:[^\n]{0,200}+)"
    r"|[ \t]*+#[^\n]{0,200}+)\n){0,12}?"
    r"(?P=field)\"?default\"?[ \t]*+:[ \t]*+(?:\"(?P<v1>[^\"\n]{1,300}+)\"|'(?P<v2>[^'\n]{1,300}+)'|(?P<v3>[^\s\"',}]{1,300}+))",
    re.MULTILINE)


# Terraform's variable and its default: `variable "azure_devops_pat" {` ⏎ `type = string` ⏎ `default = "…"`. (Its
# value group is named as the YAML pattern's first one, so that one loop reads both.)
_HCL_VARIABLE_DEFAULT = re.compile(
    r"\bvariable[ \t]+\"(?P<name>[\w-]{1,80}+)\"[ \t]*+\{[^{}]{0,600}?\bdefault[ \t]*+=[ \t]*+\"(?P<v1>[^\"\n]{1,300}+)\"")


def find_declared_defaults(text: str) -> Iterator[Range]:
    """The default of a declared parameter or variable whose name names a credential."""
    lowered = lower_aligned(text)
    if "default" not in lowered:
        return
    matches = capped(_DECLARED_DEFAULT.finditer(lowered))
    if "variable" in lowered:
        matches = chain(matches, capped(_HCL_VARIABLE_DEFAULT.finditer(lowered)))
    for match in matches:
        group = match.lastgroup
        assert group is not None  # one of the value's groups closes each pattern
        strength, name = numbered_credential_name(text[match.start("name"):match.end("name")])
        value = text[match.start(group):match.end(group)]
        if not strength or YAML_TAG.match(value):
            continue
        if names_a_password(name) and chosen_password(value, name) \
                or machine_made_setting(value, name, strength) and not ID_SHAPE.search(value):
            yield match.span(group)  # (not a Secret object's name: `image_pull_secret` = "regcred-acr-prod01")


def find_common_passwords(text: str) -> Iterator[Range]:
    """The breach lists' favourites, not a keyboard's name (`QWERTY105`, `keyboard=qwerty105`)."""
    lowered = lower_aligned(text)
    for start, end in _spans(_COMMON_PASSWORD, lowered):
        if not (text.startswith(_KEYBOARD, start)
                or lowered.startswith("qwerty", start) and text[start - 1:start] in _SETTING_MARKS):
            yield start, end


def find_passwords(text: str) -> Iterator[Range]:
    yield from find_named_values(text)
    for match in capped(_NETRC.finditer(text)):
        if not is_placeholder(match.group(1)):
            yield match.span(1)
    for match in capped(_PGPASS.finditer(text) if text.count(":") >= 4 else ()):
        if stored_secret(match.group(1)) or password_shaped(match.group(1), "password"):
            yield match.span(1)
    yield from find_name_value_lines(text)
    yield from find_setting_pairs(text)
    yield from find_compared_literals(text)
    yield from find_multiple_assignments(text)
    yield from find_declared_defaults(text)
    yield from find_directive_secrets(text)
    yield from find_nested_values(text)
    yield from find_session_cookies(text)
    yield from find_listed_passwords(text)
    yield from find_table_credentials(text)
    for match in capped(_SHELL_DEFAULT.finditer(text) if "${" in text else ()):
        strength = credential_name(match.group("name"))
        if strength and machine_made_setting(match.group("value"), match.group("name"), strength):
            yield match.span("value")
    yield from find_kubernetes_secret_data(text)
    yield from find_context_tokens(text)
    yield from find_telegram(text)
    yield from find_generated_keys(text)
    lowered = lower_aligned(text)
    yield from find_common_passwords(text)
    for match in capped(_AUTH_SCHEME.finditer(lowered)):
        start = match.start()
        value = text[match.start(1):match.end(1)]
        if lowered.startswith("bearer:", start) and not (
                len(value) >= _SCHEME_VALUE_MIN and mixed_random(value) and not pronounceable(value)):
            continue  # "Supported schemes: Bearer: oauth2/jwt-access-token": a colon after the scheme reads as prose
        if (start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_-")) and _DIGIT.search(value) \
                and not is_placeholder(value):
            yield match.span(1)
    for match in capped(_AUTH_HEADER.finditer(lowered)):
        value = text[match.start(2):match.end(2)]
        # After another scheme's name a machine-made value (`BotConnector Xq4T…`), not an id or a file named in a
        # design note (`Cognito eu-west-1_Xk2Lm9QzT`, `RBAC roles-matrix-v2.xlsx`, `JWT RS256-signed`), nor a
        # template (`basic {base64(email:password)}`); Azure's signature is a query of its own.
        scheme = match.group("scheme")
        machine_made = len(value) >= _SCHEME_VALUE_MIN and mixed_random(value) and not worded(value) \
            and not any(c in value for c in "{}()<>[]")
        if not is_placeholder(value) and (not scheme or machine_made
                                           or scheme == "sharedaccesssignature" and "sig=" in value.lower()):
            yield match.span(2)
    for match in capped(_URL_USERINFO.finditer(text)):
        password = match.group(1)
        user_start = match.start() + 3
        user = text[user_start:match.start(1) - 1]
        if not user and (password.isdigit() or any(c in password for c in "?&=,#")):
            continue  # "mongodb://:27017@db", "http://:3000?email=a@b.io": a port and what follows it
        if user.startswith(("${", "#{", "{{", "$(")):
            continue  # a template's URL: `postgresql://${self:custom.db.username}:${self:custom.db.password}@…`
        if mixed_random(user) and len(user) >= 20:
            yield user_start, match.start(1) - 1  # a token given as the user: "https://<token>:x-oauth-basic@"
        # The host follows the last "@"; a "@" before it belongs to the password.
        end = match.start(1) + len(password)
        # `postgres://postgres:postgres@localhost`: an image's default account, the user name said again
        if password != user and not is_placeholder(password):
            yield match.start(1), end
    for match in capped(_URL_TOKEN_USER.finditer(text) if "@" in text else ()):
        user = match.group(1)
        if (mixed_random(user) or long_random_word(user)) and "." not in user and not is_placeholder(user):
            yield match.span(1)
    for match in capped(_CLI_USER.finditer(text)):
        user, password = match.group(1), match.group(2)
        if not password:
            if _key_as_user(user) and not is_placeholder(user):
                yield match.span(1)  # `curl -u sk_live_…:`: an API key given as the user, no password
            continue
        # `-u <user:password>`, `-u [user:password]` (or a value already redacted), `-u test:test` and
        # `--user user:pass` document the syntax; `docker run -u 1000:1000` is a uid and gid; `-u ":secret"`
        # has no user and is a secret.
        if user.startswith(("<", "[")) or password == user or password.isdigit() or len(password) < 3 \
                or password in ("pass", "password"):
            continue
        if not is_placeholder(password):
            yield match.span(2)
    for match in capped(_CLI_PASSWORD.finditer(text)):
        floor = max(0, match.start() - 200)
        line_start = text.rfind("\n", floor, match.start()) + 1 or floor  # bounded: a line may be the whole text
        if text[match.start(1) - 1].isspace() and _PROMPTING_CLIENT.search(text, line_start, match.start()):
            continue  # `mysql -u root -p shop`: a lone `-p` asks for the password; `shop` is the database
        if match.group(1).isdigit() and len(match.group(1)) <= 5:
            continue  # `psql -U postgres -p 5432`, `mysql -u root -P 3306`: a port
        if not is_placeholder(match.group(1)):
            yield match.span(1)
    for match in capped(_TOOL_PASSWORD.finditer(text) if any(word in lowered for word in _TOOL_WORDS) else ()):
        group = match.lastindex or 1
        if not is_placeholder(match.group(group)):
            yield match.span(group)
    for match in capped(_CREDENTIAL_ARGUMENTS.finditer(text) if any(word in lowered for word in _CALL_WORDS) else ()):
        if not is_placeholder(match.group(3)):
            yield match.span(3)
    for match in capped(_SIGNING_KEY_ARGUMENT.finditer(text) if any(word in lowered for word in _SIGNING_WORDS) else ()):
        if chosen_password(match.group(2), "secret") or stored_secret(match.group(2)):
            yield match.span(2)  # not a key's file (`jwt.sign(payload, "private-key.pem")`)
    # Each of these patterns opens with a word alternation the engine tries at every position: looked for only
    # in a text holding the word they need.
    for match in capped(_SQL_IDENTIFIED.finditer(lowered) if "identified" in lowered else ()):
        group = match.lastgroup or "bare"
        value = text[match.start(group):match.end(group)]
        # In a CREATE/ALTER USER statement, quoted whole; unquoted (Oracle), only a machine-made value.
        if (group != "bare" or mixed_random(value)) and not is_placeholder(value):
            yield match.span(group)
    for match in capped(_PROSE_CREDENTIAL.finditer(lowered) if any(word in lowered for word in _PROSE_WORDS) else ()):
        value = trim(text[match.start("value"):match.end("value")])
        if _PACKAGE_VERSION.fullmatch(value):
            continue  # "the strength meter dependency is zxcvbn@4.4.2."
        if (match.group("bare") or match.group("words")) and not (
                _SYMBOL.search(value) and looks_random(value) or capitalised_passphrase(value)):
            continue
        if _COMPOUND_ADJECTIVE.fullmatch(value) or not _CLAUSE_END.match(text, match.start("value") + len(value)) \
                and not looks_random(value):
            continue  # "the password is Argon2id-hashed, so …", "the password is Base64Encoded before it is written"
        # "is" ties the value to the password: a chosen one counts ("the wifi password is Sunflower88").
        if (mixed_random(value) and not pronounceable(value) or password_shaped(value, "password")
                or capitalised_passphrase(value)) \
                and "://" not in value and not FILE_PATH.fullmatch(value) and not is_placeholder(value):
            yield match.start("value"), match.start("value") + len(value)
    for match in capped(_LOGIN_PAIR.finditer(lowered) if any(word in lowered for word in _LOGIN_WORDS) else ()):
        value = trim(text[match.start(2):match.end(2)]).rstrip(",;!?")
        # Written close (`sso/okta2020`, `promo:Sunflower!9`) it may be a path or a host and port: then only a strong
        # password's shape counts. Spaced, words joined with a number count too ("qa.lead@acme.test / Lead-QA-7781").
        spaced = match.group("slash")[0].isspace() and match.group("slash")[-1].isspace()
        shaped = password_shaped(value, "password") or spaced and looks_random(value) and not PATH.match(value)
        if shaped and (spaced or looks_random(value)) and not is_placeholder(value):
            yield match.start(2), match.start(2) + len(value)
    for match in capped(_PROSE_KEY.finditer(lowered) if "key" in lowered or "token" in lowered
                        or "secret" in lowered else ()):
        value = trim(text[match.start(1):match.end(1)])
        if _OWNED_BY.search(lowered, max(0, match.start() - 40), match.start()):
            continue
        # Hexadecimal ids, nonces and key ids are 16 characters; a hexadecimal key is 32 or more. An Azure client
        # secret holds "~" and ".".
        shortest = 32 if HEX_OR_UUID.fullmatch(value) else _PROSE_KEY_MIN
        if len(value) >= shortest and (mixed_random(value) or long_random_word(value) and not value.isdigit()) \
                and not pronounceable(value) and ("." not in value or "~" in value) and not ID_SHAPE.search(value) \
                and not is_placeholder(value):
            yield match.start(1), match.start(1) + len(value)
    for match in capped(_PIPED_LOGIN.finditer(lowered) if "login" in lowered or "sudo" in lowered else ()):
        if not is_placeholder(text[match.start(1):match.end(1)]):
            yield match.span(1)
    for match in capped(_SQL_PASSWORD.finditer(lowered) if "password" in lowered else ()):
        group = match.lastgroup or "q1"
        if not is_placeholder(text[match.start(group):match.end(group)]):
            yield match.span(group)
    for match in capped(_ORACLE_LOGIN.finditer(text) if "/" in text else ()):
        if not is_placeholder(match.group(1)) and not match.group(1).startswith("nolog"):
            yield match.span(1)
    for match in capped(_CHPASSWD.finditer(text) if "chpasswd" in lowered else ()):
        if not is_placeholder(match.group(1)):
            yield match.span(1)
    for match in capped(_USE_TO_LOG_IN.finditer(lowered) if " to " in lowered or " para " in lowered
                        or " pour " in lowered or " zum " in lowered or " om " in lowered else ()):
        value = text[match.start(1):match.end(1)]
        if looks_random(value) and not is_placeholder(value):
            yield match.span(1)
    for match in capped(_VALUE_THEN_VERB.finditer(text) if any(word in text for word in _VALUE_THEN_VERB_WORDS) else ()):
        value = match.group(1)
        if (password_shaped(value, "password") or mixed_random(value)) and not is_placeholder(value):
            yield match.span(1)
    for match in capped(_VALUE_IS_PASSWORD.finditer(lowered) if " is " in lowered else ()):
        value = text[match.start(1):match.end(1)]
        if (password_shaped(value, "password") and _SYMBOL.search(value) or capitalised_passphrase(value)) \
                and not is_placeholder(value):
            yield match.span(1)
    for match in capped(_PIN.finditer(text) if "PIN" in text else ()):
        if not is_placeholder(match.group(1)) and len(set(match.group(1))) > 2:
            yield match.span(1)
    for match in capped(_GO_DSN.finditer(text) if "@tcp(" in text or "@unix(" in text or "@udp(" in text else ()):
        if not is_placeholder(match.group(1)):
            yield match.span(1)
    pairs = 0
    for command in capped(_VAULT_WRITE.finditer(lowered) if "vault" in lowered else ()):
        position = command.end()
        # The command's `key=value` arguments, up to its end; all commands of a text share one budget.
        while pairs < MAX_CANDIDATES and (pair := _VAULT_PAIR.match(text, position)) is not None:
            pairs += 1
            group = pair.lastindex or 4
            value = pair.group(group)
            # `db_host=db.internal`, `feature_flags=checkout-v2`, `ttl=1h` configure, `build_sha=…`, `kms_key_id=…`
            # name an id; a stored secret is machine-made.
            if stored_secret(value) and (name_words(pair.group("key")) or [""])[-1] not in _DIGEST_NAMES:
                yield pair.span(group)
            position = pair.end()
    for match in capped(_SESSION_ID.finditer(lowered) if "sess" in lowered or ".sid" in lowered else ()):
        value = text[match.start(1):match.end(1)]
        if (mixed_random(value) or long_random_word(value)) and not is_placeholder(value):
            yield match.span(1)
    for header in capped(_COOKIE_HEADER.finditer(lowered) if "cookie" in lowered else ()):
        position = header.end()
        for _ in range(64):  # the "name=value; name=value" list that follows the header's name, and no further
            pair = _COOKIE_PAIR.match(text, position)
            if pair is None:
                break
            value = pair.group(1)
            if len(value) >= 16 and (mixed_random(value) or long_random_word(value)) and not is_placeholder(value):
                yield pair.span(1)
            if pair.end() == position or not text.startswith(";", pair.end(1)):
                break
            position = pair.end()


# Telegram bot token: the bot id, a colon and 35 url-safe characters, which open with "AA" (gitleaks asks for
# the "A"); a body may hold no digit at all.
_TELEGRAM = re.compile(r":(?<=\d:)([A-Za-z0-9_-]{35})(?![\w-])")
_BOT_ID = re.compile(r"(?:(?<=bot)|(?<![\w]))\d{8,10}$")
# A line that is only a name and a long value ("cloudsmith 1234567890abcdef…", "wandb: 9f2c…"): the
# shape of a pasted key. Names that announce a digest or an id (commit, sha, hash, build) are not keys, nor
# values with a word between joiners (a pod's name, "orders-api-5d8f7c9b6-hx2lp").
_NAME_VALUE_LINE = re.compile(
    r"^[ \t]*([A-Za-z][A-Za-z0-9_.-]{1,40}+)(?:[ \t]*[:=][ \t]*|[ \t]+)[\"']?([A-Za-z0-9_+/-]{20,}+=*)[\"']?[ \t]*$",
    re.MULTILINE,
)
# Names of ids, in a header dump too: `x-request-id`, `cf-ray`, `traceparent`.
_ID_NAME_ENDS = frozenset({"id", "sid", "ray", "traceparent", "trace", "span", "etag"})
# Names of values published by design: a CAPTCHA's site key, a domain's verification record, a public key.
_PUBLISHED_NAME = re.compile(f"(?i:{PUBLISHED_VALUE_NAME}|public|publishable)[:=]?$")
_JOINED_WORD = re.compile(r"(?:^|[-_])(?=[a-z]*[g-z])[a-z]{4,}(?:$|[-_])")
_DIGEST_NAMES = frozenset({"commit", "sha", "sha1", "sha256", "sha512", "md5", "hash", "digest", "checksum", "rev",
                           "revision", "build", "version", "id", "uuid", "guid", "change", "changeset", "ref",
                           "tag", "branch", "image", "container", "node", "task", "job", "run", "trace", "span",
                           "request", "session", "object", "etag", "oid", "parent", "tree", "head", "merge",
                           "at", "from", "to", "in", "is", "and", "or", "the", "see", "file", "path", "url"})


# A Kubernetes Secret's `data:` (base64) and `stringData:` values are secrets whatever their keys are called
# (`extra: YWRtaW46…`, `tls.key: LS0t…`), in the YAML document that says `kind: Secret` only. Bounded: a
# hostile text of many blocks reads each line a few times.
_YAML_DOCUMENT = re.compile(r"^---", re.MULTILINE)
_K8S_SECRET = re.compile(r"^[ \t]*[\"']?kind[\"']?:[ \t]*[\"']?secret[\"']?[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_DATA_BLOCK = re.compile(r"^([ \t]*)(?:data|stringData):[ \t]*\r?$", re.MULTILINE)
_DATA_ENTRY = re.compile(r"([ \t]*)[\w.-]{1,253}:[ \t]*([\"']?)([^\s\"'#|>][^\s\"']{3,})\2(?:[ \t]+#[^\n]*)?[ \t]*\r?")
_MAX_DATA_BLOCKS = 32
_MAX_DATA_LINES = 256


def _documents(text: str) -> Iterator[Range]:
    start = 0
    for separator in _YAML_DOCUMENT.finditer(text):
        yield start, separator.start()
        start = separator.end()
    yield start, len(text)


def find_kubernetes_secret_data(text: str) -> Iterator[Range]:
    if _K8S_SECRET.search(text) is None:
        return  # most texts: nothing more is read
    blocks = 0
    for doc_start, doc_end in _documents(text):
        if blocks == _MAX_DATA_BLOCKS or _K8S_SECRET.search(text, doc_start, doc_end) is None:
            continue
        for block in _DATA_BLOCK.finditer(text, doc_start, doc_end):
            blocks += 1
            if blocks > _MAX_DATA_BLOCKS:
                break
            yield from _data_values(text, block.end() + 1, doc_end, len(block.group(1)))


def _data_values(text: str, position: int, end: int, indent: int) -> Iterator[Range]:
    """The values of a block's entries, up to the first line indented no deeper than the block's key."""
    for _ in range(_MAX_DATA_LINES):
        if position >= end:
            return
        line_end = text.find("\n", position, end)
        line_end = end if line_end < 0 else line_end
        line = text[position:line_end]
        content = line.lstrip(" \t")
        if content.strip() and not content.startswith("#"):
            if len(line) - len(content) <= indent:
                return
            entry = _DATA_ENTRY.fullmatch(text, position, line_end)
            if entry is not None and not is_placeholder(entry.group(3)):
                yield entry.span(3)
        position = line_end + 1


def find_name_value_lines(text: str) -> Iterator[Range]:
    for match in _NAME_VALUE_LINE.finditer(text):
        name, value = match.group(1), match.group(2)
        if name.lower().rstrip(":") in _DIGEST_NAMES or _ID_NAME_ENDS.intersection(name_words(name)[-1:]) \
                or _PUBLISHED_NAME.search(name) or OBJECT_ID.fullmatch(value) or base64_of_data(value):
            continue
        letters = sum(c.isalpha() for c in value[:PROBE])
        digits = sum(c.isdigit() for c in value[:PROBE])
        if (letters >= 4 and digits >= 4 and not is_placeholder(value) and not PATH.match(value)
                and not HEX_OR_UUID.fullmatch(value) and not worded(value) and not _JOINED_WORD.search(value)):
            yield match.span(2)


# Django's generated `SECRET_KEY`: 50 characters of `get_random_secret_key`'s alphabet (small letters, digits,
# `!@#$%^&*(-_=+)`), which no ordinary word or expression mixes so: a quote, "=", a space or a line's end
# around it.
_DJANGO_KEY = re.compile(r"(?<![^\s\"'=,(])[a-z0-9!@#$%^&*(\-_=+)]{50}(?![^\s\"',;)])")
# Its symbols other than those of identifiers, URLs' queries and versions ("-", "_", "=", "&").
_DJANGO_SYMBOLS = frozenset("!@#$%^*(+)")
# Bundler's credentials for a gem server, set in the environment under the host's name with "__" for each dot
# (`BUNDLE_GEMS__CONTRIBSYS__COM=user:password`).
_BUNDLER_CREDENTIALS = re.compile(r"\bBUNDLE_(?:[A-Z0-9-]+__)+[A-Z]{2,24}[\"']?[ \t]*[:=][ \t]*[\"']?"
                                  r"([A-Za-z0-9._%+@][A-Za-z0-9._%+@-]{0,99}+:[^\s\"'\\]{1,200}+)(?![\\\w])")


def find_generated_keys(text: str) -> Iterator[Range]:
    for match in capped(_DJANGO_KEY.finditer(text) if "+" in text or "=" in text or "(" in text else ()):
        value = match.group()
        symbols = sum(c in _DJANGO_SYMBOLS for c in value)
        digits = sum(c.isdigit() for c in value)
        if symbols >= 4 and len(_DJANGO_SYMBOLS.intersection(value)) >= 3 and digits >= 4 and value.count(value[0]) < 25:
            yield match.span()
    for match in capped(_BUNDLER_CREDENTIALS.finditer(text) if "BUNDLE_" in text else ()):
        password = match.group(1).split(":", 1)[1]
        # Machine-made, as the gem servers issue them: not `cafebabe:deadbeef`, `username:password`, `SSM:/#{…}`
        if mixed_random(password) and "/" not in password and not is_placeholder(match.group(1)):
            yield match.span(1)


def find_telegram(text: str) -> Iterator[Range]:
    for match in _TELEGRAM.finditer(text):
        bot_id = _BOT_ID.search(text, max(0, match.start() - 11), match.start())
        body = match.group(1)
        if bot_id is not None and (mixed_random(body) or body.startswith("AA") and not is_placeholder(body)):
            yield bot_id.start(), match.end(1)  # the bot's id is part of the token
# ---- password hashes -------------------------------------------------------------------------------


_HASHES = (
    re.compile(r"\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}"),  # bcrypt
    re.compile(r"\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{8,}+\$[A-Za-z0-9+/]{16,}+"),
    re.compile(r"\$(?:1|5|6|8|9|md5|apr1|sha1|y|gy|7)\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,64}+\$[./A-Za-z0-9]{20,}+"),
    re.compile(r"\$(?:scrypt|pbkdf2(?:-sha\d+)?)\$[^\s$]{1,100}+\$[A-Za-z0-9./+=]{8,}+(?:\$[A-Za-z0-9./+=]{8,}+)?"),
    re.compile(r"(?:pbkdf2_sha\d+|bcrypt_sha256|argon2|scrypt)\$[^\s$]{1,100}+\$[A-Za-z0-9./+=$]{16,}+"),
    re.compile(r"\$krb5(?:asrep|tgs|pa)\$\d+\$[^\s$]{1,200}+\$[0-9a-f$]{32,}+"),  # Kerberos AS-REP / TGS
    re.compile(r"\{(?:SSHA|SSHA256|SSHA512|SHA|SMD5|CRYPT|PBKDF2[-\w]*)\}[A-Za-z0-9./+=$]{16,}+"),
)


def find_password_hashes(text: str) -> Iterator[Range]:
    for pattern in _HASHES:
        yield from _spans(pattern, text)
