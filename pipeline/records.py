"""Records: the review's typed values as plain dataclasses, validated by pydantic only where data comes in.

Every review builds these values, but only data from outside (a configuration file, the model's answer,
a stored review) needs checking. Defining the types as pydantic models made every start of `reqgate`
import pydantic and build ~40 validators, about 40 % of an offline review's time. A `Record` is a
keyword-only dataclass; pydantic is imported, and a record's validator built, the first time a record
is validated, dumped to a schema, or embedded in a pydantic model (pydantic reads dataclasses natively).

The methods keep pydantic's names (`model_validate`, `model_dump`, `model_copy`, …) so that callers read
the same as for the pydantic models elsewhere in the code. Constraints and input converters are written
as `Annotated` metadata (`Bounds`, `Before`, `After`) that hand pydantic its own `Field` and validators
when it builds a schema. Building a record directly, as the review's code does, checks nothing but what
a class's own `__post_init__` checks (a configuration's rubrics, a packet's type).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import json
import math
import os
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self, dataclass_transform

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema


@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
class Record:
    """Base of every record: subclasses become keyword-only dataclasses that reject unknown keys."""

    # Read by pydantic when it validates a record: a misspelt key is an error, never silently dropped.
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Equality and repr are the base's, written once: generating them per class is half of what
        # defining a record costs, and ~45 records are defined at every start.
        dataclasses.dataclass(cls, kw_only=True, eq=False, repr=False)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in field_names(type(self)))

    # Mutable, like the dataclasses and pydantic models they replace: never a dict key or set member.
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in field_names(type(self)))
        return f"{type(self).__qualname__}({fields})"

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """`data` (mappings, lists, scalars) checked and converted; raises pydantic's ValidationError."""
        return _adapter(cls).validate_python(data)

    @classmethod
    def model_validate_json(cls, data: str | bytes) -> Self:
        return _adapter(cls).validate_json(data)

    @classmethod
    def trusted(cls, data: dict[str, Any]) -> Self:
        """Built from data known to be valid, without pydantic: nested records built from their mappings,
        numbers for float fields made floats, nothing checked. For the package's own defaults only, which a
        test validates; everything from outside goes through `model_validate`."""
        hints = _field_types(cls)
        return cls(**{name: _built(hints[name], value) for name, value in data.items()})

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return _adapter(cls).json_schema()

    def model_dump(self, *, mode: str = "python", exclude: set[str] | None = None) -> dict[str, Any]:
        """Fields as a dict, nested records as dicts, as pydantic's own dump gives them: a whole number in a
        float field as a float; with `mode="json"` only JSON types (enums as their value, tuples as lists)."""
        return _fields_dumped(self, mode == "json", exclude, None)

    def model_dump_json(self, *, indent: int | None = None) -> str:
        """The JSON pydantic writes: compact without an indent, non-ASCII characters kept, numbers in its
        notation (0.00005725, not Python's 5.725e-05)."""
        numbers: dict[str, str] = {}
        separators = (",", ":") if indent is None else (",", ": ")
        text = json.dumps(_fields_dumped(self, True, None, numbers), ensure_ascii=False, indent=indent,
                          separators=separators)
        for mark, number in numbers.items():
            text = text.replace(json.dumps(mark), number, 1)
        return text

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with `update`'s fields replaced, unchecked like pydantic's `model_copy`; shallow unless
        `deep`."""
        source = copy.deepcopy(self) if deep else self
        return dataclasses.replace(source, **(update or {}))


@functools.cache
def field_names(cls: type[Record]) -> tuple[str, ...]:
    return tuple(item.name for item in dataclasses.fields(cls))


@functools.cache
def _field_types(cls: type[Record]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@functools.cache
def _float_fields(cls: type[Record]) -> frozenset[str]:
    return frozenset(name for name, hint in _field_types(cls).items() if hint in (float, float | None))


def prepare_validators(*classes: type[Record]) -> None:
    """Build these records' validators now (a worker's start) rather than in its first review, where the
    biggest, ReviewResult's, takes ~0.1 s."""
    for cls in classes:
        _adapter(cls)


def _built(hint: Any, value: Any) -> Any:
    """`value` as pydantic would give it for the type `hint`, for the types records use."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        kinds = [arg for arg in args if arg is not type(None)]
        return value if value is None or len(kinds) != 1 else _built(kinds[0], value)
    if origin is list:
        return [_built(args[0], item) for item in value]
    if origin is dict:
        return {key: _built(args[1], item) for key, item in value.items()}
    if isinstance(hint, type):
        if issubclass(hint, Record):
            return hint.trusted(value)
        if issubclass(hint, enum.Enum):
            return hint(value)
        if hint is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
    return value


def _fields_dumped(
    record: Record, as_json: bool, exclude: set[str] | None, numbers: dict[str, str] | None
) -> dict[str, Any]:
    floats = _float_fields(type(record))
    out = {}
    for name in field_names(type(record)):
        if exclude and name in exclude:
            continue
        value = getattr(record, name)
        if name in floats and type(value) is int:
            value = float(value)
        out[name] = _dumped(value, as_json, numbers)
    return out


# Marks a number json.dumps would write in Python's notation, to be replaced by pydantic's in the text.
# Random per process, so that no ticket text can hold one.
_NUMBER_MARK = "\x00" + os.urandom(8).hex()


def _dumped(value: Any, as_json: bool, numbers: dict[str, str] | None) -> Any:
    if isinstance(value, Record):
        return _fields_dumped(value, as_json, None, numbers)
    if isinstance(value, list):
        return [_dumped(item, as_json, numbers) for item in value]
    if isinstance(value, tuple):
        items = [_dumped(item, as_json, numbers) for item in value]
        return items if as_json else tuple(items)
    if isinstance(value, dict):
        return {key: _dumped(item, as_json, numbers) for key, item in value.items()}
    if as_json and isinstance(value, enum.Enum):
        return value.value
    if numbers is not None and type(value) is float and (0 < abs(value) < 1e-4 or not math.isfinite(value)):
        mark = f"{_NUMBER_MARK}{len(numbers)}\x00"
        numbers[mark] = _pydantic_number(value)
        return mark
    return value


# pydantic words two errors differently for a dataclass than for a model; PMs (in configuration errors) and
# the model (in call 1's re-ask) read the models' words before records replaced them.
_MODEL_WORDING = {
    "unexpected_keyword_argument": "Extra inputs are not permitted",
    "dataclass_type": "Input should be a valid dictionary or instance of {class_name}",
}


def error_message(error: Mapping[str, Any]) -> str:
    """The message of one of pydantic's `ValidationError.errors()`, worded as for a pydantic model."""
    wording = _MODEL_WORDING.get(error["type"])
    # From JSON both say "Input should be an object".
    if wording is None or error["msg"] == "Input should be an object":
        return str(error["msg"])
    return wording.format(**(error.get("ctx") or {}))


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


def _pydantic_number(value: float) -> str:
    """pydantic's JSON for a float Python would write with a negative exponent: below 1e-4 down to 1e-5 in
    full (0.00005725), smaller with an unpadded exponent (1e-7); infinities and NaN as null."""
    if not math.isfinite(value):
        return "null"
    text = repr(value)
    mantissa, _, exponent = text.partition("e-")
    if exponent != "05":
        return f"{mantissa}e-{int(exponent)}"
    sign, digits = ("-", mantissa[1:]) if mantissa.startswith("-") else ("", mantissa)
    return f"{sign}0.0000{digits.replace('.', '')}"
