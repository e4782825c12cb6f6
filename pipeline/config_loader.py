"""Parse YAML config layers, merge them over the defaults, and report errors by key path and line."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reqgate.pipeline.config import DEFAULTS_PATH, Config, deep_merge
from reqgate.pipeline.records import error_message

EXTENDS_KEY = "_extends"
# libyaml's loader when PyYAML was built with it (its wheels are): the pure-Python one takes a noticeable
# share of `reqgate review`'s start on the defaults file alone.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class ConfigProblem:
    source: str
    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.source}, line {self.line}" if self.line else self.source
        return f"{where}: `{self.path or '(top level)'}`: {self.message}"


class ConfigError(ValueError):
    """An invalid configuration file. `problems` name the key path and the line of each error."""

    def __init__(self, problems: list[ConfigProblem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


@dataclass
class ConfigLayer:
    source: str
    data: dict[str, Any]
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)
    extends: str | None = None


@dataclass
class LoadedConfig:
    config: Config
    # Dotted key path of every leaf value -> the layer that set it ("defaults" or a file name).
    provenance: dict[str, str]
    sources: list[str]

    @property
    def source_label(self) -> str:
        return " + ".join(self.sources)


def _line_index(node: yaml.Node, prefix: tuple[str, ...], out: dict[tuple[str, ...], int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            path = prefix + (str(key_node.value),)
            out[path] = key_node.start_mark.line + 1
            _line_index(value_node, path, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            path = prefix + (str(index),)
            out[path] = item.start_mark.line + 1
            _line_index(item, path, out)


def parse_layer(text: str, source: str) -> ConfigLayer:
    """Parse one YAML document. Raises ConfigError naming the line for syntax errors and non-mappings."""
    loader = _SafeLoader(text)
    try:
        # One parse: the node tree gives the lines, the same tree is then built into Python values.
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError([ConfigProblem(source, "", line, f"invalid YAML: {problem}")]) from None
    finally:
        loader.dispose()
    if data is None:
        return ConfigLayer(source=source, data={})
    if not isinstance(data, dict):
        raise ConfigError([ConfigProblem(source, "", 1, "the file must be a mapping of keys to values")])
    lines: dict[tuple[str, ...], int] = {}
    if node is not None:
        _line_index(node, (), lines)
    extends = data.pop(EXTENDS_KEY, None)
    if extends is not None and not isinstance(extends, str):
        raise ConfigError([ConfigProblem(source, EXTENDS_KEY, lines.get((EXTENDS_KEY,)), "must be a string")])
    return ConfigLayer(source=source, data=data, lines=lines, extends=extends)


def read_layer(path: Path) -> ConfigLayer:
    return parse_layer(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def defaults_layer() -> ConfigLayer:
    """Parsed once per process: every review loads the config, and the defaults file does not change
    while the bot runs. Callers only read the layer (merging copies it)."""
    # Named "defaults", not by its path: the name is shown to PMs in comments and `/reqgate config`.
    return parse_layer(DEFAULTS_PATH.read_text(encoding="utf-8"), "defaults")


def _leaves(data: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(data, dict) and data:
        return [leaf for key, value in data.items() for leaf in _leaves(value, prefix + (str(key),))]
    return [prefix]


def _locate(layers: list[ConfigLayer], loc: tuple[str, ...]) -> tuple[str, int | None]:
    """The last layer that sets the longest prefix of `loc`, and that key's line."""
    for depth in range(len(loc), 0, -1):
        prefix = loc[:depth]
        for layer in reversed(layers):
            if prefix in layer.lines:
                return layer.source, layer.lines[prefix]
    return layers[-1].source, None


def _off_hint(error: Any) -> str:
    """YAML 1.1, which PyYAML follows, reads a bare `off` (and `no`, `false`) as the boolean false, so
    `default: off` arrives as False where a check mode is expected."""
    if error.get("input") is not False:
        return ""
    if "'off'" in error["msg"]:
        return "; YAML reads a bare off as false: quote it, 'off'"
    if (error.get("ctx") or {}).get("class_name") == "CheckModes":
        return "; YAML reads a bare off as false: to switch the check off write {default: 'off'} (quoted)"
    return ""


def load_config(*overrides: ConfigLayer, base: ConfigLayer | None = None) -> LoadedConfig:
    """Merge `overrides` (lowest priority first) over the defaults and validate the result."""
    layers = [base or defaults_layer(), *overrides]
    merged: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.data)
        leaves = [".".join(leaf) for leaf in _leaves(layer.data)]
        # A value an earlier layer set beneath one of this layer's leaves is replaced by it. One pass per
        # layer: looking once per leaf made loading the defaults alone quadratic in their size.
        replaced = tuple(leaf + "." for leaf in leaves)
        provenance = {key: source for key, source in provenance.items() if not key.startswith(replaced)}
        provenance.update(dict.fromkeys(leaves, layer.source))
    if base is None and not overrides:
        # The package's own defaults, validated by tests/test_config.py: built without pydantic, whose import
        # and validators would be most of a command-line review's start.
        return LoadedConfig(config=Config.trusted(merged), provenance=provenance, sources=[layers[0].source])
    from pydantic import ValidationError

    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = tuple(str(part) for part in error["loc"])
            source, line = _locate(layers, loc)
            message = error_message(error)
            if error["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
                message = "unknown key"
            problem = ConfigProblem(source, ".".join(loc), line, message + _off_hint(error))
            if problem not in problems:  # a `Mode | None` field reports once per branch of the union
                problems.append(problem)
        raise ConfigError(problems) from None
    return LoadedConfig(config=config, provenance=provenance, sources=[layer.source for layer in layers])


def load_default_config() -> Config:
    return load_config().config
