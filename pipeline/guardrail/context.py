"""Keys without a prefix, given away by the word before them: a service's name or a credential word
("cloudsmith 9f2c…", "wandb: 4a1b…", "toggl-KEY-…", "paydirtapp ACCESS code 123e…", "codakey-<uuid>").

Most providers' keys are bare hex, a UUID or base62 with nothing of their own to recognise them by, and
the same shapes fill tickets as commit hashes, digests and ids. What tells them apart is the word just
before: a key follows the service's name or a credential word within a short window; a commit follows
"commit", "sha", "revision", a path or a URL route. So a candidate is a long run of token characters,
and it is a key only when

- its value part is machine-made (hex of 32 or more digits, a UUID, or letters and digits mixed with
  no words in them; hex of 20 to 31 digits only after a service's name or a word such as "token"), and
- a service name or credential word is one of the two words nearest the value (glued to it in the run,
  or just before the run), and no digest or reference word ("commit", "sha", "build", "id", …) is one
  of the three nearest. In a path, a segment counts only when a context segment or another value leads
  to it, so a webhook URL's ids go and a file name deep in a repository path stays.

Finding is linear: runs come from one pattern, the look-back window is bounded, each run is judged by
its first characters, and the runs and context reads per text are capped like other finders' candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from reqgate.pipeline.guardrail.budget import MAX_CONTEXT_READS, PROBE, capped, judged_once
from reqgate.pipeline.guardrail.entropy import shannon_entropy
from reqgate.pipeline.guardrail.shapes import (
    ARN_BEFORE,
    ARN_LOOK_BACK,
    CURSOR_WORDS,
    HANDLE_WORDS,
    ORDINARY_CREDENTIAL_ENDINGS,
    UUID,
    names_site_key,
    pronounceable,
    says_fake,
)
from reqgate.pipeline.guardrail.vendor_names import VENDOR_NAMES

Range = tuple[int, int]

_MIN_VALUE = 16
_MIN_HEX = 20
# A value this long whose characters are nearly all different (bits per character) is machine-made.
_SPREAD_MIN = 20
_SPREAD_BITS = 4.0
# A run of token characters at least `_MIN_VALUE` long; the look-behind after the first character lets
# the engine skip ahead, and the run never starts inside another.
_RUN = re.compile(r"[A-Za-z0-9_+/.~-](?<![A-Za-z0-9_+/.~-].)[A-Za-z0-9_+/.~-]{%d,}+=*+" % (_MIN_VALUE - 1))
_JOINER = re.compile(r"[-_./~+]+")
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CASE_RUN = re.compile(r"[A-Z]+|[a-z]+")
_LOOK_BACK = 48
# Bounds on the Python work per run, so a hostile run of 100 KiB costs what a real key does: a name is
# a few parts, a value is judged by its first characters, a path by its first segments.
_MAX_NAME_PARTS = 8
_MAX_SEGMENTS = 16
# The context word must be one of the two words nearest the value; a reference word among the three
# nearest vetoes it ("foreign key constraint fk1c6b…", "lastVcsRevisionKey = 1c96…").
_NEAREST = 2
_WINDOW_WORDS = 3

# Credential words, also glued into a name ("bloggerSECRETkey", "codakey", "fileioSECRETKEY"); a
# webhook URL's path is its credential ("…/webhook/<id>@<tenant>/IncomingWebhook/<hex>/<uuid>"), and an
# anti-forgery crumb ("Jenkins-Crumb: <hex>") acts for the session that holds it. ("csrf" is left out: a
# pasted search URL carries Google's "sxsrf=…" parameter.)
_CREDENTIAL_WORDS = ("password", "passwd", "secret", "token", "apikey", "key", "private", "access", "auth",
                     "credential", "pwd", "pass", "webhook", "webhooks", "webhookb2", "crumb")
# Words that announce a digest, a reference or an id: after them a hex run is not a key.
_REFERENCE_WORDS = frozenset({
    "commit", "commits", "sha", "sha1", "sha256", "sha512", "md5", "hash", "hashes", "digest", "checksum", "rev",
    "revision", "revisions", "build", "builds", "version", "id", "ids", "uuid", "guid", "changeset", "ref", "refs",
    "tag", "branch", "image", "container", "node", "task", "job", "run", "trace", "span", "request", "session",
    "object", "etag", "oid", "parent", "tree", "blob", "head", "merge", "merged", "cherry", "pick", "picked",
    "revert", "reverted", "fix", "fixed", "pull", "issue", "issues", "partition", "cache", "sort", "row",
    "index", "primary", "foreign", "lookup", "routing", "idempotency", "hotkey", "shortcut", "public",
    "publishable", "fingerprint", "thumbprint", "correlation", "transaction", "txn", "message", "msg", "event",
    "file", "path", "dir", "folder", "download", "archive", "release", "snapshot", "artifact", "checkout",
    "breadcrumb", "breadcrumbs",
    # "Token alphabet: ABCDEF…": the characters a key may use, listed, not a key
    "alphabet", "alphabets", "charset", "characters", "chars",
    # "gpg: using EDDSA key 39B0FA49…", "GPG key 3F2A…": a key's id or fingerprint, published to find the key
    "rsa", "dsa", "ecdsa", "eddsa", "ed25519", "gpg", "pgp",
}) | CURSOR_WORDS | HANDLE_WORDS
_COMMIT = re.compile(r"[0-9a-f]{40}")
_HEX_RUN = re.compile(r"[0-9a-fA-F]+(?:-[0-9a-fA-F]+)*")
_CLASS_CHANGE = re.compile(r"(?=[0-9][A-Za-z]|[A-Z][a-z0-9]|[a-z][A-Z0-9])")
# Letters this many or more, flipping case often, are a value's head rather than a name ("YXNkZmZmZmZm_…").
_RANDOM_HEAD = 8
_DATE_OR_VERSION = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|v?\d+(?:\.\d+){2,}")
_PLACEHOLDER = re.compile(r"example|sample|dummy|placeholder|changeme|redacted|your|xxxx|test|0000000")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(_CAMEL.sub(" ", name))]


def _is_context(word: str) -> bool:
    """A service name, a credential word, or a name glued onto a credential word ("bloggersecretkey",
    "codakey", "fileiosecretkey")."""
    if word in VENDOR_NAMES or word in _CREDENTIAL_WORDS:
        return True
    return len(word) <= 40 and word.endswith(_CREDENTIAL_WORDS) and word not in ORDINARY_CREDENTIAL_ENDINGS


Kind = Callable[[str], "str | None"]


def _kind(value: str) -> str | None:
    """"hex" for a hex run of 32+ digits or a UUID, "short_hex" for 20 to 31 hex digits with letters among
    them, "random" for letters and digits mixed with no words in them, else None. Judged by the first
    `PROBE` characters."""
    core = value[:PROBE].rstrip("=")
    if len(core) < _MIN_VALUE or _DATE_OR_VERSION.search(core):
        return None
    if _HEX_RUN.fullmatch(core):
        digits = len(core) - core.count("-")
        if digits >= 32 or UUID.fullmatch(core):
            return "hex"
        # Shorter hex keys exist, but so do MongoDB's 24-digit object ids and long decimal numbers: only a
        # service's name or "token", "secret"… before it makes one a key (see find_context_tokens).
        has_letter = any(c.isalpha() for c in core)
        return "short_hex" if digits >= _MIN_HEX and has_letter and core.count("-") == 0 else None
    letters = sum(map(str.isalpha, core))
    digits = sum(map(str.isdigit, core))
    if letters < 4 or pronounceable(core):
        return None
    # Changes of class (digit, capital, small letter) between neighbours, counted by the regex engine.
    changes = len(_CLASS_CHANGE.findall(core))
    if digits >= 2 and changes >= len(core) * 0.2:
        return "random"
    if digits < 2 and not core.isupper() and not core.islower() and changes >= len(core) / 4:
        return "random"
    # Twenty or more characters nearly all different ("abcdefghijklmnopqrst", "ZYXWVUTSRQPONMLKJIHG"): no word
    # or identifier is spelt so, and it is the shape of the sample keys vendors document, which people paste
    # with a real key in their place. Only a service name or credential word before it makes it a key.
    if len(core) >= _SPREAD_MIN and shannon_entropy(core) >= _SPREAD_BITS:
        return "random"
    return None


def _random_letters(part: str) -> bool:
    """Letters whose case flips every few characters with no word among them: the head of a base64 value
    ("YXNkZmZmZmZm" in "YXNkZmZmZmZm_HARDcoded"), not a name glued of words ("graphhopperSECRETyo")."""
    return len(part) >= _RANDOM_HEAD and len(_CLASS_CHANGE.findall(part)) * 3 >= len(part) and not pronounceable(part)


def _split(run: str, kind: Kind) -> tuple[list[str], int]:
    """The name parts at the start of a run ("toggl", "KEY" in "toggl-KEY-abcd…"; the host and route of
    a URL) and where the value starts. A part is a name while it holds no digit and does not look
    random itself."""
    position = len(run) - len(run.lstrip("-_./~+"))
    names = []
    for joiner in _JOINER.finditer(run, position):
        part = run[position:joiner.start()]
        if len(names) == _MAX_NAME_PARTS or len(part) > _LOOK_BACK:
            break
        # A name may hold digits when a credential word ends it ("collect2TOKEN", "scrapingant123TOKEN").
        if not (part.isalpha() or part.lower().endswith(_CREDENTIAL_WORDS)) or kind(part) is not None \
                or _random_letters(part):
            break
        names.append(part)
        position = joiner.end()
    return names, position


def _window_words(text: str, start: int) -> list[str]:
    """The last few words before `start`, on its line or the line before (a YAML or header value)."""
    floor = max(0, start - _LOOK_BACK)
    window = text[floor:start]
    first_break = window.rfind("\n")
    if first_break >= 0:
        second_break = window.rfind("\n", 0, first_break)
        window = window[second_break + 1:]
    # Pieces with digits are values ("b5c8baebfff5"), not words, unless named so ("auth0", "webhookb2").
    pieces = [p for p in _WORDS.findall(window) if p.isalpha() or _is_context(p.lower())]
    words = []
    for piece in pieces[-_WINDOW_WORDS:]:
        words.extend(_words(piece))
    return words


def _value_kind(value: str, kind: Kind) -> str | None:
    if "/" in value or value.startswith(("0x", "0X")) or _PLACEHOLDER.search(value[:PROBE].lower()) \
            or says_fake(value[:PROBE]):
        return None
    return kind(value)


_NONE, _CREDENTIAL, _NAMED = 0, 1, 2
# Words that name a secret outright, unlike "key", "access" or "auth" ("access project 5f4dcc3b…").
_STRONG_WORDS = frozenset({"password", "passwd", "pwd", "secret", "token", "apikey", "credential"})


def _joined_service(text: str, start: int) -> bool:
    """Whether the token just before `start` is a service name written with joiners ("the-odds-api:"), not
    words apart ("user flow" is no "userflow")."""
    floor = max(0, start - _LOOK_BACK)
    end = start
    while end > floor and text[end - 1] in " \t":
        end -= 1
    cut = max(text.rfind(" ", floor, end), text.rfind("\n", floor, end), text.rfind("\t", floor, end))
    token = text[max(cut + 1, floor):end]
    return bool(_JOINER.search(token)) and "".join(_WORDS.findall(token)).lower() in VENDOR_NAMES


# What a sentence may say a value is before it names the credential the value belongs to: "the thumbprint of
# the signing key is …", "the commit that leaked the secret is …", "the jti of the access token is …".
_ATTRIBUTE_WORDS = _REFERENCE_WORDS | frozenset({"subject", "audience", "kid", "jti", "arn", "uid", "ulid", "owner",
                                                 "issuer", "serial", "prefix", "name", "label", "scope", "type"})
_OWNING = frozenset({"of", "for", "that", "which"})
_OWNER_LOOK_BACK = 80


def _attribute_of_credential(text: str, start: int) -> bool:
    """Whether the words before `start` say the value is an attribute of a credential they name ("the ID of the
    client secret is …"), on the same line."""
    floor = max(0, start - _OWNER_LOOK_BACK)
    line_start = text.rfind("\n", floor, start) + 1 or floor
    words = [w for piece in _WORDS.findall(text[line_start:start])[-10:] for w in _words(piece)]
    credential = next((i for i in range(len(words) - 1, -1, -1) if _is_context(words[i])), None)
    if credential is None:
        return False
    for index in range(max(0, credential - 5), credential):
        if words[index] in _OWNING and _ATTRIBUTE_WORDS.intersection(words[max(0, index - 2):index]):
            return True
    return False


def _run_context(text: str, start: int, names: list[str]) -> int:
    """What the name parts glued before the value ("fileioSECRETKEY") or the words before the run say:
    `_NAMED` for a service's name or a word that names a secret outright, `_CREDENTIAL` for another credential
    word, `_NONE` when neither is there or a reference word ("lastVcsRevisionKey", "sortKey") makes it a
    digest or an id."""
    words = [w for name in names for w in _words(name)]
    if len(words) < _WINDOW_WORDS:
        words = _window_words(text, start) + words
    if _REFERENCE_WORDS.intersection(words[-_WINDOW_WORDS:]) or not names and _attribute_of_credential(text, start) \
            or names_site_key(words):
        return _NONE  # (a CAPTCHA's site key is published in its page)
    nearest = words[-_NEAREST:] + ([names[-1].lower()] if names else [])
    # The name glued to the value is one name however many words it holds: "graphhopperSECRETyo-<uuid>" is
    # GraphHopper's key although the service's name is its third word from the value.
    # A capitalised word glued before a small one is read both ways: camelCase reads "KEYversioneye" as "KE" and
    # "Yversioneye" (right for "HTTPServer"), runs of one case as "KEY" and "versioneye".
    glued = _words(names[-1]) + [run.lower() for run in _CASE_RUN.findall(names[-1])] if names else []
    if any(word in VENDOR_NAMES or word in _STRONG_WORDS for word in nearest + glued) or _joined_service(text, start):
        return _NAMED
    return _CREDENTIAL if any(_is_context(word) for word in nearest) else _NONE


def find_context_tokens(text: str) -> Iterator[Range]:
    kind = judged_once(_kind)  # the word test is the costliest step of a run
    reads = 0
    for match in capped(_RUN.finditer(text)):
        run = match.group()
        if sum(map(str.isalnum, run)) < _MIN_VALUE:
            continue  # joiners only pad it ("KEY----------BEGIN")
        if ARN_BEFORE.search(text, max(0, match.start() - ARN_LOOK_BACK), match.start()) \
                or text.startswith("#", match.start() - 1) and _COMMIT.fullmatch(run):
            continue  # a KMS key's ARN (`…:key/<uuid>`); a commit a dependency is pinned to (`github:org/x#<sha>`)
        names, offset = _split(run, kind)
        # The value, or in a path each segment that a context segment or another value leads to
        # ("…/webhook/<id>/IncomingWebhook/<hex>/<uuid>"), never a file further down a path. Values are
        # looked for first: most runs hold none, and then the words around them are never read.
        values = []
        position = match.start() + offset
        led_by = "run"  # what leads to the next segment: the run's context, a context segment, or nothing
        for segment in run[offset:].split("/", _MAX_SEGMENTS):
            value = segment.rstrip(".-_~+")
            value_kind = _value_kind(value, kind) if led_by else None
            # A short hex run needs a service's name or a secret's before it, which a path segment is not.
            if value_kind is not None and (led_by == "run" or value_kind != "short_hex"):
                values.append((position, position + len(value), led_by == "run", value_kind))
            else:
                led_by = "segment" if any(_is_context(w) for w in _words(segment[-_LOOK_BACK:])[-1:]) else ""
            position += len(segment) + 1
        if not values:
            continue
        context = _NONE
        if any(needs_run for _, _, needs_run, _ in values):
            if reads == MAX_CONTEXT_READS:
                break
            reads += 1
            context = _run_context(text, match.start(), names)
        for start, end, needs_run, value_kind in values:
            needed = _NAMED if value_kind == "short_hex" else _CREDENTIAL
            if not needs_run or context >= needed:
                yield start, end
