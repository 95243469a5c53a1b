"""The outbox: outbox messages (the agent's webhooks, team notifications), written with what they report."""

from datetime import datetime, timedelta

import peewee

from models.base import BaseModel, JSONField
from rules.ids import iso

AGENT_CHANNEL = "agent"  # the agent's webhook; the team's channels are rules.vocabulary.TEAM_CHANNELS


class OutboxMessage(BaseModel):
    id = peewee.AutoField()
    message_id = peewee.CharField(max_length=64, unique=True)  # the webhook-id, same on every retry
    task_id = peewee.CharField(max_length=64, index=True)  # a team message about feedback: the feedback's id
    event_type = peewee.CharField(max_length=64)
    payload = JSONField()
    # pending | sent | gave_up | not_sent (a type REVIEW_AGENT_WEBHOOK_EVENTS does not choose)
    status = peewee.CharField(max_length=16, default="pending", index=True)
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = peewee.CharField(max_length=32, index=True)
    last_error = peewee.CharField(max_length=255, null=True)
    created_at = peewee.CharField(max_length=32)
    sent_at = peewee.CharField(max_length=32, null=True)
    # Who the message is for: each channel's sender takes only its own (docs/api.md §15: one per channel).
    channel = peewee.CharField(max_length=16, default=AGENT_CHANNEL, index=True)


def still_claimed(ids: list[int], lease: str) -> set[int]:
    """Of the messages a sender leased until `lease`, those still its own (read inside immediate()): pending,
    with that lease. One whose attempt outlived the lease is another sender's now, and so is its outcome."""
    mine = OutboxMessage.id.in_(ids) & (OutboxMessage.status == "pending") & (OutboxMessage.next_attempt_at == lease)
    return {row.id for row in OutboxMessage.select(OutboxMessage.id).where(mine)}


def record_failed_attempt(
    message: OutboxMessage, error: str, retry_delays: tuple[float, ...], now: datetime
) -> float | None:
    """One more attempt on `message` failed with `error`: given up once past the last of `retry_delays`, else
    pending again at `now` plus the next delay. The delay, or None when it was given up."""
    attempts = message.attempts + 1
    gave_up = attempts > len(retry_delays)
    delay = 0 if gave_up else retry_delays[attempts - 1]
    OutboxMessage.update(
        status="gave_up" if gave_up else "pending",
        attempts=attempts,
        last_error=error,
        next_attempt_at=iso(now + timedelta(seconds=delay)),
    ).where(OutboxMessage.id == message.id).execute()
    return None if gave_up else delay
