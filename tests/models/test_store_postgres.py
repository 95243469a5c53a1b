"""What the PostgreSQL store has of its own: the keyword search's trigram indexes, and the one-writer
rule across connections (the API rules themselves run on both stores in the modules marked both_stores)."""

import threading

import pytest

from models import db, immediate
from tests.helpers.feedback import UNLIMITED, payload, submit
from tests.helpers.waiting import wait_until


@pytest.fixture
def pg_app(make_app, postgres_cluster):
    name = postgres_cluster.create_database()
    app = make_app(DATABASE_URL=postgres_cluster.url(name), **UNLIMITED)
    yield app
    db.obj.close()
    postgres_cluster.drop_database(name)


def test_keyword_search_reads_the_trigram_indexes(pg_app):
    client = pg_app.test_client()
    for n in range(30):
        assert submit(client, payload(title=f"第{n}次打开就闪退", content=f"crash report {n}")).status_code == 201
    with db.connection_context():
        indexes = {
            row[0]
            for row in db.execute_sql(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'feedback' AND indexname LIKE %s", ["%_trgm"]
            )
        }
        assert indexes == {
            f"feedback_{c}_trgm"
            for c in ("title", "content", "feedback_no", "user_id", "contact_email", "contact_wechat")
        }
        with db.atomic():
            db.execute_sql("SET LOCAL enable_seqscan = off")  # 30 rows: PostgreSQL would scan anyway
            plan = "\n".join(
                row[0]
                for row in db.execute_sql(
                    "EXPLAIN SELECT id FROM feedback WHERE title ILIKE %s OR content ILIKE %s",
                    ["%打开就闪退%", "%打开就闪退%"],
                )
            )
    assert "feedback_title_trgm" in plan, plan
    from tests.helpers.app import create_admin, login

    create_admin()
    admin = pg_app.test_client()
    login(admin)
    found = admin.get("/api/feedbacks", query_string={"keyword": "打开就闪退", "pageSize": 100}).get_json()
    assert found["pagination"]["total"] == 30
    assert admin.get("/api/feedbacks", query_string={"keyword": "REPORT 7"}).get_json()["pagination"]["total"] == 1


# The second writer waiting for immediate()'s lock (models/store.py take_pg_write_lock) that the first holds.
A_WRITER_WAITS = "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)"


def test_one_writer_at_a_time_across_connections(pg_app):
    """immediate() holds every other writer (another process's too) until it commits."""
    order = []
    entered = threading.Event()

    def first():
        with db.connection_context(), immediate():
            entered.set()
            wait_until(lambda: db.execute_sql(A_WRITER_WAITS).fetchone()[0], 10, "the second writer did not wait")
            order.append("first done")

    def second():
        entered.wait(5)
        with db.connection_context(), immediate():
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert order == ["first done", "second in"]


@pytest.mark.timeout(180)
def test_backup_and_restore_of_a_postgresql_instance(make_app, postgres_cluster, tmp_path):
    """docs/api.md §11 on PostgreSQL: the rows of every table go into the archive (as its SQLite file, one
    consistent read) and come back into another PostgreSQL database with every answer unchanged."""
    from fakeplatform import FakePlatform
    from tests.helpers.publishing import ACCOUNTS, platform_settings
    from tests.helpers.store_copy import answers, populate

    fake = FakePlatform(dict(ACCOUNTS.values()))
    fake.start()
    try:
        source = postgres_cluster.url(postgres_cluster.create_database())
        app = make_app(**platform_settings(fake), DATABASE_URL=source)
        task_ids, feedback_ids = populate(app, fake)
        before = answers(app, task_ids, feedback_ids)
        archive = tmp_path / "pg.tar.gz"
        done = app.test_cli_runner().invoke(args=["backup", str(archive)])
        assert done.exit_code == 0 and "3 tasks, 3 feedback records" in done.output, done.output

        target = postgres_cluster.url(postgres_cluster.create_database())
        elsewhere = {
            "REVIEW_INSTANCE_PATH": str(tmp_path / "other" / "instance"),
            "REVIEW_UPLOADS_PATH": str(tmp_path / "other" / "uploads"),
        }
        fresh = make_app(**platform_settings(fake), DATABASE_URL=target, **elsewhere)
        restored = fresh.test_cli_runner().invoke(args=["restore", str(archive)])
        assert restored.exit_code == 0, restored.output
        again = make_app(**platform_settings(fake), DATABASE_URL=target, **elsewhere)
        assert answers(again, task_ids, feedback_ids) == before
        refused = again.test_cli_runner().invoke(args=["restore", str(archive)])
        assert refused.exit_code == 2 and "already holds 3 tasks" in refused.output
        forced = again.test_cli_runner().invoke(args=["restore", str(archive), "--force"])
        assert forced.exit_code == 0, forced.output
        assert (
            answers(make_app(**platform_settings(fake), DATABASE_URL=target, **elsewhere), task_ids, feedback_ids)
            == before
        )
    finally:
        fake.stop()


def test_an_older_archive_database_is_upgraded_before_its_rows_go_in(pg_app, tmp_path):
    """Restore into PostgreSQL of an archive from schema 7 (before publish_lock.progress and rate_hit)."""
    import sqlite3

    from models.backup_copy import copy_database_to, restore_rows_from
    from models.row_copy import row_counts

    client = pg_app.test_client()
    for n in range(3):
        assert submit(client, payload(title=f"旧版本 {n}")).status_code == 201
    old = tmp_path / "old.db"
    copy_database_to(str(old))  # the rows as an SQLite file, as in an archive
    with sqlite3.connect(old) as connection:
        connection.execute("ALTER TABLE publish_lock DROP COLUMN progress")
        connection.execute("DROP TABLE rate_hit")
        connection.execute("UPDATE schema_version SET version = 7")
    restore_rows_from(str(old), replace=True)
    with db.connection_context():
        counts = row_counts()
    assert counts["feedback"] == 3 and counts["rate_hit"] == 0
