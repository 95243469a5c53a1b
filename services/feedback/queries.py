"""Reading feedback for administrators: filtered pages, whole-table counts, detail, CSV batches.

Keyword search (case-insensitive substring of title, content, feedbackNo, userId, contacts): on
SQLite the FTS5 trigram index answers keywords of three or more characters (case folded for every
alphabet) and the CJK character index one or two Chinese/Japanese/Korean characters (闪退; both
match substrings exactly, see models.feedback). Other short keywords and other databases use LIKE
over the six columns (a keyword with non-ASCII letters compared case folded on SQLite). Rows still
queued for the indexes (the last moments of submissions, see models.feedback) are tested with
fold_case, so they match as they will once indexed. bench/bench_feedback_search.py measures each path.
"""

import operator
from collections.abc import Iterator
from functools import reduce
from typing import Any

from peewee import SQL, fn

from models.base import db
from models.feedback import (
    CHARS_TABLE,
    SEARCH_COLUMNS,
    SEARCH_TABLE,
    Feedback,
    FeedbackAttachment,
    is_cjk,
    search_index_ready,
)
from models.store import contains_folded, fold_case
from rules.ids import iso
from rules.vocabulary import FEEDBACK_STATUSES
from schemas.dump import dumper
from schemas.feedback import FeedbackDetailSchema, FeedbackListItemSchema
from services.errors import NotFound
from services.paging import pagination

TRIGRAM = 3
EXPORT_BATCH = 500
_EQUALS = (("type", Feedback.type), ("appName", Feedback.app_name), ("platform", Feedback.platform),
           ("appVersion", Feedback.app_version))


# index table -> its MATCH query (literal SQL; the keyword is always a parameter)
_MATCHING_ROWIDS = {
    SEARCH_TABLE: "SELECT rowid FROM feedback_fts WHERE feedback_fts MATCH ?",
    CHARS_TABLE: "SELECT rowid FROM feedback_chars WHERE feedback_chars MATCH ?",
}
_PENDING_IDS = "SELECT id FROM feedback_search_pending"
_MATCH_COUNT = {
    SEARCH_TABLE: "SELECT COUNT(*) FROM feedback_fts WHERE feedback_fts MATCH ?",
    CHARS_TABLE: "SELECT COUNT(*) FROM feedback_chars WHERE feedback_chars MATCH ?",
}


def _phrase(text):
    return '"' + text.replace('"', '""') + '"'


def _index_for(keyword):
    """(index table, MATCH phrase) that answers `keyword`, or (None, None) for the LIKE fallback."""
    if not search_index_ready():
        return None, None
    if len(keyword) >= TRIGRAM:
        return SEARCH_TABLE, _phrase(keyword)
    if is_cjk(keyword):  # 闪退 -> the phrase "闪 退" of single-character tokens
        return CHARS_TABLE, _phrase(" ".join(keyword))
    return None, None


def _like(keyword):
    """Keywords no index answers: a scan, for rare keywords."""
    return reduce(operator.or_, [contains_folded(getattr(Feedback, column), keyword) for column in SEARCH_COLUMNS])


def keyword_condition(keyword: str) -> Any:
    """A WHERE clause matching `keyword` anywhere in the searched columns."""
    table, phrase = _index_for(keyword)
    if table is None:
        return _like(keyword)
    # `id + 0`: the match is a membership test on the rows the filter index yields, newest first,
    # rather than one row lookup per match (which SQLite picks otherwise and is slower on 100k).
    indexed = (Feedback.id + 0).in_(SQL(f"({_MATCHING_ROWIDS[table]})", [phrase]))
    return indexed | _queued_match(keyword, Feedback.id + 0)


def _queued_match(keyword, row_id=Feedback.id):
    """Rows still queued for the indexes that contain `keyword`, case folded as the trigram index folds."""
    folded = fold_case(keyword)
    contains = [fn.instr(fn.fold_case(getattr(Feedback, column)), folded) > 0 for column in SEARCH_COLUMNS]
    return row_id.in_(SQL(f"({_PENDING_IDS})")) & reduce(operator.or_, contains)


def _conditions(filters):
    conditions = []
    status = filters.get("status") or "all"
    if status != "all":
        conditions.append(Feedback.status == status)
    for key, column in _EQUALS:
        if filters.get(key):
            conditions.append(column == filters[key])
    if filters.get("created_from") is not None:
        conditions.append(Feedback.created_at >= iso(filters["created_from"]))
    if filters.get("created_before") is not None:
        conditions.append(Feedback.created_at < iso(filters["created_before"]))
    keyword = (filters.get("keyword") or "").strip()
    if keyword:
        conditions.append(keyword_condition(keyword))
    return conditions


def _with_attachment_count(query):
    counted = (FeedbackAttachment.select(fn.COUNT(FeedbackAttachment.id))
               .where(FeedbackAttachment.feedback == Feedback.id))
    return query.select_extend(counted.alias("attachment_count"))


def filtered(filters: dict[str, Any]) -> Any:
    """Feedback rows matching the filters (no order, no paging)."""
    query = Feedback.select()
    for condition in _conditions(filters):
        query = query.where(condition)
    return query


_dump_item = dumper(FeedbackListItemSchema)
dump_detail = dumper(FeedbackDetailSchema)


def _item(row):
    return _dump_item(row)


def status_counts() -> dict[str, int]:
    """{all, unprocessed, processing, processed} over the whole table (the trigger-kept counters on
    SQLite, else a GROUP BY)."""
    counts = dict.fromkeys(FEEDBACK_STATUSES, 0)
    if search_index_ready():
        rows = db.execute_sql("SELECT status, n FROM feedback_status_count").fetchall()
    else:
        rows = Feedback.select(Feedback.status, fn.COUNT(Feedback.id)).group_by(Feedback.status).tuples()
    for status, number in rows:
        counts[status] = counts.get(status, 0) + number
    return {"all": sum(counts.values()), **{s: counts[s] for s in FEEDBACK_STATUSES}}


def _count(filters, query):
    """Matches of the filters; a keyword alone is counted in the search index itself."""
    keyword = (filters.get("keyword") or "").strip()
    only_keyword = (filters.get("status") or "all") == "all" and not any(filters.get(key) is not None for key in (
        "type", "appName", "platform", "appVersion", "created_from", "created_before"))
    table, phrase = _index_for(keyword) if keyword and only_keyword else (None, None)
    if table is None:
        return query.count()
    # The index and its pending queue read in one snapshot: a row moving between them counts once.
    queued = Feedback.select().where(_queued_match(keyword))
    with db.atomic():
        return db.execute_sql(_MATCH_COUNT[table], [phrase]).fetchone()[0] + queued.count()


def list_feedbacks(filters: dict[str, Any]) -> dict[str, Any]:
    """{items, pagination, counts}: one page of matches, newest first; counts cover the whole table."""
    page, page_size = filters.get("page", 1), filters.get("pageSize", 20)
    query = filtered(filters)
    total = _count(filters, query)
    rows = (_with_attachment_count(query)
            .order_by(Feedback.created_at.desc(), Feedback.id.desc())
            .paginate(page, page_size))
    return {
        "items": [_item(row) for row in rows],
        "pagination": pagination(page, page_size, total),
        "counts": status_counts(),
    }


def iter_feedbacks(filters: dict[str, Any], batch: int = EXPORT_BATCH) -> Iterator[dict[str, Any]]:
    """Every match as a list item, newest first, read in short batches (keyset paging), so a slow
    download never holds one long read transaction."""
    last = None
    while True:
        query = _with_attachment_count(filtered(filters))
        if last is not None:
            created, row_id = last
            query = query.where((Feedback.created_at < created)
                                | ((Feedback.created_at == created) & (Feedback.id < row_id)))
        rows = list(query.order_by(Feedback.created_at.desc(), Feedback.id.desc()).limit(batch))
        yield from (_item(row) for row in rows)
        if len(rows) < batch:
            return
        last = (rows[-1].created_at, rows[-1].id)


def get_record(feedback_id: str) -> Feedback:
    record = Feedback.get_or_none(Feedback.feedback_id == feedback_id)
    if record is None:
        raise NotFound(f"no feedback with id {feedback_id}")
    return record


def attachments_of(record: Feedback) -> list[FeedbackAttachment]:
    return list(FeedbackAttachment.select().where(FeedbackAttachment.feedback == record.id)
                .order_by(FeedbackAttachment.created_at, FeedbackAttachment.id))


def detail(record: Feedback) -> dict[str, Any]:
    """FeedbackDetail: the record with its attachments in creation order."""
    return dump_detail(record, attachments=attachments_of(record))


def get_feedback(feedback_id: str) -> dict[str, Any]:
    return detail(get_record(feedback_id))
