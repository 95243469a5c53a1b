"""Reading feedback for administrators: filtered pages, whole-table counts, detail, CSV batches. Keyword
search and the whole-table counts are models.feedback's.
"""

from collections.abc import Iterator
from typing import Any

from peewee import fn

from models.feedback import Feedback, FeedbackAttachment, count_keyword_matches, counts_by_status, keyword_match
from rules.ids import iso
from rules.vocabulary import FEEDBACK_STATUSES
from schemas.dump import dumper
from schemas.feedback import FeedbackDetailSchema, FeedbackListItemSchema
from services.errors import NotFound
from services.paging import pagination

EXPORT_BATCH = 500
_EQUALS = (
    ("type", Feedback.type),
    ("appName", Feedback.app_name),
    ("platform", Feedback.platform),
    ("appVersion", Feedback.app_version),
)


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
        conditions.append(keyword_match(keyword))
    return conditions


def _with_attachment_count(query):
    counted = FeedbackAttachment.select(fn.COUNT(FeedbackAttachment.id)).where(
        FeedbackAttachment.feedback == Feedback.id
    )
    return query.select_extend(counted.alias("attachment_count"))


def filtered(filters: dict[str, Any]) -> Any:
    """Feedback rows matching the filters (no order, no paging)."""
    query = Feedback.select()
    for condition in _conditions(filters):
        query = query.where(condition)
    return query


_item = dumper(FeedbackListItemSchema)
dump_detail = dumper(FeedbackDetailSchema)


def status_counts() -> dict[str, int]:
    """{all, unprocessed, processing, processed} over the whole table."""
    counts = {**dict.fromkeys(FEEDBACK_STATUSES, 0), **counts_by_status()}
    return {"all": sum(counts.values()), **{s: counts[s] for s in FEEDBACK_STATUSES}}


def _count(filters, query):
    """Matches of the filters; a keyword alone is counted in the search index itself."""
    keyword = (filters.get("keyword") or "").strip()
    only_keyword = (filters.get("status") or "all") == "all" and not any(
        filters.get(key) is not None
        for key in ("type", "appName", "platform", "appVersion", "created_from", "created_before")
    )
    return count_keyword_matches(keyword) if keyword and only_keyword else query.count()


def list_feedbacks(filters: dict[str, Any]) -> dict[str, Any]:
    """{items, pagination, counts}: one page of matches, newest first; counts cover the whole table."""
    page, page_size = filters.get("page", 1), filters.get("pageSize", 20)
    query = filtered(filters)
    total = _count(filters, query)
    rows = (
        _with_attachment_count(query).order_by(Feedback.created_at.desc(), Feedback.id.desc()).paginate(page, page_size)
    )
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
            query = query.where(
                (Feedback.created_at < created) | ((Feedback.created_at == created) & (Feedback.id < row_id))
            )
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
    return list(
        FeedbackAttachment.select()
        .where(FeedbackAttachment.feedback == record.id)
        .order_by(FeedbackAttachment.created_at, FeedbackAttachment.id)
    )


def detail(record: Feedback) -> dict[str, Any]:
    """FeedbackDetail: the record with its attachments in creation order."""
    return dump_detail(record, attachments=attachments_of(record))


def get_feedback(feedback_id: str) -> dict[str, Any]:
    return detail(get_record(feedback_id))
