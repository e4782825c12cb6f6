"""What a credential's name says: how strongly it names a credential (`name_strength`: "DB_PASSWORD" says it,
"STRIPE_KEY" only might, "sort_key" does not), and which values such a name takes (`machine_made_setting`,
`chosen_password`, `assigned_credential`). Shared by the finders in `credentials` and `credential_forms`."""

from __future__ import annotations

import re

from reqgate.pipeline.guardrail.budget import PROBE
from reqgate.pipeline.guardrail.shapes import (
    CURSOR_WORDS,
    HANDLE_WORDS,
    ORDINARY_CREDENTIAL_ENDINGS,
    names_site_key,
)
from reqgate.pipeline.guardrail.values import (
    DOTTED,
    PASSWORD_WORDS,
    PATH,
    capitalised_passphrase,
    is_placeholder,
    long_random_word,
    looks_random,
    mixed_random,
    name_words,
    password_shaped,
    worded,
)

# The longest name read back from its value ("spring.datasource.password", "01_hardcoded_password").
NAME_MAX = 80

# After a password's word, the system it logs in to, in an assignment (`password_couchbase: …`, `PASSWORD_SMTP=…`);
# not the words that make it a setting about passwords (`password_min_length = 12`, `PASSWORD_RE = /^(?=…/`).
_OWNER_QUALIFIER = (
    r"(?!(?:file|path|dir|field|input|selector|length|len|min|max|re|regex|pattern|policy|rule|rules|reset|confirm|"
    r"confirmation|within|property|fetch|prompt|label|hint|expiry|expires|expiration|age|history|strength|type|"
    r"mode|hash|hashed|salt|encoder|validator|required|changed|change|updated|attempts|retries|format|algorithm|"
    r"digest|lifetime|chars|characters|complexity|manager|store|env|var|name|key|id|url|uri|link|page|form|"
    r"text|message|msg|error|title|placeholder|column|col|param|option|flag|setting|config|auth|"
    r"login|token|secret|protected|enabled|disabled|visible|hidden|less|scheme|encoding|minimum|maximum|cipher|"
    r"kdf|source|provider|backend|strategy|method|hasher|hashing|encryption|encrypted|algo|iterations|rounds|lock|"
    r"lockout|reuse|ttl|timeout|version|schema|mask|masked|reveal|toggle|generator|service|mode)(?![a-z]))"
    r"(?P<owner>[a-z]{2,12})(?=[\"']?[ \t]*[:=])"
)
# What a credential is for, after its word: `my_secret_password_for_email`, `token-for-github`.
PURPOSE = r"[_-](?:for|of)[_-][a-z]{2,12}(?:[_-][a-z]{2,12})?"
# The last word of a name that says credential: DB_PASSWORD, clientSecret, X-Api-Key, SSHpassword,
# dbpass, CLIENTSECRET. Matched on the lower-cased copy, so glued names end in these too.
# A qualifier of environment, version or index may follow the word (API_KEY_PROD, SECRET_KEY_BASE,
# DB_PASSWORD_2); the name is judged by the word before it. "api" names a setting only when assigned
# (`MAILGUN_API=…`): a log's thousand `/api/` paths must not use up the text's `MAX_NAMES`.
NAME_END = re.compile(
    r"(?P<word>passwords?|passwd|passphrase|passcode|passwort|contraseña|pass|pwd|pword|pw|psk|secret|token|apikey|"
    r"api_key|api(?=(?:[_.-]?[a-z0-9]{1,12})?[\"']?[ \t]*[:=])|key|credentials|credential|creds|auth|access|private|signature|sig|license|licence|"
    r"client[_.-]id|tenant[_.-]id|clientid|tenantid|test_reporter_id|authtok|pat|login|"
    # "tok" shortens "token" after the word that makes it a credential: `access_tok`, `SECRET-tok`
    r"(?:(?<=secret[_.-])|(?<=access[_.-])|(?<=refresh[_.-])|(?<=auth[_.-])|(?<=api[_.-]))tok)"
    r"(?:[_.-]?(?:\d{1,2}|v\d{1,2}|prod|production|dev|development|test|staging|stage|qa|uat|base|live|sandbox|"
    r"primary|secondary|old|new|local|value|default|backup|ro|rw|dr|readonly|replica|master|admin|root)"
    r"|(?:(?<=password)|(?<=passwd))_" + _OWNER_QUALIFIER +
    # what the credential is for: `my_secret_password_for_email`, `token_for_github`
    r"|(?:(?<=password)|(?<=passwd)|(?<=pwd)|(?<=secret)|(?<=token))" + PURPOSE + r"(?=[\"']?[ \t]*[:=]))?"
    r"(?![a-z0-9])"
)
# Credential words read alone as prose or as a field type; after them a value must look machine-made.
_STRONG_WORDS = frozenset({"password", "passwords", "passwd", "passphrase", "passcode", "passwort", "contraseña", "pwd",
                           "pw",  # LDAP's `bindpw`, `rootpw`; `db_pw`
                           "psk",  # a Wi-Fi network's pre-shared key: wpa_supplicant's `psk="…"`
                           "pword", "secret", "token", "apikey", "credential", "credentials", "creds",
                           "test_reporter_id",  # Code Climate's test reporter id uploads coverage as the repository
                           "authtok"})  # sssd's and PAM's bind password: `ldap_default_authtok = …`
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("secret", "key"), ("private", "key"),
                           ("signing", "key"), ("master", "key"), ("encryption", "key"), ("auth", "key"),
                           ("client", "key"), ("license", "key"), ("app", "key"), ("account", "key"),
                           ("shared", "key"), ("storage", "key"), ("consumer", "key"), ("subscription", "key"),
                           ("access", "token"), ("pass", "phrase"), ("db", "pass"), ("ssh", "pass")})
# .npmrc's credentials, each a name of its own: `//registry.example.com/:_auth=…`.
_NPMRC_NAMES = frozenset({"_auth", "_authtoken", "_password"})
DATA_KEY_WORDS = frozenset({"revision", "commit", "hash", "sha", "checksum", "digest", "cache", "sort", "partition",
                             "primary", "foreign", "index", "lookup", "idempotency", "routing", "row", "map",
                             "hotkey", "shortcut", "vcs", "composite", "natural", "surrogate",
                             # Atlassian's and CI servers' keys of things: `?buildKey=ECC-ECC21-18`, `projectKey=…`
                             "build", "plan", "project", "issue", "job"})
_NOT_A_VALUE_NAMES = frozenset({"placeholder", "example", "sample", "dummy"})
# In a setting's name "next" and "resume" say cursor too (`next_token`, `resumeToken`); before a value in prose
# they are too common to veto a key.
_CURSOR_NAME_WORDS = CURSOR_WORDS | {"next", "resume"}
# Identifiers that, with a secret, log in: Azure AD tenant and client ids. Only machine-made values count.
ID_PAIRS = frozenset({("client", "id"), ("tenant", "id"), ("app", "id"), ("application", "id")})


def name_strength(name: str, word: str, assigned: bool) -> int:
    """2 when the name says credential (DB_PASSWORD, clientSecret, X-Api-Key, SSHpassword); 1 when it
    only might (STRIPE_KEY, toggl ACCESS); 0 otherwise (sort_key, lastVcsRevisionKey). `word` is the credential word it ends in;
    `assigned` says whether the value is given with `=` or quotes."""
    words = name_words(name)
    if not words or "public" in words or "publishable" in words or "pubkey" in words \
            or names_site_key(words):
        return 0  # DOTENV_PUBLIC_KEY, publishable_key, reCAPTCHA's `siteKey`: published by design
    if _NOT_A_VALUE_NAMES.intersection(words) or "existing" in words and words[-1] == "secret":
        return 0  # PASSWORD_PLACEHOLDER, example_token; Helm's existingSecret names a Secret object
    if _CURSOR_NAME_WORDS.intersection(words):
        return 0  # nextPageToken, continuationToken, sync_token: a position in a listing, not a credential
    if HANDLE_WORDS.intersection(words) and words[-1] == "token":
        return 0  # EFS's creation_token, an idempotency token, a lifecycle hook's LifecycleActionToken: handles
    last = words[-1]
    if last in ORDINARY_CREDENTIAL_ENDINGS:
        return 0  # `ssh_askpass: exec(…)`, `bypass=…`: a program or a word, not a credential
    if word in _STRONG_WORDS or word == "api_key" or name.lower() in _NPMRC_NAMES:
        # "pass" alone is a verb ("Tests pass: 10/10"); only a compound such as DB_PASS names a password.
        return 2
    if word == "pass":
        # In capitals with `=` or quotes it is a setting (`PASS = 'x'`); `PASS: test-suite-1` is a test runner's.
        # `user=bob pass=Xk3…`: in lower case, assigned, a weak name (a value must look machine-made); "pass=42"
        # is a count.
        return 2 if len(words) > 1 or len(last) > 4 or assigned and name.isupper() else 1 if assigned else 0
    if tuple(words[-2:]) in ID_PAIRS:
        return 1
    # Before the data words: a vendor may be called one ("shortcut-private-key" is Shortcut's API key).
    if tuple(words[-2:]) in _SECRET_PAIRS or (last.endswith("key") and last[:-3] in {"api", "secret", "private",
                                                                                     "access", "auth", "client"}):
        return 2
    if last == "tok":
        return 1  # `access_tok`, `SECRET-tok`; lexers name their tokens so too (`access_tok == 'readonly'`)
    if DATA_KEY_WORDS.intersection(words):
        return 0  # lastVcsRevisionKey, sort_key, cache-key: a key into data, not a credential
    return 1


def credential_name(name: str) -> int:
    """How surely a setting's whole name says credential (see `name_strength`), 0 when it does not end in a
    credential word."""
    lowered = name.lower()
    ending = next((m for m in NAME_END.finditer(lowered) if m.end() == len(lowered)), None)
    if ending is None or ending.end() != ending.end("word"):
        return 0
    return name_strength(name, ending.group("word"), True)


# In a manifest the value is as often a reference as a secret: a secret's name (`github-webhook-secret`,
# `dockerhub-creds:token`), a path, a URL, an ARN or KMS alias, `${VAR}`, `%env.X%`, `@Microsoft.KeyVault(…)`,
# an algorithm (`AES256`), a mode. A generated password's `%`, `@` or `/` alone makes none of them.
_REFERENCE_VALUE = re.compile(r"\$[{(]|%\w+%|@\w+\.\w+\(|^[~/.]|://|^arn:|^alias/|^[\w.-]+:[\w.-]+$|\s|\{\{")
# Owners of a `…_PASS` setting that make it a password (`RABBITMQ_DEFAULT_PASS`, `DB_PASS`); a lint or render
# pass (`SKIP_PASS`, `RENDER_PASS`) is not one.
_PASS_OWNERS = frozenset({"db", "database", "admin", "root", "default", "user", "smtp", "mail", "ftp", "sftp", "ssh",
                          "ldap", "proxy", "sql", "mysql", "pg", "postgres", "redis", "mongo", "rabbitmq", "amqp",
                          "login", "bind", "auth", "app", "api", "service", "svc", "master", "keystore",
                          "truststore"})
# Identifiers and public keys that sit under key-like names: client and tenant ids, KMS key ids (UUIDs, `mrk-…`),
# site keys (`0x4AAA…`).
_PUBLIC_ID = re.compile(r"[0-9a-fA-F-]+|mrk-[0-9a-f]{32}|0x\w+")


def machine_made_setting(value: str, name: str, strength: int) -> bool:
    if not value or _REFERENCE_VALUE.search(value[:PROBE]) or value.startswith("-") or is_placeholder(value):
        return False
    words = name_words(name)
    if tuple(words[-2:]) in ID_PAIRS:
        return False  # AZURE_CLIENT_ID, tenantId: published in every sign-in URL
    if {"encryption", "kms"} & set(words) and _PUBLIC_ID.fullmatch(value):
        return False  # an encryption key named by its KMS id; the key itself is never a UUID
    if strength == 2:
        # A key or token is made; a password may be chosen (`- name: DB_PASSWORD` ⏎ `value: hardcoded5`).
        # `PWD` alone is the working directory.
        password_named = words[-1] in PASSWORD_WORDS and name != "PWD" or words[-1] == "pass" and (
            len(words) > 1 and words[-2] in _PASS_OWNERS or name == "PASS")  # `- key: PASS` ⏎ `value: …`
        chosen = password_named and password_shaped(value, name)
        return chosen or stored_secret(value)
    return len(value) >= 16 and (mixed_random(value) or long_random_word(value)) and not _PUBLIC_ID.fullmatch(value)


_NAME_NUMBER = re.compile(r"[_.-]?\d{1,2}$")


def numbered_credential_name(name: str) -> tuple[int, str]:
    """`credential_name` and the name it judged: a numbered name counts as its word (`TEST_PASSWORD_3`,
    `static_password03`) where the value sits beside its own name, as the number enumerates credentials."""
    unnumbered = _NAME_NUMBER.sub("", name)
    strength = credential_name(unnumbered)
    return (strength, unnumbered) if strength else (credential_name(name), name)


# The password words that no other word ends in, so that a glued name ends in them too (`DBPassword`).
_GLUED_PASSWORD_WORDS = tuple(word for word in PASSWORD_WORDS if len(word) >= 6)


def names_a_password(name: str) -> bool:
    """A setting's name that surely says password: `PASSWORD`, `admin_passwords`, `DB_PASSWD`, `DBPassword`."""
    last = name_words(name)[-1] if credential_name(name) == 2 else ""
    return last in PASSWORD_WORDS or last.endswith(_GLUED_PASSWORD_WORDS)


def chosen_password(value: str, name: str) -> bool:
    """A literal a person may have chosen as the password `name` names: password-shaped, random-looking or a
    capitalised passphrase; not a reference, a placeholder, a path or a file."""
    if _REFERENCE_VALUE.search(value[:PROBE]) or is_placeholder(value) or PATH.match(value) or DOTTED.fullmatch(value):
        return False
    return password_shaped(value, name) or looks_random(value) and not worded(value) \
        or capitalised_passphrase(value)


def assigned_credential(value: str, name: str, strength: int) -> bool:
    """A literal given to a name that names a credential: made by a machine, or chosen under a password's name."""
    return machine_made_setting(value, name, strength) or names_a_password(name) and chosen_password(value, name)


def stored_secret(value: str) -> bool:
    """A value stored where only secrets go (a .pgpass line, a KV store): machine-made, not a host or a flag
    such as `db.internal` or `checkout-v2`."""
    return mixed_random(value) and (looks_random(value) or len(value) >= 16) and not is_placeholder(value)
