"""pytest fixtures for the fake GitHub: one server per session, emptied before every test.

Use them from any test module with `from tests.fakes.github_fixture import fake_github, fake_github_server`
(`# noqa: F401`); a test that needs its own server (another prefix) starts one with `with FakeGitHub(...)`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.fake_github import FakeGitHub


@pytest.fixture(scope="session")
def fake_github_server() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


@pytest.fixture
def fake_github(fake_github_server: FakeGitHub) -> FakeGitHub:
    fake_github_server.reset()
    return fake_github_server
