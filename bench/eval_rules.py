"""Quality of the rules engine on public, human-labelled data.

    python bench/eval_rules.py [--data DIR] [--json]

DIR defaults to ../shared/data beside the repository; any folder with the same layout works.

1. Role / want / benefit extraction (`parse_story`) against the Doccano span labels in
   `dalpiaz-persona-annotations/*.jsonl`. The "#Gxx# " prefix is annotation metadata and is cut before
   parsing (offsets shifted back). Gold role = the Persona span; gold benefit = the Benefit span; gold
   want = from the first to the last Action/Entity span between the end of the Persona and the start of the
   Benefit (or the end of the text), leaving out an Action that is the want verb itself ("want", "need",
   "like"). Comparison ignores surrounding whitespace, trailing punctuation and, for the want, a leading
   article, since the annotators never covered determiners. "exact" = same words; "overlap" = the spans
   share at least one character. n = stories that carry that gold element.
2. Precision / recall / F1 per QUS criterion against `ustai-qus-annotated/UStAI-annotated.csv`; each story
   is reviewed as a story ticket with the default configuration and a criterion counts as predicted when
   any of its checks fires:
       atomic           -> story.non-atomic          (positive label: "conjunctions")
       minimal          -> story.minimal             (positive: "brackets", "example", "punctuation",
                                                                "not_minimal")
       problem_oriented -> story.solution-leakage    (positive: "solution_oriented")
       unambiguous      -> wording.vague, wording.unmeasurable (positive: "General", "Vagueness")
       estimatable      -> wording.vague, wording.unmeasurable, story.non-atomic (positive: "No"); a story
                           is hard to estimate when it is vague or bundles several actions.
   Rows whose label is blank (the semantic columns of 80 stories the annotators marked "no_feature") are
   skipped for that criterion.
3. Robustness (table only): share of backlog lines in `dalpiaz-user-stories/*.txt` starting with "As a/an/
   the" that parse with a role and a want; files are read as UTF-8 (BOM dropped) or else cp1252.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.rules import parse_story, run_rules
from reqgate.pipeline.rules.text import decode_bytes
from reqgate.pipeline.schemas import RequirementPacket, TicketType

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "data"

CRITERIA: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    # name: (csv column, positive labels, check ids)
    "atomic": ("atomic", frozenset({"conjunctions"}), frozenset({"story.non-atomic"})),
    "minimal": ("minimal", frozenset({"brackets", "example", "punctuation", "not_minimal"}),
                frozenset({"story.minimal"})),
    "problem_oriented": ("Problem-oriented", frozenset({"solution_oriented"}),
                         frozenset({"story.solution-leakage"})),
    "unambiguous": ("Unambiguous", frozenset({"General", "Vagueness"}),
                    frozenset({"wording.vague", "wording.unmeasurable"})),
    "estimatable": ("Estimatable", frozenset({"No"}),
                    frozenset({"wording.vague", "wording.unmeasurable", "story.non-atomic"})),
}
# AQUSA on its 3-expert gold standard (Lucassen et al., REFSQ 2016 / Dalpiaz et al.); None = not reported.
AQUSA: dict[str, tuple[float | None, float | None]] = {
    "atomic": (0.20, 0.60), "minimal": (0.42, 0.25), "problem_oriented": (None, None),
    "unambiguous": (None, None), "estimatable": (None, None),
}
_PREFIX_RE = re.compile(r"^#G\d+#\s*")
_WANT_VERBS = {"want", "need", "like", "would like", "wish"}
_ARTICLE_RE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)


@dataclass
class Tally:
    exact: int = 0
    overlap: int = 0
    n: int = 0

    def as_dict(self) -> dict[str, float | int]:
        return {"exact": _ratio(self.exact, self.n), "overlap": _ratio(self.overlap, self.n), "n": self.n}


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def as_dict(self) -> dict[str, float | int]:
        p = _ratio(self.tp, self.tp + self.fp)
        r = _ratio(self.tp, self.tp + self.fn)
        f1 = round(2 * p * r / (p + r), 3) if p + r else 0.0
        return {"precision": p, "recall": r, "f1": f1, "tp": self.tp, "fp": self.fp, "fn": self.fn}


def _ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 0.0


def _norm(quote: str, drop_article: bool) -> str:
    quote = quote.strip().rstrip(".,;:!? \t").strip()
    return _ARTICLE_RE.sub("", quote) if drop_article else quote


def _gold_spans(body: str, offset: int, entities: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    ents = [(e["label"], e["start_offset"] - offset, e["end_offset"] - offset) for e in entities
            if e["label"] != "PID"]
    gold: dict[str, tuple[int, int]] = {}
    persona = [(s, e) for label, s, e in ents if label == "Persona"]
    benefit = [(s, e) for label, s, e in ents if label == "Benefit"]
    if persona:
        gold["role"] = min(persona)
    if benefit:
        gold["benefit"] = min(benefit)
    lo = gold["role"][1] if "role" in gold else 0
    hi = gold["benefit"][0] if "benefit" in gold else len(body)
    parts = [(s, e) for label, s, e in ents if label in ("Action", "Entity") and lo <= s and e <= hi
             and not (label == "Action" and body[s:e].strip().lower() in _WANT_VERBS)]
    if parts:
        gold["want"] = (min(s for s, _ in parts), max(e for _, e in parts))
    return gold


def evaluate_extraction(data: Path) -> dict[str, dict[str, float | int]]:
    tallies = {part: Tally() for part in ("role", "want", "benefit")}
    for path in sorted((data / "dalpiaz-persona-annotations").glob("*.jsonl")):
        for line in decode_bytes(path.read_bytes()).splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            prefix = _PREFIX_RE.match(row["text"])
            offset = prefix.end() if prefix else 0
            body = row["text"][offset:]
            story = parse_story(body)
            for part, (gs, ge) in _gold_spans(body, offset, row["entities"]).items():
                tally = tallies[part]
                tally.n += 1
                span = getattr(story, part) if story else None
                if span is None:
                    continue
                drop = part == "want"
                tally.exact += _norm(body[gs:ge], drop) == _norm(span.quote, drop)
                tally.overlap += span.start < ge and gs < span.end
    return {part: tally.as_dict() for part, tally in tallies.items()}


def evaluate_criteria(data: Path) -> dict[str, dict[str, float | int]]:
    config = load_default_config()
    confusion = {name: Confusion() for name in CRITERIA}
    text = decode_bytes((data / "ustai-qus-annotated" / "UStAI-annotated.csv").read_bytes())
    for row in csv.DictReader(io.StringIO(text, newline="")):
        packet = RequirementPacket(body=row["User story"], type_hint=TicketType.story)
        fired = {f.check_id for f in run_rules(packet, TicketType.story, config)}
        for name, (column, positives, checks) in CRITERIA.items():
            label = (row.get(column) or "").strip()
            if not label:
                continue
            gold = label in positives
            predicted = bool(fired & checks)
            c = confusion[name]
            c.tp += gold and predicted
            c.fp += predicted and not gold
            c.fn += gold and not predicted
    return {name: c.as_dict() for name, c in confusion.items()}


def backlog_parse_rate(data: Path) -> tuple[int, int]:
    parsed = total = 0
    for path in sorted((data / "dalpiaz-user-stories").glob("*.txt")):
        for line in decode_bytes(path.read_bytes()).splitlines():
            if not re.match(r"\s*as\s+(?:an?|the)\b", line, re.IGNORECASE):
                continue
            total += 1
            story = parse_story(line)
            parsed += bool(story and story.role and story.want)
    return parsed, total


def _fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.2f}"


def print_table(result: dict[str, dict[str, dict[str, float | int]]], data: Path) -> None:
    print("Extraction (parse_story vs dalpiaz-persona-annotations)")
    print(f"  {'element':<10}{'exact':>8}{'overlap':>9}{'n':>6}")
    for part, v in result["extraction"].items():
        print(f"  {part:<10}{v['exact']:>8.3f}{v['overlap']:>9.3f}{v['n']:>6}")
    print()
    print("QUS criteria (rules vs ustai-qus-annotated), AQUSA's published figures beside")
    print(f"  {'criterion':<18}{'P':>6}{'R':>6}{'F1':>6}{'tp':>6}{'fp':>6}{'fn':>6}"
          f"   {'AQUSA P':>7}{'AQUSA R':>8}")
    for name, v in result["criteria"].items():
        ap, ar = AQUSA[name]
        print(f"  {name:<18}{v['precision']:>6.2f}{v['recall']:>6.2f}{v['f1']:>6.2f}{v['tp']:>6}{v['fp']:>6}"
              f"{v['fn']:>6}   {_fmt(ap):>7}{_fmt(ar):>8}")
    parsed, total = backlog_parse_rate(data)
    print()
    print(f"Backlog robustness: {parsed}/{total} 'As a' lines parse with role and want "
          f"({_ratio(parsed, total):.1%})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="data folder (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    data = args.data.resolve()
    result = {"extraction": evaluate_extraction(data), "criteria": evaluate_criteria(data)}
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
