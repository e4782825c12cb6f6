"""pytest fixtures for the fake Jira. A test module that wants them declares

    pytest_plugins = ["tests.fakes.jira_fixture"]

`fake_jira` is the session's server, emptied before each test; `jira_tracker` is a `JiraTracker` with
Cloud credentials pointed at it (fast retries, no config directory).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reqgate.handlers.jira.tracker import JiraTracker
from tests.fakes.fake_jira import FakeJira


@pytest.fixture(scope="session")
def fake_jira_server() -> Iterator[FakeJira]:
    with FakeJira() as server:
        yield server


@pytest.fixture
def fake_jira(fake_jira_server: FakeJira) -> Iterator[FakeJira]:
    fake_jira_server.reset()
    yield fake_jira_server
    fake_jira_server.reset()


@pytest.fixture
def jira_tracker(fake_jira: FakeJira) -> JiraTracker:
    return JiraTracker(fake_jira.url, email="bot@example.com", api_token="api-token", max_wait_s=5.0)
