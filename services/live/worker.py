"""Going live in the background (docs/api.md §18): submits what is due, polls freepublish/get, and reports
submissions a stopped process left behind. Each row is claimed compare-and-set first, so several processes
never submit or poll one twice; every move is a row of LIVE_TABLE (outcomes.move()).
"""

import logging
import time
from datetime import timedelta
from typing import Any

from models import immediate
from models.live import TaskLive
from rules.ids import iso, now_iso, parse_iso, utcnow
from services.background import HOURLY, Job, claim, job, lease_of, poll_delay, wake
from services.live.outcomes import apply_status, failure, move, moved, submit_failure
from services.owners import gone, this_process
from services.platform.client import PlatformError, client_for
from services.review.state_machine import live_rule_for
from services.settings import Settings

log = logging.getLogger(__name__)
WORKER = "live-worker"  # the job's name: /metrics and wake()
POLL_FOR = timedelta(hours=24)  # after the submission; then the result is reported as unknown


def settle_interrupted(settings: Settings) -> None:
    """Submissions a stopped process left in `submitting`: failed, saying they may have been taken. One whose
    process is elsewhere gives no sign of life: it is reported once its lease (which outlasts the submit's
    calls, services.background.lease_of) has passed since it began."""
    for row in TaskLive.select().where(TaskLive.status == "submitting"):
        stale = utcnow() - parse_iso(row.updated_at) > lease_of(WORKER, settings)
        if gone(row.owner, row.submitted_at or row.updated_at) or stale:
            with immediate():
                move(row, "interrupted", settings.team, **failure("uncertain"))


def claim_due() -> TaskLive | None:
    """One scheduled row whose time has come, now `submitting` and this process's; None when none is due."""
    rule, now = live_rule_for("scheduled", "submit"), now_iso()
    return claim(
        TaskLive,
        (TaskLive.status == rule.state) & (TaskLive.at <= now),
        (TaskLive.at,),
        {
            TaskLive.status: rule.next_state,
            TaskLive.owner: this_process(),
            TaskLive.submitted_at: now,
            TaskLive.updated_at: now,
        },
        then=lambda row: moved(row, rule, None),
    )


def claim_poll() -> TaskLive | None:
    """One publishing row whose freepublish/get is due, its next poll an hour on until this one is answered
    (so another process does not ask too)."""
    rule, later = live_rule_for("publishing", "poll"), iso(utcnow() + timedelta(seconds=HOURLY))
    return claim(
        TaskLive,
        (TaskLive.status == rule.state) & (TaskLive.next_poll_at <= now_iso()),
        (TaskLive.next_poll_at,),
        {TaskLive.polls: TaskLive.polls + 1, TaskLive.next_poll_at: later},
    )


def submit(row: TaskLive, settings: Settings) -> None:
    """freepublish/submit once, with no transaction open; the outcome applies only to the row as claimed."""
    try:  # the credentials and a token first: failing here, nothing reached the platform
        client = client_for(row.account, settings)
        client.access_token()
    except PlatformError as exc:
        log.warning("going live of task row %s not sent: %s", row.id, exc)
        with immediate():
            move(row, "refused", settings.team, **failure("not_sent", str(exc)))
        return
    try:
        answer = client.submit_publish(row.draft_media_id)
    except PlatformError as exc:
        log.warning("going live of task row %s refused: %s", row.id, exc)
        with immediate():
            move(row, "refused", settings.team, **submit_failure(exc.errcode, str(exc)))
        return
    first = poll_delay(settings.publish_poll_delays, 0)
    with immediate():
        move(
            row,
            "submitted",
            settings.team,
            publish_id=answer["publish_id"],
            msg_data_id=answer["msg_data_id"],
            next_poll_at=iso(utcnow() + timedelta(seconds=first)),
        )
    wake(WORKER, after=first)


def poll(row: TaskLive, settings: Settings) -> None:
    """freepublish/get for one submission; a final status ends it, 45009 and the rest wait for the next delay.
    Whatever comes back applies only to the row as claimed: a late answer about an earlier submission, or
    one overtaken by the platform's event or another poll, is dropped (move(): compare-and-set)."""
    try:
        answer: Any = client_for(row.account, settings).publish_status(str(row.publish_id))
    except PlatformError as exc:
        answer = None
        log.warning("freepublish/get for task row %s: %s (asked again later)", row.id, exc)
    with immediate():
        if answer is not None:
            detail = answer.get("article_detail")
            items = (detail.get("item") or [{}]) if isinstance(detail, dict) else [{}]
            url = (
                items[0].get("article_url")
                if isinstance(items, list) and items and isinstance(items[0], dict)
                else None
            )
            if apply_status(row, settings.team, answer.get("publish_status"), answer.get("article_id"), url):
                return
        if utcnow() - parse_iso(row.submitted_at or row.updated_at) > POLL_FOR:
            move(row, "no_result", settings.team, **failure("no_result"), next_poll_at=None)
            return
        delay = poll_delay(settings.publish_poll_delays, row.polls)
        move(row, "wait", settings.team, next_poll_at=iso(utcnow() + timedelta(seconds=delay)))
    wake(WORKER, after=delay)


def step(settings: Settings, until: float) -> None:
    """One pass: rows are taken until none is due or `until` (time.monotonic()) passes. An idle pass only
    reads: the write lock is taken when a row is due."""
    settle_interrupted(settings)
    while time.monotonic() < until and (row := claim_due()) is not None:
        submit(row, settings)
    while time.monotonic() < until and (row := claim_poll()) is not None:
        poll(row, settings)


def live_job(settings: Settings) -> Job:
    """Going live (WECHAT_LIVE_WORKER_ENABLED): a pass every second, and at once when an admin asks."""
    return job(WORKER, lambda until: step(settings, until))
