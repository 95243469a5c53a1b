"""The agent's webhooks: an outbox message per event, delivered after commit by a background sender
(docs/api.md §4 "Agent notification"). Every event type is recorded; the sender sends the chosen ones
(REVIEW_AGENT_WEBHOOK_EVENTS), one task's in order, and marks the others `not_sent`.
"""

import base64
import json
import logging
import math
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import peewee
import requests
from standardwebhooks import Webhook

from models import OutboxMessage, immediate
from models.base import insert_rows
from models.outbox import AGENT_CHANNEL, record_failed_attempt, still_claimed
from models.review import PublishJob, ReviewTask
from rules.ids import iso, new_id, now_iso, utcnow
from rules.vocabulary import DEFAULT_WEBHOOK_EVENTS
from schemas.dump import dumper
from schemas.review.events import WEBHOOKS
from services import outbound
from services.background import Job, claim, job, lease_of, wake
from services.review.timeline import add_event
from services.settings import Settings
from services.settings.values import DEFAULT_RETRY_DELAYS

log = logging.getLogger(__name__)

BATCH = 50  # messages attempted per pass
CLAIM_SECONDS = lease_of(
    "webhook-sender"
).total_seconds()  # a claimed message is this sender's for longer than one attempt can take (outbound.ATTEMPT_SECONDS)


_DUMP = {event_type: dumper(data) for event_type, (data, _, _) in WEBHOOKS.items()}  # `data`, as documented


def _row(event_type: str, task_id: str, source: Any, now: str, **extra: Any) -> dict[str, Any]:
    """One webhook's outbox row, due at once; its `data` dumped from `source` as documented."""
    return {
        "message_id": new_id("msg_"),
        "task_id": task_id,
        "event_type": event_type,
        "payload": {"type": event_type, "timestamp": now, "data": _DUMP[event_type](source, **extra)},
        "next_attempt_at": now,
        "created_at": now,
    }


def _enqueue(event_type: str, task_id: str, source: Any, **extra: Any) -> OutboxMessage:
    """Record one webhook as an outbox message; call inside the transaction of what it reports."""
    message = OutboxMessage.create(**_row(event_type, task_id, source, now_iso(), **extra))
    wake(SENDER)
    return message


def enqueue_rejection(task: ReviewTask) -> OutboxMessage:
    """review_task.rejected, after a reject_rework decision."""
    return _enqueue("review_task.rejected", task.task_id, task, rejectedElements=list(task.rejected_elements or []))


def enqueue_approval(task: ReviewTask, action: str) -> OutboxMessage:
    """review_task.approved, after either approving decision."""
    return _enqueue("review_task.approved", task.task_id, task, action=action)


def enqueue_publish_outcome(task_id: str, job: PublishJob) -> OutboxMessage:
    """review_task.published or review_task.publish_failed, when a job ends."""
    event_type = "review_task.published" if job.status == "succeeded" else "review_task.publish_failed"
    return _enqueue(event_type, task_id, job, taskId=task_id)


def enqueue_live_outcome(task_id: str, live: Any) -> OutboxMessage:
    """review_task.live or review_task.live_failed, when going live ends (docs/api.md §18)."""
    event_type = "review_task.live" if live.status == "live" else "review_task.live_failed"
    return _enqueue(event_type, task_id, live, taskId=task_id)


def enqueue_stats(days: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> int:
    """review_task.stats for each (task id, one day's figures with its `date`, the totals so far), as
    services/stats/reading.py words them (docs/api.md §19): one batched insert, however many days."""
    now = now_iso()
    rows = [
        _row("review_task.stats", task_id, {"task_id": task_id, "date": day["date"], "day": day, "totals": totals}, now)
        for task_id, day, totals in days
    ]
    insert_rows(OutboxMessage, rows)
    if rows:
        wake(SENDER)
    return len(rows)


def comments_message(task_id: str, comments: list[Any]) -> dict[str, Any]:
    """review_task.comments' outbox row: a task's comments new since the last (docs/api.md §23), without the
    readers' openids. Built before the write lock (dumping thousands of comments is not quick); `enqueue_built`
    records it inside the transaction of what it reports."""
    return _row("review_task.comments", task_id, {"task_id": task_id, "comments": comments}, now_iso())


def enqueue_built(row: dict[str, Any]) -> OutboxMessage:
    """Record an outbox row built beforehand (comments_message); call inside the transaction it reports."""
    message = OutboxMessage.create(**row)
    wake(SENDER)
    return message


def discard_for_task(task_id: str) -> int:
    """Unsent webhooks of a deleted task go with it."""
    return (
        OutboxMessage.delete().where((OutboxMessage.task_id == task_id) & (OutboxMessage.status == "pending")).execute()
    )


def signing_key(secret: str) -> bytes:
    """`whsec_` + base64 is decoded (Standard Webhooks); any other string is used as UTF-8, and so is a
    `whsec_` that decodes to no key at all."""
    if secret.startswith("whsec_"):
        try:
            if key := base64.b64decode(secret[len("whsec_") :], validate=True):
                return key
        except ValueError:
            pass
    return secret.encode()


def sign(secret: str, message_id: str, timestamp: str, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, by the Standard Webhooks library. It gets the key as
    bytes: given the secret, it would read any string as base64, not as UTF-8 as REVIEW_AGENT_WEBHOOK_SECRET
    says. The body is JSON we encoded as UTF-8, so its text signs as the same bytes."""
    moment = datetime.fromtimestamp(int(timestamp), UTC)
    return Webhook(signing_key(secret)).sign(message_id, moment, body.decode())


def _headers(message, body, secret):
    timestamp = str(int(utcnow().timestamp()))
    headers = {
        "content-type": "application/json; charset=utf-8",
        "webhook-id": message.message_id,
        "webhook-timestamp": timestamp,
        "user-agent": "content-review-service/1",
    }
    if secret:
        headers["webhook-signature"] = sign(secret, message.message_id, timestamp, body)
    return headers


def _post(url, secret, message):
    """One delivery attempt, all within outbound.ATTEMPT_SECONDS (below CLAIM_SECONDS); returns None
    on success or a one-line reason. Only the status counts: the body is left unread."""
    body = json.dumps(message.payload, ensure_ascii=False, separators=(",", ":")).encode()
    try:
        status, _ = outbound.post(url, body, _headers(message, body, secret))
    except requests.Timeout:
        return "receiver timed out"
    except requests.RequestException as exc:
        return f"receiver unreachable ({type(exc).__name__})"
    if 200 <= status < 300:
        return None
    return f"receiver answered HTTP {status}"


def _record_timeline(task_id, event_type, data):
    task = ReviewTask.get_or_none(ReviewTask.task_id == task_id)
    if task is not None:
        add_event(task, event_type, "system", None, data)


def deliver_due(
    url: str,
    secret: str,
    retry_delays: tuple[float, ...] = DEFAULT_RETRY_DELAYS,
    now: datetime | None = None,
    events: frozenset[str] | tuple[str, ...] = DEFAULT_WEBHOOK_EVENTS,
) -> int:
    """Attempt every pending message whose time has come; returns how many were attempted. Only `events`
    types are sent (the rest become `not_sent`); no transaction is held during the HTTP call."""
    return _deliver(url, secret, retry_delays, now, events, math.inf)[0]


def _deliver(url, secret, retry_delays, now, events, until):
    """(attempted, sent) of one pass of deliver_due."""
    if not url:
        return 0, 0  # recorded but not sent until a webhook URL is configured
    now = now or utcnow()
    unsent = (
        (OutboxMessage.status == "pending")
        & (OutboxMessage.channel == AGENT_CHANNEL)
        & OutboxMessage.event_type.not_in(list(events))
    )
    if OutboxMessage.select().where(unsent).exists():  # a plain read first: an idle pass takes no write lock
        with immediate():
            OutboxMessage.update(status="not_sent").where(unsent).execute()
    attempted: list[int] = []
    sent = 0
    while (
        len(attempted) < BATCH
        and time.monotonic() < until
        and (message := _claim_next(now, attempted, events)) is not None
    ):
        attempted.append(message.id)
        failure = _post(url, secret, message)
        attempts = message.attempts + 1
        data = {"messageId": message.message_id, "eventType": message.event_type, "attempt": attempts}
        with immediate():
            if not still_claimed([message.id], message.next_attempt_at):
                log.warning("agent notification %s: its claim ran out during the attempt; dropped", message.message_id)
                continue
            if failure is None:
                OutboxMessage.update(status="sent", attempts=attempts, sent_at=now_iso(), last_error=None).where(
                    OutboxMessage.id == message.id
                ).execute()
                _record_timeline(message.task_id, "agent_notified", data)
                sent += 1
                continue
            retry = record_failed_attempt(message, failure, retry_delays, utcnow())
            if retry is not None:
                wake(SENDER, after=retry)
            data.update(error=failure, willRetry=retry is not None)
            _record_timeline(message.task_id, "agent_notification_failed", data)
        log.warning("agent notification %s attempt %s failed: %s", message.message_id, attempts, failure)
    return len(attempted), sent


def _claim_next(now: datetime, skip: list[int], events: frozenset[str] | tuple[str, ...]) -> OutboxMessage | None:
    """The next due message of `events`' types, leased to this sender for CLAIM_SECONDS: no other sender, in
    this process or another one on the same database, takes it meanwhile, and a sender that dies mid-send
    leaves it due again afterwards (at least once). A message waits while an earlier one of its task is
    pending. Only the agent's messages: the team's channels have their own jobs (services/team). The types
    are part of the claim, not only of the `not_sent` marking before it: that reads outside the write lock,
    so a message committed just after it is never sent either."""
    earlier = OutboxMessage.alias()
    waiting = earlier.select(earlier.id).where(
        (earlier.task_id == OutboxMessage.task_id)
        & (earlier.status == "pending")
        & (earlier.id < OutboxMessage.id)
        & (earlier.channel == AGENT_CHANNEL)
        & earlier.event_type.in_(list(events))  # one never sent holds nothing back
    )
    due = (
        (OutboxMessage.status == "pending")
        & (OutboxMessage.next_attempt_at <= iso(now))
        & (OutboxMessage.channel == AGENT_CHANNEL)
        & OutboxMessage.event_type.in_(list(events))
        & ~peewee.fn.EXISTS(waiting)
    )
    if skip:  # attempted in this pass already: once per pass
        due &= OutboxMessage.id.not_in(skip)
    return claim(
        OutboxMessage,
        due,
        (OutboxMessage.next_attempt_at, OutboxMessage.id),
        {OutboxMessage.next_attempt_at: iso(utcnow() + timedelta(seconds=CLAIM_SECONDS))},
    )


SENDER = "webhook-sender"


def sender_job(settings: Settings) -> Job:
    """The agent's outbox about once a second, and at once when a new message wakes it. A message sent may
    have let the next one of its task through: the pass goes on while messages go out."""

    def run(until: float) -> None:
        args = (settings.webhook_url, settings.webhook_secret, settings.webhook_retry_delays, None)
        while _deliver(*args, settings.webhook_events, until)[1] and time.monotonic() < until:
            pass

    return job(SENDER, run)
