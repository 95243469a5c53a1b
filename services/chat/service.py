"""Answering a click (docs/api.md §22): Feishu gets a toast and the redrawn card in its answer; WeCom gets an
empty answer and its card is updated by the worker with the click's response_code."""

from typing import Any

from flask_babel import gettext

from models import immediate
from models.chat import ChatCard
from rules.ids import now_iso
from services.chat import cards
from services.chat.callbacks import Click
from services.chat.deciding import decide
from services.chat.worker import card_state, wake_cards
from services.errors import Forbidden, NotFound, ServiceError, ValidationFailed
from services.settings import Settings
from services.team.words import speaking


def feishu_answer(click: Click, settings: Settings) -> dict[str, Any]:
    with speaking(settings.default_language):
        decided, message, task = decide(click, settings)
        answer: dict[str, Any] = {"toast": {"type": "success" if decided else "error", "content": message}}
        if task is None:
            return answer
        buttons, shown = card_state(task, settings)
        publishing = decided and click.action == "approve_and_publish" and task.status == "approved"
        note = gettext("%(verdict)s · publishing…", verdict=shown["verdict"]) if publishing else None
        answer["card"] = {
            "type": "raw",
            "data": cards.feishu_card(task, settings.team, settings.time_zone, buttons, note),
        }
        if click.message_id:  # the card now says this: the worker redraws only on a further change
            with immediate():
                ChatCard.update(version=task.version, shown={**shown, "note": note}, updated_at=now_iso()).where(
                    (ChatCard.platform == "feishu") & (ChatCard.message_id == click.message_id)
                ).execute()
        return answer


def feishu_refusal(err: ServiceError, settings: Settings) -> dict[str, Any]:
    """A refused callback: the error of docs/api.md §2 (in English, for logs and tools) and the toast the
    clicker reads, in the team's language (docs/api.md §22)."""
    with speaking(settings.default_language):
        if isinstance(err, Forbidden):
            toast = gettext("Refused: the team's Feishu app did not sign this request, or it is old or taken before.")
        elif isinstance(err, ValidationFailed):
            toast = gettext("Refused: this request cannot be read.")
        elif isinstance(err, NotFound):
            toast = gettext("No Feishu app is configured for this service.")
        else:
            toast = gettext("Refused: the service could not take this request.")
    return {
        "error": {"code": err.code, "message": err.message, "details": err.details},
        "toast": {"type": "error", "content": toast},
    }


def wecom_click(click: Click, settings: Settings) -> bool:
    with speaking(settings.default_language):
        decided, _message, _task = decide(click, settings)
    wake_cards()  # the card is updated with the click's response_code
    return decided
