"""Review throughput: N fresh reviews through `reqgate serve`, against the ideal the LLM allows.

    .ci/postgres.sh --serve &            # prints a URL; or any PostgreSQL whose user may create databases
    REQGATE_TEST_PG_URL=postgresql://... python bench/bench_throughput.py [--reviews 384] [--llm-s 1.0]

A review makes two LLM calls; the fake Anthropic answers each after `--llm-s` seconds, so a worker running
`--concurrency` LLM requests at once can finish at most concurrency / (2 x llm-s) reviews a second: the ideal.
Measured for one worker and two workers on PostgreSQL (one web process in front, as deployed) and for one
process on SQLite (role `all`, its worker in a child), each on a fresh database, in the same run.

Everything else is as shipped: write pacing at GitHub's default (1 s between writes per installation,
across all workers) and the default queue poll interval. Tickets are spread over one repository per App
installation, as an App serving many organisations sees them: with a single installation GitHub's pacing,
not the LLM, is the limit (about 2 writes a review: 0.5 reviews/s whatever the number of workers). The
repositories already carry ReqGate's labels, as after their first review. Deliveries are sent one after the
other: sent 8 at a time from this process, they slow the fake trackers it also runs (one interpreter lock),
and the first LLM request came 2.6-3.8 s after the first delivery instead of 0.3-0.5 s.

The clock runs from the first delivery sent to the last review published (the workflows' own times), so a
run also pays for filling the pipeline (the first review's way to its first LLM request) and draining it (the
last reviews' second call and comment, with fewer requests left than slots): about 3 s together, a quarter of
a 96-review run on two workers (12 s ideal), hence 384 by default. The second line of each configuration says
where the time went: how busy the LLM slots were over the whole run and over its middle 80% (the steady
state), the time to the first LLM request and from the last answer to the last comment.
Target: at least 85% of the ideal in each configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import sqlalchemy as sa

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.e2e_support import BotServer, issue_event  # noqa: E402
from tests.fakes.fake_anthropic import FakeAnthropic, Reply  # noqa: E402
from tests.fakes.fake_github import FakeGitHub, generate_app_key  # noqa: E402
from tests.postgres.pg_support import PgServer, database_url  # noqa: E402
from tests.test_e2e_github import GOOD_BODY  # noqa: E402

APP_ID = 4242


def seed(github: FakeGitHub, reviews: int, installations: int) -> tuple[str, list[dict]]:  # type: ignore[type-arg]
    """The App, its installations (one repository each) and one fresh issue per review."""
    private, public = generate_app_key()
    github.add_app(APP_ID, "reqgate", public)
    events = []
    for n in range(reviews):
        org = f"org{n % installations}"
        repo = f"{org}/widgets"
        if repo.casefold() not in github.repos:
            github.add_repo(repo)
            github.add_installation(10_000 + n % installations, APP_ID, org)
            # Steady state: a repository reviewed before already has ReqGate's labels.
            for label in ("reqgate:ready", "reqgate:needs-info", "reqgate:error"):
                github.add_label(repo, label)
        number = n // installations + 1
        github.add_issue(repo, title=f"Export workspace tasks {n}", body=GOOD_BODY, author="Codertocat",
                         number=number)
        event = issue_event("opened", number)
        event["repository"]["full_name"] = repo
        event["repository"]["name"] = "widgets"
        event["repository"]["owner"]["login"] = org
        event["installation"] = {"id": 10_000 + n % installations}
        events.append(event)
    return private, events


def run(label: str, reviews: int, concurrency: int, llm_s: float, workers: int, pg_url: str | None,
        installations: int) -> dict[str, float]:
    with FakeGitHub() as github, FakeAnthropic() as anthropic, tempfile.TemporaryDirectory() as tmp:
        private, events = seed(github, reviews, installations)
        anthropic.script(*[Reply.slow(llm_s) for _ in range(2 * reviews)])
        env = {"REQGATE_GITHUB_APP_ID": str(APP_ID), "REQGATE_GITHUB_PRIVATE_KEY": private,
               "REQGATE_GITHUB_API_URL": github.url, "REQGATE_WORKER_CONCURRENCY": str(concurrency),
               "REQGATE_LOG_LEVEL": "WARNING", **anthropic.env()}
        # BotServer's test defaults (no pacing, a fast poll) are not what ships: back to the defaults.
        for name in ("REQGATE_WRITE_SPACING_S", "REQGATE_QUEUE_POLL_S"):
            env[name] = ""
        servers: list[BotServer] = []
        admin = None
        name = f"reqgate_bench_{uuid.uuid4().hex[:8]}"
        try:
            if pg_url is None:
                front = BotServer(Path(tmp), env)
                servers.append(front)
                front.start(timeout=180)
            else:
                url = database_url(pg_url, name)
                front = PgServer(url, Path(tmp) / "web", {**env, "REQGATE_ROLE": "web",
                                                          "REQGATE_EXECUTOR_ID": "web-1"}, "web")
                servers.append(front.launch())
                for i in range(workers):
                    worker = PgServer(url, Path(tmp) / f"worker-{i}", {
                        **env, "REQGATE_ROLE": "worker", "REQGATE_EXECUTOR_ID": f"worker-{i}"}, f"worker-{i}")
                    servers.append(worker.launch())
                for server in servers:
                    assert isinstance(server, PgServer)
                    server.wait_ready()
            started = time.time()
            ids = []
            for event in events:
                delivery = str(uuid.uuid4())
                answer = front.deliver("issues", event, delivery=delivery)
                assert answer.status_code == 202, answer.text
                ids.append(f"gh:{delivery}")
            finished = wait_done(front, ids, timeout=60 + 10 * reviews * 2 * llm_s / (concurrency * workers))
            elapsed = finished - started
            where = breakdown(front, ids)
        finally:
            for server in servers:
                server.stop()
            if pg_url is not None:
                admin = sa.create_engine(sa.make_url(pg_url).set(drivername="postgresql+psycopg"),
                                         isolation_level="AUTOCOMMIT")
                with admin.connect() as conn:
                    conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                admin.dispose()
        published = sum(1 for repo in github.repos.values() for issue in repo.issues.values()
                        if issue.comment_ids)
        busy = list(anthropic.busy)
    rate = reviews / elapsed
    ideal = concurrency * workers / (2 * llm_s)
    print(f"{label:<22} {reviews:>4} reviews  {elapsed:6.1f} s  {rate:5.2f} reviews/s  ideal {ideal:5.2f}  "
          f"{100 * rate / ideal:5.1f}%  (comments: {published})", flush=True)
    print("    " + slot_use(busy, concurrency * workers, started, finished), flush=True)
    print("    mean s per review: " + ", ".join(f"{k} {v:.2f}" for k, v in where.items()), flush=True)
    return {"rate": rate, "ideal": ideal}


def slot_use(busy: list[tuple[float, float]], slots: int, started: float, finished: float) -> str:
    """How busy the LLM slots were, from the fake's (received, answered) times of every request."""
    if not busy:
        return "LLM slots busy: no LLM request was made"
    first, last = min(b[0] for b in busy), max(b[1] for b in busy)

    def share(lo: float, hi: float) -> float:
        return sum(max(0.0, min(end, hi) - max(begin, lo)) for begin, end in busy) / (slots * (hi - lo))

    margin = (last - first) / 10
    return (f"LLM slots busy: {100 * share(started, finished):.1f}% of the run, "
            f"{100 * share(first + margin, last - margin):.1f}% of its middle 80%; first LLM request "
            f"{first - started:.1f} s after the first delivery, last comment {finished - last:.1f} s after the "
            "last answer")


def breakdown(front: BotServer, ids: list[str]) -> dict[str, float]:
    """Where a review's time goes: queued (accepted to dequeued), each step, and the rest."""
    client = front.dbos()
    totals: dict[str, float] = {}
    sample = ids[len(ids) // 4: len(ids) // 4 + 16]
    for wid in sample:
        status = client.list_workflows(workflow_ids=[wid], load_input=False, load_output=False)[0]
        totals["queued"] = totals.get("queued", 0.0) + ((status.dequeued_at or status.created_at or 0)
                                                          - (status.created_at or 0)) / 1000
        for step in client.list_workflow_steps(wid):
            took = ((step["completed_at_epoch_ms"] or 0) - (step["started_at_epoch_ms"] or 0)) / 1000
            totals[step["function_name"]] = totals.get(step["function_name"], 0.0) + took
        totals["total"] = totals.get("total", 0.0) + ((status.updated_at or 0) - (status.created_at or 0)) / 1000
    return {k: v / len(sample) for k, v in totals.items() if v / len(sample) >= 0.01}


def wait_done(front: BotServer, ids: list[str], timeout: float) -> float:
    """The time the last workflow finished (its own clock), once all have."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = front.dbos().list_workflows(workflow_ids=ids, load_input=False, load_output=False)
        statuses = {status.workflow_id: status for status in listed}
        if len(statuses) == len(ids) and all(s.status in ("SUCCESS", "ERROR") for s in statuses.values()):
            errors = [w for w, s in statuses.items() if s.status == "ERROR"]
            assert not errors, f"workflows in ERROR: {errors[:5]}"
            return max(s.updated_at or 0 for s in statuses.values()) / 1000
        time.sleep(0.2)
    raise AssertionError(f"not all reviews done after {timeout:.0f}s:\n{front.logs()[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, default=384)
    parser.add_argument("--concurrency", type=int, default=8, help="REQGATE_WORKER_CONCURRENCY (default 8)")
    parser.add_argument("--llm-s", type=float, default=1.0, help="seconds per fake LLM call (default 1.0)")
    parser.add_argument("--installations", type=int, default=24,
                        help="App installations the tickets are spread over (default 24)")
    parser.add_argument("--pg-url", default=os.environ.get("REQGATE_TEST_PG_URL"),
                        help="a PostgreSQL server URL whose user may create databases (default $REQGATE_TEST_PG_URL)")
    parser.add_argument("--only", choices=["pg1", "pg2", "sqlite"], action="append")
    args = parser.parse_args()
    wanted = args.only or ["pg1", "pg2", "sqlite"]
    if any(w.startswith("pg") for w in wanted) and not args.pg_url:
        parser.error("PostgreSQL runs need --pg-url or REQGATE_TEST_PG_URL (.ci/postgres.sh --serve prints one)")
    results = {}
    for config in wanted:
        workers = 2 if config == "pg2" else 1
        label = {"pg1": "postgres, 1 worker", "pg2": "postgres, 2 workers", "sqlite": "sqlite, 1 worker"}[config]
        results[config] = run(label, args.reviews, args.concurrency, args.llm_s, workers,
                              None if config == "sqlite" else args.pg_url, args.installations)
    below = [c for c, r in results.items() if r["rate"] < 0.85 * r["ideal"]]
    print("target >= 85% of ideal:", "met" if not below else f"missed by {', '.join(below)}")
    return 0 if not below else 1


if __name__ == "__main__":
    sys.exit(main())
