"""Which tickets are reviewed, from the configuration's filters."""

from __future__ import annotations

import pytest

from reqgate.handlers.filters import skip_reason
from reqgate.pipeline.config import Config
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.schemas import RequirementPacket, TicketType


@pytest.fixture(scope="module")
def defaults() -> Config:
    return load_default_config()


def configured(defaults: Config, enabled: bool = True, **filters: list[str]) -> Config:
    return defaults.model_copy(
        update={"enabled": enabled, "filters": defaults.filters.model_copy(update=filters)}
    )


def packet(**fields: object) -> RequirementPacket:
    base: dict[str, object] = {
        "source": "github",
        "project": "acme/widgets",
        "key": "7",
        "title": "Export",
        "body": "As a user I want…",
        "author": "alice",
        "labels": ["enhancement"],
    }
    return RequirementPacket.model_validate({**base, **fields})


def test_defaults_review_an_ordinary_ticket(defaults: Config) -> None:
    assert skip_reason(packet(), defaults) is None


def test_disabled(defaults: Config) -> None:
    assert "enabled: false" in (skip_reason(packet(), configured(defaults, enabled=False)) or "")


def test_default_skip_label_case_insensitive(defaults: Config) -> None:
    reason = skip_reason(packet(labels=["ReqGate:Skip"]), defaults)
    assert reason is not None and "reqgate:skip" in reason


def test_include_labels_require_one_of_them(defaults: Config) -> None:
    config = configured(defaults, include_labels=["needs-review", "prd"])
    assert skip_reason(packet(labels=["bug"]), config) is not None
    assert skip_reason(packet(labels=[]), config) is not None
    assert skip_reason(packet(labels=["bug", "PRD"]), config) is None


def test_skip_label_beats_include_label(defaults: Config) -> None:
    config = configured(defaults, include_labels=["prd"], skip_labels=["wip"])
    assert "wip" in (skip_reason(packet(labels=["prd", "wip"]), config) or "")


def test_skip_authors(defaults: Config) -> None:
    config = configured(defaults, skip_authors=["dependabot[bot]", "Renovate"])
    assert skip_reason(packet(author="renovate"), config) is not None
    assert skip_reason(packet(author="alice"), config) is None
    assert skip_reason(packet(author=None), config) is None


def test_issue_types_from_the_tracker_or_the_label_hint(defaults: Config) -> None:
    config = configured(defaults, issue_types=["Story", "bug"])
    assert skip_reason(packet(), config, issue_type="story") is None
    assert skip_reason(packet(), config, issue_type="Epic") is not None
    assert skip_reason(packet(type_hint=TicketType.bug), config) is None
    assert skip_reason(packet(type_hint=TicketType.task), config) is not None
    assert "unknown" in (skip_reason(packet(labels=[]), config) or "")
    # The tracker's type on the packet, and a type label through `types.labels`.
    assert skip_reason(packet(issue_type="Bug"), config) is None
    assert skip_reason(packet(labels=["type: bug"]), config) is None
    assert skip_reason(packet(labels=["documentation"]), config) is not None


def test_projects(defaults: Config) -> None:
    config = configured(defaults, projects=["Acme/Widgets", "PROJ"])
    assert skip_reason(packet(), config) is None
    assert skip_reason(packet(project="PROJ", source="jira"), config) is None
    assert "acme/other" in (skip_reason(packet(project="acme/other"), config) or "")
