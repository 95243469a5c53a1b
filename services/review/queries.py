"""Reads: one task, and the filtered, keyset-paged lists of admins and the agent (docs/api.md §4 Listing)."""

import base64
import binascii
import json
from typing import Any

import peewee

from models import db
from models.live import TaskLive
from models.review import ReviewTask
from rules.client_input import bound
from rules.ids import iso
from rules.vocabulary import STATUSES
from services.errors import ValidationFailed
from services.review.concurrency import task_not_found
from services.review.serialize import task_detail, tasks_to_dicts


def get_task(task_id: str) -> dict[str, Any]:
    """The task as JSON (404 when unknown), read so that its parts agree."""
    found = task_detail(task_id)
    if found is None:
        raise task_not_found(task_id)
    return found


def parse_bound(value: str | None, name: str, *, end: bool) -> str | None:
    """`from` (inclusive) or `to` (end=True: exclusive) -> ISO ms Z bound; a date-only `to` covers that whole day."""
    if value is None:
        return None
    try:
        return iso(bound(value, end=end))
    except ValueError as exc:
        raise ValidationFailed(f"{name} {exc}", {name: [str(exc)]}) from None


def encode_cursor(task: ReviewTask) -> str:
    raw = json.dumps([task.updated_at, task.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, int]:
    try:
        updated_at, pk = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        # SQLite integers are 64-bit: a larger id would overflow when bound to the query.
        if not isinstance(updated_at, str) or type(pk) is not int or not 0 <= pk < 2**63:
            raise ValueError
    except (ValueError, TypeError, binascii.Error):
        raise ValidationFailed(
            "cursor is not one this service gave out; start again without it", {"cursor": ["invalid cursor"]}
        ) from None
    return updated_at, pk


_LIVE = TaskLive.select(TaskLive.task).where(TaskLive.status == "live")  # tasks whose article is live


def _conditions(filters, with_status=True):
    low = parse_bound(filters.get("from_"), "from", end=False)
    high = parse_bound(filters.get("to"), "to", end=True)
    if low and high and low >= high:
        raise ValidationFailed("from must be earlier than or equal to to", {"from": ["is after to"]})
    # pending_review is the default only when neither status nor live is asked for (docs/api.md §4 Listing)
    status = filters.get("status") or ("all" if filters.get("live") else "pending_review")
    # No placeholder condition ("id > 0"): SQLite would count by walking the table, not the smallest index.
    conditions = []
    if with_status and status != "all":
        conditions.append(ReviewTask.status == status)
    if filters.get("publicAccount"):
        conditions.append(ReviewTask.public_account == filters["publicAccount"])
    if filters.get("live"):  # where the article stands on its way to readers (docs/api.md §18)
        conditions.append(ReviewTask.id.in_(TaskLive.select(TaskLive.task).where(TaskLive.status == filters["live"])))
    if with_status and status == "published" and filters.get("notLive"):  # the page's "Draft ready": not yet live
        conditions.append(ReviewTask.id.not_in(_LIVE))
    if filters.get("externalContentId"):
        conditions.append(ReviewTask.external_content_id == filters["externalContentId"])
    if low:
        conditions.append(ReviewTask.created_at >= low)
    if high:
        conditions.append(ReviewTask.created_at < high)
    if since := parse_bound(filters.get("updatedSince"), "updatedSince", end=False):
        conditions.append(ReviewTask.updated_at >= since)
    return conditions


def list_tasks(filters: dict[str, Any]) -> tuple[list[dict[str, Any]], int, str | None]:
    """(task dicts, total matches, next cursor or None), newest updatedAt first; `filters` are the query's
    parameters (docs/api.md §4 Listing), each None when not given."""
    conditions = _conditions(filters)
    limit = filters.get("limit") or 200
    with db.atomic():
        total = _where(ReviewTask.select(), conditions).count()
        if filters.get("cursor"):
            updated_at, pk = decode_cursor(filters["cursor"])
            conditions.append(
                (ReviewTask.updated_at < updated_at) | ((ReviewTask.updated_at == updated_at) & (ReviewTask.id < pk))
            )
        rows = list(
            _where(ReviewTask.select(), conditions)
            .order_by(ReviewTask.updated_at.desc(), ReviewTask.id.desc())
            .limit(limit + 1)
        )
        items = tasks_to_dicts(rows[:limit])
    return items, total, (encode_cursor(rows[limit - 1]) if len(rows) > limit else None)


def status_counts(filters: dict[str, Any]) -> dict[str, int]:
    """{"all": n, status: n, ...} for the list's other filters (the status tabs of the list page); with
    `notLive`, `published` counts only the drafts not yet live (a live task is "Live", docs/api.md §18 Pages)."""
    conditions = _conditions(filters, with_status=False)
    query = _where(
        ReviewTask.select(ReviewTask.status, peewee.fn.COUNT(ReviewTask.id).alias("n")), conditions
    ).group_by(ReviewTask.status)
    counts = dict.fromkeys(STATUSES, 0)
    counts.update({row.status: row.n for row in query})
    every = sum(counts.values())
    if filters.get("notLive"):
        counts["published"] -= (
            ReviewTask.select().where(*conditions, ReviewTask.status == "published", ReviewTask.id.in_(_LIVE)).count()
        )
    return {"all": every, **counts}


def _where(query, conditions):
    return query.where(*conditions) if conditions else query
