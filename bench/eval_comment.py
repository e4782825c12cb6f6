"""The review comment measured over the labelled dev tickets, offline (rules only) or against the fake
Anthropic server: median visible lines per gold verdict, repeated sentences per comment, the longest.

    python bench/eval_comment.py [--data FILE] [--fake-llm] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from reqgate.pipeline.comment import repeated_sentences, visible_lines
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import RequirementPacket, TicketType

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ticket-gold" / "dev.jsonl"


def packet(row: dict) -> RequirementPacket:
    # A Jira webhook carries the issue type; GitLab issues have none (as the data's README says to evaluate).
    hint = TicketType.coerce(row["gold"]["type"]) if row["source"] == "jira" else None
    return RequirementPacket(source="jira" if row["source"] == "jira" else "cli", project=row["project"],
                             key=row["id"], title=row["title"], body=row["body"], type_hint=hint)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--fake-llm", action="store_true", help="answer calls 1 and 2 from the fake server")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    config = load_default_config()
    llm = None
    fake = None
    if args.fake_llm:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from reqgate.pipeline.llm import LLMClient
        from tests.fakes.fake_anthropic import FakeAnthropic

        fake = FakeAnthropic().start()
        llm = LLMClient("sk-ant-fake", config.llm, base_url=fake.url)
    by_verdict: dict[str, list[int]] = {"ready": [], "needs_info": []}
    repeats: list[int] = []
    worst: tuple[int, str] = (0, "")
    try:
        for row in rows:
            result = review(packet(row), config, llm)
            lines = visible_lines(result.comment_markdown)
            by_verdict[result.decision.verdict].append(lines)
            repeats.append(repeated_sentences(result.comment_markdown))
            worst = max(worst, (lines, row["id"]))
    finally:
        if fake is not None:
            fake.stop()
    report = {
        "tickets": len(rows),
        "median_visible_lines": {v: statistics.median(n) if n else None for v, n in by_verdict.items()},
        "max_visible_lines": {v: max(n) if n else None for v, n in by_verdict.items()},
        "comments": {v: len(n) for v, n in by_verdict.items()},
        "repeated_sentences_per_comment": round(sum(repeats) / len(repeats), 3) if repeats else 0,
        "comments_with_a_repeat": sum(1 for r in repeats if r),
        "longest": worst[1],
    }
    print(json.dumps(report, indent=1) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
