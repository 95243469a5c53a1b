"""Copying an instance's rows to another database: `flask --app app copy-to DATABASE_URL`, and the rows of a
PostgreSQL instance into and out of a backup's SQLite file.

The target gets the schema a fresh start makes (models.schema.upgrade), then every table is copied in batches,
ids kept, each value passed through its field (SQLite's 0/1 become booleans); id sequences continue after the
copied ids. The source is only read.
"""

from collections.abc import Callable
from typing import Any

import peewee
from playhouse.db_url import connect

from models import ALL_MODELS, db
from models.schema import SchemaVersion, upgrade
from models.store import continue_ids, read_one_snapshot

BATCH = 500


class TargetNotEmpty(RuntimeError):
    """The target database already holds rows of the service."""


def _models():
    return [SchemaVersion, *ALL_MODELS]  # parents before children (ALL_MODELS is in that order)


def row_counts(database: Any = None) -> dict[str, int]:
    """Rows per table of the database, the bound one unless given another (a table it lacks counts 0)."""
    database = db if database is None else database
    return {
        model._meta.table_name: model.select().count(database) if database.table_exists(model._meta.table_name) else 0
        for model in _models()
    }


def copy_rows_to(target_url: str, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Copy every row of the bound database into the empty database at `target_url`; returns the
    rows copied per table."""
    target = connect(target_url)
    try:
        return copy_rows(db.obj, target, progress=progress)
    finally:
        target.close()


def copy_rows(
    source: peewee.Database,
    target: peewee.Database,
    *,
    replace: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """Every row of `source` into `target` (schema brought up to date first), in one transaction of each: the
    source read is one moment; `target` must hold no rows unless `replace`, which deletes them in that transaction.
    Every query names its database: the proxy `db` stays bound to the service's. Inserts ask for the row count,
    else a model's query asks for RETURNING when `db` is PostgreSQL."""
    source.connect(reuse_if_open=True)
    try:
        if not replace:
            with target.connection_context():
                busy = {
                    name: n for name, n in row_counts(target).items() if n and name != SchemaVersion._meta.table_name
                }
            if busy:
                raise TargetNotEmpty(
                    "the target database already holds "
                    + ", ".join(f"{n} {name} rows" for name, n in sorted(busy.items()))
                )
        upgrade(target)  # the schema a fresh start creates, at the latest version
        copied = dict.fromkeys((model._meta.table_name for model in ALL_MODELS), 0)
        with target.connection_context(), target.atomic(), source.atomic():
            read_one_snapshot(source)
            if replace:
                for model in reversed(ALL_MODELS):
                    model.delete().execute(target)
            for model in ALL_MODELS:
                for rows in _batches(source, model):
                    model.insert_many(rows).as_rowcount().execute(target)
                    copied[model._meta.table_name] += len(rows)
                    if progress:
                        progress(model._meta.table_name, copied[model._meta.table_name])
            continue_ids(target, ALL_MODELS)
        return copied
    finally:
        source.close()


def _batches(source, model):
    """The model's rows in the source database, by id, as {field name: Python value}, BATCH at a time."""
    fields = list(model._meta.sorted_fields)
    columns = ", ".join(f'"{field.column_name}"' for field in fields)
    primary = model._meta.primary_key.column_name
    cursor = source.execute_sql(f'SELECT {columns} FROM "{model._meta.table_name}" ORDER BY "{primary}"')  # noqa: S608
    while rows := cursor.fetchmany(BATCH):
        yield [
            {field.name: field.python_value(value) for field, value in zip(fields, row, strict=True)} for row in rows
        ]
