"""Quality and speed of the input guardrail on public data, through `reqgate.pipeline.guardrail`'s public
API (`screen`) with the default configuration.

    python bench/eval_guardrail.py [--data DIR] [--json]

DIR defaults to ../shared/data beside the repository; any folder with the same layout works.

1. Secrets, per corpus. A secret *leaks* when any 8-character piece of it is still in the text that
   would be sent to the LLM; recall = 1 - leak rate.
   - `secrets-kingfisher/rule_examples.jsonl`: every positive of a `visible` rule (helper rules only
     capture identifiers). The rows carry no span, so the secret is read from the text: the password of
     a `scheme://user:password@` URL, the body of a PEM block, else the most random-looking run of token
     characters that is not followed by `=`/`:` (a name). Runs split at `.`, `/`, quotes, spaces and
     `:@,;&?`, which makes the measure slightly lenient for values built of several runs.
   - `secrets-secretlint/snapshots.jsonl`: each finding of a positive snapshot; upstream ranges sometimes
     start at the name, so the secret is read from the range's text the same way.
   Secrets that are placeholders by the guardrail's own definition (a body of one repeated character,
   `xxxx` masks, values that say `example`, `changeme` or `YOUR_…`, a `<token>` or a variable) are not
   counted and are reported apart: the guardrail must leave placeholders alone.
   The negatives (`kingfisher` label negative, secretlint `ok.`/`allowed_by_option` snapshots) give the
   share of look-alikes where anything is redacted.
2. PII recall per type on `pii-presidio-recognizer-tests`: an expected value is found when no 4-digit
   (or, for e-mails, 4-character) piece of it survives. Phones include the `ph_mobile_number` and
   `tr_phone_number` recognizers' positives; `leniency`-dependent phone cases are skipped.
   Near-miss negatives of the same recognizers give the false-positive rate.
3. False positives on real tickets (`jira-tickets-dev/*.csv` with line breaks restored,
   `gitlab-tickets-dev/*.csv`): share of tickets with any redaction, per kind, and the redacted strings
   that are version numbers, dates, ticket keys, order ids or hashes (which must be 0).
4. Time per 1,000 tickets (the real tickets, screened one by one).
5. Injection: `evaluate(data_dir)` of bench/eval_injection.py when that file exists.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.guardrail import screen
from reqgate.pipeline.guardrail.detect import KIND_BY_NAME, SECRET_CHECK, detect
from reqgate.pipeline.guardrail.entropy import shannon_entropy
from reqgate.pipeline.schemas import RequirementPacket

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "data"
CONFIG = load_default_config()
SECRET_KINDS = frozenset(name for name, kind in KIND_BY_NAME.items() if kind.check_id == SECRET_CHECK)

csv.field_size_limit(1 << 24)

# ---- what the secret in a fixture is --------------------------------------------------------------

_USERINFO = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/:@]+:([^\s/]+)@[^\s@/:]+", re.IGNORECASE)
_PEM_BODY = re.compile(r"-----BEGIN [^-]+-----(.+?)-----END", re.DOTALL)
_RUN = re.compile(r"[A-Za-z0-9+_\-~!$%*#^]{8,}=*")
_NAMEISH = re.compile(r"(?i)(?:secret|token|key|password|access|private)$")
_HOSTLIKE = re.compile(r"[a-z0-9-]+")
# A value given to a password or secret by name (`Password=…;`, `password 'pass123'`, `$password = "…"`) or to
# a command's `-p`: that value is the fixture's secret even when a longer run (a host, a database) is beside it.
_NAMED_VALUE = re.compile(
    r"(?im)(?<![a-z])(?:password|passwd|pwd|pass)[\"']?[ \t]*(?:[=:][ \t]*[\"'`]?|[ \t][\"'`])([^\s\"'`;,)]{4,})"
    r"|^[ \t]*password[ \t]+([^\s\"'`]{4,})"
    r"|[ \t]-p[ \t]+(?!\d+(?::\d+)?\b)([^\s\"'`-][^\s\"'`]{3,})")  # not `ssh -p 2222`, `docker -p 80:80`
# A reference to a secret (`$Password`, `%nothing%`, `${DB_PASS}`, `#{datastore[…]}`) or a value that only names
# itself (`SOME_PASSWORD`, `smtp_password`, `appSecret`, `secret`): placeholders, which the guardrail must leave alone.
# A variable is named like one (`$Password`, `$DB_PASS`, `$db_pass`); `$ecretP4ss` is a password.
_VARIABLE = re.compile(r"\$\{[^}]*\}?|#\{.*|%\w+%|\$(?:[A-Z][a-z]+)+|\$[A-Z_][A-Z0-9_]*|\$[a-z_][a-z0-9_]*|\{\{.*|"
                       r"<\w+>")
_SELF_NAMED = re.compile(r"(?i:(?:[a-z]{1,8}_|my|your)?(?:password|passwd|pwd|pass|secret|token))"
                         r"|[a-z]{1,8}(?:Password|Passwd|Pwd|Pass|Secret|Token)")


def _run_score(text: str, match: re.Match[str]) -> float:
    run = match.group()
    if run.endswith("=") and match.end() < len(text) and not text[match.end()].isspace() and text[match.end()] not in "\"'`,;":
        return 0.0  # `ipapi_secret=aaaa…`: the run is the name and its "="
    if _NAMEISH.search(run) and text[match.end():match.end() + 1] in ("", " ", "\n", "\t", "-", "."):
        return 0.0  # `d7networkSECRET abc…`: a vendor name glued to a credential word
    follow = text[match.end():match.end() + 3].lstrip("\"' ")
    if follow[:1] in ("=", ":") and not follow.startswith("://"):
        return 0.0  # a name: `client_secret=`
    mixed = any(c.isdigit() for c in run) + any(c.isupper() for c in run) + any(c.islower() for c in run)
    return len(run) * shannon_entropy(run) * (1 + mixed) * (0.3 if _HOSTLIKE.fullmatch(run) and mixed == 1 else 1)


def secret_of(text: str) -> str | None:
    userinfo = _USERINFO.search(text)
    if userinfo and len(userinfo.group(1)) >= 4:
        return userinfo.group(1)
    pem = _PEM_BODY.search(text)
    if pem:
        return pem.group(1).strip()
    named = _NAMED_VALUE.search(text)
    if named:
        return named.group(1) or named.group(2) or named.group(3)
    runs = [(m, _run_score(text, m)) for m in _RUN.finditer(text)]
    runs = [(m, s) for m, s in runs if s > 0]
    if not runs:
        return None
    run = max(runs, key=lambda pair: pair[1])[0].group()
    # `YOUR_…_SECRET_GOES_HERE_1234`: kept whole, so that `is_placeholder` sees what the value says it is.
    return run if _PLACEHOLDER_WORD.search(run) else _drop_name_parts(run)


_PART = re.compile(r"[^-_.]+[-_.]*")


def _drop_name_parts(run: str) -> str:
    """`prospect-secret-5f4d…` -> `5f4d…`: leading parts made of letters only, or ending in a credential word
    (`collect2TOKEN-`), are the name."""
    parts = _PART.findall(run)
    index = 0
    while index < len(parts) - 1 and (parts[index].strip("-_.").isalpha() or _NAMEISH.search(parts[index].strip("-_."))):
        index += 1
    rest = "".join(parts[index:])
    return rest if len(rest) >= 8 else run


# Words that make a value a placeholder wherever they stand in it: the list (`xxxx`, `EXAMPLE`,
# `changeme`, `<token>`) and the guardrail's `YOUR_…`.
_PLACEHOLDER_WORD = re.compile(r"(?i)example|changeme|xxxx|your_|<[^>\s]+>")


def is_placeholder(secret: str) -> bool:
    if _VARIABLE.fullmatch(secret) or _SELF_NAMED.fullmatch(secret) or _PLACEHOLDER_WORD.search(secret):
        return True
    body = re.sub(r"^[a-z]{2,8}[_-]+(?:[a-z]{2,8}[_-]+)?", "", secret)
    body = re.sub(r"[^A-Za-z0-9]", "", body)
    # One character repeated after a short prefix (`00aaaa…`), as the guardrail reads it.
    rest = [char for char in secret[4:] if char.isalnum()]
    return len(set(body.lower())) <= 1 or set(body) <= set("xX") or len(rest) >= 12 and len(set(rest)) == 1


def leaks(secret: str, sent: str, sent_without: str = "") -> bool:
    """Whether an 8-character piece of `secret` is still in `sent`. `sent_without` is what would be sent with
    the secret taken out of the text: a piece found there as often (`codemagic` of `codemagic KEY
    codemagic123_…`, a user name that is also the password) is not the secret's."""
    sent = re.sub(r"\[REDACTED:\w+\]", "\x00", sent)
    return any(sent.count(piece) > sent_without.count(piece)
               for piece in (secret[i:i + 8] for i in range(max(1, len(secret) - 7))))


def secret_leaks(secret: str, text: str, sent: str | None = None) -> bool:
    """Whether `secret` leaks from `text` (`sent`: what is sent of it, when known). Compared with what would be
    sent with every occurrence of the secret taken out: whatever of it is still sent, however often it stands
    in the text, leaks."""
    return leaks(secret, _sent(text) if sent is None else sent, _sent(text.replace(secret, " ")))


def _sent(text: str) -> str:
    report = screen(RequirementPacket(title="", body=text), CONFIG)
    return report.redacted.body


def _load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def secret_items(data: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Per corpus, (id, text, secret) of every positive."""
    items: dict[str, list[tuple[str, str, str]]] = {}
    kingfisher = data / "secrets-kingfisher" / "rule_examples.jsonl"
    if kingfisher.exists():
        rows = _load_jsonl(kingfisher)
        seen = set()
        out = []
        for row in rows:
            if row["label"] != "positive" or not row["visible"] or row["text"] in seen:
                continue
            seen.add(row["text"])
            secret = secret_of(row["text"])
            if secret:
                out.append((row["rule_id"], row["text"], secret))
        items["kingfisher"] = out
    secretlint = data / "secrets-secretlint" / "snapshots.jsonl"
    if secretlint.exists():
        out = []
        for row in _load_jsonl(secretlint):
            for finding in row["findings"]:
                start, end = finding["range"]
                found = row["text"][start:end]
                # A finding on a placeholder (`…/services/TXXXXX/BXXXXX/XXXXXXXXXX`) is kept whole for
                # `is_placeholder`, not cut down to its most random-looking run.
                secret = found if _PLACEHOLDER_WORD.search(found) else secret_of(found)
                if secret:
                    out.append((f"{row['rule']}/{row['case']}", row["text"], secret))
        items["secretlint"] = out
    return items


def secret_negatives(data: Path) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    kingfisher = data / "secrets-kingfisher" / "rule_examples.jsonl"
    if kingfisher.exists():
        out["kingfisher"] = [(r["rule_id"], r["text"]) for r in _load_jsonl(kingfisher) if r["label"] == "negative"]
    secretlint = data / "secrets-secretlint" / "snapshots.jsonl"
    if secretlint.exists():
        out["secretlint"] = [(f"{r['rule']}/{r['case']}", r["text"]) for r in _load_jsonl(secretlint)
                             if r["intent"] in ("ignore", "allowed_by_option") and not r["findings"]]
    return out


def eval_secrets(data: Path, details: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    negatives = secret_negatives(data)
    for corpus, items in secret_items(data).items():
        sent_cache: dict[str, str] = {}
        counted = leaked = placeholders = 0
        leaked_ids = []
        for item_id, text, secret in items:
            if is_placeholder(secret):
                placeholders += 1
                continue
            counted += 1
            if text not in sent_cache:
                sent_cache[text] = _sent(text)
            if secret_leaks(secret, text, sent_cache[text]):
                leaked += 1
                leaked_ids.append(f"{item_id}: {text[:120]!r} -> {secret[:40]!r}")
        flagged_negatives = [item_id for item_id, text in negatives.get(corpus, [])
                             if detect(text, SECRET_KINDS)]
        entry: dict[str, Any] = {
            "secrets": counted, "leaked": leaked, "leak_rate": round(leaked / counted, 4) if counted else None,
            "recall": round(1 - leaked / counted, 4) if counted else None, "placeholders_skipped": placeholders,
            "negatives": len(negatives.get(corpus, [])), "negatives_redacted": len(flagged_negatives),
        }
        if details:
            entry["leaked_items"] = leaked_ids
            entry["redacted_negatives"] = flagged_negatives
        result[corpus] = entry
    return result


# ---- PII -------------------------------------------------------------------------------------------

PII_RECOGNIZERS = {
    "email": ("email",), "card": ("credit_card",), "iban": ("iban",),
    "phone": ("phone", "ph_mobile_number", "tr_phone_number"),
}


def _found(value: str, sent: str, kind: str) -> bool:
    if kind == "email":
        pieces = [value[i:i + 4] for i in range(len(value) - 3)]
        return not any(piece in sent for piece in pieces if "@" in piece)
    digits_only = re.sub(r"\D", "", value)
    sent_digits = re.sub(r"\D", "", sent)
    if kind == "iban":
        compact = re.sub(r"[^A-Za-z0-9]", "", value)
        sent_compact = re.sub(r"[^A-Za-z0-9]", "", sent)
        return compact[4:12] not in sent_compact and compact[-8:] not in sent_compact
    return digits_only[-7:] not in sent_digits


_PHONE_WORD = re.compile(r"phone|number|tel|mobile|cep|numara|no:")


def eval_pii(data: Path, details: bool) -> dict[str, Any]:
    path = data / "pii-presidio-recognizer-tests" / "recognizer_test_vectors.jsonl"
    if not path.exists():
        return {}
    rows = _load_jsonl(path)
    result: dict[str, Any] = {}
    for kind, recognizers in PII_RECOGNIZERS.items():
        total = found = negatives = flagged = bare = bare_found = 0
        missed = []
        false_hits = []
        for row in rows:
            if row["recognizer"] not in recognizers or (row.get("extra") or {}).get("leniency") is not None:
                continue
            if row["label"] == "negative":
                negatives += 1
                hits = [h for h in detect(row["text"], {kind})]
                if hits:
                    flagged += 1
                    false_hits.append(row["text"][:80])
                continue
            sent = _sent(row["text"])
            values = row.get("expected_values") or []
            for value in values:
                total += 1
                is_bare = kind == "phone" and value.isdigit() and not _PHONE_WORD.search(row["text"].lower())
                bare += is_bare
                if _found(value, sent, kind):
                    found += 1
                    bare_found += is_bare
                else:
                    missed.append(f"{row['recognizer']}: {row['text'][:100]!r} -> {value!r}")
        entry: dict[str, Any] = {"values": total, "found": found, "recall": round(found / total, 4) if total else None,
                                 "negatives": negatives, "negatives_redacted": flagged}
        if kind == "phone":
            # Bare digit runs with no phone word beside them are left alone by design (ids, amounts).
            entry["bare_digit_runs"] = bare
            written = total - bare
            entry["recall_written"] = round((found - bare_found) / written, 4) if written else None
        if details:
            entry["missed"] = missed
            entry["redacted_negatives"] = false_hits
        result[kind] = entry
    return result


# ---- real tickets ----------------------------------------------------------------------------------

_BENIGN_SHAPES = {
    "version": re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?"),
    "date": re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T ][\d:.]+Z?)?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}"),
    "ticket_key": re.compile(r"[A-Z][A-Z0-9]+-\d+|#\d+"),
    "order_id": re.compile(r"\d{5,}"),
    "hash": re.compile(r"[0-9a-f]{7,64}"),
}


def load_tickets(data: Path) -> list[tuple[str, str, str]]:
    """(source/key, title, body) of every real dev ticket."""
    tickets = []
    for path in sorted((data / "jira-tickets-dev").glob("*.csv")):
        with path.open(encoding="utf-8", errors="replace", newline="") as f:
            for row in csv.DictReader(f):
                body = "" if row["description"] == "NULL" else re.sub(r" {2,}", "\n", row["description"])
                tickets.append((f"jira/{path.stem}/{row['issuekey']}", row["title"], body))
    for path in sorted((data / "gitlab-tickets-dev").glob("*.csv")):
        with path.open(encoding="utf-8", errors="replace", newline="") as f:
            for row in csv.DictReader(f):
                tickets.append((f"gitlab/{path.stem}/{row['issuekey']}", row["title"], row["description"] or ""))
    return tickets


def eval_tickets(data: Path, details: bool) -> dict[str, Any]:
    tickets = load_tickets(data)
    if not tickets:
        return {}
    by_source: dict[str, Counter[str]] = {}
    kinds: Counter[str] = Counter()
    benign: Counter[str] = Counter()
    flagged_examples = []
    started = time.perf_counter()
    for key, title, body in tickets:
        report = screen(RequirementPacket(title=title, body=body), CONFIG)
        source = key.split("/")[0]
        counts = by_source.setdefault(source, Counter())
        counts["tickets"] += 1
        if not report.redaction_count:
            continue
        text = RequirementPacket(title=title, body=body).text
        parts = [(title, hit) for hit in detect(title, KIND_BY_NAME)] + [(body, hit) for hit in detect(body, KIND_BY_NAME)]
        hit_kinds = {hit.kind for _, hit in parts}
        counts["any"] += 1
        if hit_kinds & SECRET_KINDS:
            counts["secret"] += 1
        if hit_kinds - SECRET_KINDS:
            counts["pii"] += 1
        for start, end in report.redacted_ranges:
            value = text[start:end].strip()
            for shape, pattern in _BENIGN_SHAPES.items():
                if pattern.fullmatch(value):
                    benign[shape] += 1
                    break
        kinds.update(hit.kind for _, hit in parts)
        flagged_examples.append(f"{key}: " + "; ".join(f"{hit.kind}={source[hit.start:hit.end][:60]!r}"
                                                       for source, hit in parts))
    elapsed = time.perf_counter() - started
    total = sum(c["tickets"] for c in by_source.values())
    result: dict[str, Any] = {
        "tickets": total,
        "per_source": {
            source: {"tickets": c["tickets"], "any_redaction": c["any"], "secret_redaction": c["secret"],
                     "pii_redaction": c["pii"],
                     "secret_rate": round(c["secret"] / c["tickets"], 4), "any_rate": round(c["any"] / c["tickets"], 4)}
            for source, c in sorted(by_source.items())
        },
        "redactions_by_kind": dict(kinds),
        "benign_shapes_redacted": {shape: benign.get(shape, 0) for shape in _BENIGN_SHAPES},
        "ms_per_1000_tickets": round(elapsed / total * 1000 * 1000, 1),
    }
    if details:
        result["flagged"] = flagged_examples
    return result


def eval_injection(data: Path) -> dict[str, Any] | None:
    path = REPO / "bench" / "eval_injection.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("eval_injection", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.evaluate(data)


def evaluate(data: Path, details: bool = False) -> dict[str, Any]:
    return {
        "secrets": eval_secrets(data, details),
        "pii": eval_pii(data, details),
        "tickets": eval_tickets(data, details),
        "injection": eval_injection(data),
    }


def _print(result: dict[str, Any]) -> None:
    print("Secrets (leak = any 8-character piece of the secret in the text sent to the LLM)")
    print(f"  {'corpus':<12} {'secrets':>8} {'leaked':>7} {'leak %':>7} {'recall':>7} {'placeh.':>8} "
          f"{'negatives redacted':>19}")
    for corpus, e in result["secrets"].items():
        print(f"  {corpus:<12} {e['secrets']:>8} {e['leaked']:>7} {100 * e['leak_rate']:>6.2f}% {e['recall']:>7.3f} "
              f"{e['placeholders_skipped']:>8} {e['negatives_redacted']:>9} / {e['negatives']}")
    print("PII (presidio recognizer test vectors)")
    for kind, e in result["pii"].items():
        print(f"  {kind:<8} recall {e['recall']:.3f} ({e['found']}/{e['values']}), "
              f"near-miss negatives redacted {e['negatives_redacted']}/{e['negatives']}")
        if "bare_digit_runs" in e:
            print(f"           written with separators, '+' or a phone word: recall {e['recall_written']:.3f} "
                  f"({e['values'] - e['bare_digit_runs']} values); bare digit runs left alone: {e['bare_digit_runs']}")
    t = result["tickets"]
    if t:
        print(f"Real dev tickets ({t['tickets']}), {t['ms_per_1000_tickets'] / 1000:.2f} s per 1,000 tickets")
        for source, e in t["per_source"].items():
            print(f"  {source:<8} {e['tickets']:>6} tickets: secret redaction in {e['secret_redaction']} "
                  f"({100 * e['secret_rate']:.2f}%), any redaction in {e['any_redaction']} ({100 * e['any_rate']:.2f}%)")
        print(f"  redactions by kind: {t['redactions_by_kind']}")
        print(f"  benign shapes redacted: {t['benign_shapes_redacted']}")
    if result.get("injection") is not None:
        print("Injection (bench/eval_injection.py)")
        print(json.dumps(result["injection"], indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--details", action="store_true", help="list leaked secrets, misses and flagged tickets")
    args = parser.parse_args(argv)
    result = evaluate(args.data, args.details)
    if args.json or args.details:
        json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        _print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
