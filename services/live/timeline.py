"""What the task's timeline says about going live (docs/api.md §4 Timeline, §18): who asked for it and for
when, who cancelled it, and what came of the submission. LIVE_TABLE names each move's events
(services/review/state_machine.py); they are written in the transaction of the move (outcomes.move())."""
from collections.abc import Callable
from typing import Any

from models.live import TaskLive
from models.review import ReviewTask
from services.review.timeline import add_event

DATA: dict[str, Callable[[TaskLive], dict[str, Any]]] = {
    "live_scheduled": lambda row: {"at": row.at},  # for when an admin asked (now, or a time ahead)
    "live_canceled": lambda row: {"at": row.at},
    "live_submitted": lambda row: {"publishId": row.publish_id},
    "live": lambda row: {"articleUrl": row.article_url, "articleId": row.article_id},
    "live_failed": lambda row: {"failReason": row.fail_reason, "failCode": row.fail_code,
                                "failDetail": row.fail_detail},
}
BY_ADMIN = ("live_scheduled", "live_canceled")  # the rest the platform or the service did


def tell(task: ReviewTask, event: str, row: TaskLive, actor_name: str | None) -> None:
    """`event` about `row` as it now is."""
    by_admin = event in BY_ADMIN
    add_event(task, event, "admin" if by_admin else "system", actor_name if by_admin else None, DATA[event](row))
