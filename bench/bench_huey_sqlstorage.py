"""Why background work is not on huey 3's SqlStorage (docs/conventions.md "Background work"): two processes
dequeuing from one SQLite file, and a process killed just after it dequeued.

    pip install huey==3.0.0 && python bench/bench_huey_sqlstorage.py [--messages 2000]

huey is not a dependency of the service: this measures the library the project weighed, in a folder of its
own. The file is in WAL mode with a 5 s busy timeout, as the service's own database is. Printed: each
process's messages dequeued and the "database is locked" errors it met doing so (SqlStorage.dequeue reads,
then deletes, in a deferred transaction), and the queue's size after a process that took a message was
killed before it could work on it (the message is gone: dequeue has no acknowledgement).
"""

import argparse
import multiprocessing
import os
import signal
import tempfile
import time
from pathlib import Path

from huey.contrib.sql_huey import SqlHuey
from peewee import OperationalError, SqliteDatabase


def _queue(path: Path) -> SqlHuey:
    return SqlHuey("bench", database=SqliteDatabase(str(path), pragmas={"journal_mode": "wal", "busy_timeout": 5000}))


def _dequeue_all(path: Path, results: "multiprocessing.Queue[tuple[int, int]]") -> None:
    """Dequeue until the queue has stayed empty for a second: (messages taken, locked errors)."""
    storage, taken, locked, idle_since = _queue(path).storage, 0, 0, None
    while idle_since is None or time.monotonic() - idle_since < 1.0:
        try:
            data = storage.dequeue()
        except OperationalError:
            locked += 1
            continue
        if data is None:
            idle_since = idle_since or time.monotonic()
        else:
            taken, idle_since = taken + 1, None
    results.put((taken, locked))


def _take_and_die(path: Path) -> None:
    _queue(path).storage.dequeue()
    os.kill(os.getpid(), signal.SIGKILL)  # before any work on it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "queue.db"
        storage = _queue(path).storage
        for n in range(args.messages):
            storage.enqueue(b"m%d" % n)
        results: multiprocessing.Queue[tuple[int, int]] = multiprocessing.Queue()
        workers = [multiprocessing.Process(target=_dequeue_all, args=(path, results)) for _ in range(2)]
        for worker in workers:
            worker.start()
        rows = [results.get() for _ in workers]
        for worker in workers:
            worker.join()
        for number, (taken, locked) in enumerate(rows, 1):
            print(f"process {number}: {taken} dequeued, {locked} 'database is locked' errors")
        print(f"in all: {sum(taken for taken, _ in rows)} of {args.messages}; left {storage.queue_size()}")
        storage.enqueue(b"the one")
        killed = multiprocessing.Process(target=_take_and_die, args=(path,))
        killed.start()
        killed.join()
        print(f"a process killed after it dequeued (exit {killed.exitcode}): {storage.queue_size()} left in the queue")


if __name__ == "__main__":
    main()
