"""Client feedback records, their attachments, the per-day number sequence and the keyword index.

`Feedback.id` is an integer row id (the FTS index points at it); the public id is `feedback_id`. On SQLite the
search (docs/decisions.md "Feedback") reads `feedback_fts` (trigram, 3+ characters) and `feedback_chars` (one
token per CJK character); `feedback_search_pending` queues new rows, which index_pending() moves into both after
the request (batches cost ~0.06 ms a row, in the request ~0.5 ms), and a search tests queued rows directly.
`feedback_status_count` holds trigger-kept per-status counts. On PostgreSQL, or before the index exists, the
search is LIKE (ILIKE under pg_trgm indexes) and the counts a GROUP BY.
"""

import logging
import operator
import re
import weakref
from functools import reduce
from typing import Any

import peewee
from playhouse.sqlite_ext import FTS5Model, SearchField, VirtualTableSchemaManager

from models.base import BaseModel, JSONField, db
from models.store import contains_folded, fold_case, on_sqlite, trigram_search_available
from models.writes import immediate

SEARCH_TABLE = "feedback_fts"
PENDING_TABLE = "feedback_search_pending"
CHARS_TABLE = "feedback_chars"
COUNTS_TABLE = "feedback_status_count"
log = logging.getLogger(__name__)
SEARCH_COLUMNS = ("title", "content", "feedback_no", "user_id", "contact_email", "contact_wechat")


class Feedback(BaseModel):
    id = peewee.AutoField()
    feedback_id = peewee.CharField(max_length=64, unique=True)
    feedback_no = peewee.CharField(max_length=32, unique=True)  # FB-YYYYMMDD-NNNN
    channel = peewee.CharField(max_length=64)
    type = peewee.CharField(max_length=32)
    title = peewee.TextField()
    content = peewee.TextField()
    app_name = peewee.CharField(max_length=100)
    app_version = peewee.CharField(max_length=64)
    platform = peewee.CharField(max_length=64)
    user_id = peewee.CharField(max_length=128, null=True)
    contact_email = peewee.CharField(max_length=254, null=True)
    contact_wechat = peewee.CharField(max_length=64, null=True)
    build_number = peewee.CharField(max_length=64, null=True)
    device_model = peewee.CharField(max_length=128, null=True)
    os_version = peewee.CharField(max_length=64, null=True)
    device_id = peewee.CharField(max_length=128, null=True)
    page_path = peewee.CharField(max_length=1024, null=True)
    occurred_at = peewee.CharField(max_length=32, null=True)
    log_text = peewee.TextField(null=True)
    extra = JSONField(null=True)
    status = peewee.CharField(max_length=16, default="unprocessed")
    admin_note = peewee.TextField(null=True)
    processed_at = peewee.CharField(max_length=32, null=True)
    processed_by = peewee.CharField(max_length=64, null=True)
    fingerprint = peewee.CharField(max_length=64)  # sha256 hex, see services.feedback.intake
    client_ip = peewee.CharField(max_length=64, null=True)
    created_at = peewee.CharField(max_length=32, index=True)
    updated_at = peewee.CharField(max_length=32)

    class Meta:
        # Each list filter with created_at, so a filtered page walks one index newest first and
        # stops after pageSize rows, and a filtered count reads only index entries.
        indexes = (
            (("fingerprint", "created_at"), False),
            (("status", "created_at"), False),
            (("type", "created_at"), False),
            (("platform", "created_at"), False),
            (("app_name", "created_at"), False),
            (("app_name", "app_version", "created_at"), False),
        )


class FeedbackAttachment(BaseModel):
    id = peewee.AutoField()
    attachment_id = peewee.CharField(max_length=64, unique=True)
    feedback = peewee.ForeignKeyField(Feedback, column_name="feedback_row", on_delete="CASCADE", index=True)
    kind = peewee.CharField(max_length=16)  # screenshot | log_file
    file_name = peewee.CharField(max_length=255)  # the client's name, cleaned, display only
    stored_name = peewee.CharField(max_length=128)  # generated, under uploads/feedback/<feedbackId>/
    content_type = peewee.CharField(max_length=64)
    size = peewee.IntegerField()
    sha256 = peewee.CharField(max_length=64)
    created_at = peewee.CharField(max_length=32, index=True)


class FeedbackDaySequence(BaseModel):
    """Last number handed out per UTC day (FB-YYYYMMDD-NNNN); written in the feedback's transaction."""

    day = peewee.CharField(max_length=8, primary_key=True)  # YYYYMMDD
    last = peewee.IntegerField(default=0)


class _SearchIndex(FTS5Model):
    title = SearchField()
    content = SearchField()
    feedback_no = SearchField()
    user_id = SearchField()
    contact_email = SearchField()
    contact_wechat = SearchField()

    class Meta:
        database = db


class FeedbackSearch(_SearchIndex):
    """feedback_fts: the trigram index over the feedback table's own columns (external content)."""

    class Meta:
        table_name = SEARCH_TABLE
        options = {"content": Feedback, "content_rowid": "id", "tokenize": "trigram"}


class FeedbackChars(_SearchIndex):
    """feedback_chars: contentless, it holds only the index (the spacing is done in Python, so no
    trigger can fill it). Feedback is never deleted or edited; a deletion would pass the original
    values with the 'delete' command."""

    class Meta:
        table_name = CHARS_TABLE
        options = {"content": "", "tokenize": "unicode61"}


SEARCH_INDEXES = (FeedbackSearch, FeedbackChars)


class FeedbackSearchQueue(BaseModel):
    """feedback_search_pending: rows the indexes do not hold yet (made with SQLITE_EXTRAS, SQLite only)."""

    id = peewee.IntegerField(primary_key=True)

    class Meta:
        table_name = PENDING_TABLE


class FeedbackStatusCount(BaseModel):
    """feedback_status_count: rows per status, kept by triggers (made with SQLITE_EXTRAS, SQLite only)."""

    status = peewee.TextField(primary_key=True)
    n = peewee.IntegerField()

    class Meta:
        table_name = COUNTS_TABLE


# Triggers and the two plain tables beside the indexes, written out in full (peewee has no trigger
# API): the statements are the schema. The trigram index only holds rows that left the pending
# queue, so deletes and edits touch it only for those rows.
_FTS_COLUMNS = "title, content, feedback_no, user_id, contact_email, contact_wechat"
_INDEXED_OLD = "WHERE NOT EXISTS (SELECT 1 FROM feedback_search_pending WHERE id = old.id)"
_DELETE_OLD = (
    "INSERT INTO feedback_fts(feedback_fts, rowid, title, content, feedback_no, user_id, contact_email, "
    "contact_wechat) SELECT 'delete', old.id, old.title, old.content, old.feedback_no, old.user_id, "
    "old.contact_email, old.contact_wechat " + _INDEXED_OLD + ";"
)
_INSERT_NEW = (
    "INSERT INTO feedback_fts(rowid, title, content, feedback_no, user_id, contact_email, contact_wechat) "
    "SELECT new.id, new.title, new.content, new.feedback_no, new.user_id, new.contact_email, "
    "new.contact_wechat " + _INDEXED_OLD + ";"
)
_UNQUEUE_OLD = "DELETE FROM feedback_search_pending WHERE id = old.id;"
_COUNT_NEW = (
    "INSERT INTO feedback_status_count(status, n) VALUES (new.status, 1) ON CONFLICT(status) DO UPDATE SET n = n + 1;"
)
_UNCOUNT_OLD = "UPDATE feedback_status_count SET n = n - 1 WHERE status = old.status;"
SQLITE_EXTRAS = (
    "CREATE TABLE IF NOT EXISTS feedback_search_pending (id INTEGER PRIMARY KEY)",
    "CREATE TRIGGER IF NOT EXISTS feedback_search_queue AFTER INSERT ON feedback BEGIN "
    "INSERT INTO feedback_search_pending(id) VALUES (new.id); END",
    "CREATE TRIGGER IF NOT EXISTS feedback_search_delete AFTER DELETE ON feedback BEGIN "
    + _DELETE_OLD
    + " "
    + _UNQUEUE_OLD
    + " END",
    "CREATE TRIGGER IF NOT EXISTS feedback_search_update AFTER UPDATE OF " + _FTS_COLUMNS + " ON feedback "
    "BEGIN " + _DELETE_OLD + " " + _INSERT_NEW + " END",
    "CREATE TABLE IF NOT EXISTS feedback_status_count (status TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    "CREATE TRIGGER IF NOT EXISTS feedback_count_insert AFTER INSERT ON feedback BEGIN " + _COUNT_NEW + " END",
    "CREATE TRIGGER IF NOT EXISTS feedback_count_update AFTER UPDATE OF status ON feedback "
    "WHEN old.status IS NOT new.status BEGIN " + _UNCOUNT_OLD + " " + _COUNT_NEW + " END",
    "CREATE TRIGGER IF NOT EXISTS feedback_count_delete AFTER DELETE ON feedback BEGIN " + _UNCOUNT_OLD + " END",
)
# Schema 2 indexed each row inside its own insert; these triggers are replaced by the ones above.
OLD_TRIGGERS = ("feedback_fts_insert", "feedback_fts_delete", "feedback_fts_update")
_PENDING_ROWS = (
    "SELECT f.id, f.title, f.content, f.feedback_no, f.user_id, f.contact_email, f.contact_wechat "
    "FROM feedback_search_pending AS p JOIN feedback AS f ON f.id = p.id ORDER BY p.id LIMIT ?"
)
_INDEXED_ROWS = (
    "SELECT id, title, content, feedback_no, user_id, contact_email, contact_wechat FROM feedback "
    "WHERE id > ? AND id NOT IN (SELECT id FROM feedback_search_pending) ORDER BY id LIMIT ?"
)
INDEX_BATCH = 200


def create_search_structures(database: Any = None) -> None:
    """What the feedback table brings beside it: on SQLite the search indexes and status counters, on
    PostgreSQL the trigram indexes."""
    if trigram_search_available(database):
        create_search_index(database)
    else:
        create_trigram_indexes(database)


def create_search_index(database: Any = None) -> None:
    """The trigram index, the CJK character index and the status counters (SQLite only)."""
    database = db if database is None else database
    for index in SEARCH_INDEXES:
        VirtualTableSchemaManager(index, database=database).create_table(safe=True)
    for statement in SQLITE_EXTRAS:
        database.execute_sql(statement)


def create_trigram_indexes(database: Any = None) -> bool:
    """PostgreSQL: pg_trgm GIN indexes under the searched columns, so the keyword search's ILIKE
    '%keyword%' (3+ characters) reads an index instead of every row. Without the right to add the
    extension the search still works, by scanning; False then."""
    database = db if database is None else database
    if on_sqlite(database):
        return False
    try:
        with database.atomic():  # a savepoint: a refused CREATE EXTENSION must not abort the upgrade
            database.execute_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except peewee.DatabaseError as exc:
        log.warning("keyword search will scan: the pg_trgm extension could not be added (%s)", exc)
        return False
    for column in SEARCH_COLUMNS:
        database.execute_sql(
            f"CREATE INDEX IF NOT EXISTS feedback_{column}_trgm ON feedback USING gin ({column} gin_trgm_ops)"
        )
    return True


# Bound database -> its search index exists. Weak keys: a database bound later (tests, CLI, a restore)
# never inherits the answer of one that is gone.
_INDEX_READY: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


def search_index_ready() -> bool:
    """Once created the index stays, so a database found ready is not asked again."""
    database = db.obj
    if not _INDEX_READY.get(database):
        _INDEX_READY[database] = trigram_search_available() and {SEARCH_TABLE, PENDING_TABLE} <= set(db.get_tables())
    return _INDEX_READY[database]


_CJK = re.compile("([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f])")


def is_cjk(text: str) -> bool:
    return bool(text) and _CJK.sub("", text) == ""


# What unicode61 drops (it keeps letters, numbers and private-use characters as tokens), and the
# private-use character indexed in its place so that characters on either side are not adjacent.
_SEPARATORS = re.compile(r"(?:[^\w\ue000-\uf8ff]|_)+")
SEPARATOR_MARK = "\ue000"


def spaced_characters(text: str) -> str:
    """'应用闪退, crash' -> ' 应  用  闪  退  \ue000 crash': every CJK character is its own token, and
    each run of spaces or punctuation one marker token."""
    return _CJK.sub(r" \1 ", _SEPARATORS.sub(f" {SEPARATOR_MARK} ", text or ""))


def _insert_rows(index: type[FTS5Model], rows: list, database: Any, spaced: bool = False) -> None:
    """(id, title, content, ...) rows into a search index, each text spaced for the character index."""
    fields = [index.rowid, *(index._meta.fields[name] for name in SEARCH_COLUMNS)]
    values = [(row[0], *map(spaced_characters, row[1:])) for row in rows] if spaced else rows
    index.insert_many(values, fields=fields).as_rowcount().execute(database)


def rebuild_character_index(database: Any = None, batch: int = 1000) -> None:
    """Index every row that left the pending queue again in feedback_chars (after its spacing changed)."""
    database = db if database is None else database
    # FTS5Model.delete_all() runs on the model's own database; this may be a database being upgraded.
    database.execute_sql("INSERT INTO feedback_chars(feedback_chars) VALUES ('delete-all')")
    last = 0
    while rows := database.execute_sql(_INDEXED_ROWS, (last, batch)).fetchall():
        _insert_rows(FeedbackChars, rows, database, spaced=True)
        last = rows[-1][0]


def index_pending(limit: int = INDEX_BATCH) -> int:
    """Move up to `limit` queued rows into both search indexes in one transaction; returns how many."""
    if not search_index_ready():
        return 0
    if not FeedbackSearchQueue.select().exists():  # a plain read first: an idle pass takes no write lock
        return 0
    with immediate():
        rows = db.execute_sql(_PENDING_ROWS, (limit,)).fetchall()
        if rows:
            _insert_rows(FeedbackSearch, rows, db)
            _insert_rows(FeedbackChars, rows, db, spaced=True)
            db.execute_sql("DELETE FROM feedback_search_pending WHERE id <= ?", (rows[-1][0],))
    return len(rows)


# ---- the keyword search and the whole-table counts ----------------------------------------------------

TRIGRAM = 3


def _phrase(text):
    return '"' + text.replace('"', '""') + '"'


def _index_for(keyword):
    """(index model, MATCH phrase) that answers `keyword`, or (None, None) for LIKE."""
    if not search_index_ready():
        return None, None
    if len(keyword) >= TRIGRAM:
        return FeedbackSearch, _phrase(keyword)
    if is_cjk(keyword):  # 闪退 -> the phrase "闪 退" of single-character tokens
        return FeedbackChars, _phrase(" ".join(keyword))
    return None, None


def _like(keyword):
    """Keywords no index answers: a scan (on PostgreSQL under the pg_trgm indexes)."""
    return reduce(operator.or_, [contains_folded(getattr(Feedback, column), keyword) for column in SEARCH_COLUMNS])


def _queued_match(keyword, row_id=Feedback.id):
    """Rows still queued for the indexes that contain `keyword`, case folded as the trigram index folds."""
    folded = fold_case(keyword)
    contains = [
        peewee.fn.instr(peewee.fn.fold_case(getattr(Feedback, column)), folded) > 0 for column in SEARCH_COLUMNS
    ]
    return row_id.in_(FeedbackSearchQueue.select(FeedbackSearchQueue.id)) & reduce(operator.or_, contains)


def keyword_match(keyword: str) -> Any:
    """A WHERE clause: `keyword` anywhere in SEARCH_COLUMNS, case-insensitive (docs/api.md §9)."""
    index, phrase = _index_for(keyword)
    if index is None:
        return _like(keyword)
    # `id + 0`: the match is a membership test on the rows the filter index yields, newest first,
    # rather than one row lookup per match (which SQLite picks otherwise and is slower on 100k).
    row_id = Feedback.id + 0
    return row_id.in_(index.select(index.rowid).where(index.match(phrase))) | _queued_match(keyword, row_id)


def count_keyword_matches(keyword: str) -> int:
    """Rows matching `keyword` (no other filter), counted in the search index itself where one answers."""
    index, phrase = _index_for(keyword)
    if index is None:
        return Feedback.select().where(_like(keyword)).count()
    queued = Feedback.select().where(_queued_match(keyword))
    # The index and its queue read in one snapshot: a row moving between them counts once.
    with db.atomic():
        return index.select(peewee.fn.COUNT(index.rowid)).where(index.match(phrase)).scalar() + queued.count()


def counts_by_status() -> dict[str, int]:
    """Rows per status over the whole table: the trigger-kept counters on SQLite, else a GROUP BY."""
    rows: Any
    if search_index_ready():
        rows = FeedbackStatusCount.select(FeedbackStatusCount.status, FeedbackStatusCount.n).tuples()
    else:
        rows = Feedback.select(Feedback.status, peewee.fn.COUNT(Feedback.id)).group_by(Feedback.status).tuples()
    return dict(rows)


# ---- reads and writes of feedback intake ------------------------------------------------------------


def next_day_number(day: str) -> int:
    """The next number of `day` (YYYYMMDD), 1 first; call inside the write transaction."""
    seq = FeedbackDaySequence
    seq.insert(day=day, last=1).on_conflict(conflict_target=[seq.day], update={seq.last: seq.last + 1}).execute()
    return seq.select(seq.last).where(seq.day == day).scalar()


def recent_duplicate(digest: str, since: str) -> Feedback | None:
    """The newest record with this fingerprint created at or after `since` (its id and number only)."""
    return (
        Feedback.select(Feedback.feedback_id, Feedback.feedback_no)
        .where((Feedback.fingerprint == digest) & (Feedback.created_at >= since))
        .order_by(Feedback.created_at.desc())
        .first()
    )
