"""Database handle and base model shared by every table."""
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any
from urllib.parse import urlsplit

import peewee
from playhouse.db_url import connect
from playhouse.pool import PooledSqliteDatabase

# Bound in create_app (or by a CLI/bench script) through init_database().
db = peewee.DatabaseProxy()
# peewee logs every statement with its parameters at DEBUG: access tokens, password hashes, a
# password typed into the user name box. Its logger stays at INFO whatever the root level is.
logging.getLogger("peewee").setLevel(logging.INFO)

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "foreign_keys": 1,
    "busy_timeout": 10000,
    "cache_size": -4000,  # KiB per pooled connection; 8 threads stay well inside the memory budget
    "journal_size_limit": 64 * 1024 * 1024,  # the WAL file shrinks back after checkpoints
    # The service checkpoints from a background thread (checkpoint_wal); this in-commit checkpoint
    # (10,000 pages, ~40 MiB) is only the safety net for processes that run without it.
    "wal_autocheckpoint": 10000,
}
# One-argument deterministic SQL functions, {name: function}, added to every SQLite connection.
# A models module adds its own at import; models/__init__ imports them all before init_database.
SQLITE_FUNCTIONS: dict[str, Callable] = {}


# Stop callbacks of the threads that use `db` in the background (services.background). They are
# stopped before the database is bound again: closing a connection while another thread runs a
# statement on it crashes the sqlite3 module (seen once in CI as a segmentation fault).
_BACKGROUND: list[Callable[[], None]] = []


def register_background(stop: Callable[[], None]) -> None:
    _BACKGROUND.append(stop)


def _stop_background():
    while _BACKGROUND:
        _BACKGROUND.pop()()


def init_database(database_url: str | None = None, sqlite_path: str | None = None) -> peewee.Database:
    """Open the configured database (SQLite file by default) and bind the proxy to it.

    SQLite connections are pooled: closing the last connection to a WAL database checkpoints
    and deletes the WAL, which cost ~10 ms on every request when each request had its own.
    """
    _stop_background()
    if isinstance(db.obj, peewee.Database) and hasattr(db.obj, "close_all"):
        db.obj.close_all()  # a re-initialised app (tests, CLI) does not keep the old pool's files open
    if database_url:
        # PostgreSQL connections are pooled too: a new one costs a server process and ~4 ms.
        if urlsplit(database_url).scheme in ("postgres", "postgresql"):
            database_url = "postgresql+pool" + database_url[database_url.index("://"):]
        pooled = database_url.startswith("postgresql+pool") and "max_connections" not in database_url
        # At most the request threads and the background workers use one at a time (~12).
        database = connect(database_url, **({"max_connections": 32, "stale_timeout": 600} if pooled else {}))
        if isinstance(database, peewee.SqliteDatabase):
            database._pragmas = list(SQLITE_PRAGMAS.items())  # type: ignore[attr-defined]  # peewee's own fields
            database._timeout = 10  # type: ignore[attr-defined]
    else:
        database = PooledSqliteDatabase(
            sqlite_path, pragmas=SQLITE_PRAGMAS, timeout=10, check_same_thread=False,
            max_connections=64, stale_timeout=600,
        )
    if isinstance(database, peewee.SqliteDatabase):
        for name, function in SQLITE_FUNCTIONS.items():
            database.register_function(function, name, 1, deterministic=True)
        if database.database != ":memory:":
            _switch_to_wal(database.database)
    db.initialize(database)
    return database


def _switch_to_wal(path, timeout=10.0):
    """Put the file in WAL mode once, before any pooled connection opens.

    The switch needs the file to itself and SQLite does not wait for that in its busy handler: two
    processes creating the same new file at once made one fail at connect ("database is locked").
    """
    deadline = time.monotonic() + timeout
    while True:
        connection = sqlite3.connect(path, timeout=timeout)
        try:
            connection.execute("PRAGMA journal_mode = wal")  # a file system without WAL keeps its mode
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        finally:
            connection.close()
        time.sleep(0.05)


class JSONField(peewee.TextField):
    """JSON stored as UTF-8 text; None stays NULL."""

    def db_value(self, value: Any) -> str | None:
        if value is None:
            return None
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def python_value(self, value: Any) -> Any:
        if value is None:
            return None
        return json.loads(value)


def quote_name(name: str) -> str:
    """An SQL identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


# SQL text by statement shape. peewee spends 0.2-0.5 ms turning a query into SQL (more than SQLite
# takes to run it); the hot paths pay that once per process instead of on every request.
_SQL_CACHE: dict[tuple, str] = {}


def _statement(key, build):
    cache_key = (type(db.obj).__name__, key)
    sql = _SQL_CACHE.get(cache_key)
    if sql is None:
        sql = _SQL_CACHE[cache_key] = build()
    return sql


# Identifiers come from the models' metadata; every value is a bound parameter.
def _insert_sql(table, columns):
    if not columns:
        return f"INSERT INTO {quote_name(table)} DEFAULT VALUES"
    return f"INSERT INTO {quote_name(table)} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"  # noqa: S608


def _update_sql(table, columns, pk_column):
    return f"UPDATE {quote_name(table)} SET {', '.join(c + ' = ?' for c in columns)} WHERE {pk_column} = ?"  # noqa: S608


class BaseModel(peewee.Model):
    class Meta:
        database = db
        legacy_table_names = False

    def save(self, force_insert: bool = False, only: Any = None) -> int:
        """peewee's save, with the INSERT/UPDATE text cached per table and column set (SQLite)."""
        meta = self._meta
        if only is not None or meta.composite_key or not meta.primary_key or not meta.auto_increment \
                or not isinstance(db.obj, peewee.SqliteDatabase):
            return super().save(force_insert=force_insert, only=only)
        data = self.__data__.copy()
        if any(isinstance(value, peewee.Node) for value in data.values()):
            return super().save(force_insert=force_insert, only=only)  # SQL expressions as values
        self._populate_unsaved_relations(data)  # type: ignore[attr-defined]  # peewee's save() does the same
        pk_name, pk_value = meta.primary_key.name, self._pk  # type: ignore[has-type]
        data.pop(pk_name, None)
        names = tuple(name for name in meta.sorted_field_names if name in data)
        fields = [meta.fields[name] for name in names]
        params = [field.db_value(data[field.name]) for field in fields]
        columns = [quote_name(field.column_name) for field in fields]
        if pk_value is None or force_insert:
            if force_insert and pk_value is not None:
                names, columns = (pk_name, *names), [quote_name(meta.primary_key.column_name), *columns]
                params.insert(0, meta.primary_key.db_value(pk_value))
            sql = _statement(("insert", meta.table_name, names), lambda: _insert_sql(meta.table_name, columns))
            cursor = db.execute_sql(sql, params)
            if pk_value is None:
                self._pk = cursor.lastrowid
                self._dirty.discard(pk_name)  # type: ignore[attr-defined]
            rows = 1
        else:
            if not names:
                raise ValueError("no data to save!")
            sql = _statement(("update", meta.table_name, names), lambda: _update_sql(
                meta.table_name, columns, quote_name(meta.primary_key.column_name)))
            rows = db.execute_sql(sql, [*params, meta.primary_key.db_value(pk_value)]).rowcount
        self._dirty -= set(names)  # type: ignore[attr-defined]
        return rows


# The sqlite3 module lets go of the GIL around every step of a statement; with several request
# threads each of those hands the GIL to another thread (measured: ~60 context switches per task
# read at 8 connections, 4x the rest of the request). Short statements on the hot paths run one at
# a time under this lock instead, so the other threads sleep on it rather than contend. Hold it
# only around statements that cannot wait (reads in WAL mode; writes inside immediate()), and
# never take _WRITE_LOCK while holding it.
_STATEMENT_LOCK = threading.RLock()


def _run(key, build_sql, params):
    sql = _statement(("query", key), build_sql)
    with _STATEMENT_LOCK:
        cursor = db.execute_sql(sql, params)
        rows = cursor.fetchall() if cursor.description is not None else []  # psycopg2 refuses fetchall after UPDATE
        return rows, cursor.description, cursor.rowcount


# ---- prepared statements: the API the models' hot reads use (models/review.py, feedback.py, users.py) ----
# Services never call these: they write plain peewee, or call a named read of a models module.

def prepared_rows(key: Hashable, build_sql: Callable[[], str], *params: Any) -> tuple[list, Any]:
    """(rows, description) of a short statement whose SQL text `build_sql()` makes once per process.

    `key` must name everything that changes the text; values travel as `params` only.
    """
    rows, description, _ = _run(key, build_sql, params)
    return rows, description


def prepared_execute(key: Hashable, build: Callable[[], Any], *params: Any) -> tuple[list, int]:
    """Run the short peewee query `build()` returns (any kind) with new `params`; (rows, rowcount).
    `build` uses placeholder values in the order of `params`."""
    rows, _, count = _run(key, lambda: build().sql()[0], params)
    return rows, count


def rows_as(model: Any, fields: Any, rows: Any) -> list:
    """Model instances from raw rows whose values are in the order of `fields`, as peewee would read them."""
    instances = []
    for row in rows:
        instance = model(__no_default__=1)
        instance.__data__ = {field.name: field.python_value(value) for field, value in zip(fields, row, strict=True)}
        instances.append(instance)
    return instances


def prepared_select(model: Any, key: Hashable, build: Callable[[], Any], *params: Any) -> list:
    """Rows of `model` from the peewee query `build()` returns, as a list, reusing its SQL text and
    column mapping on later calls with new `params`.

    `build` must use placeholder values in the same order as `params`; `key` must name everything
    that changes the SQL text. Runs under the statement lock: for short reads (a key lookup, a page).
    """
    rows, description, _ = _run(("select", key), lambda: build().sql()[0], params)
    return rows_as(model, [model._meta.columns[column[0]] for column in description], rows)
