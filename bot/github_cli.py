"""`reqgate github …`: the App's set-up (manifest) and maintenance (redeliver) under one command."""

from __future__ import annotations

from typing import Any

from reqgate.bot.github_manifest import add_manifest_parser
from reqgate.bot.redeliver import add_redeliver_parser


def add_github_parser(subparsers: Any) -> None:
    github = subparsers.add_parser("github", help="GitHub App set-up and maintenance")
    actions = github.add_subparsers(dest="github_command", required=True)
    add_manifest_parser(actions)
    add_redeliver_parser(actions)
