"""Where a task's article stands on its way to readers, and who hears when that changes (docs/api.md §18).
Every change of a TaskLive row is a move of LIVE_TABLE (services/review/state_machine.py) through `move()`.
"""

import logging
from collections.abc import Callable
from typing import Any

from flask_babel import force_locale

from models.live import TaskLive
from models.review import ReviewTask
from rules.articles import article_url as checked_url
from rules.ids import now_iso
from rules.labels import LIVE_FAILURE_LABELS, live_failure
from services.review import save_task
from services.review.state_machine import Rule, live_rule_for
from services.review.timeline import add_event
from services.review.webhooks import enqueue_live_outcome
from services.settings.team import TeamSettings
from services.team.outbox import live_ended

log = logging.getLogger(__name__)
# What each timeline event of LIVE_TABLE says (docs/api.md §4 Timeline); the first two are an admin's.
EVENTS: dict[str, Callable[[TaskLive], dict[str, Any]]] = {
    "live_scheduled": lambda row: {"at": row.at},  # for when: now, or a time ahead
    "live_canceled": lambda row: {"at": row.at},
    "live_submitted": lambda row: {"publishId": row.publish_id},
    "live": lambda row: {"articleUrl": row.article_url, "articleId": row.article_id},
    "live_failed": lambda row: {
        "failReason": row.fail_reason,
        "failCode": row.fail_code,
        "failDetail": row.fail_detail,
    },
}
BY_ADMIN = ("live_scheduled", "live_canceled")
# What tells one state of a row from the next: status, submission, failure and poll; submitted_at too, as
# go_live resets the others to the same values each time.
SAME = ("status", "publish_id", "fail_code", "polls", "submitted_at")


def failure(code: str | None, detail: str | None = None) -> dict[str, Any]:
    """A failed row's fields: its reason's code and detail, which pages and robots say in their language,
    and the API's English sentence (rules/labels.py LIVE_FAILURE_LABELS; no code: the platform's words)."""
    with force_locale("en"):
        reason = live_failure(code, detail)
    return {"fail_code": code, "fail_detail": detail, "fail_reason": reason}


def submit_failure(errcode: int | None, message: str) -> dict[str, Any]:
    """A refused submission: the errcode's meaning, or the platform's own words; no answer at all may
    still have been submitted."""
    if errcode is None:
        return failure("no_answer", message)
    code = f"errcode_{errcode}"
    return failure(code) if code in LIVE_FAILURE_LABELS else failure(None, message)


def apply_status(
    row: TaskLive, team: TeamSettings | None, status: Any, article_id: Any = None, article_url: Any = None
) -> bool:
    """A publish_status from freepublish/get or the platform's event for `row` as the caller read it
    (inside immediate()); True when it moved the row. LIVE_TABLE takes it from `publishing`, or from a
    failure for want of a result (24 h without one), which the platform's late word settles; a repeated
    report changes nothing, and neither does one for a row that moved on since it was read."""
    late = row.status == "failed" and row.fail_code == "no_result"
    if (row.status != "publishing" and not late) or type(status) is not int or status == 1:
        return False
    if status == 0:
        url = checked_url(article_url)
        if article_url and url is None:
            log.warning("task row %s: the article address %.80r is not the platform's; not kept", row.id, article_url)
        article_id = str(article_id)[:255] if article_id else None
        cleared = dict.fromkeys(("next_poll_at", "fail_reason", "fail_code", "fail_detail"))
        return (
            move(row, "published", team, article_id=article_id, article_url=url, live_at=now_iso(), **cleared)
            is not None
        )
    if f"publish_status_{status}" in LIVE_FAILURE_LABELS:  # freepublish/get's and the event's 2-6
        return move(row, "publish_failed", team, **failure(f"publish_status_{status}"), next_poll_at=None) is not None
    return False


def move(
    row: TaskLive,
    trigger: str,
    team: TeamSettings | None,
    task: ReviewTask | None = None,
    actor_name: str | None = None,
    **changes: Any,
) -> TaskLive | None:
    """Move `row` by LIVE_TABLE's rule for (its status, `trigger`) (409 invalid_state without one), with
    `changes`, only if the row still is as the caller read it (SAME; one statement); None (and logged) when
    it moved on since. A new row (no id yet) is written whole."""
    rule = live_rule_for(row.status if row.id else None, trigger)
    now = now_iso()
    if row.id is None:
        for name, value in {**changes, "status": rule.next_state, "updated_at": now}.items():
            setattr(row, name, value)
        row.save()
    else:
        same = [getattr(TaskLive, name) == getattr(row, name) for name in SAME]
        if (
            not TaskLive.update(**changes, status=rule.next_state, updated_at=now)
            .where(TaskLive.id == row.id, *same)
            .execute()
        ):
            log.warning(
                "task row %s moved on since it was read (%s); a late result was dropped (%s)",
                row.id,
                {name: getattr(row, name) for name in SAME},
                trigger,
            )
            return None
        row = TaskLive.get_by_id(row.id)
    moved(row, rule, team, task, actor_name)
    return row


def moved(
    row: TaskLive, rule: Rule, team: TeamSettings | None, task: ReviewTask | None = None, actor_name: str | None = None
) -> None:
    """What follows a move that the task's JSON shows (a new status, or an event): the task's new version,
    the rule's timeline events, and a final status told to the agent and the team."""
    if rule.state == rule.next_state and not rule.events:
        return  # bookkeeping of a poll
    task = task or ReviewTask.get_by_id(row.task_id)
    save_task(task)
    for event in rule.events:
        by_admin = event in BY_ADMIN
        add_event(task, event, "admin" if by_admin else "system", actor_name if by_admin else None, EVENTS[event](row))
    if rule.next_state in ("live", "failed"):
        enqueue_live_outcome(task.task_id, row)
        live_ended(team, task, row)
