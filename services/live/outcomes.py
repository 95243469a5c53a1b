"""Where a task's article stands on its way to readers, and who hears when that changes (docs/api.md §18).

Every change of a TaskLive row goes through `record()`, inside the caller's `immediate()`: the row,
the task's version (its JSON changed), and on `live`/`failed` the agent's webhook and the team's
message, written in the same transaction.
"""
import logging
from typing import Any

from flask_babel import force_locale

from models.live import TaskLive
from models.review import ReviewTask
from rules.articles import article_url as checked_url
from rules.ids import now_iso
from rules.labels import LIVE_FAILURE_LABELS, live_failure
from services.live import timeline
from services.review import save_task
from services.review.webhooks import enqueue_live_outcome
from services.settings.team import TeamSettings
from services.team.outbox import live_ended

log = logging.getLogger(__name__)


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
    """A publish_status from freepublish/get or the platform's event for `row` as the caller read it
    (inside immediate()); True when it changed the row. Only a row still `publishing` changes, or one given
    up for want of a result (24 h without one, docs/api.md §18), which the platform's late word settles; a
    repeated report changes nothing, and neither does one for a row that moved on since it was read
    (compare-and-set: a late answer about one submission never lands on the next)."""
    waiting = row.status == "publishing" or (row.status == "failed" and row.fail_code == "no_result")
    if not waiting or type(status) is not int or status == 1:
        return False
    if status == 0:
        url = checked_url(article_url)
        if article_url and url is None:
            log.warning("task row %s: the article address %.80r is not the platform's; not kept", row.id, article_url)
        changes = {"status": "live", "article_id": str(article_id)[:255] if article_id else None, "article_url": url,
                   "live_at": now_iso(), "next_poll_at": None, "fail_reason": None, "fail_code": None,
                   "fail_detail": None}
    elif f"publish_status_{status}" in LIVE_FAILURE_LABELS:  # freepublish/get's and the event's 2-6
        changes = {**failure(f"publish_status_{status}"), "next_poll_at": None}
    else:
        return False
    return settle(row, team, changes) is not None


def settle(row: TaskLive, team: TeamSettings | None, changes: dict[str, Any], quiet: bool = False) -> TaskLive | None:
    """record() for a worker's or the platform's result about `row` as it was read: applied only if the row
    still has that status, submission, failure and poll count, in one statement (docs/api.md §18); None
    (and logged) when it moved on since. `quiet`: bookkeeping the task's JSON does not show (its version stays)."""
    # submitted_at too: go_live resets the others to the same values, so only it tells submissions apart.
    before = {"status": row.status, "publish_id": row.publish_id, "fail_code": row.fail_code, "polls": row.polls,
              "submitted_at": row.submitted_at}
    now = now_iso()
    same = [getattr(TaskLive, name) == value for name, value in before.items()]
    if not TaskLive.update(**changes, updated_at=now).where(TaskLive.id == row.id, *same).execute():
        log.warning("task row %s moved on since it was read (%s); a late result was dropped", row.id, before)
        return None
    fresh = TaskLive.get_by_id(row.id)
    if not quiet:
        _after(fresh, (row.status, row.fail_code), team, None)
    return fresh


def record(row: TaskLive, team: TeamSettings | None, task: ReviewTask | None = None, **changes: Any) -> TaskLive:
    """Apply `changes` to the row (inside immediate()); the task's version moves on (its JSON changed), and
    a final status is told to the agent and the team."""
    before = (row.status, row.fail_code) if row.id else (None, None)
    for name, value in changes.items():
        setattr(row, name, value)
    row.updated_at = now_iso()
    row.save()
    _after(row, before, team, task)
    return row


def _after(row: TaskLive, before: tuple[Any, Any], team: TeamSettings | None, task: ReviewTask | None) -> None:
    """What follows a change of the row: the task's new version and its timeline; a final status told once,
    a failure told again only when its reason changed (a late result)."""
    task = task or ReviewTask.get_by_id(row.task_id)
    save_task(task)
    timeline.changed(task, row, before)
    if (row.status, row.fail_code) != before and row.status in ("live", "failed"):
        enqueue_live_outcome(task.task_id, row)
        live_ended(team, task, row)
