"""What the task's timeline says about going live (docs/api.md §4 Timeline, §18): who asked for it and for
when, who cancelled it, and what came of the submission. Each is written in the transaction of the change
it tells (golive.py for an admin's request, outcomes.py's record() and settle() for the rest)."""
from typing import Any

from models.live import TaskLive
from models.review import ReviewTask
from services.review.timeline import add_event


def asked(task: ReviewTask, row: TaskLive, actor_name: str | None) -> None:
    """An admin asked for the draft to go to readers at `row.at` (now, or a time ahead)."""
    add_event(task, "live_scheduled", "admin", actor_name, {"at": row.at})


def canceled(task: ReviewTask, row: TaskLive, actor_name: str | None) -> None:
    """An admin cancelled the schedule of `row.at`."""
    add_event(task, "live_canceled", "admin", actor_name, {"at": row.at})


def changed(task: ReviewTask, row: TaskLive, before: tuple[Any, Any]) -> None:
    """The platform took the submission, the article is live, or going live failed (again with another
    reason: a late result): `row` as it now is, `before` its (status, fail_code) before the change."""
    if (row.status, row.fail_code) == before:
        return
    if row.status == "publishing":
        add_event(task, "live_submitted", "system", None, {"publishId": row.publish_id})
    elif row.status == "live":
        add_event(task, "live", "system", None, {"articleUrl": row.article_url, "articleId": row.article_id})
    elif row.status == "failed":
        add_event(task, "live_failed", "system", None, {"failReason": row.fail_reason, "failCode": row.fail_code,
                                                        "failDetail": row.fail_detail})
