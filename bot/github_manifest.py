"""`reqgate github manifest`: the GitHub App manifest (deploy/app.yml) for a given public address, as the JSON
that GitHub's manifest flow takes.

GitHub registers an App from a manifest posted as the `manifest` field of a form to
https://github.com/settings/apps/new (or /organizations/ORG/settings/apps/new); after the confirmation it
redirects to `redirect_url` with a code whose conversion (POST /app-manifests/CODE/conversions) returns the
App id, its private key and the webhook secret. `--form` prints a page that does the posting.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from typing import Any
from urllib.parse import urlsplit

# What the bot needs, and nothing more: it reads issues and comments, writes a label and one comment, and
# reads `.github/reqgate.yml` (contents) from the repository or the organisation's `.github` repository.
EVENTS = ["issues", "issue_comment"]
PERMISSIONS = {"issues": "write", "contents": "read", "metadata": "read"}
DESCRIPTION = "Reviews new issues as requirements and answers with a verdict, a score and a PRD draft."


def manifest(base_url: str, name: str = "ReqGate", public: bool = False) -> dict[str, Any]:
    base = base_url.rstrip("/")
    return {
        "name": name,
        "url": "https://github.com/apps/reqgate",
        "description": DESCRIPTION,
        "hook_attributes": {"url": f"{base}/webhooks/github", "active": True},
        "redirect_url": f"{base}/",
        "public": public,
        "default_events": list(EVENTS),
        "default_permissions": dict(PERMISSIONS),
    }


def form(manifest_json: str, organization: str | None) -> str:
    target = (f"https://github.com/organizations/{organization}/settings/apps/new" if organization
              else "https://github.com/settings/apps/new")
    return (
        "<!doctype html>\n<meta charset=\"utf-8\"><title>Register ReqGate</title>\n"
        f"<form action=\"{html.escape(target)}\" method=\"post\">\n"
        f"  <input type=\"hidden\" name=\"manifest\" value=\"{html.escape(manifest_json)}\">\n"
        "  <button type=\"submit\">Register the ReqGate GitHub App</button>\n</form>\n"
    )


def add_manifest_parser(commands: Any) -> None:
    make = commands.add_parser(
        "manifest", help="print the GitHub App manifest as the JSON GitHub's manifest flow takes",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    make.add_argument("--url", required=True, help="the server's public address, e.g. https://reqgate.example.com")
    make.add_argument("--name", default="ReqGate", help="the App's name (unique on GitHub)")
    make.add_argument("--public", action="store_true", help="let other accounts install it")
    make.add_argument("--form", action="store_true", help="print an HTML page that posts the manifest to GitHub")
    make.add_argument("--org", help="with --form: register the App under this organisation")
    make.set_defaults(handler=run_manifest)


def run_manifest(args: argparse.Namespace) -> int:
    parts = urlsplit(args.url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        print(f"reqgate github manifest: --url must be an http(s) address, not {args.url!r}", file=sys.stderr)
        return 2
    text = json.dumps(manifest(args.url, args.name, args.public), indent=2)
    print(form(text, args.org) if args.form else text)
    return 0
