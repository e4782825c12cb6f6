"""Start-up on PostgreSQL: a dozen processes on an empty database at once, and an upgrade with reviews in
flight."""

from __future__ import annotations

import pytest
import shutil
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from reqgate.handlers.publish import is_sticky
from tests.e2e_support import REPO, REPO_ROOT, issue_event
from tests.fakes.fake_anthropic import FakeAnthropic, Reply
from tests.fakes.fake_github import FakeGitHub
from tests.postgres.pg_support import PgCluster
from tests.test_e2e_github import GOOD_BODY

pytestmark = pytest.mark.postgres


def test_twelve_processes_start_at_once_on_a_database_that_does_not_exist(
    cluster: PgCluster, pg_name: str
) -> None:
    """What `kubectl apply -f deploy/k8s/` does: every replica creates the database and the tables at once."""
    servers = [cluster.server(f"web-{i}", role="web").launch() for i in range(4)]
    servers += [cluster.server(f"worker-{i}", role="worker").launch() for i in range(8)]
    for server in servers:
        server.wait_ready()
    engine = sa.create_engine(sa.make_url(cluster.url).set(drivername="postgresql+psycopg"))
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        executors = conn.execute(sa.text("SELECT count(*) FROM reqgate_executors")).scalar_one()
    engine.dispose()
    assert {"reqgate_ticket_state", "reqgate_executors", "reqgate_pace"} <= tables
    assert executors == 12


def test_a_database_that_cannot_be_created_is_one_clear_line(tmp_path: Path, pg_url: str) -> None:
    url = sa.make_url(pg_url).set(username="nobody_here").render_as_string(hide_password=False)
    env = {"REQGATE_DATABASE_URL": url, "REQGATE_GITHUB_TOKEN": "x", "REQGATE_DEV_INSECURE": "1",
           "REQGATE_ROLE": "worker", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "reqgate.bot.cli", "serve"], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reqgate serve: cannot connect to the database"), done.stderr


def _changed_build(tmp_path: Path) -> Path:
    """The package as a new build would ship it: the workflow function's source edited (which is what
    DBOS's default application version hashes)."""
    root = tmp_path / "build-2"
    package = root / "reqgate"
    for folder in ("bot", "handlers", "pipeline", "config", "prompts"):
        shutil.copytree(REPO_ROOT / folder, package / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    workflow = package / "bot" / "workflow.py"
    text = workflow.read_text(encoding="utf-8")
    marker = "    trigger = Trigger.model_validate(trigger_json)\n"
    assert marker in text
    workflow.write_text(text.replace(marker, marker + "    # build 2: a harmless change\n"), encoding="utf-8")
    return root


def test_an_upgrade_resumes_a_review_in_flight(
    cluster: PgCluster, github: FakeGitHub, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    github.add_issue(REPO, title="Export workspace tasks", body=GOOD_BODY, author="Codertocat", number=1)
    fake_anthropic.script(Reply.default())
    hold = fake_anthropic.hold_next()
    old = cluster.server("all-old", role="all", executor_id="pod-0").start()
    assert old.deliver("issues", issue_event("opened", 1), delivery="upgrade-1").status_code == 202
    assert hold.wait_arrived(timeout=120)
    old.kill()
    hold.release()

    build = _changed_build(tmp_path)
    new = cluster.server("all-new", role="all", executor_id="pod-0",
                         PYTHONPATH=str(build), REQGATE_TEST_CWD=str(build)).start()
    done = cluster.wait_all_done(["gh:upgrade-1"], timeout=120)
    assert done["gh:upgrade-1"].status == "SUCCESS"
    assert "build-2" in subprocess.run(
        [sys.executable, "-c", "import reqgate.bot.workflow as w; print(w.__file__)"],
        env={**new.env}, cwd=build, capture_output=True, text=True, check=True).stdout
    assert fake_anthropic.structure_calls() == 1
    (comment,) = github.comments(REPO, 1)
    assert is_sticky(comment.body)
