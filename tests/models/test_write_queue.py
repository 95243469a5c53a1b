"""Every write of the service queues on the process's write lock (models.writes.immediate).

A write outside it takes SQLite's write lock on its own and, under load, waits in SQLite's busy
handler, which sleeps in growing steps: the upload journal's deferred transaction did that and made
image uploads the whole write p99 of the load test (p99 ~710 ms; ~170 ms once it queued here).
This test watches each statement on the app's connections while a day's routes run once each.
"""

import io
import re

import peewee
import pytest

from models import db, writes
from services.feedback import indexing
from tests.helpers.app import built_app, signed_in_admin
from tests.helpers.feedback import UNLIMITED, WEB, created
from tests.helpers.publishing import platform_settings
from tests.helpers.review import (
    approve_article,
    article_payload,
    article_selections,
    create_task,
    decision_url,
    locked_except,
    patch_url,
    png_bytes,
)

WRITE = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


@pytest.fixture
def unqueued_writes(monkeypatch):
    """Statements that wrote without holding the write lock, recorded on every new connection."""
    seen = []
    hooks = peewee.SqliteDatabase._add_conn_hooks

    def add_hooks(self, conn):
        hooks(self, conn)
        conn.set_trace_callback(
            lambda sql: seen.append(sql[:80]) if WRITE.match(sql) and not writes._WRITE_LOCK._is_owned() else None
        )

    monkeypatch.setattr(peewee.SqliteDatabase, "_add_conn_hooks", add_hooks)
    return seen


def test_the_routes_write_only_while_holding_the_write_lock(make_app, fake, unqueued_writes):
    with built_app(make_app, **platform_settings(fake), **UNLIMITED) as app:
        admin, anonymous = signed_in_admin(app), app.test_client()
        agent = {"x-review-agent-token": app.config["REVIEW_AGENT_TOKEN"]}
        upload = anonymous.post(
            "/api/assets/upload",
            headers=agent,
            content_type="multipart/form-data",
            data={"file": (io.BytesIO(png_bytes(900, 500)), "cover.png")},
        )
        assert upload.status_code == 201, upload.get_json()
        cover = upload.get_json()

        reworked = create_task(anonymous, agent, article_payload(publicAccount="silicon-rise"))
        selections = article_selections(reworked, cover)
        rejected = admin.post(
            decision_url(reworked),
            json={
                "action": "reject_rework",
                "rejectionReason": "style_mismatch",
                "rejectedElements": ["title"],
                "selections": selections,
                "lockedSelections": locked_except(selections, ["title"]),
            },
        )
        assert rejected.status_code == 200, rejected.get_json()
        patched = anonymous.patch(patch_url(reworked), headers=agent, json={"title": "改过的标题"})
        assert patched.status_code == 200, patched.get_json()

        task = create_task(anonymous, agent, article_payload(publicAccount="silicon-rise"))
        published = admin.post(decision_url(task), json=approve_article(task, cover, action="approve_and_publish"))
        assert published.status_code == 200, published.get_json()
        assert fake.drafts, "the publish reached the platform"
        assert admin.get(f"/api/review/tasks/{task['id']}/package").status_code == 200
        assert admin.delete(f"/api/review/tasks/{task['id']}").status_code == 200

        record = created(anonymous)
        attachment = anonymous.post(
            f"/api/feedbacks/{record['id']}/attachments",
            headers=WEB,
            content_type="multipart/form-data",
            data={"file": (io.BytesIO(png_bytes(40, 30)), "screen.png"), "kind": "screenshot"},
        )
        assert attachment.status_code == 201, attachment.get_json()
        assert admin.patch(f"/api/feedbacks/{record['id']}/status", json={"status": "processing"}).status_code == 200
        with db.connection_context():
            assert indexing.drain() == 1
        wrong = anonymous.post("/api/auth/login", json={"username": "admin", "password": "wrong-password"})
        assert wrong.status_code in (303, 401)

    assert unqueued_writes == []


def _hold_the_write_lock(path, held, release):
    """Another process: bind the file, take immediate() and keep it until told to let go."""
    from models.base import init_database
    from models.writes import immediate

    init_database(sqlite_path=path)
    with db.connection_context(), immediate():
        held.set()
        release.wait(30)


def test_writers_of_other_processes_queue_on_the_file_lock(app, tmp_path):
    """A writer of a second process waits for the first on `review.db-writer` (an flock: it wakes at
    once), not in SQLite's busy handler, and the lock file is the owner's only (docs/api.md §11)."""
    import multiprocessing
    import os
    import stat
    import threading
    import time

    path = str(tmp_path / "instance" / "review.db")
    context = multiprocessing.get_context("spawn")
    held, release = context.Event(), context.Event()
    other = context.Process(target=_hold_the_write_lock, args=(path, held, release))
    other.start()
    try:
        assert held.wait(60)
        entered = threading.Event()

        def write():
            with db.connection_context(), writes.immediate():
                entered.set()

        writer = threading.Thread(target=write)
        writer.start()
        assert not entered.wait(0.5)  # the other process holds it
        released = time.monotonic()
        release.set()
        assert entered.wait(10)
        waited = time.monotonic() - released
        writer.join(10)
    finally:
        release.set()
        other.join(30)
    assert waited < 5  # it got the lock once the other let go (SQLite's own timeout is 10 s)
    assert stat.S_IMODE(os.stat(path + "-writer").st_mode) == 0o600
