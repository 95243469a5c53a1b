"""The database copy of backup and restore (docs/api.md §11): a consistent copy, row counts, the files rows name.

The copy is always a plain SQLite file (on PostgreSQL, the rows of every table read in one REPEATABLE READ
transaction), which the other functions read with sqlite3 alone, without binding the service's database to it.
"""

import sqlite3
from collections.abc import Iterator
from contextlib import closing

from models import ALL_MODELS, Asset, Feedback, FeedbackAttachment, db
from models.row_copy import copy_rows
from models.row_copy import row_counts as bound_table_counts
from models.schema import SchemaVersion, upgrade
from models.store import on_sqlite, sqlite_database


def copy_database_to(path: str) -> None:
    """Write a consistent copy of the bound database to the new SQLite file `path`."""
    if not on_sqlite():
        carrier = sqlite_database(path)
        try:
            copy_rows(db.obj, carrier)
        finally:
            carrier.close()
        return
    with db.connection_context(), closing(sqlite3.connect(path)) as target:
        # One step: in WAL mode the copy reads one snapshot while writers go on (a stepped copy
        # starts over whenever another connection writes, which under load could be for ever).
        db.connection().backup(target, pages=-1)


def _tables() -> list[str]:
    return [model._meta.table_name for model in (SchemaVersion, *ALL_MODELS)]


def row_counts(path: str) -> dict[str, int]:
    """Rows per table of the service in the SQLite file `path` (a table it lacks counts 0)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        present = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {
            table: connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]  # noqa: S608
            if table in present
            else 0
            for table in _tables()
        }


def schema_version(path: str) -> int | None:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        try:
            row = connection.execute(f'SELECT MAX(version) FROM "{SchemaVersion._meta.table_name}"').fetchone()  # noqa: S608
        except sqlite3.DatabaseError:
            return None
    return row[0] if row else None


def stored_files(path: str) -> Iterator[str]:
    """Every file (relative to the uploads folder) a row of the SQLite file `path` names."""
    asset, attachment, feedback = Asset._meta.table_name, FeedbackAttachment._meta.table_name, Feedback._meta.table_name
    foreign_key = FeedbackAttachment.feedback.column_name
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        query = f'SELECT scope, stored_name FROM "{asset}" WHERE stored_name IS NOT NULL ORDER BY id'  # noqa: S608
        for scope, name in connection.execute(query):
            yield f"{scope}/{name}"
        for feedback_id, name in connection.execute(
            f'SELECT f.feedback_id, a.stored_name FROM "{attachment}" a JOIN "{feedback}" f '  # noqa: S608
            f'ON f.id = a."{foreign_key}" ORDER BY a.id'
        ):
            yield f"feedback/{feedback_id}/{name}"


def restore_rows_from(path: str, replace: bool) -> None:
    """Put the rows of the SQLite copy `path` into the bound (non-SQLite) database, in one
    transaction; `replace` deletes what it holds first (else it must hold none)."""
    source = sqlite_database(path)
    try:
        upgrade(source)  # an archive of an older version is upgraded first, as at start
        copy_rows(source, db.obj, replace=replace)
    finally:
        source.close()


def bound_row_counts() -> dict[str, int]:
    """Rows per table of the bound database."""
    with db.connection_context():
        return bound_table_counts()


def close_store() -> None:
    """Close every connection to the bound database (pooled ones too): before its file is replaced."""
    if not db.is_closed():
        db.close()
    if hasattr(db.obj, "close_all"):
        db.obj.close_all()
