import json

import pytest

from reqgate.pipeline.config import SCHEMA_PATH, Config, deep_merge
from reqgate.pipeline.config_loader import ConfigError, defaults_layer, load_config, parse_layer
from reqgate.pipeline.config_schema import render
from reqgate.pipeline.records import Record, field_names
from reqgate.pipeline.schemas import TicketType


def test_defaults_load_and_cover_every_ticket_type():
    config = load_config().config
    assert set(config.rubrics) >= {"story", "bug", "task", "spike"}
    assert config.mode_for("bug.steps.missing", TicketType.bug) == "error"
    assert config.mode_for("bug.steps.missing", TicketType.story) == "off"
    # Real backlogs rarely have acceptance criteria, and a precise description is enough: collapsed.
    assert config.mode_for("acceptance-criteria.missing", TicketType.story) == "info"
    assert config.category_for("acceptance-criteria.missing") == "done"
    assert config.category_for("no.such.check") == "other"


def test_defaults_built_without_pydantic_equal_the_validated_defaults():
    """Defaults alone are built unchecked (the start of every command-line review); this is their check."""
    data = deep_merge({}, defaults_layer().data)
    validated = Config.model_validate(data)
    trusted = load_config().config
    assert trusted == validated
    assert trusted.fingerprint() == validated.fingerprint()
    assert isinstance(validated.rubrics["story"].dimensions["value"].weight, float)

    def kinds(value: object) -> object:
        """The value with every leaf's exact type: == alone takes 1, 1.0 and True for one another (and the
        dump would make a whole number in a float field a float)."""
        if isinstance(value, Record):
            return {name: kinds(getattr(value, name)) for name in field_names(type(value))}
        if isinstance(value, dict):
            return {key: kinds(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [kinds(item) for item in value]
        return type(value).__name__, value

    assert kinds(trusted) == kinds(validated)


def test_an_override_layer_is_validated_even_when_it_changes_nothing():
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(parse_layer("labels:\n  redy: x\n", "reqgate.yml"))
    assert load_config(parse_layer("", "reqgate.yml")).config == load_config().config


def test_override_deep_merges_and_records_where_values_came_from():
    layer = parse_layer("threshold: 80\nlabels:\n  ready: ok-to-build\nchecks:\n  wording.vague: {default: error}\n",
                        ".github/reqgate.yml")
    loaded = load_config(layer)
    assert loaded.config.threshold == 80
    assert loaded.config.labels.ready == "ok-to-build"
    assert loaded.config.labels.needs_info == "reqgate:needs-info"
    assert loaded.config.mode_for("wording.vague", TicketType.story) == "error"
    assert loaded.provenance["threshold"] == ".github/reqgate.yml"
    assert loaded.provenance["labels.needs_info"] == "defaults"
    assert loaded.source_label == "defaults + .github/reqgate.yml"


def test_lists_replace_rather_than_append():
    assert deep_merge({"a": [1, 2], "b": {"c": 1}}, {"a": [3]}) == {"a": [3], "b": {"c": 1}}


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        ("threshold: 70\nlabels:\n  redy: x\n", "labels.redy", 3),
        ("threshold: 170\n", "threshold", 1),
        ("checks:\n  wording.vague:\n    default: loud\n", "checks.wording.vague.default", 3),
        ("guardrail:\n  injection:\n    action: explode\n", "guardrail.injection.action", 3),
    ],
)
def test_invalid_file_names_key_path_and_line(text, path, line):
    with pytest.raises(ConfigError) as caught:
        load_config(parse_layer(text, ".github/reqgate.yml"))
    problem = caught.value.problems[0]
    assert (problem.path, problem.line, problem.source) == (path, line, ".github/reqgate.yml")
    assert f"line {line}" in str(caught.value) and path in str(caught.value)


def test_yaml_syntax_error_names_the_line():
    with pytest.raises(ConfigError) as caught:
        parse_layer("threshold: 70\nlabels: [unclosed\n", "x.yml")
    assert caught.value.problems[0].line is not None and "invalid YAML" in str(caught.value)


def test_non_mapping_file_is_rejected_and_empty_file_is_no_override():
    with pytest.raises(ConfigError):
        parse_layer("- a\n- b\n", "x.yml")
    assert parse_layer("", "x.yml").data == {}


def test_extends_is_taken_out_of_the_data():
    layer = parse_layer("_extends: acme/.github\nthreshold: 60\n", "x.yml")
    assert layer.extends == "acme/.github" and "_extends" not in layer.data


def test_published_json_schema_is_in_sync():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), "run: python -m reqgate.pipeline.config_schema"
    schema = json.loads(render())
    assert "_extends" in schema["properties"] and "required" not in schema


def test_phone_regions_beyond_the_defaults_are_checked_against_phonenumbers():
    """The defaults are taken as known without loading phonenumbers: they must be regions it knows."""
    import phonenumbers

    from reqgate.pipeline.config import DEFAULT_PHONE_REGIONS

    assert set(DEFAULT_PHONE_REGIONS) <= phonenumbers.SUPPORTED_REGIONS
    layer = "guardrail:\n  pii:\n    phone_regions: [US, MX]\n"
    assert load_config(parse_layer(layer, "x.yml")).config.guardrail.pii.phone_regions == ["US", "MX"]
    with pytest.raises(ConfigError) as caught:
        load_config(parse_layer("guardrail:\n  pii:\n    phone_regions: [US, XQ]\n", "x.yml"))
    assert "unknown phone region 'XQ'" in str(caught.value)
