"""How long the review itself takes, without any network: rules-only, and with an LLM that answers at once.

    python bench/bench_pipeline.py [--repeat N]

Prints the median of N runs for a 1,000- and a 10,000-character ticket (target: 10,000 characters under
20 ms rules-only on one core), the whole review with an in-process LLM of zero latency, and the
pipeline's own work inside the two call stages (prompt building, schema, validation, evidence and
binding checks), read from the review's trace.
Ratios are taken within this run, since the machines are shared and absolute times drift.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from reqgate.pipeline.config import Config
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.llm import LLMReply, Turn
from reqgate.pipeline.render_prd import template_prd
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import (
    EvidencedItem,
    GateDecision,
    LLMCallRecord,
    PRDDraft,
    Rating,
    RequirementPacket,
    StructureOutput,
    TicketType,
    UserStory,
)

STORY = (
    "As a workspace admin, I want to export all tasks of a workspace to a CSV file, so that I can report "
    "progress in our BI tool.\n\n"
)
FILLER = [
    "The export contains one row per task with title, assignee, status and due date.",
    "It should be fast and user-friendly for big workspaces, and support various formats etc.",
    "Titles that contain commas, quotes or line breaks are quoted as RFC 4180 requires.",
    "- Given a workspace with tasks, when the admin starts an export, then a CSV file is downloaded.",
    "Today admins copy tasks by hand into spreadsheets every Friday (about two hours of work).",
    "Contact ops@example.com for the BI import format; see PROJ-1234 and version 4.12.1.",
]


def ticket(chars: int) -> RequirementPacket:
    body, i = [STORY], 0
    while sum(map(len, body)) < chars:
        body.append(FILLER[i % len(FILLER)] + ("\n" if i % 3 else "\n\n"))
        i += 1
    return RequirementPacket(title="Export workspace tasks to CSV", body="".join(body)[:chars])


class InstantLLM:
    """Answers both calls at once with a valid structure and the template's markdown."""

    def __init__(self, config: Config):
        _, rubric = config.rubric_for(TicketType.story)
        quote = "export all tasks of a workspace to a CSV file"
        item = EvidencedItem(text="A CSV with one row per task is downloaded.", evidence=quote)
        self.structure = StructureOutput(
            ticket_type=TicketType.story,
            prd=PRDDraft(title="Export tasks", user_story=UserStory(want=item), acceptance_criteria=[item],
                         questions=["Which formats besides CSV?"]),
            ratings=[Rating(dimension=d, score=4, rationale="ok", evidence=quote) for d in rubric.dimensions],
        )

    def _reply(self, call: str, text: str) -> LLMReply:
        return LLMReply(text=text, stop_reason="end_turn", record=LLMCallRecord(call=call, model="instant"))

    def complete_json(self, call: str, model: str, system: Sequence[str], messages: Sequence[Turn],
                      schema: dict[str, Any], max_tokens: int) -> LLMReply:
        return self._reply(call, self.structure.model_dump_json())

    def complete_text(self, call: str, model: str, system: Sequence[str], messages: Sequence[Turn],
                      max_tokens: int) -> LLMReply:
        verdict = "ready" if "Verdict: Ready" in messages[-1].text else "needs_info"
        decision = GateDecision(verdict=verdict, score=80, threshold=70)
        return self._reply(call, template_prd(self.structure, decision))


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm caches (regex compilation, pydantic validators) outside the measurement
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=51)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    config = load_default_config()
    llm = InstantLLM(config)
    figures: dict[str, dict[str, float]] = {}
    for chars in (1_000, 10_000):
        packet = ticket(chars)
        rules_only = median_ms(lambda p=packet: review(p, config, None), args.repeat)
        llm_stage_ms: list[float] = []

        def with_instant_llm(p: RequirementPacket = packet, stage_ms: list[float] = llm_stage_ms) -> None:
            result = review(p, config, llm)  # type: ignore[arg-type]
            stage_ms.append(sum(s.ms for s in result.trace.stages if s.stage in ("structure", "render")))

        with_llm = median_ms(with_instant_llm, args.repeat)
        figures[str(chars)] = {"rules_only_ms": round(rules_only, 2), "instant_llm_ms": round(with_llm, 2),
                               "llm_overhead_ms": round(statistics.median(llm_stage_ms), 2)}
    ratio = figures["10000"]["rules_only_ms"] / figures["1000"]["rules_only_ms"]
    if args.json:
        print(json.dumps({"tickets": figures, "ratio_10k_to_1k": round(ratio, 2)}))
        return
    print(f"median of {args.repeat} runs, one process")
    print(f"{'chars':>7} {'rules-only ms':>14} {'instant-LLM ms':>15} {'own work around calls ms':>25}")
    for chars, row in figures.items():
        print(f"{int(chars):>7,} {row['rules_only_ms']:>14.2f} {row['instant_llm_ms']:>15.2f} "
              f"{row['llm_overhead_ms']:>25.2f}")
    target = "met" if figures["10000"]["rules_only_ms"] < 20 else "NOT met"
    print(f"10,000 / 1,000 characters: {ratio:.1f}x the time for 10x the text")
    print(f"target 10,000 characters rules-only < 20 ms: {target}")


if __name__ == "__main__":
    main()
