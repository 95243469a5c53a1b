"""A copy of the rows (copy-to, a PostgreSQL backup or restore) works on connections of its own
(docs/api.md §17): while it runs, the service's other threads still read the service's database
through the models, never the copy's target."""

import threading

import pytest

from models import AdminUser, db
from models.row_copy import copy_rows_to
from tests.helpers.app import create_admin

pytestmark = pytest.mark.both_stores
WAIT = 30  # seconds; only a broken copy waits this long


def test_the_service_reads_its_own_database_while_a_copy_runs(make_app, tmp_path, store):
    make_app()
    for name in ("admin", "triage", "editor"):
        create_admin(name)
    service_database = db.obj
    paused, resume = threading.Event(), threading.Event()
    outcome = {}

    def progress(table, copied):
        if not paused.is_set():  # the first batch is in the target's open transaction: hold it there
            paused.set()
            resume.wait(WAIT)

    def copy():
        try:
            outcome["copied"] = copy_rows_to(f"sqlite:///{tmp_path / 'copy.db'}", progress=progress)
        except Exception as exc:  # reported by the assertion below
            outcome["error"] = exc

    copier = threading.Thread(target=copy)
    copier.start()
    try:
        assert paused.wait(WAIT), outcome
        bound_during_copy = db.obj
        with db.connection_context():
            names = sorted(user.username for user in AdminUser.select())
    finally:
        resume.set()
        copier.join(WAIT)
    assert names == ["admin", "editor", "triage"]  # the old copy bound `db` to the target: []
    assert bound_during_copy is service_database
    assert "error" not in outcome and outcome["copied"]["admin_user"] == 3
