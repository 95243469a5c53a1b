"""Asking for a task to go live, now or at a time, and cancelling a schedule (docs/api.md §18). Only rows are
written here; the submission is the live job's (services/live/worker.py), so a schedule survives restarts.
"""

from datetime import datetime, timedelta
from typing import Any

from models import immediate
from models.editions import holders
from models.live import TaskLive
from models.review import ReviewTask
from rules.ids import iso, now_iso, utcnow
from rules.labels import live_failure
from rules.vocabulary import EDITION_ON_ITS_WAY
from services.background import wake
from services.errors import Conflict, ValidationFailed
from services.live.outcomes import move
from services.live.worker import WORKER
from services.publishing.jobs import last_draft_job
from services.review import load_for_update, task_to_dict
from services.review.state_machine import find_live_rule
from services.settings import Settings

PAST_GRACE = timedelta(seconds=60)  # a moment this far back still reads as "now" (clocks differ)
AHEAD_LIMIT = timedelta(days=30)


def when(at: datetime | None) -> datetime:
    """The submission time asked for: `at`, or now; 400 outside [now - 60 s, now + 30 days]."""
    now = utcnow()
    if at is None:
        return now
    if at < now - PAST_GRACE:
        raise ValidationFailed(
            "at is in the past; give a time ahead, or leave it out to publish now",
            {"at": ["is more than 60 seconds in the past"]},
        )
    if at > now + AHEAD_LIMIT:
        raise ValidationFailed("at is more than 30 days ahead", {"at": ["is more than 30 days ahead"]})
    return max(at, now)


def go_live(
    task_id: str, at: datetime | None, actor_name: str | None, settings: Settings, if_match: str | None = None
) -> dict[str, Any]:
    """Schedule the task's draft for readers at `at` (None: now); the task as JSON (202)."""
    moment = iso(when(at))
    with immediate():
        task = load_for_update(task_id, if_match)
        draft = last_draft_job(task)
        if task.status != "published" or draft is None or not draft.draft_media_id:
            raise Conflict(
                "only a published task whose draft is on the platform can go live; publish it first",
                {"status": [task.status]},
                code="invalid_state",
            )
        row = TaskLive.get_or_none(TaskLive.task == task)
        if row is not None and find_live_rule(row.status, "schedule") is None:
            raise Conflict(
                f"this task is already {row.status}"
                + ("" if row.status == "live" else "; cancel the schedule first to choose another time"),
                {"live.status": [row.status]},
                code="invalid_state",
            )
        # One way to readers per article (docs/api.md §18 "Go live"): an edition on its way sends this task
        # to followers; alone as well, they would get it twice.
        edition = holders(EDITION_ON_ITS_WAY, [task.task_id]).get(task.task_id)
        if edition is not None:
            raise Conflict(
                f"the task is in edition {edition.edition_id}, which is {edition.status} and takes it to readers; "
                "cancel the edition's send first to publish the task alone",
                {"editionId": [edition.edition_id], "editionStatus": [edition.status]},
                code="in_edition",
            )
        now = now_iso()
        fresh = {
            "account": task.public_account,
            "draft_media_id": draft.draft_media_id,
            "at": moment,
            "publish_id": None,
            "msg_data_id": None,
            "article_id": None,
            "article_url": None,
            "fail_reason": None,
            "fail_code": None,
            "fail_detail": None,
            "owner": None,
            "submitted_at": None,
            "next_poll_at": None,
            "polls": 0,
            "live_at": None,
            "requested_by": actor_name,
        }
        move(row or TaskLive(task=task, created_at=now), "schedule", settings.team, task, actor_name, **fresh)
    wake(WORKER)
    return task_to_dict(task)


def cancel_go_live(
    task_id: str, settings: Settings, if_match: str | None = None, actor_name: str | None = None
) -> dict[str, Any]:
    """Cancel a scheduled going live (409 unless it is still scheduled); the task as JSON."""
    with immediate():
        task = load_for_update(task_id, if_match)
        row = TaskLive.get_or_none(TaskLive.task == task) or TaskLive(task=task)
        move(row, "cancel", settings.team, task, actor_name)  # 409 unless scheduled (LIVE_TABLE)
    return task_to_dict(task)


def failure_words(task_id: str) -> str | None:
    """Why the task's going live failed, in the language in force (the page's); None unless it failed."""
    row = TaskLive.select().join(ReviewTask).where(ReviewTask.task_id == task_id).first()
    if row is None or row.status != "failed":
        return None
    return live_failure(row.fail_code, row.fail_detail) if row.fail_code else row.fail_reason
