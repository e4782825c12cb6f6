"""Real backlogs nobody here wrote: over a thousand requirement lines, none of which may be redacted or
read as an injection (what a false positive costs: a needs-info verdict on a clean ticket)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.guardrail import screen
from reqgate.pipeline.schemas import RequirementPacket

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
CONFIG = load_default_config()

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252")


def _backlog_lines() -> list[str]:
    lines = []
    for path in sorted((DATA / "dalpiaz-user-stories").glob("*.txt")):
        lines += [line for line in _decode(path.read_bytes()).splitlines() if line.strip()]
    with (DATA / "ustai-qus-annotated" / "UStAI-annotated.csv").open(encoding="utf-8", errors="replace") as f:
        lines += [row["User story"] for row in csv.DictReader(f) if row.get("User story")]
    return lines


def test_real_user_stories_are_left_alone():
    lines = _backlog_lines()
    assert len(lines) > 1400
    flagged = []
    for line in lines:
        report = screen(RequirementPacket(title="", body=line), CONFIG)
        if report.redaction_count or report.injection_detected:
            flagged.append(line)
    assert flagged == []


def test_whole_backlogs_as_one_ticket_are_left_alone():
    for path in sorted((DATA / "dalpiaz-user-stories").glob("*.txt")):
        body = _decode(path.read_bytes())
        report = screen(RequirementPacket(title=path.stem, body=body), CONFIG)
        assert report.redaction_count == 0 and not report.injection_detected, path.name


def test_tracker_payload_tickets_are_left_alone():
    github = json.loads((DATA / "github-payloads" / "issues.opened.json").read_text(encoding="utf-8"))["issue"]
    jira = json.loads(
        (DATA / "jira-payloads" / "mattermost-webhook-cloud-issue-created-many-fields.json").read_text(encoding="utf-8")
    )["issue"]["fields"]
    for title, body in [(github["title"], github["body"] or ""), (jira["summary"], jira.get("description") or "")]:
        report = screen(RequirementPacket(title=title, body=body), CONFIG)
        assert report.redacted.title == title and report.redacted.body == body
