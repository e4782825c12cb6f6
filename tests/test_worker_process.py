"""`reqgate serve` on SQLite runs its reviews in a child process (bot/worker_process.py): the child starts with
the server, is restarted when it dies, dies with the server, and counts into the server's /metrics."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e_support import REPO, BotServer, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_github import FakeGitHub

pytestmark = pytest.mark.server

GOOD_BODY = (
    "As a workspace admin, I want to export all tasks of a workspace to a CSV file, so that I can report on "
    "them in a spreadsheet.\n\n## Acceptance criteria\n- [ ] The export has one row per task with its title, "
    "status and assignee.\n"
)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name (field 2) is in parentheses and may hold spaces; the parent pid follows the state.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def eventually(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"not true after {timeout}s")


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        yield fake


@pytest.fixture
def server(github: FakeGitHub, fake_anthropic_server: FakeAnthropic, tmp_path: Path) -> Iterator[BotServer]:
    bot = BotServer(tmp_path, {"REQGATE_GITHUB_TOKEN": github.token, "REQGATE_GITHUB_API_URL": github.url,
                               **fake_anthropic_server.env()})
    bot.start()
    yield bot
    bot.stop()


def review(server: BotServer, github: FakeGitHub, number: int) -> None:
    github.add_issue(REPO, title="Export workspace tasks to CSV", body=GOOD_BODY, author="Codertocat",
                     number=number)
    answer = server.deliver("issues", issue_event("opened", number))
    assert answer.status_code == 202
    server.wait_done(answer.json()["workflow_id"])


def metric(text: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def test_reviews_run_in_a_child_that_counts_into_the_servers_metrics(server: BotServer, github: FakeGitHub) -> None:
    assert server.process is not None
    assert len(children(server.process.pid)) == 1
    review(server, github, 1)
    text = server.client.get("/metrics").text
    assert metric(text, "reqgate_reviews_total{") == 1
    assert metric(text, 'reqgate_llm_tokens_total{direction="input"}') > 0
    assert metric(text, 'reqgate_webhooks_total{outcome="accepted",source="github"}') == 1


def test_a_dead_worker_is_restarted_and_reviews_go_on(server: BotServer, github: FakeGitHub) -> None:
    assert server.process is not None
    [worker] = children(server.process.pid)
    os.kill(worker, signal.SIGKILL)
    eventually(lambda: server.client.get("/readyz").status_code == 503, timeout=5)
    assert server.client.get("/readyz").json()["reason"] == "the worker process is not running"
    # Deliveries are still accepted while it is down: they wait in the inbox.
    github.add_issue(REPO, title="Export workspace tasks to CSV", body=GOOD_BODY, author="Codertocat", number=2)
    answer = server.deliver("issues", issue_event("opened", 2))
    assert answer.status_code == 202
    eventually(lambda: server.client.get("/readyz").status_code == 200)
    assert children(server.process.pid) != [worker]
    server.wait_done(answer.json()["workflow_id"])
    assert len(github.comments(REPO, 2)) == 1
    assert "worker_process_exited" in server.logs()


def test_the_worker_dies_with_the_server(server: BotServer) -> None:
    assert server.process is not None
    [worker] = children(server.process.pid)
    server.kill()
    eventually(lambda: not alive(worker), timeout=10)


def test_web_and_worker_roles_share_one_data_directory(github: FakeGitHub, fake_anthropic_server: FakeAnthropic,
                                                       tmp_path: Path) -> None:
    env = {"REQGATE_GITHUB_TOKEN": github.token, "REQGATE_GITHUB_API_URL": github.url,
           **fake_anthropic_server.env()}
    web = BotServer(tmp_path, {**env, "REQGATE_ROLE": "web"}, log_path=tmp_path / "web.log")
    worker = BotServer(tmp_path, {**env, "REQGATE_ROLE": "worker"}, log_path=tmp_path / "worker.log")
    web.start()
    try:
        assert web.process is not None and children(web.process.pid) == []
        github.add_issue(REPO, title="Export workspace tasks to CSV", body=GOOD_BODY, author="Codertocat",
                         number=3)
        answer = web.deliver("issues", issue_event("opened", 3))
        assert answer.status_code == 202
        # Accepted into the inbox before any worker runs; reviewed once one does.
        worker.start()
        web.wait_done(answer.json()["workflow_id"])
        assert len(github.comments(REPO, 3)) == 1
        assert web.deliver("issues", issue_event("opened", 3), delivery=answer.json()["workflow_id"][3:]
                           ).status_code == 200
    finally:
        web.stop()
        worker.stop()
