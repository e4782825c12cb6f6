"""Records: the review's typed values as plain dataclasses, validated by pydantic only where data comes in.

Every review builds these values, but only data from outside (a configuration file, the model's answer,
a stored review) needs checking. Defining the types as pydantic models made every start of `reqgate`
import pydantic and build ~40 validators, about 40 % of an offline review's time. A `Record` is a
keyword-only dataclass; pydantic is imported, and a record's validator built, the first time a record
is validated, dumped to a schema, or embedded in a pydantic model (pydantic reads dataclasses natively).

The methods keep pydantic's names (`model_validate`, `model_dump`, `model_copy`, …) so that callers read
the same as for the pydantic models elsewhere in the code. Constraints and input converters are written
as `Annotated` metadata (`Bounds`, `Before`, `After`) that hand pydantic its own `Field` and validators
when it builds a schema. Building a record directly, as the review's code does, checks nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, dataclass_transform

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema

R = TypeVar("R", bound="Record")


@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
class Record:
    """Base of every record: subclasses become keyword-only dataclasses that reject unknown keys."""

    # Read by pydantic when it validates a record: a misspelt key is an error, never silently dropped.
    __pydantic_config__ = {"extra": "forbid"}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(cls, kw_only=True)

    @classmethod
    def model_validate(cls: type[R], data: Any) -> R:
        """`data` (mappings, lists, scalars) checked and converted; raises pydantic's ValidationError."""
        return _adapter(cls).validate_python(data)

    @classmethod
    def model_validate_json(cls: type[R], data: str | bytes) -> R:
        return _adapter(cls).validate_json(data)

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return _adapter(cls).json_schema()

    def model_dump(self, *, mode: str = "python", exclude: set[str] | None = None) -> dict[str, Any]:
        """Fields as a dict, nested records as dicts. `mode="json"`: only JSON types (enums as their value,
        tuples as lists), as pydantic's own dump gives them."""
        as_json = mode == "json"
        return {
            name: _dumped(getattr(self, name), as_json)
            for name in field_names(type(self))
            if not exclude or name not in exclude
        }

    def model_dump_json(self, *, indent: int | None = None) -> str:
        # pydantic's layout: compact without an indent, non-ASCII characters kept as they are.
        separators = (",", ":") if indent is None else (",", ": ")
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, indent=indent, separators=separators)

    def model_copy(self: R, *, update: dict[str, Any] | None = None, deep: bool = False) -> R:
        """A copy with `update`'s fields replaced, unchecked like pydantic's `model_copy`; shallow unless
        `deep`."""
        source = copy.deepcopy(self) if deep else self
        return dataclasses.replace(source, **(update or {}))


@functools.cache
def field_names(cls: type[Record]) -> tuple[str, ...]:
    return tuple(item.name for item in dataclasses.fields(cls))


def _dumped(value: Any, as_json: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(mode="json" if as_json else "python")
    if isinstance(value, list):
        return [_dumped(item, as_json) for item in value]
    if isinstance(value, tuple):
        items = [_dumped(item, as_json) for item in value]
        return items if as_json else tuple(items)
    if isinstance(value, dict):
        return {key: _dumped(item, as_json) for key, item in value.items()}
    if as_json and isinstance(value, enum.Enum):
        return value.value
    return value


@functools.cache
def _adapter(cls: type[Record]) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


class Bounds:
    """Limits of a number or a string (`Annotated[int, Bounds(ge=0)]`), pydantic's `Field` arguments."""

    def __init__(self, **limits: Any) -> None:
        self.limits = limits

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from typing import Annotated

        from pydantic import Field

        return handler(Annotated[source, Field(**self.limits)])


class Before:
    """Converts the raw input before pydantic checks its type (`Annotated[Category, Before(fn)]`)."""

    def __init__(self, convert: Callable[[Any], Any]) -> None:
        self.convert = convert

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(self.convert, handler(source))


class After:
    """Checks (or converts) the value once pydantic has checked its type; raises ValueError to refuse it."""

    def __init__(self, check: Callable[[Any], Any]) -> None:
        self.check = check

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.check, handler(source))
