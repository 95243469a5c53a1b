"""Copying an instance's rows to another database: `flask --app app copy-to DATABASE_URL`, and the
backup and restore of a PostgreSQL instance (its rows into and out of the archive's SQLite file).
Schema migrations are models/schema.py's.

The target is given the schema exactly as a fresh start would (models.schema.upgrade), then every
table is copied in batches, ids kept, each value passed through its field (SQLite's 0/1 become
PostgreSQL's booleans, JSON text stays text); PostgreSQL's id sequences then continue after the
copied ids. The source is only read.
"""
from collections.abc import Callable

import peewee
from playhouse.db_url import connect

from models import ALL_MODELS, db
from models.schema import SchemaVersion, upgrade

BATCH = 500


class TargetNotEmpty(RuntimeError):
    """The target database already holds rows of the service."""


def _models():
    return [SchemaVersion, *ALL_MODELS]  # parents before children (ALL_MODELS is in that order)


def row_counts() -> dict[str, int]:
    """Rows per table of the bound database (a table it lacks counts 0)."""
    return {model._meta.table_name: model.select().count() if model.table_exists() else 0 for model in _models()}


def copy_rows_to(target_url: str, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Copy every row of the bound database into the empty database at `target_url`; returns the
    rows copied per table."""
    target = connect(target_url)
    try:
        return copy_rows(db.obj, target, progress=progress)
    finally:
        target.close()


def copy_rows(source: peewee.Database, target: peewee.Database, *, replace: bool = False,
              progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Every row of `source` into `target`, whose schema is brought up to date first, in one transaction
    of each (the source read is one consistent moment, even while a service writes to it). `target`
    must hold no rows unless `replace`, which deletes them in the same transaction (a failure leaves
    the target as it was). The proxy `db` is bound to `target` meanwhile, and to what it was after."""
    previous = db.obj
    source.connect(reuse_if_open=True)
    try:
        db.initialize(target)
        if not replace:
            with db.connection_context():
                busy = {name: n for name, n in row_counts().items() if n and name != SchemaVersion._meta.table_name}
            if busy:
                raise TargetNotEmpty("the target database already holds "
                                     + ", ".join(f"{n} {name} rows" for name, n in sorted(busy.items())))
        upgrade()  # the schema a fresh start creates, at the latest version
        copied = dict.fromkeys((model._meta.table_name for model in ALL_MODELS), 0)
        with db.connection_context(), db.atomic(), source.atomic():
            if isinstance(source, peewee.PostgresqlDatabase):  # one snapshot for every table
                source.execute_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            if replace:
                for model in reversed(ALL_MODELS):
                    model.delete().execute()
            for model in ALL_MODELS:
                for rows in _batches(source, model):
                    model.insert_many(rows).execute()
                    copied[model._meta.table_name] += len(rows)
                    if progress:
                        progress(model._meta.table_name, copied[model._meta.table_name])
            if isinstance(target, peewee.PostgresqlDatabase):
                for model in ALL_MODELS:
                    _continue_sequence(model)
        return copied
    finally:
        db.initialize(previous)
        source.close()


def _batches(source, model):
    """The model's rows in the source database, by id, as {field name: Python value}, BATCH at a time."""
    fields = list(model._meta.sorted_fields)
    columns = ", ".join(f'"{field.column_name}"' for field in fields)
    primary = model._meta.primary_key.column_name
    cursor = source.execute_sql(f'SELECT {columns} FROM "{model._meta.table_name}" ORDER BY "{primary}"')  # noqa: S608
    while rows := cursor.fetchmany(BATCH):
        yield [{field.name: field.python_value(value) for field, value in zip(fields, row, strict=True)}
               for row in rows]


def _continue_sequence(model):
    primary = model._meta.primary_key
    if not isinstance(primary, peewee.AutoField):
        return
    table = model._meta.table_name
    db.execute_sql(f"SELECT setval(pg_get_serial_sequence('{table}', '{primary.column_name}'), "  # noqa: S608
                   f'COALESCE(MAX("{primary.column_name}"), 1), MAX("{primary.column_name}") IS NOT NULL) '
                   f'FROM "{table}"')
