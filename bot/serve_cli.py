"""`reqgate serve` (the bot) and `reqgate replay` (post a signed payload to a running bot, like Probot's
`receive`). Registered on the `reqgate` command line by bot/cli.py.

The server's imports (DBOS, uvicorn, the trackers) happen inside `run_serve` so that `reqgate review` and
`reqgate replay` start without loading them.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import signal
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from reqgate.bot.settings import Settings, SettingsError

DEFAULT_REPLAY_URL = "http://127.0.0.1:8000/webhooks/github"
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_serve_parser(subparsers: Any) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the webhook server and the review workers",
        description="Settings come from REQGATE_* environment variables (see the README).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    serve.add_argument("--worker-child", action="store_true", help=argparse.SUPPRESS)
    serve.set_defaults(handler=run_serve)


def add_replay_parser(subparsers: Any) -> None:
    replay = subparsers.add_parser(
        "replay", help="sign a webhook payload and post it to a running server",
        description="Signs with REQGATE_GITHUB_WEBHOOK_SECRET (unsigned when it is not set) and prints the answer.",
    )
    replay.add_argument("payload", help="a JSON payload file, e.g. a delivery copied from the App's settings")
    replay.add_argument("--event", required=True, help="the X-GitHub-Event header, e.g. issues or issue_comment")
    replay.add_argument("--url", default=DEFAULT_REPLAY_URL, help=f"webhook URL (default {DEFAULT_REPLAY_URL})")
    replay.add_argument("--delivery", help="the X-GitHub-Delivery header (default: a new UUID)")
    replay.set_defaults(handler=run_replay)


def run_serve(args: argparse.Namespace) -> int:
    from reqgate.bot import worker_process

    ready_fd = worker_process.become_child() if args.worker_child else None
    try:
        settings = Settings()
        settings.check_serveable()
        if settings.workers_in_child:
            _share_metrics(settings.data_dir / "metrics")
        from reqgate.bot.wiring import build

        runtime = build(settings)
    except (SettingsError, ValidationError, ValueError) as exc:
        print(f"reqgate serve: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if ready_fd is not None:
        return _run_worker_child(runtime, ready_fd)
    return _run_web(runtime, args)


def _share_metrics(directory: Path) -> None:
    """Counts from the worker child and this process, added up at /metrics (bot/metrics.py). Set before
    prometheus-client is imported; a previous run's files are stale and go."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory.resolve())


def _run_worker_child(runtime: Any, ready_fd: int) -> int:
    from reqgate.bot import logging as bot_logging
    from reqgate.bot import worker_process

    bot_logging.configure(runtime.settings.log_level)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    runtime.start()
    worker_process.report_ready(ready_fd)
    stop.wait()
    runtime.close()
    return EXIT_OK


def _run_web(runtime: Any, args: argparse.Namespace) -> int:
    import uvicorn

    from reqgate.bot import logging as bot_logging

    settings = runtime.settings
    bot_logging.configure(settings.log_level)
    bot_logging.get_logger("reqgate").info(
        "serving", host=args.host, port=args.port, role=settings.role,
        webhooks=[source.name for source in runtime.sources], insecure=settings.dev_insecure,
    )
    uvicorn.run(runtime.app(), host=args.host, port=args.port, access_log=False, log_level="warning",
                lifespan="on", timeout_graceful_shutdown=10)
    return EXIT_OK


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def run_replay(args: argparse.Namespace) -> int:
    path = Path(args.payload)
    try:
        body = path.read_bytes()
        json.loads(body)
    except OSError as exc:
        print(f"reqgate replay: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError:
        print(f"reqgate replay: {path} is not JSON", file=sys.stderr)
        return EXIT_BAD_INPUT
    secret = Settings().github_webhook_secret
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "reqgate-replay",
        "X-GitHub-Event": args.event,
        "X-GitHub-Delivery": args.delivery or str(uuid.uuid4()),
    }
    if secret is not None:
        headers["X-Hub-Signature-256"] = sign(secret.get_secret_value(), body)
    else:
        print("reqgate replay: REQGATE_GITHUB_WEBHOOK_SECRET is not set; sending unsigned", file=sys.stderr)
    try:
        response = httpx.post(args.url, content=body, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        print(f"reqgate replay: {args.url}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{response.status_code} {response.reason_phrase} delivery={headers['X-GitHub-Delivery']}")
    if response.content:
        print(response.text)
    return EXIT_OK if response.status_code < 400 else EXIT_FAILED
