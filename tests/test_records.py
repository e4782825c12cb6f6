"""Records (pipeline/records.py): plain dataclasses that pydantic validates where data comes in. What callers
see must match what the pydantic models they replaced gave: the same JSON, the same checks, the same errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from reqgate.pipeline import scoring
from reqgate.pipeline.config_loader import ConfigError, load_config, parse_layer
from reqgate.pipeline.records import error_message
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import (
    LLMCallRecord,
    ModelIssue,
    Rating,
    RequirementPacket,
    ReviewResult,
    Span,
    StructureOutput,
    TicketType,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def result() -> ReviewResult:
    text = (EXAMPLES / "leaked-token.md").read_text(encoding="utf-8")
    return review(RequirementPacket(title="Export fails", body=text), load_config().config, None)


def test_json_dump_is_pydantics_own(result: ReviewResult) -> None:
    adapter = TypeAdapter(ReviewResult)
    assert result.model_dump_json() == adapter.dump_json(result).decode()
    assert result.model_dump_json(indent=2) == adapter.dump_json(result, indent=2).decode()
    assert result.model_dump(mode="json") == adapter.dump_python(result, mode="json")
    assert result.model_dump() == adapter.dump_python(result)


def test_json_of_a_model_rated_review_is_what_the_pydantic_models_wrote(result: ReviewResult) -> None:
    """The LLM path puts whole numbers in float fields (a rating of 4) and tiny costs (5.7e-05 dollars);
    the models made the first 4.0 when built, and pydantic writes the second as 0.0000572."""
    config = load_config().config
    ratings = [Rating(dimension=name, score=4) for name in config.rubrics["story"].dimensions]
    score = scoring.score(TicketType.story, [], ratings, config)
    call = LLMCallRecord(call="structure", model="m", input_tokens=100, cost_usd=5.725e-05, latency_ms=812)
    rated = result.model_copy(update={"score": score, "trace": result.trace.model_copy(update={"llm_calls": [call]})})
    adapter = TypeAdapter(ReviewResult)
    as_the_models_held_it = adapter.validate_json(adapter.dump_json(rated))  # validation makes 4 into 4.0
    assert rated.model_dump_json() == adapter.dump_json(as_the_models_held_it).decode()
    assert '"rating":4.0' in rated.model_dump_json() and '"cost_usd":0.00005725' in rated.model_dump_json()
    assert rated.model_dump()["score"]["dimensions"][0]["rating"] == 4.0
    assert isinstance(rated.model_dump()["score"]["dimensions"][0]["rating"], float)


def test_a_stored_review_reads_back_equal(result: ReviewResult) -> None:
    again = ReviewResult.model_validate_json(result.model_dump_json())
    assert again == result
    assert again.ticket_type is result.ticket_type
    assert isinstance(again.guardrail.redacted_ranges[0], tuple)


def test_copies_replace_fields_and_share_nothing_when_deep(result: ReviewResult) -> None:
    shallow = result.model_copy(update={"prd_markdown": "x"})
    assert shallow.prd_markdown == "x" and result.prd_markdown != "x" and shallow.findings is result.findings
    deep = result.model_copy(deep=True)
    assert deep == result and deep.findings is not result.findings


def test_validation_converts_and_refuses_like_the_models_did() -> None:
    assert ModelIssue.model_validate({"category": "no such category"}).category == "other"
    assert StructureOutput.model_validate({"ticket_type": "Feature", "prd": {"title": "t"}}).ticket_type \
        is TicketType.story
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Span.model_validate({"quote": "x", "start": -1, "end": 0})
    with pytest.raises(ValidationError, match="Unexpected keyword argument"):
        Span.model_validate({"quote": "x", "start": 0, "end": 1, "stop": 2})


def test_errors_read_as_they_did_for_the_models() -> None:
    with pytest.raises(ValidationError) as caught:
        StructureOutput.model_validate({"prd": {"title": "t"}, "ratings": [3], "verdict": "ready"})
    assert sorted(error_message(e) for e in caught.value.errors()) == [
        "Extra inputs are not permitted", "Input should be a valid dictionary or instance of Rating"]
    with pytest.raises(ValidationError) as caught:
        StructureOutput.model_validate_json('{"prd": 5}')
    assert [error_message(e) for e in caught.value.errors()] == ["Input should be an object"]
    with pytest.raises(ConfigError, match="`limits`: Input should be a valid dictionary or instance of Limits"):
        load_config(parse_layer("limits: 5\n", "reqgate.yml"))


def test_a_packet_built_by_hand_may_name_its_type() -> None:
    packet = RequirementPacket(title="Crash on save", body="Steps: 1. open 2. save", type_hint="bug")
    assert packet.type_hint is TicketType.bug
    assert review(packet, load_config().config, None).ticket_type is TicketType.bug
    for wrong in ("epic", 5):
        with pytest.raises(ValueError):
            RequirementPacket(type_hint=wrong)


def test_a_record_inside_a_pydantic_model_is_checked_too() -> None:
    class Step(BaseModel):
        span: Span

    assert Step.model_validate({"span": {"quote": "x", "start": 0, "end": 1}}).span == Span(quote="x", start=0, end=1)
    with pytest.raises(ValidationError):
        Step.model_validate({"span": {"quote": "x", "start": -5, "end": 1}})


def test_records_compare_by_value_and_are_not_hashable() -> None:
    assert Span(quote="x", start=0, end=1) == Span(quote="x", start=0, end=1)
    assert Span(quote="x", start=0, end=1) != Span(quote="x", start=0, end=2)
    assert repr(Span(quote="x", start=0, end=1)) == "Span(quote='x', start=0, end=1)"
    with pytest.raises(TypeError):
        hash(Span(quote="x", start=0, end=1))
