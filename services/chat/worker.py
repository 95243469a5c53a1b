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
from services.background import Job, attempts_of, claim, job, lease_of, wake
from services.chat import cards
from services.chat.choices import approval
from services.chat.clients import ChatError, Feishu, WeCom
from services.settings import Settings
from services.team.outbox import CARDS_JOB, ask_in_chat
from services.team.words import speaking

log = logging.getLogger(__name__)
LEASE = lease_of(CARDS_JOB)  # a claimed card's send, bounded by services.outbound's deadline (30 s)
MAX_ATTEMPTS = attempts_of(CARDS_JOB)


def _retry_at(attempts: int, settings: Settings) -> str:
    """When the card is tried again after its `attempts`-th failure; the job's next pass comes then, not at
    its next look."""
    delays = settings.webhook_retry_delays or (10.0,)
    delay = delays[min(attempts, len(delays)) - 1]
    wake(CARDS_JOB, after=delay)
    return iso(utcnow() + timedelta(seconds=delay))


def _claim() -> ChatCard | None:
    """The next card due, its attempt counted and leased; read outside the write lock (an idle pass takes none)."""
    return claim(
        ChatCard,
        (ChatCard.state == "to_send") & (ChatCard.next_attempt_at <= now_iso()),
        (ChatCard.id,),
        {ChatCard.attempts: ChatCard.attempts + 1, ChatCard.next_attempt_at: iso(utcnow() + LEASE)},
    )


def _claim_redraw() -> ChatCard | None:
    """The next sent card whose task moved on since it was drawn, leased as a send is: of several processes
    one redraws it, from the task as it is then."""
    moved = ChatCard.version != ReviewTask.select(ReviewTask.version).where(ReviewTask.id == ChatCard.task)
    return claim(
        ChatCard,
        (ChatCard.state == "sent") & (ChatCard.next_attempt_at <= now_iso()) & moved,
        (ChatCard.id,),
        {ChatCard.next_attempt_at: iso(utcnow() + LEASE)},
    )


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
    except Exception as exc:  # any failure counts an attempt (docs/api.md §22): none keeps a card waiting for good
        _logged(exc, "a %s card for task %s was not sent", row.platform, task.task_id)
        _settle(row, last_error=_in_words(exc), **_failure(row.attempts, settings, "to_send"))
        return
    # Its attempts start again from 0: each redraw gets MAX_ATTEMPTS of its own (docs/api.md §22).
    _settle(
        row,
        state="sent",
        version=task.version,
        shown=shown,
        last_error=None,
        next_attempt_at=now_iso(),
        attempts=0,
        **changes,
    )


def _logged(exc: Exception, what: str, *args: Any) -> None:
    """A ChatError is a line in words; anything else is unexpected, so its traceback goes to the log."""
    if isinstance(exc, ChatError):
        log.warning(what + ": %s", *args, exc)
    else:
        log.exception(what, *args)


def _in_words(exc: Exception) -> str:
    return str(exc) if isinstance(exc, ChatError) else f"an unexpected {type(exc).__name__} (see the service's log)"


def _failure(attempts: int, settings: Settings, waiting: str) -> dict[str, Any]:
    """After the `attempts`-th failed send or redraw: `failed` (given up) once MAX_ATTEMPTS are spent, else
    `waiting` for its retry (docs/api.md §22)."""
    failed = attempts >= MAX_ATTEMPTS
    return {
        "state": "failed" if failed else waiting,
        "attempts": attempts,
        "next_attempt_at": _retry_at(attempts, settings),
    }


def _settle(row: ChatCard, **changes: Any) -> None:
    """The outcome of the send `row` claimed, unless its lease ran out and another pass claimed it since."""
    with immediate():
        ChatCard.update(updated_at=now_iso(), **changes).where(
            (ChatCard.id == row.id) & (ChatCard.state == "to_send") & (ChatCard.attempts == row.attempts)
        ).execute()


def redraw(row: ChatCard, task: ReviewTask, settings: Settings) -> None:
    """A sent card whose task's version moved on: redrawn when what it would say differs."""
    team = settings.team
    try:
        buttons, shown = card_state(task, settings)
        changes: dict[str, Any] = {
            "version": task.version,
            "shown": shown,
            "updated_at": now_iso(),
            "next_attempt_at": now_iso(),
        }
        if shown != row.shown and row.platform == "feishu" and team.chat.feishu is not None and row.message_id:
            Feishu(team.chat.feishu).redraw(row.message_id, cards.feishu_card(task, team, settings.time_zone, buttons))
        elif shown != row.shown and row.platform == "wecom" and team.chat.wecom is not None:
            changes["state"] = "closed"  # its response_code is spent: a new card asks again
            note = shown["verdict"] or gettext("Changed: see the new card")
            if row.response_code:
                WeCom(team.chat.wecom).update(row.response_code, cards.wecom_done(note))
    except Exception as exc:  # as in send(): counted, given up after MAX_ATTEMPTS, the other cards go on
        _logged(exc, "the %s card of task %s was not redrawn", row.platform, task.task_id)
        with immediate():
            ChatCard.update(
                last_error=_in_words(exc), updated_at=now_iso(), **_failure(row.attempts + 1, settings, "sent")
            ).where(_as_claimed(row)).execute()
        return
    with immediate():
        updated = ChatCard.update(**changes, last_error=None, attempts=0).where(_as_claimed(row)).execute()
        if updated and changes.get("state") == "closed" and task.status == "pending_review":
            ask_in_chat(team, task, platforms=("wecom",))


def _as_claimed(row: ChatCard) -> Any:
    """The redraw `row` claimed, unless its lease ran out and another pass claimed it since."""
    return (ChatCard.id == row.id) & (ChatCard.state == "sent") & (ChatCard.next_attempt_at == row.next_attempt_at)


def step(settings: Settings, until: float) -> None:
    with speaking(settings.default_language):
        while time.monotonic() < until and (row := _claim()) is not None:
            send(row, settings)
        while time.monotonic() < until and (row := _claim_redraw()) is not None:
            task = ReviewTask.get_or_none(ReviewTask.id == row.task_id)
            if task is not None:  # a task deleted takes its cards with it
                redraw(row, task, settings)


def chat_job(settings: Settings) -> Job:
    """The decision cards (docs/api.md §22), when a chat app is configured."""
    return job(CARDS_JOB, lambda until: step(settings, until))


def wake_cards() -> None:
    wake(CARDS_JOB)
