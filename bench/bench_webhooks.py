"""Webhook acknowledgement benchmark: `reqgate serve` against a bare Starlette endpoint, same run, same client.

    python bench/bench_webhooks.py [--deliveries 2000] [--concurrency 64] [--review disabled|full]

What is measured: the time from sending a signed `issues.opened` delivery to receiving the answer, over
loopback, with at most `--concurrency` requests in flight (one connection each). For `reqgate serve` that
is the whole web path (size cap, HMAC check, JSON parse, routing, the durable write into the inbox, the
INFO log line) while its worker process drains the queue. The bare endpoint answers 202 without reading
anything: it is the floor set by uvicorn, Starlette and this client. Both servers are subprocesses run the
same way; the client runs in a process of its own, apart from the fake GitHub and Anthropic servers that
the workers call, so that their work does not delay the client's clock. Delivery ids are UUIDs, as GitHub's.

`--review disabled` (default) sets `enabled: false` in the repository's config, so each workflow reads the
config and stops: the workers still compete with the web side for the database and the CPU, but no review
runs. `--review full` runs every review against the fake GitHub and the fake Anthropic (slower to drain).

Afterwards every accepted delivery must be exactly one workflow in the database, and every workflow must
finish; duplicates sent again must be answered 200 and add none. Targets: none lost, p99 < 100 ms, p50
within 3x the bare endpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.e2e_support import REPO, BotServer, free_port, issue_event, sign
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub

ISSUES = 200  # deliveries spread over this many tickets: partitions run in parallel, each one in order


def bare_app() -> object:
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def accept(_request: object) -> Response:
        return Response(status_code=202)

    return Starlette(routes=[Route("/webhooks/github", accept, methods=["POST"])])


def serve_bare(port: int) -> None:
    import uvicorn

    uvicorn.run(bare_app(), host="127.0.0.1", port=port, access_log=False, log_level="warning")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))
    return ordered[index]


def prepare(count: int, prefix: str) -> list[tuple[str, bytes]]:
    """Signed requests, encoded before the clock starts."""
    requests = []
    for n in range(count):
        body = json.dumps(issue_event("opened", 1 + n % ISSUES)).encode()
        delivery = str(uuid.uuid5(uuid.NAMESPACE_URL, f"reqgate-bench/{prefix}/{n}"))
        head = (f"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"X-GitHub-Event: issues\r\nX-GitHub-Delivery: {delivery}\r\nX-Hub-Signature-256: {sign(body)}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        requests.append((delivery, head.encode() + body))
    return requests


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> int:
    writer.write(raw)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    if length:
        await reader.readexactly(length)
    return int(lines[0].split(" ", 2)[1])


async def fire(port: int, requests: list[tuple[str, bytes]], concurrency: int
               ) -> tuple[list[float], dict[str, int]]:
    """Latency in ms of each request, and the status of each delivery.

    A minimal keep-alive HTTP/1.1 client on asyncio streams, one connection per slot: an HTTP library's own
    per-request cost would be measured too, and on a small machine it dominates the bare endpoint."""
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    pending = list(reversed(requests))

    async def connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while pending:
                delivery, raw = pending.pop()
                started = time.perf_counter()
                try:
                    statuses[delivery] = await _exchange(reader, writer, raw)
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    statuses[delivery] = 0
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                latencies.append((time.perf_counter() - started) * 1000)
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(concurrency)))
    return latencies, statuses


def fire_apart(port: int, requests: list[tuple[str, bytes]], concurrency: int
               ) -> tuple[list[float], dict[str, int], float]:
    """`fire` in a fresh process (this one serves the fake GitHub and Anthropic to the workers); also the
    seconds it took."""
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        pool.submit(time.sleep, 0).result()  # the child's start-up is not part of the measurement
        return pool.submit(_fire_sync, port, requests, concurrency).result()


def _fire_sync(port: int, requests: list[tuple[str, bytes]], concurrency: int
               ) -> tuple[list[float], dict[str, int], float]:
    started = time.perf_counter()
    latencies, statuses = asyncio.run(fire(port, requests, concurrency))
    return latencies, statuses, time.perf_counter() - started


def wait_ready(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.post(url, content=b"{}", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def run_bare(requests: list, warmup: list, concurrency: int) -> list[float]:
    port = free_port()
    process = subprocess.Popen([sys.executable, __file__, "--serve-bare", str(port)], cwd=REPO_ROOT)
    try:
        wait_ready(f"http://127.0.0.1:{port}/webhooks/github")
        fire_apart(port, warmup, concurrency)
        latencies, statuses, _ = fire_apart(port, requests, concurrency)
        assert set(statuses.values()) == {202}, statuses
        return latencies
    finally:
        process.terminate()
        process.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deliveries", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--review", choices=["disabled", "full"], default="disabled")
    parser.add_argument("--topology", choices=["single", "split"], default="single",
                        help="single: one `reqgate serve` (role all); split: a web process (role web) and a "
                             "worker process (role worker) on the same database, as in Kubernetes")
    parser.add_argument("--drain-timeout", type=float, default=600)
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.serve_bare)
        return 0

    warmup_count = min(100, args.deliveries)
    print(f"{args.deliveries} signed deliveries, {args.concurrency} concurrent connections, review {args.review}, "
          f"topology {args.topology}, "
          f"{ISSUES} tickets, loopback; {warmup_count} warm-up requests first (not measured)")
    bare = run_bare(prepare(args.deliveries, "bare"), prepare(warmup_count, "bare-warm"), args.concurrency)

    with FakeGitHub() as github, FakeAnthropic() as anthropic, tempfile.TemporaryDirectory() as data:
        github.add_repo(REPO)
        for number in range(1, ISSUES + 1):
            github.add_issue(REPO, title=f"Export tasks, part {number}", body="As an admin I want an export "
                             "so that I can report. Acceptance: one row per task.", author="Codertocat",
                             number=number)
        if args.review == "disabled":
            github.add_file(REPO, ".github/reqgate.yml", "enabled: false\n")
        env = {"REQGATE_GITHUB_TOKEN": github.token, "REQGATE_GITHUB_API_URL": github.url,
               "REQGATE_QUEUE_POLL_S": "1.0", **anthropic.env()}
        worker = None
        if args.topology == "split":
            env["REQGATE_ROLE"] = "web"
            worker = BotServer(Path(data), {**env, "REQGATE_ROLE": "worker"}, log_path=Path(data) / "worker.log")
        server = BotServer(Path(data), env)
        server.start()
        if worker is not None:
            worker.start()
        try:
            warmup = prepare(warmup_count, "warm")
            fire_apart(server.port, warmup, args.concurrency)
            requests = prepare(args.deliveries, "bench")
            latencies, statuses, elapsed = fire_apart(server.port, requests, args.concurrency)
            _, duplicates, _ = fire_apart(server.port, requests[:100], args.concurrency)

            accepted = {d for d, status in statuses.items() if status == 202}
            drain_started = time.monotonic()
            expected = accepted | {d for d, _ in warmup}
            while True:
                workflows = server.workflows()
                done = sum(1 for d in expected if workflows.get(f"gh:{d}") in ("SUCCESS", "ERROR"))
                if done == len(expected) or time.monotonic() - drain_started > args.drain_timeout:
                    break
                time.sleep(0.5)
            drain = time.monotonic() - drain_started
            sent = {f"gh:{d}" for d, _ in requests}
            bench_workflows = {wid: status for wid, status in workflows.items() if wid in sent}
        finally:
            server.stop()
            if worker is not None:
                worker.stop()

    p50_bare, p99_bare = percentile(bare, 50), percentile(bare, 99)
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    lost = len(requests) - len(accepted)
    extra = set(bench_workflows) - {f"gh:{d}" for d in accepted}
    missing = {f"gh:{d}" for d in accepted} - set(bench_workflows)
    unfinished = [wid for wid, status in bench_workflows.items() if status != "SUCCESS"]
    print()
    print(f"bare Starlette   p50 {p50_bare:7.2f} ms   p99 {p99_bare:7.2f} ms   mean {statistics.mean(bare):7.2f} ms")
    print(f"reqgate serve    p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   mean {statistics.mean(latencies):7.2f} ms"
          f"   ({len(requests) / elapsed:.0f} deliveries/s)")
    print(f"ratio            p50 {p50 / p50_bare:5.2f}x      p99 {p99 / p99_bare:5.2f}x")
    print(f"answers          {sorted(set(statuses.values()))}; 202: {len(accepted)}; not accepted: {lost}")
    print(f"duplicates       100 resent -> {sorted(set(duplicates.values()))}")
    print(f"workflows        {len(bench_workflows)} for {len(accepted)} accepted deliveries; missing {len(missing)}, "
          f"extra {len(extra)}, unfinished {len(unfinished)}; queue drained in {drain:.1f} s")
    checks = {
        "none lost (every delivery accepted, exactly one workflow each, all finished)":
            lost == 0 and not missing and not extra and not unfinished,
        "duplicates answered 200": set(duplicates.values()) == {200},
        "p99 < 100 ms": p99 < 100,
        "p50 within 3x bare": p50 <= 3 * p50_bare,
    }
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
