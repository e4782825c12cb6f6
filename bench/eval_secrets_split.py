"""Secret leak rate on two halves of the kingfisher fixtures, split by rule file, for a tune/check split.

    python bench/eval_secrets_split.py [--data DIR] [--leaked]

Half A holds the rule files whose name sorts before "m" (`data/rules/a*.yml` … `l*.yml`), half B the rest;
a change tuned while looking at one half's leaks is checked on the other half (and on secretlint, which
`bench/eval_guardrail.py` reports). Same measure as `bench/eval_guardrail.py`: a leak is any 8-character
piece of the secret in the text sent to the LLM.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("eval_guardrail", REPO / "bench" / "eval_guardrail.py")
assert _spec and _spec.loader
guardrail_eval = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(guardrail_eval)


def half_of(source_file: str) -> str:
    return "A" if Path(source_file).name[:1].lower() < "m" else "B"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=guardrail_eval.DEFAULT_DATA)
    parser.add_argument("--leaked", action="store_true", help="list the leaked secrets per half")
    args = parser.parse_args(argv)
    rows = guardrail_eval._load_jsonl(args.data / "secrets-kingfisher" / "rule_examples.jsonl")
    file_of = {row["rule_id"]: row["source_file"] for row in rows}
    items = guardrail_eval.secret_items(args.data).get("kingfisher", [])
    counts = {"A": [0, 0], "B": [0, 0]}
    leaked: dict[str, list[str]] = {"A": [], "B": []}
    for rule_id, text, secret in items:
        if guardrail_eval.is_placeholder(secret):
            continue
        half = half_of(file_of[rule_id])
        counts[half][0] += 1
        if guardrail_eval.secret_leaks(secret, text):
            counts[half][1] += 1
            leaked[half].append(f"{rule_id}: {text[:100]!r}")
    for half, (total, leaks) in counts.items():
        print(f"kingfisher half {half}: {total} secrets, {leaks} leaked ({100 * leaks / total:.2f}%)")
        if args.leaked:
            print(json.dumps(leaked[half], indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
