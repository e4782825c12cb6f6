"""ReqGate on PostgreSQL as it is deployed: one process (role `all`), and web replicas apart from workers."""

from __future__ import annotations

import pytest
import uuid

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import REPO, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub
from tests.postgres.pg_support import PgCluster
from tests.test_e2e_github import GOOD_BODY

pytestmark = pytest.mark.postgres


def _issues(github: FakeGitHub, count: int) -> None:
    for number in range(1, count + 1):
        github.add_issue(REPO, title=f"Export workspace tasks {number}", body=GOOD_BODY, author="Codertocat",
                         number=number)


def test_role_all_on_postgres(cluster: PgCluster, github: FakeGitHub, fake_anthropic: FakeAnthropic) -> None:
    _issues(github, 2)
    bot = cluster.server("all-1", role="all").start()
    sent = [bot.deliver("issues", issue_event("opened", n), delivery=f"all-{n}") for n in (1, 2)]
    assert [r.status_code for r in sent] == [202, 202]
    assert bot.deliver("issues", issue_event("opened", 1), delivery="all-1").status_code == 200
    done = cluster.wait_all_done(["gh:all-1", "gh:all-2"], timeout=120)
    assert {done[w].status for w in ("gh:all-1", "gh:all-2")} == {"SUCCESS"}
    for number in (1, 2):
        (comment,) = github.comments(REPO, number)
        assert is_sticky(comment.body)


def test_two_web_replicas_and_two_workers(cluster: PgCluster, github: FakeGitHub,
                                          fake_anthropic: FakeAnthropic) -> None:
    """40 deliveries over 10 issues, each sent to both web replicas: one workflow per delivery, one comment per
    issue, and the events of one issue never overlap and run in the order they were accepted."""
    _issues(github, 10)
    webs = [cluster.server(f"web-{i}", role="web").launch() for i in (1, 2)]
    workers = [cluster.server(f"worker-{i}", role="worker").launch() for i in (1, 2)]
    for server in webs + workers:
        server.wait_ready()
    ids = []
    for n in range(40):
        number = 1 + n % 10
        delivery = str(uuid.uuid4())
        event = issue_event("opened" if n < 10 else "edited", number)
        first = webs[n % 2].deliver("issues", event, delivery=delivery)
        again = webs[(n + 1) % 2].deliver("issues", event, delivery=delivery)
        assert (first.status_code, again.status_code) == (202, 200)
        ids.append(f"gh:{delivery}")
    done = cluster.wait_all_done(ids, timeout=240)
    assert all(done[w].status == "SUCCESS" for w in ids)
    assert len([w for w in cluster.workflows() if w.startswith("gh:")]) == 40
    assert {done[w].executor_id for w in ids} <= {"worker-1", "worker-2"}
    for number in range(1, 11):
        assert len(github.comments(REPO, number)) == 1
        runs = sorted((done[w] for w in ids if done[w].queue_partition_key == f"github:{REPO}#{number}"),
                      key=lambda s: s.created_at)
        assert len(runs) == 4
        spans = [_span(cluster, run.workflow_id) for run in runs]
        for earlier, later in zip(spans, spans[1:]):
            assert later[0] >= earlier[1], "two events of one ticket ran at once, or out of order"


def _span(cluster: PgCluster, workflow_id: str) -> tuple[int, int]:
    """When the workflow's first step started and its last step ended (ms)."""
    steps = cluster.dbos().list_workflow_steps(workflow_id)
    return (min(s["started_at_epoch_ms"] for s in steps), max(s["completed_at_epoch_ms"] for s in steps))
