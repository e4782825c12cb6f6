"""`reqgate audit` over a backlog built from the real dev tickets: the rate and the memory it takes.

    python bench/bench_audit.py [--tickets 10000] [--format jsonl|jira-csv|json] [--data ../shared/data]
    python bench/bench_audit.py --breakdown 1000

Builds an export of N tickets in a temporary folder at run time from `jira-tickets-dev/` (wiki markup, line
breaks restored as the dataset's README says) and `gitlab-tickets-dev/` (markdown), taken in turn and
repeated with new keys when N is larger than the data; nothing of the data is kept. Then runs
`reqgate audit EXPORT --offline --jsonl OUT --report OUT.html` in this process, with the summary on
standard output as usual, and prints the rate (by the wall clock and by this process's CPU time: the
machine is shared, and the CPU figure is what one core does) and the resident memory after the first tenth
of the tickets and at its peak (target: at least 100 tickets per second rules-only on one core, memory flat;
the export is built in the same process first, so the figures include what that left behind).
`--breakdown N` instead times the stages separately over the first N tickets: wiki conversion, review, JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import re
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from itertools import cycle, islice
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
_FLATTENED_BREAK = re.compile(r" {2,}")


def real_tickets(data: Path) -> Iterator[dict[str, str]]:
    """Jira and GitLab dev tickets in turn, as JSON Lines records (key, title, body, format)."""
    csv.field_size_limit(sys.maxsize)
    sources = []
    for path in sorted((data / "jira-tickets-dev").glob("*.csv")):
        rows = list(csv.DictReader(path.open(newline="", encoding="utf-8")))
        sources.append([{"key": r["issuekey"], "title": r["title"], "format": "jira-wiki",
                         "body": "" if r["description"] == "NULL" else _FLATTENED_BREAK.sub("\n", r["description"])}
                        for r in rows])
    for path in sorted((data / "gitlab-tickets-dev").glob("*.csv")):
        rows = list(csv.DictReader(path.open(newline="", encoding="utf-8")))
        sources.append([{"key": f"{path.stem}#{r['issuekey']}", "title": r["title"], "body": r["description"],
                         "format": "markdown"} for r in rows])
    if not sources:
        raise SystemExit(f"no dev tickets under {data}")
    for index in range(max(map(len, sources))):
        for rows in sources:
            if index < len(rows):
                yield rows[index]


def backlog(data: Path, count: int) -> Iterator[dict[str, str]]:
    """`count` tickets, starting over (write_export renames the repeats) when the data has fewer."""
    return islice(cycle(list(real_tickets(data))), count)


def write_export(tickets: Iterator[dict[str, str]], path: Path, kind: str) -> None:
    seen: dict[str, int] = {}

    def unique(key: str) -> str:
        seen[key] = seen.get(key, 0) + 1
        return key if seen[key] == 1 else f"{key}-copy{seen[key]}"

    with path.open("w", encoding="utf-8", newline="") as out:
        if kind == "jsonl":
            for ticket in tickets:
                out.write(json.dumps({**ticket, "key": unique(ticket["key"])}) + "\n")
        elif kind == "jira-csv":
            writer = csv.writer(out)
            writer.writerow(["Summary", "Issue key", "Issue id", "Issue Type", "Labels", "Labels", "Description"])
            for number, ticket in enumerate(tickets, 1):
                writer.writerow([ticket["title"], unique(ticket["key"]), number, "", "", "", ticket["body"]])
        else:  # a GitLab API list; its descriptions are read as markdown, whatever they were written in
            out.write("[")
            for number, ticket in enumerate(tickets, 1):
                out.write(("," if number > 1 else "") + json.dumps(
                    {"iid": number, "title": ticket["title"], "description": ticket["body"], "labels": [],
                     "issue_type": "issue", "references": {"full": unique(ticket["key"])}}))
            out.write("]")


class MemoryWatch:
    """Resident memory now and then, from /proc, on a thread of its own."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._page = os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            with open("/proc/self/statm") as statm:
                self.samples.append((time.perf_counter(), int(statm.read().split()[1]) * self._page))

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def breakdown(data: Path, count: int) -> None:
    from reqgate.handlers.export import ExportRecord, to_packet
    from reqgate.pipeline.config_loader import load_default_config
    from reqgate.pipeline.review import review

    records = [ExportRecord(**ticket) for ticket in backlog(data, count)]
    config = load_default_config()
    started = time.process_time()
    packets = [to_packet(record) for record in records]
    converted = time.process_time()
    results = [review(packet, config, None) for packet in packets]
    reviewed = time.process_time()
    for result in results:
        result.model_dump_json()
    dumped = time.process_time()
    wiki = sum(record.format == "jira-wiki" for record in records)
    print(f"{count} tickets ({wiki} in wiki markup), CPU seconds: wiki conversion {converted - started:.1f}, "
          f"review {reviewed - converted:.1f} ({count / (reviewed - converted):.0f} tickets/s), "
          f"JSON {dumped - reviewed:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tickets", type=int, default=10_000)
    parser.add_argument("--format", choices=["jsonl", "jira-csv", "json"], default="jsonl")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--breakdown", type=int, metavar="N", help="time the stages over N tickets instead")
    args = parser.parse_args()
    if args.breakdown:
        breakdown(args.data, args.breakdown)
        return

    from reqgate.bot.cli import main as reqgate

    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        export = Path(tmp) / f"export.{'csv' if args.format == 'jira-csv' else args.format}"
        write_export(backlog(args.data, args.tickets), export, args.format)
        print(f"export: {args.tickets} tickets, {export.stat().st_size / 1e6:.1f} MB, {args.format}")
        argv = ["audit", str(export), "--offline", "--jsonl", str(Path(tmp) / "out.jsonl"),
                "--report", str(Path(tmp) / "report.html")]
        summary = io.StringIO()
        with MemoryWatch() as memory, contextlib.redirect_stdout(summary):
            wall, cpu = time.perf_counter(), time.process_time()
            code = reqgate(argv)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(summary.getvalue(), end="")
        lines = sum(1 for _ in (Path(tmp) / "out.jsonl").open(encoding="utf-8"))
    if code != 0 or lines != args.tickets:
        raise SystemExit(f"reqgate audit exited {code} with {lines} lines for {args.tickets} tickets")
    started = memory.samples[0][0] if memory.samples else 0.0
    early = [rss for at, rss in memory.samples if at - started <= wall / 10] or [0]
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"rate: {args.tickets / wall:.0f} tickets/s by the wall clock ({wall:.1f} s), "
          f"{args.tickets / cpu:.0f} tickets/s of CPU time ({cpu:.1f} s)")
    print(f"resident memory: {max(early) / 1e6:.0f} MB after the first tenth, "
          f"{max((rss for _, rss in memory.samples), default=0) / 1e6:.0f} MB at the end's peak sample, "
          f"{peak_rss / 1e6:.0f} MB peak")


if __name__ == "__main__":
    main()
