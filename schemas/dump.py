"""Answers written by the response schemas themselves: one definition per shape.

A response schema names, for each field, the model attribute it comes from (`attribute="task_id"`,
dotted through a relation: `"task.task_id"`). `dumper(Schema)` compiles the schema's declared fields
once into a plain function over model rows, because marshmallow's own dump() walks its field
machinery per value and costs the hot task read about half its speed. The rules:

- a value that is None is left out, unless the field allows None (then it is sent as null);
- `List(Nested(S))` fields are lists of rows, each dumped by S's own dumper; the caller passes
  them by data key when they are not attributes of the row (a task's jobs and events);
- every other value is sent as stored: JSON columns (candidates, selections...) hold what the
  input schemas validated, timestamps are stored as the ISO text they are sent as.

tests/test_response_shapes.py checks that this equals marshmallow's dump() of the same schema.
"""
from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import Any

from marshmallow import Schema, fields

Dump = Callable[..., dict[str, Any]]


def _rows_of(field: fields.Field) -> type[Schema] | None:
    """The nested schema of a List(Nested(S)) field, else None."""
    if isinstance(field, fields.List) and isinstance(field.inner, fields.Nested):
        nested = field.inner.nested
        return nested if isinstance(nested, type) else type(nested)
    return None


@cache
def dumper(schema: type[Schema]) -> Dump:
    """`dump(row, **given) -> dict` for `schema`; `given` supplies values by data key."""
    plan = []
    for name, field in schema._declared_fields.items():
        rows = _rows_of(field)
        plan.append((field.data_key or name, attrgetter(field.attribute or name), field.allow_none,
                     dumper(rows) if rows else None))

    def dump(row: Any, **given: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, get, allow_none, nested in plan:
            value = given[key] if given and key in given else get(row)
            if value is None:
                if allow_none:
                    out[key] = None
            elif nested is not None:
                out[key] = [nested(item) for item in value]
            else:
                out[key] = value
        return out

    return dump
