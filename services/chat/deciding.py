"""A click on a card decides the task with the page's rules (docs/api.md §22 "Clicks"). Approve and publish
records the approval and the job's claim at once and publishes in the background (a chat waits 3-5 s)."""

import logging
import threading
from typing import Any

from flask_babel import gettext

from models import AdminUser, db, immediate
from models.chat import ChatCard
from models.review import ReviewTask, task_by_id
from rules.labels import ACTION_LABELS
from services.chat.callbacks import Click
from services.chat.cards import BUTTONS
from services.chat.choices import approval, rejection
from services.errors import ServiceError
from services.publishing.jobs import approve_and_claim, publish_claimed
from services.review.decisions import apply_decision
from services.review.timeline import add_event
from services.settings import Settings

log = logging.getLogger(__name__)
_IDENTITY = {"feishu": AdminUser.feishu_open_id, "wecom": AdminUser.wecom_userid}


def editor(click: Click) -> AdminUser | None:
    """The active admin with the `review` permission the click's identity is linked to."""
    user = AdminUser.get_or_none(_IDENTITY[click.platform] == click.identity)
    return user if user is not None and user.active and user.has_permission("review") else None


def decide(click: Click, settings: Settings) -> tuple[bool, str, ReviewTask | None]:
    """(decided, what to tell the clicker, the task as it now is). Nothing changes unless decided."""
    user = editor(click)
    if user is None:
        return False, gettext("You are not linked to an editor who may review; ask an admin to run link-chat."), None
    task = task_by_id(click.task_id)
    if task is None:
        return False, gettext("This task no longer exists."), None
    if click.action not in BUTTONS:
        return False, gettext("This card offers no such decision."), task
    if task.version != click.version:
        return False, gettext("The task changed since this card was sent; open it."), task
    payload = rejection(click.note) if click.action == "reject_rework" else approval(task, click.action, settings)
    if payload is None:
        return False, gettext("Choices are left to make: decide on the page."), task
    claim = None
    try:
        with immediate():
            if click.action == "approve_and_publish":
                claim = approve_and_claim(task.task_id, payload, user.username, settings, if_match=str(click.version))
            else:
                apply_decision(task.task_id, payload, settings, actor_name=user.username, if_match=str(click.version))
            decided = ReviewTask.get_by_id(task.id)
            add_event(
                decided, "decided_in_chat", "admin", user.username, {"platform": click.platform, "action": click.action}
            )
            _remember_response(click, decided)
    except ServiceError as err:  # the task moved on between the check and the write
        log.info("a %s card's decision on task %s was refused: %s", click.platform, task.task_id, err.message)
        return False, gettext("The task changed since this card was sent; open it."), task_by_id(click.task_id)
    if claim is not None:
        threading.Thread(
            target=_publish, args=(claim, user.username, settings), daemon=True, name=f"chat-publish-{task.task_id}"
        ).start()
        return True, gettext("Approved; publishing now."), ReviewTask.get_by_id(task.id)
    return True, gettext("Decided: %(action)s.", action=ACTION_LABELS[click.action]), ReviewTask.get_by_id(task.id)


def _remember_response(click: Click, task: ReviewTask) -> None:
    """WeCom's click brings a fresh response_code: the worker updates that card with it."""
    if click.response_code:
        ChatCard.update(response_code=click.response_code).where(
            (ChatCard.platform == "wecom") & (ChatCard.task == task) & (ChatCard.state == "sent")
        ).execute()


def _publish(claim: Any, actor_name: str, settings: Settings) -> None:
    try:
        with db.connection_context():
            publish_claimed(claim, actor_name, settings)
    except Exception:  # the job records its own failure; nothing may escape a thread
        log.exception("publishing a task approved from a chat card failed")
