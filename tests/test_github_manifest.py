"""`reqgate github manifest` prints what deploy/app.yml says, for any server address, as GitHub's manifest flow
takes it (JSON in the `manifest` field of a form)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import yaml

from reqgate.bot.cli import main

APP_YML = Path(__file__).resolve().parents[1] / "deploy" / "app.yml"


def test_app_yml_is_the_manifest_for_the_example_host(capsys) -> None:
    assert main(["github", "manifest", "--url", "https://reqgate.example.com/"]) == 0
    assert json.loads(capsys.readouterr().out) == yaml.safe_load(APP_YML.read_text(encoding="utf-8"))


def test_the_form_posts_the_manifest_to_the_organisation(capsys) -> None:
    assert main(["github", "manifest", "--url", "https://bot.acme.io", "--form", "--org", "acme"]) == 0
    page = capsys.readouterr().out
    assert 'action="https://github.com/organizations/acme/settings/apps/new"' in page
    (value,) = re.findall(r'name="manifest" value="([^"]*)"', page)
    manifest = json.loads(html.unescape(value))
    assert manifest["hook_attributes"]["url"] == "https://bot.acme.io/webhooks/github"
    assert manifest["default_events"] == ["issues", "issue_comment"]


def test_a_url_without_scheme_is_refused(capsys) -> None:
    assert main(["github", "manifest", "--url", "reqgate.example.com"]) == 2
    assert "--url must be an http(s) address" in capsys.readouterr().err
