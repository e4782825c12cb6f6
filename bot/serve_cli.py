"""`reqgate serve` (the bot) and `reqgate replay` (post a signed payload to a running bot, like Probot's
`receive`). Registered on the `reqgate` command line by bot/cli.py.

The server's imports (DBOS, uvicorn, the trackers, settings, httpx) happen inside the command that needs them
so that `reqgate --help` and `reqgate review` start without loading them.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import hmac
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket


DEFAULT_REPLAY_URL = "http://127.0.0.1:8000/webhooks/github"
SOURCES = ("github", "jira")
LISTEN_BACKLOG = 2048  # uvicorn's default
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
        description="GitHub payloads are signed with REQGATE_GITHUB_WEBHOOK_SECRET; Jira payloads with "
                    "REQGATE_JIRA_WEBHOOK_SECRET, or sent with REQGATE_JIRA_AUTOMATION_TOKEN as X-ReqGate-Token. "
                    "Unsigned when neither is set. Prints the server's answer.",
    )
    replay.add_argument("payload", help="a JSON payload file, e.g. examples/github-issues-opened.json")
    replay.add_argument("--source", choices=SOURCES,
                        help="which tracker sent it (default: jira if the payload has webhookEvent, else github)")
    replay.add_argument("--event", help="GitHub only: the X-GitHub-Event header, e.g. issues or issue_comment")
    replay.add_argument("--url", help=f"webhook URL (default {DEFAULT_REPLAY_URL} or .../webhooks/jira)")
    replay.add_argument("--delivery", help="the delivery id header (default: a new UUID)")
    replay.set_defaults(handler=run_replay)


def run_serve(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from reqgate.bot import worker_process
    from reqgate.bot.settings import Settings, SettingsError

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
    import signal
    import threading

    from reqgate.bot import logging as bot_logging
    from reqgate.bot import worker_process

    bot_logging.configure(runtime.settings.log_level)
    bot_logging.route_library_logs(runtime.settings.log_level)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    runtime.start()
    worker_process.report_ready(ready_fd)
    stop.wait()
    runtime.close()
    return EXIT_OK


def _listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening before anything says it serves: from the `serving` line on,
    connections queue until uvicorn takes them. Raises OSError (e.g. EADDRINUSE)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def _run_web(runtime: Any, args: argparse.Namespace) -> int:
    import uvicorn

    from reqgate.bot import logging as bot_logging

    settings = runtime.settings
    bot_logging.configure(settings.log_level)
    bot_logging.route_library_logs(settings.log_level)
    log = bot_logging.get_logger("reqgate")
    try:
        sock = _listen(args.host, args.port)
    except OSError as exc:
        reason = (f"address already in use: another process listens on {args.host}:{args.port}; stop it or "
                  "choose another port with --port") if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        log.error("cannot_listen", host=args.host, port=args.port, reason=reason)
        return EXIT_FAILED
    log.info("serving", host=args.host, port=args.port, role=settings.role,
             webhooks=[source.name for source in runtime.sources], insecure=settings.dev_insecure)
    config = uvicorn.Config(runtime.app(), access_log=False, log_level="warning", log_config=None,
                            lifespan="on", timeout_graceful_shutdown=10)
    uvicorn.Server(config).run(sockets=[sock])
    return EXIT_OK


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _secret(value: Any) -> str | None:
    return None if value is None else value.get_secret_value()


def replay_headers(source: str, event: str | None, delivery: str, body: bytes, settings: Any) -> dict[str, str]:
    """The headers the tracker itself would send, authenticated the way the server checks them."""
    headers = {"Content-Type": "application/json", "User-Agent": "reqgate-replay"}
    if source == "github":
        headers.update({"X-GitHub-Event": event or "", "X-GitHub-Delivery": delivery})
        secret = _secret(settings.github_webhook_secret)
        if secret is not None:
            headers["X-Hub-Signature-256"] = sign(secret, body)
        return headers
    headers["X-Atlassian-Webhook-Identifier"] = delivery
    secret, token = _secret(settings.jira_webhook_secret), _secret(settings.jira_automation_token)
    if secret is not None:
        headers["X-Hub-Signature"] = sign(secret, body)  # Jira's admin webhooks: no "-256" in the name
    elif token is not None:
        headers["X-ReqGate-Token"] = token
    return headers


def run_replay(args: argparse.Namespace) -> int:
    import uuid

    import httpx

    from reqgate.bot.settings import Settings

    path = Path(args.payload)
    try:
        body = path.read_bytes()
        payload = json.loads(body)
    except OSError as exc:
        print(f"reqgate replay: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError:
        print(f"reqgate replay: {path} is not JSON", file=sys.stderr)
        return EXIT_BAD_INPUT
    source = args.source or ("jira" if isinstance(payload, dict) and "webhookEvent" in payload else "github")
    if source == "github" and not args.event:
        print("reqgate replay: a GitHub payload needs --event (the X-GitHub-Event header, e.g. issues)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    url = args.url or DEFAULT_REPLAY_URL.replace("/github", f"/{source}")
    headers = replay_headers(source, args.event, args.delivery or str(uuid.uuid4()), body, Settings())
    if not ({"X-Hub-Signature-256", "X-Hub-Signature", "X-ReqGate-Token"} & headers.keys()):
        needed = ("REQGATE_GITHUB_WEBHOOK_SECRET" if source == "github"
                  else "REQGATE_JIRA_WEBHOOK_SECRET nor REQGATE_JIRA_AUTOMATION_TOKEN")
        print(f"reqgate replay: {needed} is not set; sending unsigned", file=sys.stderr)
    try:
        response = httpx.post(url, content=body, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        print(f"reqgate replay: {url}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    delivery = headers.get("X-GitHub-Delivery") or headers["X-Atlassian-Webhook-Identifier"]
    print(f"{response.status_code} {response.reason_phrase} delivery={delivery}")
    if response.content:
        print(response.text)
    return EXIT_OK if response.status_code < 400 else EXIT_FAILED
