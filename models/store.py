"""The seam between the two stores: everything SQLite and PostgreSQL do differently, named here, so that
nothing outside models/ asks which store it runs on (docs/api.md §17; tests/test_architecture.py checks it).
Each operation works on the bound database `db` unless given another one (backup, restore and copy-to).
"""

import os
import sqlite3
from collections.abc import Iterable
from typing import Any

import peewee
from playhouse.db_url import connect

from models.base import SQLITE_FUNCTIONS, db


def _concrete(database: Any) -> Any:
    """The database itself: `db`'s when given none or the proxy."""
    return db.obj if database is None or isinstance(database, peewee.DatabaseProxy) else database


def on_sqlite(database: Any = None) -> bool:
    """For models/ only: SQLite (else PostgreSQL)."""
    return isinstance(_concrete(database), peewee.SqliteDatabase)


def sqlite_file(database: Any = None) -> str | None:
    """The SQLite file of the database; None for PostgreSQL or an in-memory SQLite database."""
    database = _concrete(database)
    if not isinstance(database, peewee.SqliteDatabase) or database.database == ":memory:":
        return None
    return database.database


def sqlite_database(path: str) -> peewee.Database:
    """A plain SQLite database on the file `path`, whatever the service runs on (a backup archive)."""
    return peewee.SqliteDatabase(path)


def trigram_search_available(database: Any = None) -> bool:
    """SQLite's FTS5 with the trigram tokenizer (SQLite 3.34+) answers keyword searches; other
    databases fall back to LIKE (PostgreSQL: under pg_trgm indexes)."""
    return on_sqlite(database) and sqlite3.sqlite_version_info >= (3, 34, 0)


def answers() -> bool:
    """Whether the store answers a query now (the health check)."""
    try:
        if on_sqlite() and not os.path.isfile(db.obj.database):
            return False  # a pooled connection may still hold a deleted file
        db.execute_sql("SELECT 1").fetchone()
    except Exception:  # any failure means "not answering"
        return False
    return True


# ---- the write lock's PostgreSQL part (SQLite's is models/writes.py: queues, flock, BEGIN IMMEDIATE) ----

# A transaction-level advisory lock (released at commit or rollback); its key is any constant of our own.
PG_WRITE_LOCK_KEY = 0x72657669657700


def take_pg_write_lock(database: Any) -> None:
    """Inside the outermost transaction on PostgreSQL: wait until every other writer is done."""
    database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (PG_WRITE_LOCK_KEY,))


# ---- who serves the database (services/operations/service_lock.py, docs/api.md §11) ----

# A session-level advisory lock: every serving process holds it shared on a connection of its own, a
# restore or copy-to takes it exclusively or refuses. Two int4 keys, as pg_locks shows them.
SERVICE_LOCK_KEYS = (0x72657669, 0x65770001)
SERVICE_LOCK_PREFIX = "review service: "  # the holder's application_name, then who it is


def _session(database_url: str, name: str) -> peewee.Database | None:
    """A connection of its own to the PostgreSQL database at `database_url`; None for SQLite."""
    if not database_url:
        return None
    database = connect(database_url, application_name=(SERVICE_LOCK_PREFIX + name)[:63])
    if isinstance(database, peewee.SqliteDatabase):
        return None
    database.connect()
    return database


def hold_service_lock(database_url: str, name: str) -> peewee.Database | None:
    """A serving process's share of the lock, held while the returned session stays open (waits while a
    restore holds it); `name` says who holds it. None on SQLite (the instance folder's lock does it)."""
    session = _session(database_url, name)
    if session is not None:
        session.execute_sql("SELECT pg_advisory_lock_shared(%s, %s)", SERVICE_LOCK_KEYS)
    return session


def take_service_lock_alone(database_url: str, name: str) -> tuple[peewee.Database | None, list[str]]:
    """The lock taken exclusively without waiting: (its session, []); or (None, who holds it) when
    serving processes do. (None, []) on SQLite."""
    session = _session(database_url, name)
    if session is None:
        return None, []
    if session.execute_sql("SELECT pg_try_advisory_lock(%s, %s)", SERVICE_LOCK_KEYS).fetchone()[0]:
        return session, []
    rows = session.execute_sql(
        "SELECT a.application_name, l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s AND l.objsubid = 2 "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        SERVICE_LOCK_KEYS,
    ).fetchall()
    session.close()
    return None, [
        name.removeprefix(SERVICE_LOCK_PREFIX)
        if (name or "").startswith(SERVICE_LOCK_PREFIX)
        else f"PostgreSQL session {backend} (pg_stat_activity)"
        for name, backend in rows
    ]


def release_service_lock(session: peewee.Database | None) -> None:
    if session is not None and not session.is_closed():
        session.execute_sql("SELECT pg_advisory_unlock_all()")  # a pooled URL's close() keeps the session
        session.close()


# ---- copying rows between databases (models/row_copy.py) ----


def read_one_snapshot(source: peewee.Database) -> None:
    """First statement of the copy's read transaction: every table read at one moment. PostgreSQL
    needs REPEATABLE READ for that; a SQLite read transaction is one snapshot already."""
    if not on_sqlite(source):
        source.execute_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")


def continue_ids(target: peewee.Database, models: Iterable[type[peewee.Model]]) -> None:
    """After rows were inserted with their ids: PostgreSQL's id sequences continue after the highest
    copied id (SQLite's AUTOINCREMENT-less ids follow MAX(id) by themselves)."""
    if on_sqlite(target):
        return
    for model in models:
        primary = model._meta.primary_key
        if not isinstance(primary, peewee.AutoField):
            continue
        table, column = model._meta.table_name, primary.column_name
        target.execute_sql(
            f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "  # noqa: S608
            f'COALESCE(MAX("{column}"), 1), MAX("{column}") IS NOT NULL) FROM "{table}"'
        )


# ---- case-folded matching ----


class _CaseFolds(dict):
    """str.translate table of fold_case, filled as characters are met."""

    def __missing__(self, code):
        char = chr(code)
        folded = next((f for f in (char.casefold(), char.lower()) if len(f) == 1), char)
        self[code] = folded
        return folded


_FOLDS = _CaseFolds()


def fold_case(text: str) -> str:
    """`text` with each character folded to one character, as FTS5's trigram tokenizer folds
    (ΣΑΣ and σας -> σασ, É -> é; ß and İ stay: it never turns one character into two).

    Python's Unicode tables are newer than SQLite's: letters added since (Cherokee small
    letters, Georgian Mtavruli, Osage, Adlam...) fold here but not in the index.
    """
    return None if text is None else text.translate(_FOLDS)


SQLITE_FUNCTIONS["fold_case"] = fold_case  # SQLite's fold_case(), for contains_folded and queued feedback


def contains_folded(column: peewee.Field, keyword: str) -> Any:
    """`column` contains `keyword`, letters compared case-folded on either store: PostgreSQL's ILIKE
    folds every letter; SQLite's LIKE folds ASCII only, so other keywords compare through fold_case."""
    if keyword.isascii() or not on_sqlite():
        return column.contains(keyword)  # escapes % and _
    return peewee.fn.instr(peewee.fn.fold_case(column), fold_case(keyword)) > 0
