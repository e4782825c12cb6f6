"""Shared pytest fixtures. Each block below belongs to one part of the project; keep blocks separate."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reqgate.pipeline.config import Config, LLMSettings
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.llm import LLMClient
from tests.fakes.fake_anthropic import FakeAnthropic

# ---------------------------------------------------------------------------------------------------
# LLM: the fake Anthropic API and clients pointed at it (tests/fakes/fake_anthropic.py)
# ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def fake_anthropic_server() -> Iterator[FakeAnthropic]:
    """One fake for the whole session; use `fake_anthropic`, which resets it around each test."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def fake_anthropic(fake_anthropic_server: FakeAnthropic) -> Iterator[FakeAnthropic]:
    fake_anthropic_server.reset()
    yield fake_anthropic_server
    fake_anthropic_server.reset()


@pytest.fixture(scope="session")
def _llm_default_config() -> Config:
    return load_default_config()


@pytest.fixture
def fast_llm_settings(_llm_default_config: Config) -> LLMSettings:
    """The default LLM settings with timeouts short enough for tests."""
    return _llm_default_config.llm.model_copy(update={"timeout_s": 2.0, "deadline_s": 10.0, "max_retries": 2})


@pytest.fixture
def fast_llm_config(_llm_default_config: Config, fast_llm_settings: LLMSettings) -> Config:
    """The default configuration with `fast_llm_settings`."""
    return _llm_default_config.model_copy(update={"llm": fast_llm_settings}, deep=True)


@pytest.fixture
def llm_client(fake_anthropic: FakeAnthropic, fast_llm_settings: LLMSettings) -> Iterator[LLMClient]:
    client = LLMClient("sk-ant-fake-key", fast_llm_settings, base_url=fake_anthropic.url)
    client.backoff_base_s = 0.01
    yield client
    client.close()


@pytest.fixture
def anthropic_env(fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL pointing at the fake, for code that uses LLMClient.from_env."""
    env = fake_anthropic.env()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env
