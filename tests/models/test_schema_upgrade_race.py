"""Several processes starting on the same database at once all come up on the latest schema."""

import multiprocessing
import sqlite3

import pytest

from models import db
from models.schema import LATEST, MIGRATIONS

PROCESSES = 4


def _start(path, barrier, results):
    """One process's start-up: bind the database, wait for the others, upgrade."""
    from models.base import init_database
    from models.schema import upgrade

    init_database(sqlite_path=path)
    barrier.wait(timeout=120)
    try:
        results.put(("ok", upgrade()))
    except Exception as exc:  # reported to the test, which names it
        results.put(("error", repr(exc)))


def _as_schema_3(path):
    """The file as schema 3 left it: two review_task indexes that version 4 drops."""
    con = sqlite3.connect(path)
    con.execute('CREATE INDEX review_task_status ON review_task ("status")')
    con.execute('CREATE INDEX review_task_content_type ON review_task ("content_type")')
    con.execute("UPDATE schema_version SET version = 3")
    con.commit()
    con.close()


def _start_together(path):
    """PROCESSES processes bind `path`, wait for each other, upgrade; their outcomes."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(PROCESSES), context.Queue()
    workers = [context.Process(target=_start, args=(str(path), barrier, results)) for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    return outcomes


# A new file is raced three times: switching it to WAL is the step that failed at times (a third of
# the rounds) before init_database did it once, waiting.
@pytest.mark.parametrize(("existing", "rounds"), [(False, 3), (True, 1)], ids=["new file", "schema 3 file"])
def test_processes_starting_together_all_upgrade(make_app, tmp_path, existing, rounds):
    if existing:
        make_app()
        db.obj.close_all()
        _as_schema_3(tmp_path / "instance" / "review.db")
    for number in range(rounds):
        path = tmp_path / "instance" / "review.db" if existing else tmp_path / f"race-{number}.db"
        outcomes = _start_together(path)
        assert [kind for kind, _ in outcomes] == ["ok"] * PROCESSES, outcomes
        # Exactly one process applied the migrations; the others found them done.
        applied = sorted(versions for _, versions in outcomes)
        expected = [version for version, _, _ in MIGRATIONS if version > (3 if existing else 0)]
        assert applied[-1] == expected and applied[:-1] == [[]] * (PROCESSES - 1)
        con = sqlite3.connect(path)
        assert con.execute("SELECT version FROM schema_version").fetchall() == [(LATEST,)]
        assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        names = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "review_task_status" not in names and "review_task_content_type" not in names
        con.close()
