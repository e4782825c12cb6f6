"""The published JSON Schema of `reqgate.yml`: the Config model with every key optional, since a
repository file only overrides the defaults. `python -m reqgate.pipeline.config_schema` rewrites the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reqgate.pipeline.config import SCHEMA_PATH, Config
from reqgate.pipeline.config_loader import EXTENDS_KEY


def _optional_everywhere(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _optional_everywhere(value) for key, value in node.items() if key != "required"}
    if isinstance(node, list):
        return [_optional_everywhere(item) for item in node]
    return node


def reqgate_yml_schema() -> dict[str, Any]:
    schema = _optional_everywhere(Config.model_json_schema())
    schema["properties"][EXTENDS_KEY] = {
        "type": "string",
        "description": "Inherit from another repository's reqgate.yml: `repo`, `owner/repo` or `owner/repo:path`.",
    }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "ReqGate configuration (reqgate.yml)"
    return schema


def render() -> str:
    return json.dumps(reqgate_yml_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    # Run from a source checkout (editable install), where the package data is the config/ folder itself.
    target = Path(str(SCHEMA_PATH))
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
