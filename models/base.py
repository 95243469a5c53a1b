"""Database handle and base model shared by every table."""
import json
import threading
from contextlib import contextmanager

import peewee
from playhouse.db_url import connect
from playhouse.pool import PooledSqliteDatabase

# Bound in create_app (or by a CLI/bench script) through init_database().
db = peewee.DatabaseProxy()

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "foreign_keys": 1,
    "busy_timeout": 10000,
    "cache_size": -4000,  # KiB per pooled connection; 8 threads stay well inside the memory budget
    "journal_size_limit": 64 * 1024 * 1024,  # the WAL file shrinks back after checkpoints
}


def init_database(database_url=None, sqlite_path=None):
    """Open the configured database (SQLite file by default) and bind the proxy to it.

    SQLite connections are pooled: closing the last connection to a WAL database checkpoints
    and deletes the WAL, which cost ~10 ms on every request when each request had its own.
    """
    if isinstance(db.obj, peewee.Database) and hasattr(db.obj, "close_all"):
        db.obj.close_all()  # a re-initialised app (tests, CLI) does not keep the old pool's files open
    if database_url:
        database = connect(database_url)
        if isinstance(database, peewee.SqliteDatabase):
            database._pragmas = list(SQLITE_PRAGMAS.items())
            database._timeout = 10
    else:
        database = PooledSqliteDatabase(
            sqlite_path, pragmas=SQLITE_PRAGMAS, timeout=10, check_same_thread=False,
            max_connections=64, stale_timeout=600,
        )
    db.initialize(database)
    return database


# Writers of this process queue here first: a thread waiting in SQLite's busy handler sleeps in
# growing steps, while one waiting on this lock wakes the moment the writer before it is done
# (write p99 under 16 connections: ~300 ms -> ~185 ms). Re-entrant for nested transactions.
_WRITE_LOCK = threading.RLock()


@contextmanager
def immediate():
    """Transaction that takes the write lock up front (reads that lead to writes)."""
    if not isinstance(db.obj, peewee.SqliteDatabase):
        with db.atomic():
            yield
        return
    with _WRITE_LOCK, db.atomic("IMMEDIATE"):
        yield


class JSONField(peewee.TextField):
    """JSON stored as UTF-8 text; None stays NULL."""

    def db_value(self, value):
        if value is None:
            return None
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def python_value(self, value):
        if value is None:
            return None
        return json.loads(value)


class BaseModel(peewee.Model):
    class Meta:
        database = db
        legacy_table_names = False


_SQL_CACHE = {}


def cached_select(model, key, build, *params):
    """Run the query `build()` returns, reusing its SQL text on later calls with new `params`.

    peewee spends ~0.2 ms turning a query into SQL; the hottest reads (session user, task detail)
    pay that once per process instead of on every request. `build` must use placeholder values in
    the same order as `params`; `key` must name everything that changes the SQL text.
    """
    cache_key = (type(db.obj).__name__, key)
    sql = _SQL_CACHE.get(cache_key)
    if sql is None:
        sql = _SQL_CACHE[cache_key] = build().sql()[0]
    return model.raw(sql, *params)
