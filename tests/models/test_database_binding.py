"""What init_database binds: a SQLite DATABASE_URL opens connections as the default file does, and what
models/ remember about a database does not outlive it."""

import subprocess
import sys
from pathlib import Path

import pytest

from models import db, init_database
from models.base import SQLITE_PRAGMAS
from models.feedback import search_index_ready
from models.schema import upgrade


@pytest.mark.parametrize("scheme", ["sqlite", "sqlite+pool"])
def test_a_sqlite_url_gets_the_service_pragmas(make_app, tmp_path, scheme):
    make_app(DATABASE_URL=f"{scheme}:///{tmp_path / 'custom.db'}")
    with db.connection_context():
        found = {name: db.execute_sql(f"PRAGMA {name}").fetchone()[0] for name in SQLITE_PRAGMAS}
    assert found == {**SQLITE_PRAGMAS, "synchronous": 1}  # "normal" reads back as 1


def test_a_database_bound_later_is_asked_again_whether_its_search_index_exists(tmp_path):
    init_database(None, str(tmp_path / "indexed.db"))
    upgrade()
    with db.connection_context():
        assert search_index_ready()
    init_database(None, str(tmp_path / "empty.db"))  # no tables yet
    with db.connection_context():
        assert not search_index_ready()
    db.obj.close_all()


RACING_REBIND = """
import sys, threading
from models import db, init_database
from models.schema import upgrade

path, other = sys.argv[1], sys.argv[2]
init_database(None, path)
upgrade()
stop = threading.Event()
SLOW = "with recursive c(n) as (select 1 union all select n + 1 from c where n < 20000) select count(*) from c"

def query(pool):
    while not stop.is_set():
        with pool.connection_context():
            pool.execute_sql(SLOW).fetchall()

old = db.obj
threads = [threading.Thread(target=query, args=(old,)) for _ in range(4)]
for thread in threads:
    thread.start()
for n in range(200):
    init_database(None, (path, other)[n % 2])  # the old pool is retired while its threads run statements
    threading.Event().wait(0.005)
stop.set()
for thread in threads:
    thread.join()
print(len(old._in_use), len(old._connections))
"""


def test_binding_again_does_not_close_connections_other_threads_are_using(tmp_path):
    """A thread left running on the old pool (a test server's request thread) kept its statement: the old
    init_database closed every connection of the pool, in use or not, and the process died of a segfault."""
    child = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", RACING_REBIND, str(tmp_path / "a.db"), str(tmp_path / "b.db")],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
    assert child.stdout.split() == ["0", "0"], child.stdout  # each handed-back connection was closed, none kept
