"""Executors on PostgreSQL: a worker killed mid-review, a worker that never comes back, two live processes
with one executor id, and write pacing shared by all workers."""

from __future__ import annotations

import pytest
import subprocess
import time
from pathlib import Path

import yaml

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import REPO, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic, Reply
from tests.fakes.fake_github import FakeGitHub
from tests.postgres.pg_support import PgCluster
from tests.test_e2e_github import GOOD_BODY

pytestmark = pytest.mark.postgres

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
TIMEOUT_S = 8.0


def _issue(github: FakeGitHub, number: int = 1) -> None:
    github.add_issue(REPO, title=f"Export workspace tasks {number}", body=GOOD_BODY, author="Codertocat",
                     number=number)


def test_worker_killed_mid_review_resumes_under_its_own_id(
    cluster: PgCluster, github: FakeGitHub, fake_anthropic: FakeAnthropic
) -> None:
    _issue(github)
    worker = cluster.server("worker-1", role="worker")
    web = cluster.server("web-1", role="web").launch()
    worker.start()
    web.wait_ready()
    fake_anthropic.script(Reply.default())
    hold = fake_anthropic.hold_next()
    assert web.deliver("issues", issue_event("opened", 1), delivery="kill-1").status_code == 202
    assert hold.wait_arrived(timeout=120)
    worker.kill()
    hold.release()
    worker.start()
    done = cluster.wait_all_done(["gh:kill-1"], timeout=120)
    assert done["gh:kill-1"].status == "SUCCESS"
    assert fake_anthropic.structure_calls() == 1
    (comment,) = github.comments(REPO, 1)
    assert is_sticky(comment.body)


def test_a_worker_that_never_comes_back_is_taken_over(
    cluster: PgCluster, github: FakeGitHub, fake_anthropic: FakeAnthropic
) -> None:
    """SIGKILL worker-1 during LLM call 2; worker-2, a new id, finishes the review within twice the timeout
    (from the moment it runs) without repeating call 1, and the ticket's later event is not blocked."""
    _issue(github)
    timeout = {"REQGATE_EXECUTOR_TIMEOUT_S": str(TIMEOUT_S)}
    web = cluster.server("web-1", role="web", **timeout).launch()
    worker1 = cluster.server("worker-1", role="worker", **timeout).start()
    web.wait_ready()
    fake_anthropic.script(Reply.default())
    hold = fake_anthropic.hold_next()
    assert web.deliver("issues", issue_event("opened", 1), delivery="strand-1").status_code == 202
    assert hold.wait_arrived(timeout=120)
    worker1.kill()
    hold.release()
    assert web.deliver("issues", issue_event("edited", 1), delivery="strand-2").status_code == 202
    time.sleep(1.0)
    ready = web.client.get("/readyz").json()
    assert ready["status"] == "ready" and ready["oldest_unfinished_review_s"] > 0
    metrics = web.client.get("/metrics").text
    assert "reqgate_oldest_unfinished_review_seconds" in metrics

    worker2 = cluster.server("worker-2", role="worker", **timeout).start()
    running = time.monotonic()
    done = cluster.wait_all_done(["gh:strand-1", "gh:strand-2"], timeout=2 * TIMEOUT_S)
    assert time.monotonic() - running <= 2 * TIMEOUT_S
    assert done["gh:strand-1"].status == "SUCCESS" and done["gh:strand-2"].status == "SUCCESS"
    assert done["gh:strand-1"].executor_id == "worker-2"
    assert fake_anthropic.structure_calls() == 1  # call 1 was recorded by worker-1: not made again
    (comment,) = github.comments(REPO, 1)
    assert is_sticky(comment.body)
    assert "executor_taken_over" in worker2.logs()
    assert web.client.get("/readyz").json()["oldest_unfinished_review_s"] == 0


def test_a_second_live_process_with_the_same_executor_id_is_refused(cluster: PgCluster) -> None:
    short = {"REQGATE_EXECUTOR_TIMEOUT_S": "3"}
    cluster.server("first", role="worker", executor_id="twin", **short).start()
    second = cluster.server("second", role="worker", executor_id="twin", **short).launch()
    assert second.process is not None
    code = second.process.wait(120)
    assert code != 0
    assert "executor id 'twin' is in use by a live process" in second.logs()


def test_shipped_deployments_give_each_process_its_own_executor_id() -> None:
    """No deployment hard-codes an id that replicas would share: unset (the host name: the container or
    the pod), or taken from the pod's name."""
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))
    for name, service in compose.get("services", {}).items():
        env = service.get("environment") or {}
        if isinstance(env, list):
            env = dict(item.split("=", 1) for item in env if "=" in item)
        assert "REQGATE_EXECUTOR_ID" not in env, f"compose service {name} shares one executor id"
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            for container in _containers(document):
                for variable in container.get("env") or []:
                    if variable.get("name") == "REQGATE_EXECUTOR_ID":
                        field = (variable.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")
                        assert field == "metadata.name", f"{path.name}: executor id not from the pod name"


def _containers(document: object) -> list[dict]:  # type: ignore[type-arg]
    if not isinstance(document, dict):
        return []
    spec = ((document.get("spec") or {}).get("template") or {}).get("spec") or {}
    return list(spec.get("containers") or [])


def test_writes_are_paced_per_installation_across_workers(
    cluster: PgCluster, github: FakeGitHub, fake_anthropic: FakeAnthropic
) -> None:
    spacing = 0.5
    for name in ("reqgate:ready", "reqgate:needs-info", "reqgate:error"):
        github.add_label(REPO, name)
    for number in range(1, 9):
        _issue(github, number)
    paced = {"REQGATE_WRITE_SPACING_S": str(spacing)}
    web = cluster.server("web-1", role="web", **paced).launch()
    workers = [cluster.server(f"worker-{i}", role="worker", **paced).launch() for i in (1, 2)]
    for server in [web, *workers]:
        server.wait_ready()
    ids = []
    for number in range(1, 9):
        assert web.deliver("issues", issue_event("opened", number), delivery=f"pace-{number}").status_code == 202
        ids.append(f"gh:pace-{number}")
    done = cluster.wait_all_done(ids, timeout=180)
    assert {done[w].status for w in ids} == {"SUCCESS"}
    assert {done[w].executor_id for w in ids} == {"worker-1", "worker-2"}  # both wrote
    writes = sorted(r.at for r in github.requests if r.method in ("POST", "PATCH", "PUT", "DELETE"))
    assert len(writes) >= 16
    # Slots are reserved per write step, and a step may read before it writes: on a busy machine a write can
    # come late, and so close to the next one. The rate cannot exceed the spacing's: n writes span at least
    # (n - 1) spacings, less the lateness of the first. Per-process pacing (what there was before) lets two
    # workers write side by side: half that span.
    span = writes[-1] - writes[0]
    assert span >= (len(writes) - 1) * spacing * 0.8, f"{len(writes)} writes within {span:.2f}s"
