"""Credentials written in forms other than `name = value`: a server's or a tool's directive (`requirepass …`,
`stats auth admin:…`), a password element's nested value, session cookies, a table's password column and a list
under a password's key. Each finder yields `(start, end)` of the value only."""

from __future__ import annotations

import re
from collections.abc import Iterator

from reqgate.pipeline.guardrail.budget import capped
from reqgate.pipeline.guardrail.names import (
    NAME_MAX,
    assigned_credential,
    chosen_password,
    credential_name,
    names_a_password,
    numbered_credential_name,
    stored_secret,
)
from reqgate.pipeline.guardrail.normalize import lower_aligned
from reqgate.pipeline.guardrail.values import (
    PASSWORD_TRANSLATIONS,
    PASSWORD_WORDS,
    is_placeholder,
    long_random_word,
    mixed_random,
    name_words,
    password_shaped,
)

Range = tuple[int, int]

# A YAML list of passwords under a key of its own (`passwords:` ⏎ `  - "…"` ⏎ `  - "…"`): every item is one. The key
# ends its line, so "Users cannot change their password" ⏎ "- Chrome58 on Windows" is prose and a list.
_LIST_KEY = re.compile(r"^[ \t]*+(?:\d{1,4}_(?=[A-Za-z]))?(?P<name>[A-Za-z_][\w.-]{0,60}+)[ \t]*+:[ \t]*+\r?$", re.MULTILINE)
_LIST_ITEM = re.compile(r"[ \t]*+-[ \t]++(?P<q>[\"']?)(?P<value>[^\s\"']{1,200}+)(?P=q)[ \t]*+\r?(?:\n|$)")
_LIST_MAX = 50


def find_listed_passwords(text: str) -> Iterator[Range]:
    """The items of a YAML list whose key names passwords."""
    for match in capped(_LIST_KEY.finditer(text) if "-" in text else ()):
        name = match.group("name")
        if not names_a_password(name):
            continue
        position = match.end() + 1
        for _ in range(_LIST_MAX):
            item = _LIST_ITEM.match(text, position)
            if item is None:
                break
            value = item.group("value")
            if password_shaped(value, name) and not is_placeholder(value):
                yield item.span("value")
            position = item.end()


# Servers' own directives that take a secret: Redis' `requirepass` and `masterauth` (also through `redis-cli config
# set`), HAProxy's `stats auth user:…` and `user … insecure-password …`, an SNMP community (`snmp-server community
# [0|7] … RO`, net-snmp's `rocommunity …`), an archive's password (`zip -P …`, `unzip -P …`, 7-Zip's glued `-p…`).
# Lower-cased. The value must be shaped as a secret: prose follows these words too ("requirepass must be set").
_SECRET_DIRECTIVE = re.compile(
    r"(?:^[ \t]*+|\bconfig[ \t]++set[ \t]++)(?:requirepass|masterauth)[ \t]++"
    r"|^[ \t]*+(?:stats[ \t]++auth[ \t]++[^\s:]{1,64}+:|user[ \t]++\S{1,64}+[ \t]++insecure-password[ \t]++"
    r"|snmp-server[ \t]++community[ \t]++(?:[07][ \t]++)?|r[ow]community6?[ \t]++)"
    r"|\b(?:zip|unzip)\b[^\n|;&]{0,200}?[ \t]-p[ \t]*+(?=[\"'])|\b(?:zip|unzip)\b[^\n|;&]{0,200}?[ \t]-p[ \t]++"
    r"|\b7za?\b[^\n|;&]{0,200}?[ \t]-p(?=[^\s-])"
    # RabbitMQ's `rabbitmqctl add_user <user> <password>` and `change_password`; a space-separated config's own
    # line (Mosquitto's `remote_password …`, `bind_password …`; not nginx's `proxy_pass …`); Oracle's `user/password@`
    # (JDBC thin, sqlplus)
    r"|\brabbitmqctl[ \t]++(?:add_user|change_password)[ \t]++[\"']?[^\s\"']{1,64}+[\"']?[ \t]++"
    r"|^[ \t]*+[a-z]{1,20}+_(?:password|passwd|pwd|secret)[ \t]++(?=[^\s=:][^\s]*+[ \t]*+\r?$)"
    r"|\bjdbc:oracle:thin:[^/\s@:]{1,64}+/|\bsqlplus[ \t]++[^/\s@]{1,64}+/",
    re.MULTILINE)
_DIRECTIVE_VALUE = re.compile(r"[\"']?([^\s\"'@]{4,300}+)")
_DIRECTIVE_WORDS = ("requirepass", "masterauth", "stats", "insecure-password", "community", "zip", "7z", "rabbitmqctl",
                    "_passw", "_pwd", "_secret", "oracle:thin", "sqlplus")


def find_directive_secrets(text: str) -> Iterator[Range]:
    """The secrets servers' and tools' own directives take."""
    lowered = lower_aligned(text)
    for match in capped(_SECRET_DIRECTIVE.finditer(lowered) if any(w in lowered for w in _DIRECTIVE_WORDS) else ()):
        value = _DIRECTIVE_VALUE.match(text, match.end())
        if value is not None and (chosen_password(value.group(1), "password") or stored_secret(value.group(1))):
            yield value.span(1)


# A password element whose value is an element of its own: Windows' unattend.xml (`<AdministratorPassword>` ⏎
# `<Value>…</Value>`), .NET's and Java's settings. Lower-cased.
_NESTED_VALUE = re.compile(r"<(?P<name>[\w:.-]{0,60}?(?:password|passwd|passphrase|secret|token))>\s{0,80}+"
                           r"<value>[ \t]*+(?P<value>[^<\s]{1,300}+)[ \t]*+</value>")


def find_nested_values(text: str) -> Iterator[Range]:
    """The nested `<Value>` of an element whose name names a credential; not a path to one in a vault."""
    lowered = lower_aligned(text)
    for match in capped(_NESTED_VALUE.finditer(lowered) if "<value>" in lowered else ()):
        strength, name = numbered_credential_name(text[match.start("name"):match.end("name")])
        value = text[match.start("value"):match.end("value")]
        if strength and "/" not in value and assigned_credential(value, name, strength):
            yield match.span("value")


# Cookies sent with a request: a `Cookie:` header (in JSON and a HAR too), curl's `-b '…'`. A session's cookie is
# its credential.
_COOKIE_LINE = re.compile(r"(?i:\bcookie[\"']?[ \t]*:[ \t]*[\"']?|\"cookie\",[ \t]*\"value\":[ \t]*\""
                          r"|(?<![\w-])(?:-b|--cookie)[ \t]++[\"']?(?=[^\s\"'=;]{1,60}=))([^\n\"']{1,2000}+)")
_SESSION_COOKIE = re.compile(r"(?:^|;[ \t]*)(?i:[\w.-]{0,30}?(?:sess|sid|session|auth|token)[\w.-]{0,30}?)="
                             r"\\?\"?([^;\s\"\\]{16,400}+)")
_COOKIES_PER_LINE = 64


def find_session_cookies(text: str) -> Iterator[Range]:
    """The session cookies a request sends: machine-made values under a session's or a token's name."""
    if "ookie" not in text and "-b " not in text:
        return
    for line in capped(_COOKIE_LINE.finditer(text)):
        offset = line.start(1)
        for cookie in capped(_SESSION_COOKIE.finditer(line.group(1)), _COOKIES_PER_LINE):
            value = cookie.group(1)
            if (mixed_random(value) or long_random_word(value)) and not is_placeholder(value):
                yield offset + cookie.start(1), offset + cookie.end(1)


# A table of test accounts: a column headed by a credential's name (Jira's `|| User || Password ||`, markdown's
# `| user | password |` over `|---|---|`), or a row that names the credential in one cell and gives it in the
# next (`| password | Hunter2024 |`).
_TABLE_LINE = re.compile(r"^[ \t]*\|[^\n]*", re.MULTILINE)
_TABLE_CELL = re.compile(r"[^|]+")
_MARKDOWN_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}")
_JIRA_HEADER = re.compile(r"[ \t]*+\|\|(?:[^|]*+\|\|)*+[^|]*+$")
_CELL_MARKUP = re.compile(r"(?:\{\{|`|\*)?(.*?)(?:\}\}|`|\*)?$")
_MAX_CELLS = 32
_VALUE_HEADERS = frozenset({"value", "values", "setting", "wert", "valeur", "valor"})


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the cells of the table line text[start:end], without their padding."""
    cells = []
    for cell in capped(_TABLE_CELL.finditer(text, start, end), _MAX_CELLS):
        left, right = cell.span()
        while left < right and text[left].isspace():
            left += 1
        while right > left and text[right - 1].isspace():
            right -= 1
        cells.append((left, right))
    return cells


def _table_secret(text: str, cell: tuple[int, int], name: str) -> Range | None:
    inner = _CELL_MARKUP.match(text, *cell)
    assert inner is not None  # every part of the pattern but the lazy middle is optional
    value = inner.group(1)
    # A chosen password only under a password's name: an "API Key" column may list keys' names (`key_ci_readonly2`).
    chosen = name_words(name)[-1] in PASSWORD_WORDS and password_shaped(value, name)
    if value and not any(c.isspace() for c in value) and (chosen or stored_secret(value)) and not is_placeholder(value):
        return inner.span(1)
    return None


# "Heslo" is also Czech for a dictionary's headword, "parola" Italian for a word: not over a column of passwords.
_PASSWORD_COLUMNS = PASSWORD_TRANSLATIONS - {"heslo", "parola"}


def _translates_password(header: str) -> bool:
    return header.strip(" *").lower() in _PASSWORD_COLUMNS


def find_table_credentials(text: str) -> Iterator[Range]:
    if "|" not in text:
        return
    columns: dict[int, str] = {}
    value_columns: set[int] | None = None  # None: no header, any cell may give the value its left cell names
    previous_end = -2
    for line in capped(_TABLE_LINE.finditer(text)):
        if line.start() > previous_end + 1:
            columns, value_columns = {}, None  # a line that is not a table's ends the table
        previous_end = line.end()
        cells = _cells(text, *line.span())
        names = [text[start:end] if end - start <= NAME_MAX else "" for start, end in cells]
        if _JIRA_HEADER.match(line.group()) or _MARKDOWN_RULE.match(text, line.end() + 1):
            columns = {index: "password" if _translates_password(name) else name
                       for index, name in enumerate(names) if credential_name(name) == 2 or _translates_password(name)}
            # Under a header only a "Value" column gives the value of the name beside it: in `| Field | Type |`
            # the cell after "token" is its type.
            value_columns = {index for index, name in enumerate(names) if name.lower().strip("*") in _VALUE_HEADERS}
            continue
        if _MARKDOWN_RULE.match(line.group()):
            continue
        for index, cell in enumerate(cells):
            name = columns.get(index)
            if name is None and index and (value_columns is None or index in value_columns) \
                    and credential_name(names[index - 1]) == 2:
                name = names[index - 1]
            if name and (found := _table_secret(text, cell, name)) is not None:
                yield found
