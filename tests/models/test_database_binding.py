"""What init_database binds: a SQLite DATABASE_URL opens connections as the default file does, and what
models/ remember about a database does not outlive it."""

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
