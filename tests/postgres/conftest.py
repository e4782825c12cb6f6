"""The `postgres` suite: real PostgreSQL, real `reqgate serve` processes, the fakes.

It needs a server: `.ci/postgres.sh` starts a throwaway one and sets REQGATE_TEST_PG_URL (a URL whose
user may create databases). Without it every test here is skipped, saying so. Each test gets a database of
its own, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.e2e_support import REPO
from tests.fakes.fake_github import FakeGitHub
from tests.postgres.pg_support import PgCluster, database_url

PG_URL = os.environ.get("REQGATE_TEST_PG_URL")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            if not PG_URL:
                item.add_marker(pytest.mark.skip(
                    reason="no PostgreSQL server: REQGATE_TEST_PG_URL is not set (.ci/postgres.sh sets it)"))


def _admin() -> sa.Engine:
    assert PG_URL
    url = sa.make_url(PG_URL).set(drivername="postgresql+psycopg", database="postgres")
    return sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)


@pytest.fixture
def pg_name() -> Iterator[str]:
    """A database name of this test's own, not created: the bot creates it (the concurrent-start test
    relies on that); dropped afterwards."""
    name = f"reqgate_t_{uuid.uuid4().hex[:12]}"
    yield name
    engine = _admin()
    with engine.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


@pytest.fixture
def pg_url(pg_name: str) -> str:
    assert PG_URL
    return database_url(PG_URL, pg_name)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        yield fake


@pytest.fixture
def cluster(pg_url: str, github: FakeGitHub, fake_anthropic, tmp_path: Path) -> Iterator[PgCluster]:  # type: ignore[no-untyped-def]
    started = PgCluster(pg_url, tmp_path, {"REQGATE_GITHUB_TOKEN": github.token,
                                           "REQGATE_GITHUB_API_URL": github.url, **fake_anthropic.env()})
    yield started
    started.stop()
