"""One writer at a time (the write lock every read-check-write takes, across processes too) and WAL checkpoints.
SQLite: this process's threads queue on _WRITE_LOCK, other processes on an flock, then BEGIN IMMEDIATE;
PostgreSQL: a transaction-level advisory lock.
"""

import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from models.base import SQLITE_PRAGMAS, db
from models.store import on_sqlite, sqlite_file, take_pg_write_lock

CHECKPOINT_AFTER_BYTES = 4 * 1024 * 1024
RESTART_WAIT_MS = 50


# Writers of this process queue here first: a thread waiting in SQLite's busy handler sleeps in
# growing steps, while one waiting on this lock wakes the moment the writer before it is done.
_WRITE_LOCK = threading.RLock()


# Writers of other processes on the same file queue on an flock of `<file>-writer`, taken after
# _WRITE_LOCK, for the same reason. One descriptor per file and process, used only by the thread
# holding _WRITE_LOCK; `_held` counts nested transactions.
_writer_files: dict[str, int] = {}
_held = [0]


@contextmanager
def _process_writer_lock(path: str) -> Iterator[None]:
    handle = None
    if path != ":memory:" and not _held[0]:
        handle = _writer_files.get(path)
        if handle is None:
            handle = _writer_files[path] = os.open(path + "-writer", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(handle, fcntl.LOCK_EX)
    _held[0] += 1
    try:
        yield
    finally:
        _held[0] -= 1
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)


# What is to run once this thread's outermost immediate() has ended (after_write()); None outside one.
_after = threading.local()


def after_write(action: Callable[[], Any]) -> None:
    """`action()` once this thread's outermost immediate() has ended (committed or not), at once outside
    one: a background pass woken for a row written here reads it outside the write lock, so it must not
    look before the row is committed (services.background.wake)."""
    pending = getattr(_after, "actions", None)
    if pending is None:
        action()
    else:
        pending.append(action)


@contextmanager
def immediate(database: Any = None) -> Iterator[None]:
    """Transaction that takes the write lock up front (reads that lead to writes): SQLite's IMMEDIATE,
    or on PostgreSQL an advisory lock, so a read-check-write runs alone on both stores, across
    processes too (READ COMMITTED then reads everything committed before the lock was granted).
    On the bound database unless given another (a copy's target, an archive being upgraded)."""
    if getattr(_after, "actions", None) is not None:  # nested: the outermost runs what comes after
        with _write_transaction(database):
            yield
        return
    pending: list[Callable[[], Any]] = []
    _after.actions = pending
    try:
        with _write_transaction(database):
            yield
    finally:
        _after.actions = None
        for action in pending:
            action()


@contextmanager
def _write_transaction(database: Any) -> Iterator[None]:
    database = db if database is None else database
    if not on_sqlite(database):
        with database.atomic():
            if database.transaction_depth() == 1:  # the outermost transaction; nested ones hold it already
                take_pg_write_lock(database)
            yield
        return
    path = sqlite_file(database) or ":memory:"
    with _WRITE_LOCK, _process_writer_lock(path), database.atomic("IMMEDIATE"):
        yield


def checkpoint_wal(min_bytes: int = CHECKPOINT_AFTER_BYTES) -> bool:
    """Copy the WAL back into the database once it holds `min_bytes`; True when a checkpoint ran. Run off the
    request path: a checkpoint inside a commit made every other writer queue behind its copy and fsync."""
    path = sqlite_file()
    if path is None:
        return False
    try:
        size = os.stat(path + "-wal").st_size
    except FileNotFoundError:
        return False
    if size < min_bytes:
        return False
    db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)")  # the bulk, while writers carry on
    # A WAL only starts over once no reader still uses it, which never happens by itself under a steady
    # mix of reads and writes: the rest is copied with the writers held back, waiting RESTART_WAIT_MS at most.
    with _WRITE_LOCK:
        db.execute_sql(f"PRAGMA busy_timeout = {RESTART_WAIT_MS}")
        try:
            db.execute_sql("PRAGMA wal_checkpoint(RESTART)")
        finally:
            db.execute_sql(f"PRAGMA busy_timeout = {SQLITE_PRAGMAS['busy_timeout']}")
    return True
