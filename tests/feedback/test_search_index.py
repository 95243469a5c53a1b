"""The keyword indexes are filled after the request: queue, batches, consistency, worker, upgrade."""

import logging
import re
import sqlite3

import pytest

from models import db
from models.feedback import INDEX_BATCH, index_pending
from models.schema import LATEST, current_version
from models.store import fold_case
from services.feedback import indexing
from tests.helpers.app import built_app, create_admin, login
from tests.helpers.feedback import UNLIMITED, created
from tests.helpers.waiting import wait_until

QUEUED = "SELECT COUNT(*) FROM feedback_search_pending"


def rows(statement, params=()):
    with db.connection_context():
        return db.execute_sql(statement, params).fetchall()


def pending_count():
    """Rows still queued for the indexes (call inside a connection)."""
    return db.execute_sql(QUEUED).fetchone()[0]


def integrity_ok():
    """FTS5's own check that the trigram index matches the feedback table exactly (queue empty)."""
    with db.connection_context():
        db.execute_sql("INSERT INTO feedback_fts(feedback_fts, rank) VALUES ('integrity-check', 1)")
    return True


def keyword_page(admin, keyword):
    response = admin.get("/api/feedbacks", query_string={"keyword": keyword})
    assert response.status_code == 200, response.get_json()
    page = response.get_json()
    return [item["feedbackNo"] for item in page["items"]], page["pagination"]["total"]


def test_new_rows_wait_in_the_queue_and_move_to_the_indexes_in_batches(fb_client, fb_admin):
    first = [created(fb_client, content=f"队列中的反馈 queued-{n}.") for n in range(INDEX_BATCH + 5)]
    with db.connection_context():
        assert pending_count() == len(first)
    assert rows("SELECT COUNT(*) FROM feedback_chars") == [(0,)]
    # Found before indexing (LIKE over the queue), with the same total as afterwards.
    assert keyword_page(fb_admin, "queued-7.") == ([first[7]["feedbackNo"]], 1)
    assert keyword_page(fb_admin, "队列")[1] == len(first)
    with db.connection_context():
        assert index_pending() == INDEX_BATCH  # one batch, the oldest first
        assert pending_count() == 5
    assert keyword_page(fb_admin, "队列")[1] == len(first)  # partly indexed, each counted once
    with db.connection_context():
        assert indexing.drain() == 5 and pending_count() == 0
        assert index_pending() == 0
    assert rows("SELECT COUNT(*) FROM feedback_chars") == [(len(first),)]
    assert integrity_ok()
    assert keyword_page(fb_admin, "queued-7.") == ([first[7]["feedbackNo"]], 1)
    assert keyword_page(fb_admin, "队列")[1] == len(first)
    assert keyword_page(fb_admin, "队")[1] == len(first)  # one CJK character: the character index


def test_queued_rows_fold_case_as_the_trigram_index_does():
    letters = set("AÀÉÎÕÜÇÆØÅ ΑΣσς µ ſ ϐ Ǆǅ АБВЁ ԱԲ ＡＢ ẞß İ Ω K Å")  # the last three: Ohm, Kelvin, Ångström signs
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    con.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(t, 'instance')")
    con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(ord(c), c * 3) for c in letters])
    # Each letter tripled is one trigram: the letter as the index folds it.
    by_index = {chr(row): term[0] for term, row in con.execute("SELECT term, doc FROM terms")}
    assert {c: fold_case(c) for c in letters} == by_index


def test_deleting_and_editing_keep_the_index_exact(fb_client, fb_admin):
    records = [created(fb_client, title=f"record {n}", content=f"editable content {n}") for n in range(4)]
    with db.connection_context():
        index_pending(2)  # records 0 and 1 indexed, 2 and 3 queued
        for number in (0, 2):  # one indexed and one queued row deleted
            db.execute_sql("DELETE FROM feedback WHERE feedback_id = ?", (records[number]["id"],))
        for number in (1, 3):  # one indexed and one queued row edited
            db.execute_sql(
                "UPDATE feedback SET content = ? WHERE feedback_id = ?",
                (f"rewritten text {number}", records[number]["id"]),
            )
        assert pending_count() == 1
    assert keyword_page(fb_admin, "editable")[1] == 0
    assert keyword_page(fb_admin, "rewritten") == ([records[3]["feedbackNo"], records[1]["feedbackNo"]], 2)
    with db.connection_context():
        indexing.drain()
    assert integrity_ok()
    assert keyword_page(fb_admin, "rewritten") == ([records[3]["feedbackNo"], records[1]["feedbackNo"]], 2)


def test_the_indexer_drains_the_queue_after_submissions(make_app):
    with built_app(make_app, FEEDBACK_INDEXER_ENABLED=True, **UNLIMITED) as app:
        worker = app.extensions["scheduler"]
        try:
            client = app.test_client()
            record = created(client, content="indexed by the worker")
            wait_until(lambda: rows(QUEUED) == [(0,)], 10, "the queue was not drained")
            assert rows("SELECT rowid FROM feedback_fts WHERE feedback_fts MATCH '\"by the worker\"'") == rows(
                "SELECT id FROM feedback WHERE feedback_id = ?", (record["id"],)
            )
        finally:
            worker.stop()
        assert not worker.is_alive()


def test_rows_queued_before_a_restart_are_indexed_when_the_indexer_starts(make_app):
    with built_app(make_app, **UNLIMITED) as app:
        created(app.test_client(), content="left in the queue by a crash")
        assert rows(QUEUED) == [(1,)]
    with built_app(make_app, FEEDBACK_INDEXER_ENABLED=True, **UNLIMITED) as app:
        worker = app.extensions["scheduler"]
        try:
            wait_until(lambda: rows(QUEUED) == [(0,)], 10, "the queue was not drained at start")
        finally:
            worker.stop()
        assert rows("SELECT COUNT(*) FROM feedback_chars") == [(1,)]


# Schema 2 indexed each row inside its insert with these triggers (and feedback_chars from Python).
_SCHEMA_2_TRIGGERS = """
DROP TRIGGER feedback_search_queue; DROP TRIGGER feedback_search_delete; DROP TRIGGER feedback_search_update;
DROP TABLE feedback_search_pending;
CREATE TRIGGER feedback_fts_insert AFTER INSERT ON feedback BEGIN INSERT INTO feedback_fts(rowid, title, content,
  feedback_no, user_id, contact_email, contact_wechat) VALUES (new.id, new.title, new.content, new.feedback_no,
  new.user_id, new.contact_email, new.contact_wechat); END;
CREATE TRIGGER feedback_fts_delete AFTER DELETE ON feedback BEGIN INSERT INTO feedback_fts(feedback_fts, rowid,
  title, content, feedback_no, user_id, contact_email, contact_wechat) VALUES ('delete', old.id, old.title,
  old.content, old.feedback_no, old.user_id, old.contact_email, old.contact_wechat); END;
UPDATE schema_version SET version = 2;
"""


def test_a_schema_2_database_is_upgraded_with_its_rows_still_found(make_app, tmp_path):
    with built_app(make_app, **UNLIMITED) as app:
        path = app.config["REVIEW_INSTANCE_PATH"] + "/review.db"
    con = sqlite3.connect(path)
    con.executescript(_SCHEMA_2_TRIGGERS)
    con.execute(
        "INSERT INTO feedback (feedback_id, feedback_no, channel, type, title, content, app_name, "
        "app_version, platform, status, fingerprint, created_at, updated_at) VALUES ('old-1', "
        "'FB-20260101-0001', 'web', 'bug', '旧的反馈', 'stored by version two', 'a', '1', 'ios', "
        "'unprocessed', 'f', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')"
    )
    con.execute(
        "INSERT INTO feedback_chars(rowid, title, content) VALUES (1, ' 旧  的  反  馈 ', ?)",
        ("stored by version two",),
    )
    con.commit()
    con.close()
    with built_app(make_app, **UNLIMITED) as app:
        with db.connection_context():
            assert current_version() == LATEST
            names = {name for (name,) in db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
            assert not names & {"feedback_fts_insert", "feedback_fts_delete", "feedback_fts_update"}
            assert {"feedback_search_queue", "feedback_search_delete", "feedback_search_update"} <= names
            assert pending_count() == 0  # the old rows were already in both indexes
        create_admin()
        admin = app.test_client()
        login(admin)
        assert keyword_page(admin, "version two") == (["FB-20260101-0001"], 1)
        assert keyword_page(admin, "反馈") == (["FB-20260101-0001"], 1)
        new = created(app.test_client(), content="stored by version three")
        assert keyword_page(admin, "stored by version") == ([new["feedbackNo"], "FB-20260101-0001"], 2)
        with db.connection_context():
            assert pending_count() == 1 and indexing.drain() == 1
        assert integrity_ok()


def test_a_schema_4_character_index_is_rebuilt_with_separators_kept(make_app):
    """Schema 4 indexed "闪 退" as the adjacent pair of "闪退"; the upgrade indexes the stored rows again."""
    with built_app(make_app, **UNLIMITED) as app:
        client = app.test_client()
        spaced = created(client, title="问题一", content="闪 退问题")
        joined = created(client, title="问题二", content="真的闪退")
        with db.connection_context():
            assert indexing.drain() == 2
            db.execute_sql("INSERT INTO feedback_chars(feedback_chars) VALUES ('delete-all')")
            for row_id, content in db.execute_sql("SELECT id, content FROM feedback").fetchall():
                old_spacing = "".join(f" {char} " for char in content)  # schema 4: separators dropped
                db.execute_sql("INSERT INTO feedback_chars(rowid, content) VALUES (?, ?)", (row_id, old_spacing))
            db.execute_sql("UPDATE schema_version SET version = 4")
            assert (
                db.execute_sql("SELECT COUNT(*) FROM feedback_chars WHERE feedback_chars MATCH '\"闪 退\"'").fetchone()[
                    0
                ]
                == 2
            )
    with built_app(make_app, **UNLIMITED) as app:
        with db.connection_context():
            assert current_version() == LATEST and pending_count() == 0
        create_admin()
        admin = app.test_client()
        login(admin)
        assert keyword_page(admin, "闪退") == ([joined["feedbackNo"]], 1)
        assert keyword_page(admin, "退") == ([joined["feedbackNo"], spaced["feedbackNo"]], 2)


def test_a_worker_is_stopped_before_its_database_is_replaced(make_app, tmp_path):
    with built_app(make_app, FEEDBACK_INDEXER_ENABLED=True) as app:
        worker = app.extensions["scheduler"]
        assert worker.is_alive()
    # Binding another app's database first stops the worker, so no statement of it can run on a
    # connection being closed (that crashed the process once) or on the other app's database.
    with built_app(make_app, REVIEW_INSTANCE_PATH=str(tmp_path / "other")):
        assert not worker.is_alive()


def test_short_keywords_with_other_letters_ignore_case_too(fb_client, fb_admin):
    """One or two letters outside ASCII and CJK have no index: LIKE alone missed 'üm' in 'Ümlaut'."""
    umlaut = created(fb_client, content="Ümlaut Straße")["feedbackNo"]
    greek = created(fb_client, content="ΣΑΣ γράφω")["feedbackNo"]
    created(fb_client, content="Umlaut without the dots")
    for indexed in (False, True):  # queued rows, then the same rows from the indexes
        assert keyword_page(fb_admin, "üm") == ([umlaut], 1)
        assert keyword_page(fb_admin, "ÜM") == ([umlaut], 1)
        assert keyword_page(fb_admin, "σα") == ([greek], 1)
        assert keyword_page(fb_admin, "um")[1] == 1  # ASCII: LIKE; Ü is another letter
        if not indexed:
            with db.connection_context():
                indexing.drain()


@pytest.mark.parametrize(("keyword", "index"), [("crash", "feedback_fts"), ("闪退", "feedback_chars")])
def test_keyword_pages_are_answered_by_the_search_indexes(fb_admin, caplog, keyword, index):
    """The speed floor (docs/performance.md): on SQLite a keyword of three or more characters is looked up in
    the trigram index, one or two CJK characters in the character index, for the page and its total alike;
    never a LIKE over every row."""
    with caplog.at_level(logging.DEBUG, logger="peewee"):  # peewee logs each statement as (sql, params)
        for query in ({"keyword": keyword}, {"keyword": keyword, "platform": "ios"}):
            assert fb_admin.get("/api/feedbacks", query_string=query).status_code == 200
    statements = [
        record.msg[0] for record in caplog.records if record.name == "peewee" and isinstance(record.msg, tuple)
    ]
    assert len([s for s in statements if re.search(f'"?{index}"? MATCH', s)]) == 4  # two pages, two totals
    assert not [s for s in statements if " LIKE " in s]
