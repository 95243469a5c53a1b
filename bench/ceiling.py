"""How far the creation ratios could go in this stack: python bench/ceiling.py [--rows 5000]

Three measurements on one prepared database, for task creation and feedback creation:
1. the ratio to the bare endpoint as served (what bench/run.py reports);
2. the same with storage switched off (bench/server.py `unstored`: every check, the reply and the
   server path, no database): the ratio's ceiling if storage cost nothing;
3. the storage's floor: the creation's transaction as raw sqlite3 calls on one thread, no ORM
   (task: BEGIN IMMEDIATE, two INSERTs, COMMIT; feedback: the duplicate SELECT, the number upsert,
   the INSERT with its triggers, COMMIT).
"""

import argparse
import sqlite3
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scenarios
from bench.common import Server, work_folder
from bench.run import in_rounds
from bench.seed import seed
from models.base import SQLITE_PRAGMAS
from models.feedback import _RESERVE

KINDS = ("create_task", "create_feedback")


def ratios(work, ids, mode, args):
    server = Server(work / "instance", work / "uploads", *mode)
    try:
        plan = scenarios.build(server.port, ids)
        return {
            kind: statistics.median(
                in_rounds(server.port, plan["bare"][0], plan[kind][0], args.connections, args.seconds, args.rounds, [])[
                    1
                ]
            )
            for kind in KINDS
        }
    finally:
        server.stop()


def _copy_insert(connection, table, changes):
    """(INSERT text, values) that copy the table's first row with `changes` (column -> function of n)."""
    cursor = connection.execute(f'SELECT * FROM "{table}" LIMIT 1')  # fixed table names
    columns = [d[0] for d in cursor.description][1:]
    row = dict(zip(columns, cursor.fetchone()[1:], strict=True))
    sql = f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({", ".join("?" * len(columns))})'
    return sql, lambda n, **extra: [changes[c](n) if c in changes else extra.get(c, row[c]) for c in columns]


def storage_floor(path, count):
    """Milliseconds per creation transaction, raw sqlite3 on one thread: {kind: ms}."""
    connection = sqlite3.connect(path, isolation_level=None)
    for name, value in SQLITE_PRAGMAS.items():
        connection.execute(f"PRAGMA {name} = {value}")
    unique = lambda n: uuid.uuid4().hex  # noqa: E731
    task_sql, task_values = _copy_insert(connection, "review_task", {"task_id": unique})
    event_sql, event_values = _copy_insert(connection, "timeline_event", {"event_id": unique})
    feedback_sql, feedback_values = _copy_insert(
        connection,
        "feedback",
        {"feedback_id": unique, "fingerprint": unique, "feedback_no": lambda n: f"FB-CEILING-{uuid.uuid4().hex}"},
    )

    def task(n):
        connection.execute("BEGIN IMMEDIATE")
        row_id = connection.execute(task_sql, task_values(n)).lastrowid
        connection.execute(event_sql, event_values(n, task_id=row_id))
        connection.execute("COMMIT")

    def feedback(n):
        values = feedback_values(n)
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(
            "SELECT feedback_id, feedback_no FROM feedback WHERE fingerprint = ? AND created_at >= ? "
            "ORDER BY created_at DESC LIMIT 1",
            ("x" * 64, "2000-01-01"),
        ).fetchall()
        connection.execute(_RESERVE, ("99991231",)).fetchall()
        connection.execute(feedback_sql, values)
        connection.execute("COMMIT")

    out = {}
    for kind, run in (("create_task", task), ("create_feedback", feedback)):
        for n in range(count // 10):  # warm-up
            run(n)
        started = time.perf_counter()
        for n in range(count):
            run(n)
        out[kind] = (time.perf_counter() - started) / count * 1000
    connection.close()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000, help="tasks and feedback rows to prepare")
    parser.add_argument("--seconds", type=float, default=6.0, help="duration of each ratio (split into rounds)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--transactions", type=int, default=3000, help="raw transactions timed for the floor")
    args = parser.parse_args(argv)

    work = work_folder("review-ceiling-")
    ids = seed(work / "instance", work / "uploads", args.rows)
    served = ratios(work, ids, (), args)
    unstored = ratios(work, ids, ("unstored",), args)
    floor = storage_floor(str(work / "instance" / "review.db"), args.transactions)
    print(f"{'':18} {'ratio as served':>16} {'ratio, storage free':>20} {'storage floor (raw sqlite3)':>28}")
    for kind in KINDS:
        print(f"{kind:18} {served[kind]:16.2f} {unstored[kind]:20.2f} {floor[kind]:25.3f} ms")
    print(
        "\nThe middle column is the most any storage change could give: the routes' checks, reply and the "
        "server path alone.\nThe floor is what the transaction costs SQLite with no Python around it."
    )


if __name__ == "__main__":
    main()
