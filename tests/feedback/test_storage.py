"""500 storage_unavailable on real storage failures, and nothing half-written (docs/api.md §9).

The tests may run as root, where file modes do not stop writes, so the failures are made another
real way: the database file replaced by a directory, a table the write needs removed by another
connection, a refusing trigger added by another connection, a file where a folder must go.
"""

import os
import shutil
import sqlite3
from pathlib import Path

from tests.helpers.app import assert_error
from tests.helpers.feedback import UNLIMITED, payload, submit, upload


def database_file(app):
    return Path(app.instance_path) / "review.db"


def sql(app, statement, params=()):
    """Another connection, as an operator's tool would open it."""
    with sqlite3.connect(database_file(app)) as connection:
        rows = connection.execute(statement, params).fetchall()
    connection.close()
    return rows


def test_database_that_cannot_be_opened_is_500_storage_unavailable(make_app):
    app = make_app(**UNLIMITED)
    client = app.test_client()
    assert submit(client).status_code == 201
    path = database_file(app)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.mkdir()  # a directory where the database file should be: SQLite cannot open it
    from models import db

    db.close_idle()  # as after a restart: no pooled connection still holds the removed file
    error = assert_error(submit(client), 500, "storage_unavailable")
    assert "database" in error["message"]
    assert "sqlite" not in str(error).lower() and "select" not in str(error).lower()
    shutil.rmtree(path)


def test_failed_write_leaves_nothing_half_written(make_app):
    app = make_app(**UNLIMITED)
    client = app.test_client()
    first = submit(client).get_json()
    # The search queue disappears: the insert's trigger fails after the number was reserved and
    # the row inserted, inside the same transaction.
    sql(app, "DROP TABLE feedback_search_pending")
    error = assert_error(submit(client, payload(content="never stored")), 500, "storage_unavailable")
    assert "nothing was saved" in error["message"]
    assert sql(app, "SELECT feedback_no FROM feedback") == [(first["feedbackNo"],)]
    assert sql(app, "SELECT last FROM feedback_day_sequence") == [(1,)]  # the reserved number was rolled back
    assert sql(app, "SELECT status, n FROM feedback_status_count") == [("unprocessed", 1)]


def test_failed_attachment_insert_removes_the_file(make_app):
    app = make_app(**UNLIMITED)
    client = app.test_client()
    record = submit(client).get_json()
    sql(app, "CREATE TRIGGER refuse BEFORE INSERT ON feedback_attachment BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    error = assert_error(upload(client, record["id"], b"log line", "a.log", "log_file"), 500, "storage_unavailable")
    assert "nothing was saved" in error["message"]
    folder = Path(app.config["REVIEW_UPLOADS_PATH"]) / "feedback" / record["id"]
    assert not folder.exists()  # neither the file, a temporary file nor the first attachment's folder is left
    assert sql(app, "SELECT COUNT(*) FROM feedback_attachment") == [(0,)]
    sql(app, "DROP TRIGGER refuse")
    assert upload(client, record["id"], b"log line", "a.log", "log_file").status_code == 201
    assert len(os.listdir(folder)) == 1


def test_unwritable_upload_folder_is_500_and_no_row(make_app):
    app = make_app(**UNLIMITED)
    client = app.test_client()
    record = submit(client).get_json()
    (Path(app.config["REVIEW_UPLOADS_PATH"]) / "feedback" / record["id"]).write_text("a file, not a folder")
    error = assert_error(upload(client, record["id"], b"log", "a.log", "log_file"), 500, "storage_unavailable")
    assert "disk" in error["message"]
    assert sql(app, "SELECT COUNT(*) FROM feedback_attachment") == [(0,)]
