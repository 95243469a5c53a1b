"""The live worker (docs/api.md §18): submits what is due to freepublish, asks freepublish/get for what
is still publishing, and reports submissions a stopped process left behind. One per serving process;
every step claims its row in a write transaction first, so several processes never submit twice.
"""
import logging
import threading
from datetime import timedelta
from typing import Any

from models import immediate
from models.live import TaskLive
from rules.ids import iso, now_iso, parse_iso, utcnow
from services.background import Worker
from services.live.outcomes import apply_status, failure, record, settle, submit_failure
from services.platform.client import PlatformError, client_for
from services.publishing.owners import gone, this_process
from services.settings import Settings

log = logging.getLogger(__name__)
WAKE = threading.Event()  # set when an admin asks to go live now
POLL_SECONDS = 1.0
BATCH = 20
POLL_FOR = timedelta(hours=24)  # after the submission; then the result is reported as unknown
HOURLY = 3600.0
# A submission whose process is elsewhere gives no sign of life: this long after it began it is
# reported (a submit call is bounded by WECHAT_TIMEOUT_SECONDS, far below).
STALE_SUBMISSION = timedelta(minutes=10)


def settle_interrupted(settings: Settings) -> int:
    """Submissions a stopped process left in `submitting`: failed, saying they may have been taken."""
    settled = 0
    now = utcnow()
    for row in TaskLive.select().where(TaskLive.status == "submitting"):
        if gone(row.owner, row.submitted_at or row.updated_at) or now - parse_iso(row.updated_at) > STALE_SUBMISSION:
            with immediate():
                fresh = TaskLive.get_or_none(TaskLive.id == row.id)
                if fresh is not None and fresh.status == "submitting" and fresh.updated_at == row.updated_at:
                    record(fresh, settings.team, **failure("uncertain"))
                    settled += 1
    return settled


def _due() -> Any:
    return (TaskLive.status == "scheduled") & (TaskLive.at <= now_iso())


def _poll_due() -> Any:
    return (TaskLive.status == "publishing") & (TaskLive.next_poll_at <= now_iso())


def _claim_due(now: str) -> TaskLive | None:
    """One scheduled row whose time has come, now `submitting` and ours; None when none is due."""
    with immediate():
        row = TaskLive.select().where(_due()).order_by(TaskLive.at).first()
        if row is None:
            return None
        return record(row, None, status="submitting", owner=this_process(), submitted_at=now)


def submit(row: TaskLive, settings: Settings) -> None:
    """freepublish/submit once, with no transaction open; then the outcome, applied only to the row as
    claimed (settle: compare-and-set)."""
    try:  # the credentials and a token first: failing here, nothing reached the platform
        client = client_for(row.account, settings)
        client.access_token()
    except PlatformError as exc:
        log.warning("going live of task row %s not sent: %s", row.id, exc)
        with immediate():
            settle(row, settings.team, failure("not_sent", str(exc)))
        return
    try:
        answer = client.submit_publish(row.draft_media_id)
    except PlatformError as exc:
        log.warning("going live of task row %s refused: %s", row.id, exc)
        with immediate():
            settle(row, settings.team, submit_failure(exc.errcode, str(exc)))
        return
    first = settings.publish_poll_delays[0] if settings.publish_poll_delays else HOURLY
    with immediate():
        settle(row, settings.team, {"status": "publishing", "publish_id": answer["publish_id"],
                                    "msg_data_id": answer["msg_data_id"],
                                    "next_poll_at": iso(utcnow() + timedelta(seconds=first))})


def _next_delay(polls: int, settings: Settings) -> float:
    delays = settings.publish_poll_delays
    return delays[polls] if polls < len(delays) else HOURLY


def _claim_poll() -> TaskLive | None:
    """One publishing row whose freepublish/get is due, its next poll moved on first (so another
    process does not ask too)."""
    with immediate():
        row = TaskLive.select().where(_poll_due()).order_by(TaskLive.next_poll_at).first()
        if row is None:
            return None
        row.polls += 1
        row.next_poll_at = iso(utcnow() + timedelta(seconds=HOURLY))  # until this poll is answered
        row.save()
        return row


def poll(row: TaskLive, settings: Settings) -> None:
    """freepublish/get for one submission; a final status ends it, 45009 and the rest wait for the next delay.
    Whatever comes back applies only to the row as claimed: a late answer about an earlier submission, or
    one overtaken by the platform's event or another poll, is dropped (settle: compare-and-set)."""
    try:
        answer = client_for(row.account, settings).publish_status(str(row.publish_id))
    except PlatformError as exc:
        answer = None
        log.warning("freepublish/get for task row %s: %s (asked again later)", row.id, exc)
    with immediate():
        if answer is not None:
            detail = answer.get("article_detail")
            items = (detail.get("item") or [{}]) if isinstance(detail, dict) else [{}]
            url = items[0].get("article_url") if isinstance(items, list) and items and isinstance(items[0], dict) \
                else None
            if apply_status(row, settings.team, answer.get("publish_status"), answer.get("article_id"), url):
                return
        if utcnow() - parse_iso(row.submitted_at or row.updated_at) > POLL_FOR:
            settle(row, settings.team, {**failure("no_result"), "next_poll_at": None})
            return
        delay = timedelta(seconds=_next_delay(row.polls, settings))
        settle(row, settings.team, {"next_poll_at": iso(utcnow() + delay)}, quiet=True)


def step(settings: Settings) -> None:
    """One pass. The write lock is taken only when a plain read finds work: an idle pass every second in
    every process costs a read, not a turn at the lock other writers wait for."""
    settle_interrupted(settings)
    if not TaskLive.select().where(_due() | _poll_due()).exists():
        return
    for _ in range(BATCH):
        row = _claim_due(now_iso())
        if row is None:
            break
        submit(row, settings)
    for _ in range(BATCH):
        row = _claim_poll()
        if row is None:
            break
        poll(row, settings)


def live_worker(settings: Settings) -> Worker:
    """Going live every pass (WECHAT_LIVE_WORKER_ENABLED)."""
    return Worker("live-worker", lambda: step(settings), WAKE, POLL_SECONDS)
