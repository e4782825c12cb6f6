"""A tracker outage heals itself: reviews that hit 60 s of failing GitHub writes are retried by their
workflow after durable pauses and end with their review, none with `reqgate:error`."""

from __future__ import annotations

import pytest
import time

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import REPO, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub
from tests.postgres.pg_support import PgCluster
from tests.test_e2e_github import GOOD_BODY

pytestmark = pytest.mark.postgres

OUTAGE_S = 60.0


def test_a_sixty_second_write_outage_heals(cluster: PgCluster, github: FakeGitHub,
                                           fake_anthropic: FakeAnthropic) -> None:
    for number in range(1, 5):
        github.add_issue(REPO, title=f"Export workspace tasks {number}", body=GOOD_BODY, author="Codertocat",
                         number=number)
    bot = cluster.server("all-1", role="all", REQGATE_OUTAGE_RETRY_FIRST_S="5", REQGATE_OUTAGE_RETRY_MAX_S="20",
                         REQGATE_OUTAGE_HORIZON_S="300").start()
    for method in ("POST", "PATCH", "DELETE", "PUT"):
        github.fail(method, ".*", 503, message="Service Unavailable", times=1_000_000)
    outage_ends = time.monotonic() + OUTAGE_S
    ids = []
    for number in range(1, 5):
        assert bot.deliver("issues", issue_event("opened", number), delivery=f"outage-{number}").status_code == 202
        ids.append(f"gh:outage-{number}")
    time.sleep(max(0.0, outage_ends - time.monotonic()))
    assert all(status.status == "PENDING" for wid, status in cluster.workflows().items() if wid in ids)
    github.clear_failures()

    done = cluster.wait_all_done(ids, timeout=180)
    assert {done[w].status for w in ids} == {"SUCCESS"}
    for wid in ids:
        assert bot.dbos().retrieve_workflow(wid).get_result()["status"] == "published"
    for number in range(1, 5):
        (comment,) = github.comments(REPO, number)
        assert is_sticky(comment.body) and "Error" not in comment.body.splitlines()[1]
        assert "reqgate:error" not in github.issue(REPO, number).labels
    assert "delivery_retry_scheduled" in bot.logs()
