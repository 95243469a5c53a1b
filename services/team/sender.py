"""The team's senders (docs/api.md §15): one background job per configured channel, on the outbox.

A pass leases the due messages of its channel (as many as one message can hold) for CLAIM_SECONDS, as the
agent's sender does, so a sender that dies mid-send leaves them due again; it sends them with no transaction
open. A slow channel holds the others back by at most one attempt (outbound.ATTEMPT_SECONDS).
"""

import logging
import time
from datetime import timedelta
from typing import Any

from models import OutboxMessage, db, immediate
from models.counters import count_event
from models.outbox import AGENT_CHANNEL, record_failed_attempt, still_claimed
from rules.ids import iso, utcnow
from services.background import Job, job, lease_of, wake
from services.ratelimit import SlidingWindowLimiter
from services.settings import Settings
from services.settings.team import TeamSettings
from services.team.channels import Send, senders
from services.team.messages import Message, render

log = logging.getLogger(__name__)

ROBOT_RATE = [(20, 60)]  # WeCom's limit (20 a minute), kept for all three robots
CLAIM_SECONDS = lease_of(
    "team"
).total_seconds()  # longer than one attempt can take (HTTP: connect 5 s + outbound.ATTEMPT_SECONDS; SMTP 40 s)
FOLD_MAX = 100  # due messages read per pass; those that do not fit wait for the next
# Each attempt's outcome for each message it carried, by channel and outcome (docs/api.md §16).
NOTIFICATIONS = "review_team_notifications"
OUTCOMES = ("sent", "failed", "given_up")


def _due(channel: str) -> Any:
    return (
        OutboxMessage.select()
        .where(
            (OutboxMessage.channel == channel)
            & (OutboxMessage.status == "pending")
            & (OutboxMessage.next_attempt_at <= iso(utcnow()))
        )
        .order_by(OutboxMessage.id)
        .limit(FOLD_MAX)
    )


def _claim(
    channel: str, limiter: SlidingWindowLimiter | None, language: str, public_url: str, limit_bytes: int
) -> tuple[list[OutboxMessage], Message] | None:
    if not _due(channel).exists():  # a plain read while idle: no write lock every second
        return None
    with immediate():
        rows = list(_due(channel))
        if not rows or (limiter is not None and limiter.hit({"robot": channel}) is not None):
            return None  # none left, or the robot's minute is full: they wait and fold into the next
        message = render([row.payload for row in rows], language, public_url, limit_bytes)
        rows, lease = rows[: message.count], iso(utcnow() + timedelta(seconds=CLAIM_SECONDS))
        OutboxMessage.update(next_attempt_at=lease).where(OutboxMessage.id.in_([row.id for row in rows])).execute()
    for row in rows:
        row.next_attempt_at = lease  # as claimed: the outcome is written only while the claim holds
    return rows, message


def _record(
    channel: str, rows: list[OutboxMessage], failure: str | None, retry_delays: tuple[float, ...]
) -> tuple[list[OutboxMessage], list[str]]:
    """Store the attempt's outcome on each message still this sender's, and count it
    (review_team_notifications_total: sent, failed and to be retried, or given up); returns those messages
    and the ids of those given up."""
    now, given_up = utcnow(), list[str]()
    with immediate():
        mine = still_claimed([row.id for row in rows], rows[0].next_attempt_at)
        if len(mine) < len(rows):
            log.warning(
                "team notification to %s: %d claim(s) ran out during the attempt; dropped",
                channel,
                len(rows) - len(mine),
            )
            rows = [row for row in rows if row.id in mine]
        if not rows:
            return rows, given_up
        if failure is None:
            OutboxMessage.update(
                status="sent", attempts=OutboxMessage.attempts + 1, sent_at=iso(now), last_error=None
            ).where(OutboxMessage.id.in_([row.id for row in rows])).execute()
            count_event(NOTIFICATIONS, channel, "sent", by=len(rows))
            return rows, given_up
        for row in rows:
            if (delay := record_failed_attempt(row, failure[:255], retry_delays, now)) is None:
                given_up.append(row.message_id)
            else:
                wake(f"team-{channel}", after=delay)
        if len(rows) > len(given_up):
            count_event(NOTIFICATIONS, channel, "failed", by=len(rows) - len(given_up))
        if given_up:
            count_event(NOTIFICATIONS, channel, "given_up", by=len(given_up))
    return rows, given_up


def deliver(
    channel: str,
    send: Send,
    limit_bytes: int,
    retry_delays: tuple[float, ...],
    language: str,
    public_url: str,
    limiter: SlidingWindowLimiter | None = None,
) -> int:
    """One pass for one channel; returns how many outbox messages it delivered."""
    claimed = _claim(channel, limiter, language, public_url, limit_bytes)
    if claimed is None:
        return 0
    rows, message = claimed
    failure = send(message)
    rows, given_up = _record(channel, rows, failure, retry_delays)
    if not rows:
        return 0
    # The channel's name, never its URL or secret (docs/api.md §15).
    if failure is None:
        log.info("team notification sent to %s (%d message%s)", channel, len(rows), "" if len(rows) == 1 else "s")
        return len(rows)
    log.warning(
        "team notification to %s failed (%d message%s): %s", channel, len(rows), "" if len(rows) == 1 else "s", failure
    )
    if given_up:
        log.error("team notification to %s given up after every retry: %s", channel, ", ".join(given_up))
    return 0


def retire(team: TeamSettings) -> int:
    """Pending team messages that no configured channel or chosen event sends any more (the settings
    changed since they were written) become `not_sent`; returns how many."""
    with immediate():
        return (
            OutboxMessage.update(status="not_sent")
            .where(
                (OutboxMessage.status == "pending")
                & (OutboxMessage.channel != AGENT_CHANNEL)
                & (
                    OutboxMessage.channel.not_in(list(team.channels))
                    | OutboxMessage.event_type.not_in(sorted(team.events))
                )
            )
            .execute()
        )


def deliveries(team: TeamSettings, retry_delays: tuple[float, ...], language: str) -> list[tuple[Any, ...]]:
    """deliver()'s arguments for each configured channel (a robot's limiter shared by its passes)."""
    return [
        (channel, send, limit, retry_delays, language, team.public_url, _robot_limiter(channel))
        for channel, (send, limit) in senders(team).items()
    ]


def _robot_limiter(channel: str) -> SlidingWindowLimiter | None:
    return None if channel == "email" else SlidingWindowLimiter({"robot": ROBOT_RATE})


def jobs(settings: Settings) -> list[Job]:
    """A job per configured channel (`team-<channel>`, woken by services/team/outbox.py), messages the
    settings no longer send retired first. Messages that did not fit in one go out in the same pass."""
    with db.connection_context():
        retire(settings.team)

    def channel_job(args: tuple[Any, ...]) -> Job:
        def run(until: float) -> None:
            while deliver(*args) and time.monotonic() < until:
                pass

        return job("team", run, name=f"team-{args[0]}")  # settles: a burst of tasks goes out as one digest

    return [
        channel_job(args)
        for args in deliveries(settings.team, settings.webhook_retry_delays, settings.default_language)
    ]
