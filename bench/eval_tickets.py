"""How far the rules-only review agrees with the rubric's raters on real tickets.

    python bench/eval_tickets.py [--data DIR] [--json] [--lopo] [--project NAME ...]
                                 [--llm [--no-cache] | --oracle A|B]

Reviews every ticket of DIR/ticket-gold/*.jsonl (DIR defaults to ../shared/data beside the repository)
through the audit's loop (`reqgate.bot.audit`), in its JSON Lines shape: Jira tickets carry their labelled
type, as a Jira webhook carries the issue type; GitLab tickets carry none, so the type is guessed from the
text. Rules only by default; `--llm` reviews as the bot does with a model (calls 1 and 2 through
`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` if set, answers cached like `reqgate audit --llm`) and says how
many reviews the model took part in, since a failed or withheld call falls back to rules only. `--oracle A`
(or `B`) measures the LLM path's machinery instead of a model: call 1 is answered by the fake Anthropic
server on 127.0.0.1 (`tests/fakes`, a checkout only) with that rater's own issues (a quote that is not
verbatim in the text the model sees becomes an absence), so the figures say how much of a rubric-following
model's judgement the merge, the gate and the comment carry to the verdict; its precision is circular. Prints:

- verdict agreement with the gold, false needs-info (share of gold-ready tickets sent back) and false
  ready (share of gold needs-info tickets passed);
- shown-finding precision (modes warn and error), overall and per check: a finding is right when either
  rater raised its category on that ticket (`gold.issues_any`);
- per category, the precision of shown findings and the recall against `gold.issues_both` (a category
  both raters raised counts as found when a shown finding of it is on the ticket);
- type accuracy on the untyped tickets, and the median number of visible comment lines (outside
  collapsed `<details>` blocks);
- the raters' agreement with each other as the ceiling.

`--lopo` adds leave-one-project-out figures: for each project, the modes are chosen on the other
projects only (a check whose shown findings are right less than 75% of the time there is shown as `info`
instead) and the review is scored on the held-out project; the held-out results are pooled.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reqgate.bot.audit import ExportRecord, audit
from reqgate.pipeline.cache import ResultCache
from reqgate.pipeline.comment import repeated_sentences, visible_lines
from reqgate.pipeline.config import Config
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.schemas import ReviewResult

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "data"
SHOWN = frozenset({"warn", "error"})
PRECISION_TARGET = 0.75

Record = dict[str, Any]


def audit_record(item: Record) -> Record:
    """A labelled ticket in the audit's JSON Lines shape; only Jira tickets keep their type."""
    record: Record = {"key": item["id"], "title": item["title"], "body": item["body"],
                      "format": item.get("body_format", "markdown")}
    if item["source"] == "jira":
        record["type"] = item["gold"]["type"]
    return record


def review_all(items: list[Record], config: Config, llm: LLMClient | None = None,
               cache: ResultCache | None = None) -> list[Outcome]:
    """Every labelled ticket through the audit's loop: offline, or with `llm` taking part."""
    records = (ExportRecord.model_validate(audit_record(item)) for item in items)
    reviews = audit(records, config, offline=llm is None, llm=llm, cache=cache)
    if llm is not None:
        from reqgate.bot.audit_cli import progress_bar  # with a model a run takes minutes: say how far it is

        reviews = progress_bar(reviews)
    return [Outcome(item, audited.result) for item, audited in zip(items, reviews, strict=True)]


@dataclass
class Outcome:
    """One reviewed ticket beside its gold label."""

    item: Record
    result: ReviewResult

    @property
    def project(self) -> str:
        return str(self.item["project"])

    @property
    def typed(self) -> bool:
        return self.item["source"] == "jira"

    def shown(self, demoted: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
        """(check id, category) of every finding shown as warn or error."""
        return [(f.check_id, f.category) for f in self.result.findings
                if f.mode in SHOWN and f.check_id not in demoted]

    def verdict(self, demoted: frozenset[str] = frozenset()) -> str:
        """The gate's verdict; with demoted checks, their errors no longer block."""
        if not demoted or self.result.decision.verdict == "ready":
            return self.result.decision.verdict
        blocking = [f for f in self.result.decision.blocking if f.check_id not in demoted]
        other_reasons = self.result.decision.score < self.result.decision.threshold or (
            self.result.guardrail.injection_detected or self.result.guardrail.rejected)
        return "needs_info" if blocking or other_reasons else "ready"


@dataclass
class Tally:
    right: int = 0
    n: int = 0

    def add(self, ok: bool) -> None:
        self.right += ok
        self.n += 1

    @property
    def rate(self) -> float | None:
        return round(self.right / self.n, 3) if self.n else None


def gold_categories(item: Record, key: str = "issues_any") -> set[str]:
    return {issue["category"] for issue in item["gold"][key]}


@dataclass
class Figures:
    verdict: Tally = field(default_factory=Tally)
    false_needs_info: Tally = field(default_factory=Tally)
    false_ready: Tally = field(default_factory=Tally)
    shown: Tally = field(default_factory=Tally)
    per_check: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    cat_precision: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    cat_recall: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    untyped_type: Tally = field(default_factory=Tally)
    lines: list[int] = field(default_factory=list)
    lines_needs_info: list[int] = field(default_factory=list)
    lines_ready: list[int] = field(default_factory=list)
    repeats: list[int] = field(default_factory=list)
    with_model: int = 0
    from_cache: int = 0
    cost_usd: float = 0.0

    def add(self, outcome: Outcome, demoted: frozenset[str] = frozenset()) -> None:
        gold = outcome.item["gold"]
        verdict = outcome.verdict(demoted)
        self.verdict.add(verdict == gold["verdict"])
        if gold["verdict"] == "ready":
            self.false_needs_info.add(verdict == "needs_info")
        else:
            self.false_ready.add(verdict == "ready")
        raised = gold_categories(outcome.item)
        shown = outcome.shown(demoted)
        for check_id, category in shown:
            self.shown.add(category in raised)
            self.per_check[check_id].add(category in raised)
            self.cat_precision[category].add(category in raised)
        shown_categories = {category for _, category in shown}
        for category in gold_categories(outcome.item, "issues_both"):
            self.cat_recall[category].add(category in shown_categories)
        if not outcome.typed:
            self.untyped_type.add(outcome.result.ticket_type.value == gold["type"])
        comment = outcome.result.comment_markdown
        self.lines.append(visible_lines(comment))
        (self.lines_ready if verdict == "ready" else self.lines_needs_info).append(visible_lines(comment))
        self.repeats.append(repeated_sentences(comment))
        self.with_model += outcome.result.structure is not None
        self.from_cache += outcome.result.trace.from_cache
        self.cost_usd += sum(call.cost_usd for call in outcome.result.trace.llm_calls)

    def as_dict(self) -> dict[str, Any]:
        categories = sorted(set(self.cat_precision) | set(self.cat_recall))
        return {
            "n": self.verdict.n,
            "verdict_agreement": self.verdict.rate,
            "false_needs_info": self.false_needs_info.rate,
            "false_ready": self.false_ready.rate,
            "shown_precision": self.shown.rate,
            "shown_findings": self.shown.n,
            "per_check": {k: {"precision": t.rate, "n": t.n} for k, t in sorted(self.per_check.items())},
            "per_category": {c: {"precision": self.cat_precision[c].rate, "shown": self.cat_precision[c].n,
                                 "recall": self.cat_recall[c].rate, "gold_both": self.cat_recall[c].n}
                             for c in categories},
            "untyped_type_accuracy": self.untyped_type.rate,
            "untyped_n": self.untyped_type.n,
            "median_visible_lines": statistics.median(self.lines) if self.lines else None,
            "median_visible_lines_needs_info": (statistics.median(self.lines_needs_info)
                                                if self.lines_needs_info else None),
            "median_visible_lines_ready": statistics.median(self.lines_ready) if self.lines_ready else None,
            "repeated_sentences_per_comment": (round(statistics.mean(self.repeats), 2)
                                               if self.repeats else None),
            "reviews_with_model": self.with_model,
            "reviews_from_cache": self.from_cache,
            "llm_cost_usd": round(self.cost_usd, 4),
        }


def raters_ceiling(items: Iterable[Record]) -> dict[str, Any]:
    """The two raters against each other: the best agreement a reviewer can expect to reach."""
    verdict, typed, untyped, precision = Tally(), Tally(), Tally(), Tally()
    for item in items:
        a, b = item["gold"]["raters"]["A"], item["gold"]["raters"]["B"]
        verdict.add(a["verdict"] == b["verdict"])
        typed.add(a["type"] == b["type"])
        if item["source"] != "jira":
            untyped.add(a["type"] == b["type"])
        cats = ({i["category"] for i in a["issues"]}, {i["category"] for i in b["issues"]})
        for mine, theirs in (cats, cats[::-1]):
            for category in mine:
                precision.add(category in theirs)
    return {"verdict_agreement": verdict.rate, "type_agreement": typed.rate,
            "untyped_type_agreement": untyped.rate, "category_precision": precision.rate}


def load_items(data: Path, projects: Iterable[str] = ()) -> list[Record]:
    wanted = set(projects)
    items = []
    for path in sorted((data / "ticket-gold").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                if not wanted or item["project"] in wanted:
                    items.append(item)
    return items


def figures(outcomes: Iterable[Outcome], demoted: Callable[[Outcome], frozenset[str]] | None = None) -> Figures:
    out = Figures()
    for outcome in outcomes:
        out.add(outcome, demoted(outcome) if demoted else frozenset())
    return out


def weak_checks(outcomes: Iterable[Outcome]) -> frozenset[str]:
    """Checks whose shown findings are right less often than the target on these tickets."""
    per_check = figures(outcomes).per_check
    return frozenset(check for check, t in per_check.items() if t.rate is not None and t.rate < PRECISION_TARGET)


def leave_one_project_out(outcomes: list[Outcome]) -> dict[str, Any]:
    by_project: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_project[outcome.project].append(outcome)
    demoted_for = {project: weak_checks(o for o in outcomes if o.project != project) for project in by_project}
    pooled = figures(outcomes, lambda o: demoted_for[o.project])
    per_project = {project: figures(group, lambda o: demoted_for[o.project]).as_dict()
                   for project, group in sorted(by_project.items())}
    return {"pooled": pooled.as_dict(),
            "demoted": {p: sorted(d) for p, d in sorted(demoted_for.items())},
            "per_project": per_project}


def _fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.2f}"


def print_figures(title: str, fig: dict[str, Any], ceiling: dict[str, Any] | None = None,
                  column: str = "rules") -> None:
    print(title)
    rows = [
        ("verdict agreement (target >= 0.85)", fig["verdict_agreement"],
         ceiling and ceiling["verdict_agreement"]),
        ("false needs-info (target <= 0.10)", fig["false_needs_info"], None),
        ("false ready (target <= 0.10)", fig["false_ready"], None),
        (f"shown-finding precision, n={fig['shown_findings']} (target >= 0.75)", fig["shown_precision"],
         ceiling and ceiling["category_precision"]),
        (f"type accuracy untyped, n={fig['untyped_n']} (target >= 0.80)", fig["untyped_type_accuracy"],
         ceiling and ceiling["untyped_type_agreement"]),
    ]
    print(f"  {'measure':<52}{column:>7}{'raters':>8}")
    for name, value, ceil in rows:
        print(f"  {name:<52}{_fmt(value):>7}{_fmt(ceil) if ceiling else '':>8}")
    print(f"  {'median visible comment lines':<52}{fig['median_visible_lines']!s:>7}")
    print(f"  {'  on needs-info verdicts (target <= 12)':<52}{fig['median_visible_lines_needs_info']!s:>7}")
    print(f"  {'  on ready verdicts (target <= 2)':<52}{fig['median_visible_lines_ready']!s:>7}")
    print(f"  {'repeated sentences per comment (target 0)':<52}{fig['repeated_sentences_per_comment']!s:>7}")


def print_details(fig: dict[str, Any]) -> None:
    print("  per check (shown findings)")
    for check, v in fig["per_check"].items():
        print(f"    {check:<34}{_fmt(v['precision']):>6}  n={v['n']}")
    print("  per category          precision  shown   recall  gold(both)")
    for category, v in fig["per_category"].items():
        print(f"    {category:<20}{_fmt(v['precision']):>9}{v['shown']:>7}{_fmt(v['recall']):>9}{v['gold_both']:>8}")


def _model_client(parser: argparse.ArgumentParser, config: Config,
                  no_cache: bool) -> tuple[LLMClient, ResultCache | None]:
    from reqgate.pipeline.cache import FileCache, default_cache_dir

    llm = LLMClient.from_env(config.llm)
    if llm is None:
        parser.error("--llm needs ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint)")
    return llm, None if no_cache else FileCache(default_cache_dir())


class RaterOracle:
    """Call 1 answered with one rater's own issues for the ticket in the request (found by its title), over
    HTTP from the fake Anthropic server, so that the real client, the merge and the gate are what is measured."""

    def __init__(self, items: list[Record], rater: str) -> None:
        self.by_title = {item["title"]: item for item in reversed(items) if item["title"].strip()}
        self.rater = rater

    def issues(self, ticket: str) -> list[dict[str, Any]]:
        item = next((item for title, item in self.by_title.items() if title in ticket), None)
        if item is None:
            return []
        issues = item["gold"]["raters"][self.rater]["issues"]
        return [{"category": issue["category"], "severity": issue["severity"],
                 "quote": issue["quote"] if issue["quote"] and issue["quote"] in ticket else None,
                 "note": issue.get("note") or issue["category"], "question": ""} for issue in issues[:5]]

    def __call__(self, request: Any) -> str:
        from tests.fakes.fake_anthropic import smart_markdown, smart_structure, ticket_text

        if request.schema is None:
            return smart_markdown(request)
        answer = smart_structure(request)
        answer["issues"] = self.issues(ticket_text(request))
        return json.dumps(answer)


def _oracle_client(items: list[Record], rater: str, config: Config) -> tuple[LLMClient, Any]:
    sys.path.insert(0, str(REPO))
    from tests.fakes.fake_anthropic import FakeAnthropic

    fake = FakeAnthropic().start()
    fake.default_responder = RaterOracle(items, rater)
    return LLMClient("sk-ant-oracle", config.llm, base_url=fake.url), fake


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="data folder (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--lopo", action="store_true", help="add leave-one-project-out figures")
    parser.add_argument("--project", action="append", default=[], help="only this project (repeatable)")
    parser.add_argument("--llm", action="store_true",
                        help="review with the model as the bot does (needs ANTHROPIC_API_KEY)")
    parser.add_argument("--no-cache", action="store_true", help="with --llm: do not reuse earlier reviews")
    parser.add_argument("--oracle", choices=("A", "B"),
                        help="the LLM path with call 1 answered by this rater's own issues (a fake server)")
    args = parser.parse_args(argv)
    if args.llm and args.oracle:
        parser.error("--llm and --oracle exclude each other")
    if args.no_cache and not args.llm:
        parser.error("--no-cache goes with --llm (rules-only reviews are never cached)")
    items = load_items(args.data.resolve(), args.project)
    if not items:
        parser.error(f"no labelled tickets under {args.data / 'ticket-gold'}")
    config = load_default_config()
    fake = cache = llm = None
    if args.llm or args.oracle:
        from reqgate.bot.cli import configure_logs

        configure_logs()  # standard output carries the figures (or their JSON); warnings go to standard error
    if args.llm:
        llm, cache = _model_client(parser, config, args.no_cache)
    elif args.oracle:
        llm, fake = _oracle_client(items, args.oracle, config)
    try:
        outcomes = review_all(items, config, llm, cache)
    finally:
        if llm is not None:
            llm.close()
        if fake is not None:
            fake.stop()
    mode = f"oracle-{args.oracle}" if args.oracle else "llm" if llm else "rules"
    result: dict[str, Any] = {"mode": mode, "dev": figures(outcomes).as_dict(), "raters": raters_ceiling(items)}
    if args.lopo:
        result["lopo"] = leave_one_project_out(outcomes)
    if args.json:
        print(json.dumps(result))
        return _model_absent(result)
    dev = result["dev"]
    if llm is None:
        title, column = "rules only", "rules"
    elif args.oracle:
        title, column = f"rules and rater {args.oracle}'s issues as the model's (the machinery's ceiling)", "oracle"
    else:
        fell_back = dev["n"] - dev["reviews_with_model"]
        title = (f"rules and model: the model took part in {dev['reviews_with_model']} of {dev['n']} reviews"
                 + (f" ({fell_back} fell back to rules only)" if fell_back else "")
                 + f", ${dev['llm_cost_usd']:.2f} estimated"
                 + (f" ({dev['reviews_from_cache']} replayed from the cache at no cost)"
                    if dev["reviews_from_cache"] else ""))
        column = "review"
    print_figures(f"Dev gold ({len(items)} tickets), {title}", dev, result["raters"], column)
    print_details(dev)
    if args.lopo:
        lopo = result["lopo"]
        print()
        print_figures("Leave one project out (modes chosen on the other projects), pooled", lopo["pooled"],
                      column=column)
        print("  per held-out project        agree  false-NI  false-R  precision  demoted there")
        for project, v in lopo["per_project"].items():
            demoted = ", ".join(lopo["demoted"][project]) or "-"
            print(f"    {project:<24}{_fmt(v['verdict_agreement']):>7}{_fmt(v['false_needs_info']):>9}"
                  f"{_fmt(v['false_ready']):>9}{_fmt(v['shown_precision']):>10}  {demoted}")
    return _model_absent(result)


def _model_absent(result: dict[str, Any]) -> int:
    """1 when a run asked for the model got none of its reviews from it (a wrong key, an unreachable endpoint):
    its figures are rules-only whatever their heading says."""
    dev = result["dev"]
    if result["mode"] == "rules" or dev["reviews_with_model"]:
        return 0
    print("eval_tickets: the model took part in no review (check ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL); "
          "these figures are rules-only", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
