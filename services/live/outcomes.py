"""Where a task's article stands on its way to readers, and who hears when that changes (docs/api.md §18).

Every change of a TaskLive row goes through `record()`, inside the caller's `immediate()`: the row,
the task's version (its JSON changed), and on `live`/`failed` the agent's webhook and the team's
message, written in the same transaction.
"""
from typing import Any

from flask_babel import force_locale

from models.live import TaskLive
from models.review import ReviewTask
from rules.ids import now_iso
from rules.labels import LIVE_FAILURE_LABELS, live_failure
from services.review import save_task
from services.review.webhooks import enqueue_live_outcome
from services.settings.team import TeamSettings
from services.team.outbox import live_ended


def failure(code: str | None, detail: str | None = None) -> dict[str, Any]:
    """A failed row's fields: its reason's code and detail, which pages and robots say in their language,
    and the API's English sentence (rules/labels.py LIVE_FAILURE_LABELS; no code: the platform's words)."""
    with force_locale("en"):
        reason = live_failure(code, detail)
    return {"status": "failed", "fail_code": code, "fail_detail": detail, "fail_reason": reason}


def submit_failure(errcode: int | None, message: str) -> dict[str, Any]:
    """A refused submission: the errcode's meaning, or the platform's own words; no answer at all may
    still have been submitted."""
    if errcode is None:
        return failure("no_answer", message)
    code = f"errcode_{errcode}"
    return failure(code) if code in LIVE_FAILURE_LABELS else failure(None, message)


def apply_status(row: TaskLive, team: TeamSettings | None, status: Any, article_id: Any = None,
                 article_url: Any = None) -> bool:
    """A publish_status from freepublish/get or the platform's event (inside immediate()); True when it
    changed the row. Only a row still `publishing` changes, or one given up for want of a result (24 h
    without one, docs/api.md §18), which the platform's late word settles; a repeated report changes nothing."""
    waiting = row.status == "publishing" or (row.status == "failed" and row.fail_code == "no_result")
    if not waiting or type(status) is not int or status == 1:
        return False
    if status == 0:
        record(row, team, status="live", article_id=str(article_id) if article_id else None,
               article_url=str(article_url) if article_url else None, live_at=now_iso(), next_poll_at=None,
               fail_reason=None, fail_code=None, fail_detail=None)
    elif f"publish_status_{status}" in LIVE_FAILURE_LABELS:  # freepublish/get's and the event's 2-6
        record(row, team, **failure(f"publish_status_{status}"), next_poll_at=None)
    else:
        return False
    return True


def record(row: TaskLive, team: TeamSettings | None, task: ReviewTask | None = None, **changes: Any) -> TaskLive:
    """Apply `changes` to the row (inside immediate()); the task's version moves on (its JSON changed), and
    a final status is told to the agent and the team."""
    before = (row.status, row.fail_code) if row.id else (None, None)
    for name, value in changes.items():
        setattr(row, name, value)
    row.updated_at = now_iso()
    row.save()
    task = task or ReviewTask.get_by_id(row.task_id)
    save_task(task)
    # A final status is told once; a failure told again only when its reason changed (a late result).
    if (row.status, row.fail_code) != before and row.status in ("live", "failed"):
        enqueue_live_outcome(task.task_id, row)
        live_ended(team, task, row)
    return row
