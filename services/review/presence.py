"""Who else has a task page open (docs/api.md §15 Presence), from the pages' heartbeats."""

from datetime import datetime, timedelta
from typing import Any

from models import immediate
from models.presence import TaskPresence
from rules.ids import iso, utcnow
from services.review.concurrency import get_task_row
from services.settings import Settings


def heartbeat(
    task_id: str,
    username: str,
    editing: bool,
    settings: Settings,
    now: datetime | None = None,
    leaving: bool = False,
    page: str = "",
) -> list[dict[str, Any]]:
    """Upsert the page (task, username, page), or mark it left when `leaving`; 404 for an unknown task. A page
    that left stays left: its heartbeat sent before the leave but arriving after it is not a return. A leave
    that names no page ends every page of the admin on the task, and leaves nothing behind. `since`
    starts again after a gap longer than REVIEW_PRESENCE_SECONDS (the expired row is pruned first, so the
    upsert inserts)."""
    now = now or utcnow()
    at, cutoff = iso(now), iso(now - timedelta(seconds=settings.presence_seconds))
    key = [TaskPresence.task_id, TaskPresence.username, TaskPresence.page]
    row = {"task_id": task_id, "username": username, "page": page, "since": at, "seen_at": at}
    with immediate():
        get_task_row(task_id)
        TaskPresence.delete().where(TaskPresence.seen_at <= cutoff).execute()
        if leaving and page:
            gone = {TaskPresence.seen_at: at, TaskPresence.editing: False, TaskPresence.left: True}
            TaskPresence.insert(**row, left=True).on_conflict(conflict_target=key, update=gone).execute()
        elif leaving:  # a caller that names no page: every page of this admin on the task, as if never come
            mine = (TaskPresence.task_id == task_id) & (TaskPresence.username == username) & ~TaskPresence.left
            TaskPresence.delete().where(mine).execute()
        else:
            beat = {TaskPresence.seen_at: at, TaskPresence.editing: editing}
            TaskPresence.insert(**row, editing=editing).on_conflict(
                conflict_target=key, update=beat, where=~TaskPresence.left
            ).execute()
        others = (
            TaskPresence.select()
            .where(
                (TaskPresence.task_id == task_id)
                & (TaskPresence.username != username)
                & (TaskPresence.seen_at > cutoff)
                & ~TaskPresence.left
            )
            .order_by(TaskPresence.since, TaskPresence.username)
        )
        return _per_admin(others)


def _per_admin(pages: Any) -> list[dict[str, Any]]:
    """One viewer per admin, however many pages they have open: since the earliest, editing on any."""
    viewers: dict[str, dict[str, Any]] = {}
    for page in pages:
        viewer = viewers.setdefault(page.username, {"username": page.username, "since": page.since, "editing": False})
        viewer["editing"] = viewer["editing"] or page.editing
    return list(viewers.values())


def forget_task(task_id: str) -> None:
    """Inside the deletion's transaction: nobody is on a task that no longer exists."""
    TaskPresence.delete().where(TaskPresence.task_id == task_id).execute()
