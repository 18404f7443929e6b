"""Declarative validation of JSON values, the Python twin of the TypeScript client's zod schemas.

Each schema parses one decoded JSON value and returns it (with defaults filled in), or raises
ParamError naming the path of the fault, e.g. ``params.groups[1].sequences[0].advantage: expected
a finite number, got NaN``. The standard library only: the sidecar must start wherever torch does.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from typing import Any, Callable, Mapping, Sequence


class ParamError(ValueError):
    """A value that does not fit its schema; ``path`` says where, ``problem`` what is wrong."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def describe(value: Any) -> str:
    """A short, stable rendering of a value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, list):
        return f"an array of {len(value)}"
    return "an object" if isinstance(value, dict) else type(value).__name__


class Schema(ABC):
    """A validator of one JSON value; `path` names it in error messages."""

    @abstractmethod
    def parse(self, value: Any, path: str) -> Any: ...


INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class Integer(Schema):
    """An integer within int64 (what torch takes for seeds, sizes and ids), or tighter bounds. A
    number beyond it used to reach torch and come back as an ``internal`` fault; it is a
    parameter error at its path instead."""

    def __init__(self, minimum: int | None = None, maximum: int | None = None) -> None:
        self.minimum = INT64_MIN if minimum is None else minimum
        self.maximum = INT64_MAX if maximum is None else maximum

    def parse(self, value: Any, path: str) -> int:
        # JSON has one number type: 3.0 from a JavaScript client is the integer 3; bools are not numbers.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParamError(path, f"expected an integer, got {describe(value)}")
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            raise ParamError(path, f"expected an integer, got {describe(value)}")
        number = int(value)
        if self.minimum is not None and number < self.minimum:
            raise ParamError(path, f"expected an integer ≥ {self.minimum}, got {number}")
        if self.maximum is not None and number > self.maximum:
            raise ParamError(path, f"expected an integer ≤ {self.maximum}, got {number}")
        return number


class Number(Schema):
    """A finite number (Python's json module accepts NaN and Infinity literals; they are refused here)."""

    def __init__(self, minimum: float | None = None, exclusive_minimum: float | None = None) -> None:
        self.minimum = minimum
        self.exclusive_minimum = exclusive_minimum

    def parse(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ParamError(path, f"expected a finite number, got {describe(value)}")
        if self.minimum is not None and value < self.minimum:
            raise ParamError(path, f"expected a number ≥ {self.minimum}, got {value}")
        if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
            raise ParamError(path, f"expected a number > {self.exclusive_minimum}, got {value}")
        return float(value)


class ScalarRow(Schema):
    """A list of scalars checked in one pass: the hot path of the protocol (log-prob and mask rows
    of 10^5 tokens), where a parse call per element would cost more than the math."""

    expected = ""

    def __init__(self, min_length: int = 0) -> None:
        self.min_length = min_length

    @staticmethod
    @abstractmethod
    def accepts(item: Any) -> bool: ...

    def convert(self, row: list) -> list:
        return row

    def parse(self, value: Any, path: str) -> list:
        row = require_list(value, path, self.min_length)
        bad = next((i for i, item in enumerate(row) if not self.accepts(item)), None)
        if bad is not None:
            raise ParamError(f"{path}[{bad}]", f"expected {self.expected}, got {describe(row[bad])}")
        return self.convert(row)


class Numbers(ScalarRow):
    """Finite numbers (bools are not numbers)."""

    expected = "a finite number"

    @staticmethod
    def accepts(item: Any) -> bool:
        return type(item) in (float, int) and math.isfinite(item)


class MaskRow(ScalarRow):
    """One row of a token mask: 0/1 or booleans, as @rubric/core accepts; returned as booleans."""

    expected = "0, 1, true or false"

    @staticmethod
    def accepts(item: Any) -> bool:
        return item is True or item is False or (type(item) in (int, float) and item in (0, 1))

    def convert(self, row: list) -> list:
        return [item == 1 for item in row]


class Boolean(Schema):
    def parse(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise ParamError(path, f"expected true or false, got {describe(value)}")
        return value


class Text(Schema):
    def __init__(self, choices: Sequence[str] | None = None, min_length: int = 0, pattern: str | None = None) -> None:
        self.choices = tuple(choices) if choices is not None else None
        self.min_length = min_length
        self.pattern = re.compile(pattern) if pattern is not None else None

    def parse(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise ParamError(path, f"expected a string, got {describe(value)}")
        if self.choices is not None and value not in self.choices:
            raise ParamError(path, f"expected one of {', '.join(repr(c) for c in self.choices)}, got {describe(value)}")
        if len(value) < self.min_length:
            raise ParamError(path, f"expected at least {self.min_length} characters, got {len(value)}")
        if self.pattern is not None and self.pattern.fullmatch(value) is None:
            raise ParamError(path, f"expected a string matching {self.pattern.pattern}, got {describe(value)}")
        return value


class ListOf(Schema):
    def __init__(self, item: Schema, min_length: int = 0, max_length: int | None = None) -> None:
        self.item = item
        self.min_length = min_length
        self.max_length = max_length

    def parse(self, value: Any, path: str) -> list:
        items = require_list(value, path, self.min_length, self.max_length)
        return [self.item.parse(item, f"{path}[{i}]") for i, item in enumerate(items)]


class MapOf(Schema):
    """A JSON object used as a map: any keys, each value of one schema, named ``path.key`` in errors."""

    def __init__(self, item: Schema, min_length: int = 0) -> None:
        self.item = item
        self.min_length = min_length

    def parse(self, value: Any, path: str) -> dict:
        if not isinstance(value, dict):
            raise ParamError(path, f"expected an object, got {describe(value)}")
        if len(value) < self.min_length:
            raise ParamError(path, f"expected at least {self.min_length} entries, got {len(value)}")
        return {key: self.item.parse(item, f"{path}.{key}") for key, item in value.items()}


def require_list(value: Any, path: str, min_length: int, max_length: int | None = None) -> list:
    if not isinstance(value, list):
        raise ParamError(path, f"expected an array, got {describe(value)}")
    if len(value) < min_length:
        raise ParamError(path, f"expected at least {min_length} items, got {len(value)}")
    if max_length is not None and len(value) > max_length:
        raise ParamError(path, f"expected at most {max_length} items, got {len(value)}")
    return value


REQUIRED = object()


class Field:
    """One field of a Record: its schema and its default (REQUIRED, or a value; None means optional)."""

    def __init__(self, schema: Schema, default: Any = REQUIRED) -> None:
        self.schema = schema
        self.default = default


class Record(Schema):
    """A JSON object with known fields; unknown fields are refused (a typo must not pass silently)."""

    def __init__(self, fields: Mapping[str, Field | Schema], check: Callable[[dict, str], None] | None = None) -> None:
        self.fields = {name: f if isinstance(f, Field) else Field(f) for name, f in fields.items()}
        self.check = check

    def parse(self, value: Any, path: str) -> dict:
        if not isinstance(value, dict):
            raise ParamError(path, f"expected an object, got {describe(value)}")
        for name in value:
            if name not in self.fields:
                raise ParamError(f"{path}.{name}", f"unknown field (expected {', '.join(self.fields) or 'no fields'})")
        parsed: dict = {}
        for name, spec in self.fields.items():
            if name in value and value[name] is not None:
                parsed[name] = spec.schema.parse(value[name], f"{path}.{name}")
            elif spec.default is REQUIRED:
                raise ParamError(f"{path}.{name}", "required")
            else:
                parsed[name] = spec.default
        if self.check is not None:
            self.check(parsed, path)
        return parsed


class Tagged(Schema):
    """A union of Records told apart by the string field ``tag`` (zod's discriminatedUnion)."""

    def __init__(self, tag: str, variants: Mapping[str, Record]) -> None:
        self.tag = tag
        self.variants = dict(variants)

    def parse(self, value: Any, path: str) -> dict:
        if not isinstance(value, dict):
            raise ParamError(path, f"expected an object, got {describe(value)}")
        kind = value.get(self.tag)
        if kind not in self.variants:
            raise ParamError(f"{path}.{self.tag}", f"expected one of {', '.join(repr(k) for k in self.variants)}, got {describe(kind)}")
        return self.variants[kind].parse(value, path)
