"""What a credential's value looks like: machine-made (`mixed_random`, `long_random_word`), chosen by a
person (`password_shaped`), or not a value at all (`is_placeholder`, `not_a_value`: a placeholder, a reference,
a path, a label). Shared by `names` and by the finders in `credentials` and `credential_forms`, which decide by a
value's name and syntax."""

from __future__ import annotations

import re
import string
from itertools import pairwise

from reqgate.pipeline.guardrail.budget import PROBE
from reqgate.pipeline.guardrail.shapes import CJK, UUID, WORD, alphabet_typed, pronounceable, says_fake

# What masks a secret's characters: "****", "••••", "####".
MASK = "*•#"

# Words that name a password itself: under a numbered name (`static_password07`), as a call's default
# (`getenv("PASSWORD", "…")`) or a setting pair's name, a password-shaped value is one.
PASSWORD_WORDS = frozenset({"password", "passwords", "passwd", "passphrase", "pwd", "passwort", "contraseña", "pw",
                            "psk"})

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[_.\-\s]+")

_PLACEHOLDER = re.compile(
    r"[*xX.•#_?-]+|<[^>]*>|\$\{[^}]*\}\}?(?:[/@:]\S*)?|\$[{(][^})\s]*|\$\([^)]*\)|\$(?:[a-z_]+|[A-Z_][A-Z0-9_]*)(?:\.\w+)*(?:/\S*)?|@[A-Za-z_][A-Za-z_]*|#\{[^}]*\}|\{\{.*\}\}|\{\.?[A-Za-z_][\w.]*\}|%\(\w+\)s|%s|"
    r"\[[^\]]*\]|\(\w+\)|%[\w.]+%|@\w+@|(?i:\$?env(?:ironment)?[:.][\w.]+)|(?i:process\.env\.\w+)|(?i:os\.environ\S*)|"
    r"(?i:(?:your|enter|insert|replace)[_-][a-z_-]*|your[a-z]*(?:key|token|secret|password))|"
    r"(?i:(?:my|the|some)[_-][a-z]+(?:[_-][a-z]+)*)|(?i:some[a-z]{3,})"
)
# Words that mark a value as made up for documentation or tests, wherever they stand in it.
_PLACEHOLDER_WORD = re.compile(r"example|sample|dummy|placeholder|changeme|change_me|notareal|not_a_real|"
                               r"not-a-real|redacted|censored|_here|your_|your-|xxxx")
# "Password" in other languages: a label in a value's place, a table's column over the passwords.
PASSWORD_TRANSLATIONS = frozenset({
    "passwort", "kennwort", "contraseña", "senha", "wachtwoord", "lösenord", "salasana", "hasło", "heslo", "parola",
    "passord", "adgangskode", "jelszó", "şifre", "пароль", "密码", "パスワード", "비밀번호", "mot de passe",
})
_NOT_SECRET_WORDS = PASSWORD_TRANSLATIONS | frozenset({
    "required", "optional", "mandatory", "true", "false", "yes", "no", "null", "none", "nil", "empty",
    "blank", "n/a", "na", "tbd", "todo", "hidden", "masked", "redacted", "secret", "password", "token",
    "string", "str", "text", "int", "integer", "number", "bool", "boolean", "jwt", "oauth", "oauth2",
    "bearer", "sso", "saml", "ldap", "bcrypt", "argon2", "sha256", "hashed", "encrypted", "plaintext",
    "unique", "min", "max", "see", "below", "above", "same", "unchanged", "default", "generated", "random",
    "rotated", "expired", "invalid", "valid", "missing", "set", "unset", "undefined", "object", "function",
    "const", "let", "var", "new", "this", "self", "return", "char", "byte", "bytes", "varchar", "list",
    "dict", "map", "array", "any", "void", "file", "path", "url", "uri", "id", "key", "value",
    "secrets", "passwords", "tokens", "keys", "credentials", "auth", "basic", "digest", "off", "on",
    "read", "write", "read-all", "write-all",  # GitHub Actions' `permissions: id-token: write`
    "include", "omit", "same-origin", "use-credentials", "anonymous",  # fetch's and CORS's `credentials` modes
    "xyz", "abc", "foo", "bar", "baz", "qux", "foobar",  # what examples put in a value's place
    "pass", "passwd", "pwd", "pw",  # `postgres://user:pass@host`, `password=pw`: the field's name in its place
    "env",  # keytool's `-storepass:env VAR` reads the password from a variable
})
# Quotes and marks around a word that leave it the same word: `-u “user:password”`, a mangled quote's U+FFFD.
_AROUND_WORD = "!?\"'“”‘’\ufffd"
PATH = re.compile(r"[~/.]|[A-Za-z]:\\|\\\\")


def name_words(name: str) -> list[str]:
    return [w for w in _WORD_SPLIT.split(_CAMEL.sub("_", name).lower()) if w]


def mixed_random(value: str) -> bool:
    """Machine-made shape: long, with letters and digits; not words with a number ("user_42_profile"),
    a path or a date ("SK#2024-05-01")."""
    value = value[:PROBE]
    letters = sum(map(str.isalpha, value))
    digits = sum(map(str.isdigit, value))
    return (len(value) >= 8 and letters >= 2 and digits >= 2 and not PATH.match(value)
            and not _DATE_LIKE.search(value) and not snake_identifier(value))


def snake_identifier(value: str) -> bool:
    """Words and numbers joined by "_" or "-": "user_42_profile", "build-2024-final"."""
    parts = JOINED.split(value)
    return len(parts) >= 2 and all(part.isalpha() or part.isdigit() for part in parts)


JOINED = re.compile(r"[_-]")
# A passphrase may join its words with dots too ("Galata.Kulesi_1348"); an identifier's dots make a path, not words.
_PASSPHRASE_JOINER = re.compile(r"[_.-]")


def worded(value: str) -> bool:
    """Mostly words: "insertMessageStmt", "TestcTalendJob20120823-Exception" (not "ABCDEFG-HIJKLMN")."""
    value = value[:PROBE]
    return sum(len(m.group()) for m in WORD.finditer(value)) > len(value) * 0.45 and not alphabet_typed(value)


def long_random_word(value: str) -> bool:
    """A long run of letters and digits, many distinct, not made of words."""
    value = value[:PROBE]
    return len(value) >= 16 and value.isalnum() and len(set(value)) >= 10 and not worded(value)


def looks_random(value: str) -> bool:
    """Strong-password shape: long, letters and digits, plus capitals or symbols."""
    value = value[:PROBE]
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    extra = any(c.isupper() for c in value) or any(not c.isalnum() for c in value)
    return len(value) >= 8 and has_letter and has_digit and extra


def password_shaped(value: str, name: str) -> bool:
    """What people choose as a password: a run of 6 to 64 ASCII characters with letters and a digit
    ("hardcoded6", "Summer2019", "s3cret!"). Not one: words and labels ("Re-enter", "Kennwort"), the name
    repeated (`PASSWORD_2 = "password2"`), an algorithm ("argon2id", "SHA-256"), a path, a reference or a
    rule (`vault:secret/db#password`, `random_password.db2.result`, `required|min:8`), a charset or key store
    type ("utf8mb4", "PKCS12"), lower-case words joined with a number or a version ("lint-2", "shadow-v2";
    "Tulip_Orchard_88" is a passphrase), a field's name or control id ("password1", "txtPassword2", "pwdConfirm1")."""
    if not 6 <= len(value) <= 64 or not value.isascii() or any(c.isspace() for c in value):
        return False
    if not (any(c.isalpha() for c in value) and any(c.isdigit() for c in value)):
        return False
    if _ALGORITHM.fullmatch(value) or _NOT_CHOSEN.search(value) or DOTTED.fullmatch(value):
        return False
    parts = JOINED.split(value)
    words = [part for part in parts if part.isalpha()]
    # Capitalised words joined with a number are a passphrase ("Tulip_Orchard_88", "Kanelbulle_2024"); lower-case
    # ones a name.
    passphrase = len(words) >= 1 and all(word[0].isupper() and word[1:].islower() for word in words)
    if len(parts) > 1 and not passphrase \
            and all(part.isalpha() or part.isdigit() or _VERSION.fullmatch(part) for part in parts):
        return False
    return not names_a_field(value) and _alphanumeric(value).lower() != _alphanumeric(name).lower()


def capitalised_passphrase(value: str) -> bool:
    """Capitalised words joined with a number: "Harbour-Gull-58", "Tulip_Orchard_88", "Galata.Kulesi_1348",
    "Rivière-Noire_42" (not "reset-flow-2")."""
    parts = _PASSPHRASE_JOINER.split(value)
    words = [part for part in parts if part.isalpha()]
    return len(parts) > 2 and len(words) >= 2 and any(len(part) >= 2 and part.isdigit() for part in parts) \
        and all(c.isascii() or c.isalpha() for c in value) \
        and all(word[0].isupper() and word[1:].islower() for word in words)


def names_a_field(value: str) -> bool:
    """A form field's name or a control's id: "password1", "txtPassword2", "pwdConfirm1"."""
    words = [word.rstrip(string.digits) for word in name_words(value)]
    return bool(PASSWORD_WORDS.intersection(words)) and (len(words) > 1 or value[-1].isdigit())


def echoes_name(value: str, name: str) -> bool:
    """The value says its name again: `<passphrase>passphrase</passphrase>`, `api.appSecret=apiAppSecret`,
    `AUTHORIZATION_TOKEN = "Authorization Token"`, `IAM_ROLE_STATEMENTS_TOKEN = 'iamRoleStatements'`. A single
    word taken from the name is a value (`MYSQL_ROOT_PASSWORD=root`, `keyPassword="keypass"`)."""
    probe = _alphanumeric(value[:PROBE]).lower()
    whole = _alphanumeric(name).lower()
    return len(probe) >= 4 and (probe == whole or probe in whole and len(name_words(value[:PROBE])) > 1)


# Passwords are typed in Latin letters far more often than in these scripts; two of their characters make a word.
_CJK_LETTER = re.compile(f"[{CJK}]")
_CJK_LABEL = 2


def translated_label(value: str) -> bool:
    """A translation file's label for the field: "Lösenord", "L&#246;senord", "密码", "Wi-Fiパスワード（8〜63文字）".
    A password is typed on any keyboard; one without a digit in letters outside ASCII is a word of a language."""
    probe = value[:PROBE]
    if "&#" in probe:
        return True
    if len(_CJK_LETTER.findall(probe)) >= _CJK_LABEL:
        return True  # a label in Chinese, Japanese or Korean script ("Wi-Fiパスワード（8〜63文字）")
    return any(c.isalpha() and not c.isascii() for c in probe) and not any(c in string.digits for c in probe)


def _alphanumeric(text: str) -> str:
    return "".join(c for c in text if c.isalnum())


_ALGORITHM = re.compile(r"(?i:(?:sha|md|hs|rs|es|ps|crc)-?\d+\w*|sha\d-\d+|argon2\w*|pbkdf2\w*|bcrypt\w*|scrypt\w*|"
                        r"aes-?\d+\w*|rsa-?\d+|ed25519|x25519|base\d\d|des3?\w*|blake2\w*|"
                        r"utf-?\d+\w*|ucs-?\d|latin-?\d|iso-?8859-?\d+|cp\d{3,4}|windows-?\d{4}|pkcs#?\d+|jks|jceks)")
# Parts only a path, a reference, a rule, markup or a template has.
_NOT_CHOSEN = re.compile(r"[/:\\|()\[\]{}<>]|^@.*@$|^#.*#$|^\$")
DOTTED = re.compile(r"[A-Za-z_][\w-]*(?:\.[\w-]+)+")

_VERSION = re.compile(r"[vV]\d+")


def api_key_shaped(value: str) -> bool:
    """Under a name that only ends in "api" (`MAILGUN_API`), a key is long and machine-made, not a UUID, a
    commit or SHA-256 digest or a generated name ("payments-svc-7f9c8d6b5-x2kq4"); many keys are 32 hex digits."""
    return len(value) >= 24 and (mixed_random(value) or long_random_word(value)) and not UUID.fullmatch(value) \
        and not (HEX_OR_UUID.fullmatch(value) and len(value) in (40, 64)) and not ID_SHAPE.search(value)


def trim(value: str) -> str:
    """Drop sentence punctuation and closing brackets the value did not open."""
    while value:
        last = value[-1]
        if last in ".:)]}" and not (last in ")]}" and "([{"[")]}".index(last)] in value):
            value = value[:-1]
        else:
            break
    return value


_SYMBOLS = frozenset(string.punctuation + " \t•")

# A value that is itself a credential's name reads another setting: `password = var.db_password`,
# `access_token=ACCESS_TOKEN`, `secretKey: api-key`.
_REFERENCE = re.compile(r"(?:var|local|vars|secrets|settings|env|config|params|inputs)\.[A-Za-z_][A-Za-z0-9_.]*"
                        r"|[A-Z]+(?:_[A-Z]+)*_(?:PASSWORD|PASSWD|PWD|SECRET|TOKEN|KEY)(?:_\d{1,3})?|api-key"
                        # a variable or a field, qualified or snake_case, without digits: `"password": new_password`,
                        # `apiKey: this.apiKey` (`compl3xPwd`, `superSecretPassword` are values)
                        r"|(?:[A-Za-z_$][\w$]*\.)+(?:[a-z_$][a-z_$]*(?:[A-Z][a-z]*)*)?(?:Password|Passwd|Pwd|Secret|Token|Key)"
                        r"|[a-z][a-z]*(?:_[a-z]+)*_(?:password|passwd|pwd|secret|token|key)"
                        r"|(?:this|self)\.\w+"
                        # Terraform's and Ansible's references (`random_password.db2.result`), a property path
                        # (`PropTypes.string.isRequired`), Razor's `@Model.X`
                        r"|[A-Za-z_][A-Za-z_]*\d{0,2}(?:\.[A-Za-z_][A-Za-z_]*\d{0,2}){2,}|@[A-Za-z_]\w*(?:\.\w+)+"
                        # an element of a list or a map: `userPass[2]`, `params[:password]`, `ENV['DB_PASS']`
                        r"|[A-Za-z_$][\w$.]*(?:\[[^\]\s]{1,40}\])+"
                        # a validation rule list: `required|string|min:8|confirmed`
                        r"|[a-z_]+(?::[\w,.]+)?(?:\|[a-z_]+(?::[\w,.]+)?)+")

_MARKUP = re.compile(r"<[A-Za-z][\w-]{0,20}+(?:[ \t][^<>]{0,200}+)?>[^<]{0,200}+</[A-Za-z]")
# A value that code builds where it stands: an interpolation (`${self:custom.password}`, Ruby's `#{…}`, jq's and
# Swift's `\(.password)`, `{{ … }}`), a concatenation (`':'+p_pwd+'@'`, PHP's `. $this->_config[…]`), a
# variable between dollars (`$DB_PASS$`), a shell pipeline's output (`cat /dev/urandom | tr -dc …`), an expression
# in an f-string's braces; an interpolation only when little literal text is left beside it.
_CODE_BUILT = re.compile(r"\$this->|^\$\w+\$$| \| |^\{[A-Za-z_][\w.]*[\[(]")  # f-string: `PWD={config['password']}`
_INTERPOLATION = re.compile(r"\$\{[\w.:-]+\}|#\{[\w.@:-]+\}|\\\(\.?[\w.]+\)|\{\{[^{}]*\}\}|['\"][ \t]*\+|\+[ \t]*['\"]")
# Python's f-strings and format strings and C#'s $"…" fill a named field: `f"{user}-{year}"`,
# f"prefix_{value3}" (not a template's braces filled with a random key, `{ZqL5kVrX1n8tA2}`). What is left beside
# the fields is a password only if it is one on its own: `f"{prefix}Tr0ub4dor3x"`.
_FORMAT_FIELD = re.compile(r"\{[a-z_][a-z0-9_.]{0,60}+\}|\{[a-z]{1,30}+(?:[A-Z][a-z0-9]{0,30}+){1,10}+\}")
# What is left of a value around its interpolations that still makes it a literal (`Hx7kQ2vLm9-${var.env}`).
_LITERAL_LEFT = 6
_FILLED_BRACES = re.compile(r"\{[A-Za-z0-9]{8,}\}")
# Pieces of a placeholder's name written short: `{sqlPwd2019}`, `{apiKey2024}`, `{dbpass12}`.
_NAME_PIECE = re.compile(r"pw|pass|key|token|secret|api|user|db|sql|auth|cred")

_MASKED_END = re.compile(f"[{MASK}]{{8}}$")
# A variable of PowerShell, PHP or a shell, named in camelCase (`-Credential $svcCred`).
_VARIABLE = re.compile(r"\$[a-z_][A-Za-z_]{1,40}")
# A template's tag: Jinja's, Liquid's and Insomnia's `{% response 'body', … %}`.
_TEMPLATE_TAG = re.compile(r"\{%.{0,300}%\}")
# A prefix and the last few characters around a mask or an ellipsis: `sk-...6WF7`, `xoxb-****`, `ghp_…a91F`.
# The head shown is a vendor's prefix (ending in a joiner, or a few characters), not a piece of the secret.
_SHOWN_MASKED = re.compile(r"(?:[A-Za-z0-9]{0,5}|[A-Za-z0-9_]{1,12}[-_](?:[A-Za-z0-9]{1,8}[-_]){0,2})"
                           f"(?:[{MASK}]{{3,}}|\\.{{3}}|…)[A-Za-z0-9]{{0,6}}")
_MASKED_PREFIX = 4  # letters a masked value may still show: a prefix such as "xoxp"; the rest is ids


def is_placeholder(value: str) -> bool:
    value = value[:PROBE]
    if _PLACEHOLDER_WORD.search(value.lower()) or says_fake(value) or _REFERENCE.fullmatch(value):
        return True  # "not_a_real_token", "hf_FakeFake…", "my-example-key", "changeme", "var.db_password"
    if _TEMPLATE_TAG.match(value) or _VARIABLE.fullmatch(value) or _CODE_BUILT.search(value) or _INTERPOLATION.search(value) and sum(
            c.isalnum() for c in _INTERPOLATION.sub("", value)) < _LITERAL_LEFT:
        return True
    if _FORMAT_FIELD.search(value):
        rest = _FORMAT_FIELD.sub("", value)
        if "{" not in rest and "}" not in rest and not password_shaped(rest, ""):
            return True
    if _FILLED_BRACES.fullmatch(value) and mixed_random(value[1:-1]) and not pronounceable(value[1:-1]) \
            and not _NAME_PIECE.search(value.lower()):
        return False  # a template's braces filled in: `--user "{ZqL5kVrX1n8tA2}"`, not `{api_key}`
    if value.startswith("{") and value.endswith("}") and len(value) > 2 and is_placeholder(value[1:-1]):
        return True  # an ODBC value in braces: `Pwd={%ODBC_PWD%}`
    if _PLACEHOLDER.fullmatch(value) or value.lower().strip(_AROUND_WORD) in _NOT_SECRET_WORDS:
        return True
    if len(set(value.lower()) - _SYMBOLS) <= 1:
        return True  # "xxxxxx", "000000", "******"
    masked = sum(c in MASK for c in value)
    if masked >= 6 and len(value) - masked <= max(6, masked // 2) or _SHOWN_MASKED.fullmatch(value) \
            or _MASKED_END.search(value) and sum(map(str.isalpha, value)) <= _MASKED_PREFIX:
        return True  # shown masked but for a few characters: "****************a1f3", "ghp_********…a91F", "…-#####"
    if len(value) >= 12 and sum(a != b for a, b in pairwise(value)) <= 3:
        return True  # a few keys held down: "AAAAAAAABBBBBBBBCCCCCCCC", "000000001111111"
    if _MARKUP.search(value):
        return True  # a scanner's probe in a header or a field: `Authorization: <sCrIpT>alert(1)</sCrIpT>`
    return "[REDACTED:" in value or "[REMOVED:" in value


def not_a_value(text: str, value: str, end: int, quoted: bool) -> bool:
    """What stands after a credential's name without being its value: the next flag ("--query=x"; quoted, a
    generated key may open with "-"), a symbol (":create"), a date, a URL (its password is found by
    `_URL_USERINFO`), an ARN, a tag that computes or decrypts the value (`!vault |`, `!Ref`), a format's prefix
    cut short (`OPENAI_API_KEY=sk-...`; a longer head is part of a secret), a host and its port (`login: db01:5432
    refused`), a value encrypted by a tool that holds the key (Jasypt's `ENC(…)`, SOPS's `ENC[AES256_GCM,…]`,
    Jenkins' `{AQAAAB…}`), a label ("Engangskode:")."""
    probe = value[:PROBE]
    if value[0] in "-:" and (not quoted or ":" in probe or not mixed_random(value)):
        return True
    if _DATE_LIKE.fullmatch(value) or "://" in probe or value.startswith(("arn:", "ENC(", "ENC[", "{AQAAAB")):
        return True
    if YAML_TAG.fullmatch(value) or _HOST_PORT.fullmatch(value) or _POINTER.fullmatch(value):
        return True
    if _PROTOCOL.fullmatch(value) or _VERSION_RANGE.fullmatch(value) or _NAMED_FILE.fullmatch(value) \
            or FILE_PATH.fullmatch(value) or _COLON_LABEL.fullmatch(value):
        return True
    if value.startswith(("@Microsoft.KeyVault(", "@/", "@./", "@~/")) or _VAULT_PATH.fullmatch(value):
        return True  # Azure's Key Vault reference, a value read from a file (`vault kv put … password=@/dev/shm/x`)
    if value[0] == "@" and _HOST_AFTER.match(value, 1):
        return True  # `postgres://<user>:<password>@localhost:5432/shop`: the host after a placeholder
    return len(value) <= 8 and text.startswith(("...", "…"), end)


_DATE_LIKE = re.compile(r"\d{1,4}[-/.](?:\d{1,2}|[A-Za-z]{3})[-/.]\d{1,4}")
FILE_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)+(?:@\dx)?\.[A-Za-z]\w{0,9}")  # an image's "@2x" too

YAML_TAG = re.compile(r"!(?i:vault|ref|sub|getatt|importvalue|join|select|split|findinmap|base64|cidr|if|env|include|"
                      r"reference|secret|unsafe|encrypted/pkcs1-oaep)")

_HOST_PORT = re.compile(r"[\w.-]{1,253}:\d{2,5}")
# A memory address in a backtrace: `token_cache_put (key=0x7f3c1c0023a0, len=64)`. (A key written in hex is longer.)
_POINTER = re.compile(r"0x[0-9a-fA-F]{1,16}")
# After a name in an access log (`"POST /oauth/token HTTP/1.1"`), a package (`"jsonwebtoken": "^9.0.2"`), a
# systemd credential's name and file (`LoadCredential=tls-key:/etc/tls/server.key`).
_PROTOCOL = re.compile(r"(?i:https?|spdy|rtsp|sip)/\d(?:\.\d)?")
_VERSION_RANGE = re.compile(r"(?:[\^~]|[<>]=?|==?)?v?\d{1,4}(?:\.(?:\d{1,6}|x|\*)){1,3}(?:[-+][\w.]{1,40})?")
_NAMED_FILE = re.compile(r"[\w.-]{1,100}:/[^\s:]{1,400}")

# A form's label, a colon at its end ("Engangskode:", "Kennwort:").
_COLON_LABEL = re.compile(r"[^\W\d_]{2,40}[ \t]?:")

# A path in Vault or a lookup of one: `secret=secret/data/ledger:smtp_password`.
_VAULT_PATH = re.compile(r"(?:secret|secrets|kv|kv-v2|database|pki|transit)/[\w./-]{1,200}+(?::[\w.-]{1,80}+)?")
_HOST_AFTER = re.compile(r"[\w-]+(?:\.[\w-]+)*(?::\d{1,5})?(?:/|$)")

# Parts only an id, a name or a digest has: a record's prefix ("sess:", "auth0|", "USER#"), a lower-case word
# between joiners ("payments-api-7d9f…", "order-7f3a…"), a hexadecimal literal.
ID_SHAPE = re.compile(r"[:|#/]|(?:^|[-_])[a-z]{4,}(?:$|[-_])|^0x", re.IGNORECASE)

HEX_OR_UUID = re.compile(r"[0-9a-f-]+|[0-9A-F-]+")
