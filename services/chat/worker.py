"""Sending the decision cards and keeping them true (docs/api.md §22 "Cards stay true"). A card row waits
`to_send` from the transaction that made its task wait for review (services/team/outbox.py). Each platform
call runs outside the lock."""

import logging
import time
from datetime import timedelta
from typing import Any

from flask_babel import gettext

from models import immediate
from models.chat import ChatCard
from models.review import ReviewTask
from rules.ids import iso, now_iso, utcnow
from services.background import Job, wake
from services.chat import cards
from services.chat.choices import approval
from services.chat.clients import ChatError, Feishu, WeCom
from services.settings import Settings
from services.team.outbox import CARDS_JOB, ask_in_chat
from services.team.words import speaking

log = logging.getLogger(__name__)
POLL_SECONDS = 2.0
LEASE = timedelta(seconds=60)  # a claimed card's send, bounded by services.outbound's deadline (30 s)
MAX_ATTEMPTS = 8


def _retry_at(attempts: int, settings: Settings) -> str:
    delays = settings.webhook_retry_delays or (10.0,)
    return iso(utcnow() + timedelta(seconds=delays[min(attempts, len(delays)) - 1]))


def _claim() -> ChatCard | None:
    with immediate():
        row = (
            ChatCard.select()
            .where((ChatCard.state == "to_send") & (ChatCard.next_attempt_at <= now_iso()))
            .order_by(ChatCard.id)
            .first()
        )
        if row is None:
            return None
        ChatCard.update(attempts=row.attempts + 1, next_attempt_at=iso(utcnow() + LEASE)).where(
            ChatCard.id == row.id
        ).execute()
        return ChatCard.get_by_id(row.id)


def card_state(task: ReviewTask, settings: Settings) -> tuple[bool, dict[str, Any]]:
    """(buttons or not, what a card of `task` says now): a sent card is redrawn only when this changes."""
    buttons = approval(task, "approve_without_publish", settings) is not None
    return buttons, {
        "verdict": cards.verdict(task, settings.time_zone),
        "buttons": buttons,
        "version": task.version if buttons or task.status == "pending_review" else None,
    }


def send(row: ChatCard, settings: Settings) -> None:
    task = ReviewTask.get_or_none(ReviewTask.id == row.task_id)
    if task is None or task.status != "pending_review":  # decided before its card went out
        with immediate():
            ChatCard.update(state="closed", updated_at=now_iso()).where(ChatCard.id == row.id).execute()
        return
    team, changes = settings.team, {}
    try:
        buttons, shown = card_state(task, settings)
        if row.platform == "feishu" and team.chat.feishu is not None:
            card = cards.feishu_card(task, team, settings.time_zone, buttons)
            changes["message_id"] = Feishu(team.chat.feishu).send(card)
        elif row.platform == "wecom" and team.chat.wecom is not None:
            changes["response_code"] = WeCom(team.chat.wecom).send(
                cards.wecom_card(task, team, settings.time_zone, buttons)
            )
            changes["card_id"] = f"{task.task_id}-{task.version}"
        else:
            raise ChatError(f"the {row.platform} app is not configured")
    except ChatError as exc:
        log.warning("a %s card for task %s was not sent: %s", row.platform, task.task_id, exc)
        failed = row.attempts >= MAX_ATTEMPTS
        with immediate():
            ChatCard.update(
                last_error=str(exc),
                state="failed" if failed else "to_send",
                next_attempt_at=_retry_at(row.attempts, settings),
                updated_at=now_iso(),
            ).where(ChatCard.id == row.id).execute()
        return
    with immediate():
        ChatCard.update(
            state="sent",
            version=task.version,
            shown=shown,
            last_error=None,
            next_attempt_at=now_iso(),
            updated_at=now_iso(),
            **changes,
        ).where(ChatCard.id == row.id).execute()


def redraw(row: ChatCard, task: ReviewTask, settings: Settings) -> None:
    """A sent card whose task's version moved on: redrawn when what it would say differs."""
    team = settings.team
    buttons, shown = card_state(task, settings)
    changes: dict[str, Any] = {"version": task.version, "shown": shown, "updated_at": now_iso()}
    try:
        if shown != row.shown and row.platform == "feishu" and team.chat.feishu is not None and row.message_id:
            Feishu(team.chat.feishu).redraw(row.message_id, cards.feishu_card(task, team, settings.time_zone, buttons))
        elif shown != row.shown and row.platform == "wecom" and team.chat.wecom is not None:
            changes["state"] = "closed"  # its response_code is spent: a new card asks again
            note = shown["verdict"] or gettext("Changed: see the new card")
            if row.response_code:
                WeCom(team.chat.wecom).update(row.response_code, cards.wecom_done(note))
    except ChatError as exc:
        log.warning("the %s card of task %s was not redrawn: %s", row.platform, task.task_id, exc)
        with immediate():
            ChatCard.update(
                last_error=str(exc), next_attempt_at=_retry_at(row.attempts + 1, settings), attempts=row.attempts + 1
            ).where(ChatCard.id == row.id).execute()
        return
    with immediate():
        updated = (
            ChatCard.update(**changes, last_error=None, attempts=0)
            .where((ChatCard.id == row.id) & (ChatCard.version == row.version))
            .execute()
        )
        if updated and changes.get("state") == "closed" and task.status == "pending_review":
            ask_in_chat(team, task, platforms=("wecom",))


def step(settings: Settings, until: float) -> None:
    with speaking(settings.default_language):
        while time.monotonic() < until and (row := _claim()) is not None:
            send(row, settings)
        stale = list(
            ChatCard.select(ChatCard, ReviewTask)
            .join(ReviewTask)
            .where(  # read whole: no cursor open
                (ChatCard.state == "sent")
                & (ChatCard.version != ReviewTask.version)  # across the writes below
                & (ChatCard.next_attempt_at <= now_iso())
            )
            .limit(50)
        )
        for row in stale:
            redraw(row, row.task, settings)


def chat_job(settings: Settings) -> Job:
    """The decision cards (docs/api.md §22), when a chat app is configured."""
    return Job(CARDS_JOB, lambda until: step(settings, until), POLL_SECONDS)


def wake_cards() -> None:
    wake(CARDS_JOB)
