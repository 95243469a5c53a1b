"""Answers written by the response schemas themselves, through marshmallow's own dump(): a field names the
model attribute it comes from (`attribute="task.task_id"`), and None is left out unless the field allows it
(docs/conventions.md), in nested rows too."""

from collections.abc import Callable
from functools import cache
from typing import Any

from marshmallow import Schema, fields

Dump = Callable[..., dict[str, Any]]


class _Given:
    """`row` with some attributes given by the caller."""

    def __init__(self, row: Any, given: dict[str, Any]) -> None:
        self._row, self._given = row, given

    def __getattr__(self, name: str) -> Any:
        return self._given[name] if name in self._given else getattr(self._row, name)


def _nested(field: fields.Field) -> type[Schema] | None:
    """The schema of a Nested or List(Nested) field, else None."""
    inner = field.inner if isinstance(field, fields.List) else field
    if isinstance(inner, fields.Nested):
        return inner.nested if isinstance(inner.nested, type) else type(inner.nested)
    return None


@cache
def _plan(schema: type[Schema]) -> list[tuple[str, bool, type[Schema] | None]]:
    """(data key, allows None, nested schema) of each field, worked out once per schema."""
    return [(field.data_key or name, field.allow_none, _nested(field)) for name, field in schema().fields.items()]


def _without_nulls(schema: type[Schema], data: Any) -> Any:
    """`data` as dumped by `schema`, with the None values of fields that do not allow None left out."""
    if isinstance(data, list):
        return [_without_nulls(schema, item) for item in data]
    if not isinstance(data, dict):
        return data
    out = {}
    for key, allow_none, nested in _plan(schema):
        if key not in data:
            continue
        value = data[key]
        if value is None and not allow_none:
            continue
        out[key] = _without_nulls(nested, value) if nested and value is not None else value
    return out


@cache
def dumper(schema: type[Schema]) -> Dump:
    """`dump(row, **given) -> dict` for `schema`; `given` supplies values by data key."""
    instance = schema()
    attribute = {field.data_key or name: field.attribute or name for name, field in instance.fields.items()}

    def dump(row: Any, **given: Any) -> dict[str, Any]:
        source = _Given(row, {attribute[key]: value for key, value in given.items()}) if given else row
        return _without_nulls(schema, instance.dump(source))

    return dump
