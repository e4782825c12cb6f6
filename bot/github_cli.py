"""`reqgate github …`: the App's set-up (manifest) and maintenance (redeliver) under one command.

The redelivery code (DBOS, the logs, the guardrail's scrubber) loads only when `redeliver` runs, so that
`reqgate --help` stays fast."""

from __future__ import annotations

import argparse
from typing import Any

from reqgate.bot.github_manifest import add_manifest_parser


def _run_redeliver(args: argparse.Namespace) -> int:
    from reqgate.bot.redeliver import run_redeliver

    return run_redeliver(args)


def add_github_parser(subparsers: Any) -> None:
    github = subparsers.add_parser("github", help="GitHub App set-up and maintenance")
    actions = github.add_subparsers(dest="github_command", required=True)
    add_manifest_parser(actions)
    redeliver = actions.add_parser(
        "redeliver", help="ask GitHub to send again the App's webhook deliveries that did not reach ReqGate",
        description="GitHub App mode (REQGATE_GITHUB_APP_ID and its private key) and REQGATE_DATABASE_URL "
                    "or REQGATE_DATA_DIR as the server uses them. Deliveries already accepted are skipped.",
    )
    redeliver.add_argument("--since", default="24h", help="how far back to look, e.g. 30m, 24h, 3d (default 24h)")
    redeliver.set_defaults(handler=_run_redeliver)
