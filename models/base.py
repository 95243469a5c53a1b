"""Database handle and base model shared by every table."""

import json
import logging
import sqlite3
import time
from collections.abc import Callable
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


def stop_background() -> None:
    """Stop every background worker of this process (before the database is bound anew, and by tests)."""
    while _BACKGROUND:
        _BACKGROUND.pop()()


def init_database(database_url: str | None = None, sqlite_path: str | None = None) -> peewee.Database:
    """Open the configured database (SQLite file by default) and bind the proxy to it. SQLite connections are
    pooled: closing the last connection to a WAL database checkpoints and deletes the WAL."""
    stop_background()
    if isinstance(db.obj, peewee.Database) and hasattr(db.obj, "close_idle"):
        _retire(db.obj)  # a re-initialised app (tests, CLI) does not keep the old pool's files open
    if database_url:
        # PostgreSQL connections are pooled too: a new one costs a server process and ~4 ms.
        if urlsplit(database_url).scheme in ("postgres", "postgresql"):
            database_url = "postgresql+pool" + database_url[database_url.index("://") :]
        pooled = database_url.startswith("postgresql+pool") and "max_connections" not in database_url
        # The request threads, the health threads and a thread per background job use one each (~22 by
        # default); past 32 (THREADS raised) a thread waits for a free one rather than failing at once.
        options: dict[str, Any] = {"max_connections": 32, "stale_timeout": 600, "timeout": 30} if pooled else {}
        if urlsplit(database_url).scheme.startswith("sqlite"):  # connect() passes these to the database class
            options.update(pragmas=SQLITE_PRAGMAS, timeout=10)
        database = connect(database_url, **options)
    else:
        database = PooledSqliteDatabase(
            sqlite_path,
            pragmas=SQLITE_PRAGMAS,
            timeout=10,
            check_same_thread=False,
            max_connections=64,
            stale_timeout=600,
        )
    if isinstance(database, peewee.SqliteDatabase):
        for name, function in SQLITE_FUNCTIONS.items():
            database.register_function(function, name, 1, deterministic=True)
        if database.database != ":memory:":
            _switch_to_wal(database.database)
    db.initialize(database)
    return database


def _retire(pool: Any) -> None:
    """Close the old pool's idle connections now and each one in use as its thread hands it back. Closing one
    that another thread is running a statement on crashes SQLite (close_all did: a segfault in the suite)."""
    pool._can_reuse = _never_reuse  # first: a connection handed back meanwhile is closed, not kept idle
    if not pool.is_closed():
        pool.close()
    pool.close_idle()


def _never_reuse(_connection: Any) -> bool:
    return False


def _switch_to_wal(path, timeout=10.0):
    """Put the file in WAL mode once, before any pooled connection opens. The switch needs the file to itself
    and SQLite's busy handler does not wait for that: two processes creating one new file would fail at connect."""
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
        return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def python_value(self, value: Any) -> Any:
        return None if value is None else json.loads(value)


def insert_rows(model: Any, rows: list[dict[str, Any]], conflict: tuple[str, ...] = ()) -> None:
    """Insert many rows in one executemany (peewee building each row in Python held the write lock for long).
    With `conflict`, a row whose `conflict` columns exist already updates its other columns instead (an upsert).
    Call inside a transaction; values go through each field's db_value."""
    if not rows:
        return
    given = set(rows[0])
    defaults = {f.name: f.default for f in model._meta.sorted_fields if f.name not in given and f.default is not None}
    fields = [model._meta.fields[name] for name in (*rows[0], *defaults)]
    columns = ", ".join(f'"{field.column_name}"' for field in fields)
    on_postgres = isinstance(db.obj, peewee.PostgresqlDatabase)
    marks = "%s" if on_postgres else "(" + ", ".join([db.param] * len(fields)) + ")"  # execute_values' one %s
    sql = f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES {marks}'  # noqa: S608 - names from the model
    if conflict:
        keys = ", ".join('"%s"' % model._meta.fields[name].column_name for name in conflict)  # noqa: UP031
        sets = ", ".join(f'"{f.column_name}" = excluded."{f.column_name}"' for f in fields if f.name not in conflict)
        sql += f" ON CONFLICT ({keys}) DO UPDATE SET {sets}"
    fixed = {name: value() if callable(value) else value for name, value in defaults.items()}
    values = [
        tuple(field.db_value(row[field.name] if field.name in given else fixed[field.name]) for field in fields)
        for row in rows
    ]
    if on_postgres:  # psycopg2's executemany is a round trip a row; execute_values sends pages of rows
        from psycopg2.extras import execute_values

        execute_values(db.cursor(), sql, values, page_size=1000)
    else:
        db.cursor().executemany(sql, values)


class BaseModel(peewee.Model):
    class Meta:
        database = db
        legacy_table_names = False


def first_row(rows: Any) -> Any:
    """The first row of a query (a `Model.raw` read), or None."""
    return next(iter(rows), None)
