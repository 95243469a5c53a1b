"""Who else has a task page open (docs/api.md §15 Presence), from the pages' heartbeats."""

from datetime import datetime, timedelta
from typing import Any

from models import immediate
from models.presence import TaskPresence
from rules.ids import iso, utcnow
from services.review.concurrency import get_task_row
from services.settings import Settings


def heartbeat(
    task_id: str, username: str, editing: bool, settings: Settings, now: datetime | None = None, leaving: bool = False
) -> list[dict[str, Any]]:
    """Upsert (task, username), or delete it when `leaving`; 404 for an unknown task. `since` starts again
    after a gap longer than REVIEW_PRESENCE_SECONDS (the expired row is pruned first, so the upsert inserts)."""
    now = now or utcnow()
    at, cutoff = iso(now), iso(now - timedelta(seconds=settings.presence_seconds))
    with immediate():
        get_task_row(task_id)
        TaskPresence.delete().where(TaskPresence.seen_at <= cutoff).execute()
        if leaving:
            TaskPresence.delete().where(
                (TaskPresence.task_id == task_id) & (TaskPresence.username == username)
            ).execute()
        else:
            (
                TaskPresence.insert(task_id=task_id, username=username, since=at, seen_at=at, editing=editing)
                .on_conflict(
                    conflict_target=[TaskPresence.task_id, TaskPresence.username],
                    update={TaskPresence.seen_at: at, TaskPresence.editing: editing},
                )
                .execute()
            )
        others = (
            TaskPresence.select()
            .where(TaskPresence.task_id == task_id, TaskPresence.username != username, TaskPresence.seen_at > cutoff)
            .order_by(TaskPresence.since, TaskPresence.username)
        )
        return [{"username": row.username, "since": row.since, "editing": row.editing} for row in others]


def forget_task(task_id: str) -> None:
    """Inside the deletion's transaction: nobody is on a task that no longer exists."""
    TaskPresence.delete().where(TaskPresence.task_id == task_id).execute()
