"""Missed GitHub deliveries asked for again (App mode): by the periodic job in a worker and by
`reqgate github redeliver --since 24h`. Dedupe makes both idempotent."""

from __future__ import annotations

import pytest
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta

from tests.e2e_support import REPO, REPO_ROOT, SECRET, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub, generate_app_key
from tests.postgres.pg_support import PgCluster
from tests.test_e2e_github import GOOD_BODY

pytestmark = pytest.mark.postgres

APP_ID = 4242
INSTALLATION = 777


def _app(github: FakeGitHub) -> dict[str, str]:
    private, public = generate_app_key()
    github.add_app(APP_ID, "reqgate", public)
    github.add_installation(INSTALLATION, APP_ID, REPO.split("/")[0])
    return {"REQGATE_GITHUB_APP_ID": str(APP_ID), "REQGATE_GITHUB_PRIVATE_KEY": private,
            "REQGATE_GITHUB_TOKEN": ""}


def _event(number: int) -> dict:  # type: ignore[type-arg]
    event = issue_event("opened", number)
    event["installation"] = {"id": INSTALLATION}
    return event


def _seed(github: FakeGitHub) -> dict[str, str]:
    """Three deliveries that never reached ReqGate, one it answered, one too old to look at."""
    guids = {name: str(uuid.uuid4()) for name in ("down", "timeout", "retried_and_failed", "ok", "old")}
    github.add_delivery(guids["down"], "issues", _event(1), 502)
    github.add_delivery(guids["timeout"], "issues", _event(2), 0)
    github.add_delivery(guids["retried_and_failed"], "issues", _event(3), 503)
    github.add_delivery(guids["retried_and_failed"], "issues", _event(3), 0, redelivery=True)
    github.add_delivery(guids["ok"], "issues", _event(4), 202)
    github.add_delivery(guids["old"], "issues", _event(5), 502, delivered_at=datetime.now(UTC) - timedelta(days=2))
    return guids


def _wait_for(cluster: PgCluster, ids: list[str], timeout: float) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = cluster.workflows()
        if all(i in found for i in ids):
            return found
        time.sleep(0.3)
    raise AssertionError(f"never accepted: {[i for i in ids if i not in cluster.workflows()]}")


def test_the_periodic_job_redelivers_what_never_arrived(
    cluster: PgCluster, github: FakeGitHub, fake_anthropic: FakeAnthropic
) -> None:
    for number in range(1, 6):
        github.add_issue(REPO, title=f"Export {number}", body=GOOD_BODY, author="Codertocat", number=number)
    app = _app(github)
    guids = _seed(github)
    web = cluster.server("web-1", role="web", **app)
    web.launch().wait_ready()
    github.set_app_hook(f"{web.url}/webhooks/github", SECRET)
    cluster.server("worker-1", role="worker", REQGATE_REDELIVER_INTERVAL_S="2", **app).start()
    missed = [f"gh:{guids[n]}" for n in ("down", "timeout", "retried_and_failed")]
    found = _wait_for(cluster, missed, timeout=60)
    assert f"gh:{guids['ok']}" not in found and f"gh:{guids['old']}" not in found
    cluster.wait_all_done(missed, timeout=120)
    time.sleep(5)  # a few more turns of the job: nothing is sent twice
    sent = github.requests_to("POST", r"/app/hook/deliveries/\d+/attempts")
    assert len(sent) == 3


def test_the_command_redelivers_on_demand(cluster: PgCluster, github: FakeGitHub,
                                         fake_anthropic: FakeAnthropic) -> None:
    for number in range(1, 6):
        github.add_issue(REPO, title=f"Export {number}", body=GOOD_BODY, author="Codertocat", number=number)
    app = _app(github)
    guids = _seed(github)
    web = cluster.server("web-1", role="web", **app)
    web.launch().wait_ready()
    github.set_app_hook(f"{web.url}/webhooks/github", SECRET)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REQGATE_")}
    env.update({"REQGATE_DATABASE_URL": cluster.url, "REQGATE_GITHUB_API_URL": github.url, **app})
    command = [sys.executable, "-m", "reqgate.bot.cli", "github", "redeliver", "--since", "24h"]
    first = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "3 redelivered" in first.stdout
    _wait_for(cluster, [f"gh:{guids[n]}" for n in ("down", "timeout", "retried_and_failed")], timeout=60)
    time.sleep(1)
    again = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "0 redelivered" in again.stdout, again.stdout + again.stderr
